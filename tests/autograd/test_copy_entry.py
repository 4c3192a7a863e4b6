"""The specialised Autograd entry of ``copy_`` (autograd/manual.py, ``_copy_specialize``): the
dispatcher caches a generated entry (entries.py, Note [The no-grad path]) and every behaviour of
the generic kernel stays, checked against torch."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import tensordispatch as td
from tensordispatch.autograd import manual
from tensordispatch.dispatch.keyset import AFTER_AUTOGRAD_RAW


def test_copy_kernel_has_a_specializer_and_stays_plain_no_grad() -> None:
    assert manual._copy_kernel._td_specialize is manual._copy_specialize
    assert manual._copy_kernel._td_plain_no_grad is True


def test_the_cached_entry_is_the_generated_one_over_the_same_state() -> None:
    # a fresh published state (a registration republishes it): earlier tests' calls with
    # other key sets (a conjugate view's, whose Conjugate key copy_ falls through) may have
    # filled the redispatch cache in another order
    lib = td.library.Library("aten", "IMPL")
    lib.impl("copy_", lambda self, src, non_blocking=False: self, "PrivateUse3")
    lib._destroy()
    a = td.zeros(4, 4)
    a.copy_(td.ones(4, 4))
    state = td.ops.aten.copy_.default._entry.state
    generated = [
        (raw, e)
        for raw, e in state.default_cache.items()
        if getattr(e, "__globals__", {}).get("_td_record") is manual._record_copy
    ]
    assert generated
    for raw, entry in generated:
        below = state.redispatch_cache.get(raw & AFTER_AUTOGRAD_RAW)
        assert entry.__globals__["_td_below"] is below
    assert a.sum().item() == 16.0


@pytest.mark.parametrize("grad", [True, False])
def test_no_grad_copy_bumps_the_version_like_torch(grad: bool) -> None:
    def run(m: Any) -> tuple[int, list[float]]:
        a, b = m.zeros(2, 3), m.arange(6.0).reshape(2, 3)
        with m.set_grad_enabled(grad):
            a.copy_(b)
            a.copy_(b, non_blocking=False)
        return a._version, a.flatten().tolist()

    assert run(td) == run(torch)


def _record(m: Any) -> tuple[list[float], list[float], str, int]:
    x = m.arange(6.0).reshape(2, 3).requires_grad_()
    y = m.zeros(2, 3)
    y.copy_(x * 2)
    (y * m.arange(6.0).reshape(2, 3)).sum().backward()
    return x.grad.flatten().tolist(), y.flatten().tolist(), type(y.grad_fn).__name__, y._version


def test_recording_copy_matches_torch() -> None:
    assert _record(td) == _record(torch)


def test_copy_into_requires_grad_self_from_plain_src() -> None:
    def run(m: Any) -> tuple[list[float], str]:
        x = m.ones(3, requires_grad=True)
        y = x * 3
        y.copy_(m.arange(3.0))
        (y * 2).sum().backward()
        return x.grad.tolist(), type(y.grad_fn).__name__

    assert run(td) == run(torch)


def test_copy_into_a_view_records_copyslices() -> None:
    def run(m: Any) -> tuple[list[float], list[float], str]:
        x = m.ones(2, 3, requires_grad=True)
        s = m.arange(3.0).requires_grad_()
        base = x * 1
        base[1].copy_(s * 5)
        (base * base).sum().backward()
        return x.grad.flatten().tolist(), s.grad.tolist(), type(base.grad_fn).__name__

    assert run(td) == run(torch)


def test_copy_into_a_leaf_that_requires_grad_is_refused() -> None:
    x = td.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        x.copy_(td.ones(3))
    assert str(info.value) == (
        "a leaf Variable that requires grad is being used in an in-place operation."
    )


def test_copy_into_a_view_of_a_leaf_is_refused() -> None:
    x = td.zeros(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        x[0].copy_(td.ones(3))
    with pytest.raises(RuntimeError) as expected:
        torch.zeros(2, 3, requires_grad=True)[0].copy_(torch.ones(3))
    assert str(info.value) == str(expected.value)


def test_copy_into_a_leaf_under_no_grad_is_allowed() -> None:
    def run(m: Any) -> tuple[list[float], int, bool]:
        x = m.zeros(3, requires_grad=True)
        with m.no_grad():
            x.copy_(m.ones(3))
        return x.tolist(), x._version, x.grad_fn is None

    assert run(td) == run(torch)


def test_copy_on_inference_tensors_like_torch() -> None:
    def run(m: Any) -> tuple[list[float], bool]:
        with m.inference_mode():
            a = m.zeros(3)
            a.copy_(m.ones(3))
        return a.tolist(), a.is_inference()

    assert run(td) == run(torch)


def test_inplace_copy_on_inference_tensor_outside_inference_mode_is_refused() -> None:
    def error(m: Any) -> str:
        with m.inference_mode():
            a = m.zeros(3)
        with pytest.raises(RuntimeError) as info:
            a.copy_(m.ones(3))
        return str(info.value)

    assert error(td) == error(torch)


CALLS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "method": lambda m, a, b: a.copy_(b),
    "positional non_blocking": lambda m, a, b: a.copy_(b, True),
    "ops.aten": lambda m, a, b: m.ops.aten.copy_.default(a, b),
    "ops.aten non_blocking kw": lambda m, a, b: m.ops.aten.copy_.default(a, b, non_blocking=True),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_every_call_form_copies_and_records(name: str) -> None:
    def run(m: Any) -> tuple[list[float], list[float], int]:
        a, b = m.zeros(2, 2) * m.ones(2, 2, requires_grad=True), m.full((2, 2), 3.0)
        r = CALLS[name](m, a, b)
        a.sum().backward()
        return r.flatten().tolist(), a.flatten().tolist(), a._version

    assert run(td) == run(torch)


def test_functional_copy_still_has_its_rule() -> None:
    x = td.ones(2, requires_grad=True)
    r = td.ops.aten.copy.default(td.zeros(2), x)
    assert r.grad_fn is not None and r.grad_fn.name() == "torch::autograd::NotImplemented"
    assert r.tolist() == [1.0, 1.0]
