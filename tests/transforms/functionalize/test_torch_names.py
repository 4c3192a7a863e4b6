"""torch's private functionalization functions under the same names (td._to_functional_tensor,
td._enable_functionalization, ...): the same program on both libraries gives the same answers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import tensordispatch as td
from tensordispatch.transforms.functionalize import torch_names

NAMES = sorted(torch_names.__all__)


def _api(lib: Any) -> Callable[[str], Any]:
    return lambda name: getattr(lib, name)


def _views_and_mutations(lib: Any) -> list[Any]:
    api = _api(lib)
    out: list[Any] = []
    f = api("_to_functional_tensor")(lib.ones(4))
    out.append(
        (
            api("_functionalize_has_data_mutation")(f),
            api("_functionalize_mutation_counter")(f),
            api("_is_functional_tensor_base")(f),
        )
    )
    api("_enable_functionalization")(reapply_views=False)
    try:
        v = f.view(2, 2)
        out.append(
            (api("_is_functional_tensor_base")(v), api("_functionalize_has_data_mutation")(v))
        )
        v.add_(1)
        out.append(
            [api(n)(t) for n in ("_functionalize_has_data_mutation", "_functionalize_mutation_counter")
             for t in (f, v)]
        )  # fmt: skip
        a, _ = f.split(2)
        out.append([api("_functionalize_is_multi_output_view")(t) for t in (a, v)])
        w = f.unsqueeze(0)
        w.unsqueeze_(0)
        out.append([api("_functionalize_has_metadata_mutation")(t) for t in (w, f)])
        f.mul_(3)
        api("_functionalize_sync")(v)
        out.append([api("_functionalize_mutation_counter")(t) for t in (f, v)])
        out.append(api("_from_functional_tensor")(v).tolist())
        out.append(api("_is_functional_tensor")(lib.zeros(2)))  # factories are wrapped
    finally:
        api("_disable_functionalization")()
    out.append(api("_is_functional_tensor")(lib.zeros(2)))  # and no longer after
    return out


def test_views_and_mutations_answer_as_torch() -> None:
    assert _views_and_mutations(td) == _views_and_mutations(torch)


def _replace_and_commit(lib: Any) -> list[Any]:
    api = _api(lib)
    g = api("_to_functional_tensor")(lib.zeros(2))
    view = g[1:]
    api("_functionalize_replace")(g, lib.full((2,), 5.0))
    out: list[Any] = [
        api("_functionalize_has_data_mutation")(g),  # replaced, not committed yet
        api("_functionalize_mutation_counter")(g),
        api("_from_functional_tensor")(g).tolist(),
    ]
    api("_functionalize_commit_update")(g)
    api("_functionalize_sync")(view)
    out += [
        api("_functionalize_has_data_mutation")(g),
        api("_from_functional_tensor")(view).tolist(),
    ]
    return out


def test_replace_and_commit_answer_as_torch() -> None:
    assert _replace_and_commit(td) == _replace_and_commit(torch)


def test_reapply_views_flag_returns_the_previous_setting_as_torch() -> None:
    for lib in (td, torch):
        flip = _api(lib)("_functionalize_enable_reapply_views")
        assert [flip(True), flip(True), flip(False), flip()] == [False, True, True, False]


def test_enable_sets_the_reapply_flag_and_disable_clears_it() -> None:
    flip = td._functionalize_enable_reapply_views
    td._enable_functionalization(reapply_views=True)
    try:
        assert flip(True) is True
    finally:
        td._disable_functionalization()
    assert flip(False) is False


def test_unwrapping_does_not_sync_as_torch() -> None:
    def program(lib: Any) -> list[float]:
        api = _api(lib)
        f = api("_to_functional_tensor")(lib.zeros(3))
        api("_enable_functionalization")()
        try:
            f[1:].add_(1.0)
        finally:
            api("_disable_functionalization")()
        stale = api("_from_functional_tensor")(f).tolist()
        api("_functionalize_sync")(f)
        return stale + api("_from_functional_tensor")(f).tolist()

    assert program(td) == program(torch) == [0.0, 0.0, 0.0, 0.0, 1.0, 1.0]


@pytest.mark.parametrize(
    "name",
    [n for n in NAMES if n.startswith("_functionalize_") and n != "_functionalize_enable_reapply_views"]
    + ["_from_functional_tensor"],
)  # fmt: skip
def test_plain_tensors_are_refused(name: str) -> None:
    args = (td.ones(2), td.ones(2)) if name == "_functionalize_replace" else (td.ones(2),)
    with pytest.raises(RuntimeError) as info:
        getattr(td, name)(*args)
    assert str(info.value) == (
        f"{name}: expected a functional tensor (made by _to_functional_tensor), got a Tensor "
        "on device 'cpu'"
    )


def test_replace_refuses_a_functional_value() -> None:
    g = td._to_functional_tensor(td.zeros(2))
    with pytest.raises(RuntimeError) as info:
        td._functionalize_replace(g, td._to_functional_tensor(td.ones(2)))
    assert str(info.value) == (
        "_functionalize_replace: the new value must be a plain tensor, not a functional one "
        "(got a FunctionalTensor); unwrap it with _from_functional_tensor"
    )


def test_every_name_exists_in_torch_and_at_our_top_level() -> None:
    assert all(callable(getattr(torch, n)) and callable(getattr(td, n)) for n in NAMES)
    assert len(NAMES) == 14


def test_disabling_restores_the_default_words_object() -> None:
    from tensordispatch.dispatch.tls import DEFAULT_INCLUDED_RAW, local_state

    st = local_state()
    assert st.included is DEFAULT_INCLUDED_RAW
    td._enable_functionalization()
    td._disable_functionalization()
    # the fast paths test the default state by identity (one-hop bindings, lazy)
    assert st.included is DEFAULT_INCLUDED_RAW
