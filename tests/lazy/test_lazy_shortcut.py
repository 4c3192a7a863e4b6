"""The Functionalize shortcut for traced pointwise operators (lazy/shortcut.py): taken only
when nothing could observe the skipped steps, and the same results as the fallback path."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch import lazy
from tensordispatch.lazy.kernels import op_plan
from tensordispatch.lazy.shortcut import eligible
from tensordispatch.transforms.functionalize.wrapper import from_functional, to_functional


@pytest.fixture
def paths(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Which path each shortcut-kernel call took: "short" or "fallback"."""
    from tensordispatch.lazy import shortcut

    taken: list[str] = []
    real_fallback, real_wrap = shortcut.functionalize_fallback, shortcut.to_functional

    def fallback(*args: Any, **kwargs: Any) -> Any:
        taken.append("fallback")
        return real_fallback(*args, **kwargs)

    def wrap(t: Any) -> Any:
        taken.append("short")
        return real_wrap(t)

    monkeypatch.setattr(shortcut, "functionalize_fallback", fallback)
    monkeypatch.setattr(shortcut, "to_functional", wrap)
    return taken


def _functionalize_row() -> list[str]:
    dump = td.ops.aten.add.Tensor._entry.dump().splitlines()
    return [line for line in dump if line.startswith("Functionalize")]


def test_registered_for_add_while_lazy_is_initialised() -> None:
    assert _functionalize_row() == ["Functionalize: lazy shortcut :: (none) [ boxed ]"]


def test_eligible_operators() -> None:
    assert eligible(op_plan(td.ops.aten.add.Tensor))
    assert eligible(op_plan(td.ops.aten.mul.Tensor))
    assert not eligible(op_plan(td.ops.aten.add_.Tensor))  # in-place: alias annotation
    assert not eligible(op_plan(td.ops.aten.clamp.default))  # optional Scalars
    assert not eligible(op_plan(td.ops.aten.sum.dim_IntList))  # int list argument


def test_chain_matches_torch_lazy() -> None:
    data = np.linspace(-1, 1, 8, dtype=np.float32)
    results = []
    for lib in (td, torch):
        y = lib.from_numpy(data.copy()).to("lazy")
        for i in range(6):
            y = y + 0.5 if i % 2 == 0 else y * 0.999
        y = y.sub(y, alpha=2)  # a keyword argument: the fallback path
        results.append(y.cpu().numpy())
    np.testing.assert_array_equal(results[0], results[1])


def test_plain_pointwise_calls_take_the_shortcut(paths: list[str]) -> None:
    x = td.ones(3).to("lazy")
    y = (x + 0.5) * x
    assert paths == ["short", "short"]
    assert y.cpu().tolist() == [1.5, 1.5, 1.5]


def test_keyword_argument_takes_the_fallback(paths: list[str]) -> None:
    x = td.ones(3).to("lazy")
    y = x.add(x, alpha=2)
    assert paths == ["fallback"]
    assert y.cpu().tolist() == [3.0, 3.0, 3.0]


def test_forced_fallback_takes_the_fallback(paths: list[str]) -> None:
    x = td.ones(2).to("lazy")
    with lazy.config.force_fallback("add"):
        y = x + 1.0
    assert paths == ["fallback"]
    assert y.cpu().tolist() == [2.0, 2.0]


def test_stale_wrapper_is_synced_before_tracing() -> None:
    x = td.zeros(4).to("lazy")
    v = x.view(2, 2)
    v.add_(1)  # x is stale until synced
    y = x * 2
    assert y.cpu().tolist() == [2.0, 2.0, 2.0, 2.0]


def test_requires_grad_takes_the_fallback(paths: list[str]) -> None:
    x = td.ones(3).to("lazy").requires_grad_()
    y = (x * 3.0 + 1.0).sum()
    assert paths[:2] == ["fallback", "fallback"]
    y.backward()
    assert x.grad.cpu().tolist() == [3.0, 3.0, 3.0]


def test_cpu_functional_tensor_goes_through_the_fallback(paths: list[str]) -> None:
    w = to_functional(td.tensor([1.0, 2.0]))
    out = w + 1.5
    assert paths == ["fallback"]
    assert from_functional(out).tolist() == [2.5, 3.5]


def test_removed_with_the_backend() -> None:
    from tensordispatch.lazy.registration import install, uninstall

    uninstall()
    try:
        assert _functionalize_row() == []
    finally:
        install()
    assert len(_functionalize_row()) == 1


def test_dispatch_mode_sees_the_call_below_functionalization(paths: list[str]) -> None:
    from tensordispatch.dispatch.modes import DispatchMode

    seen: list[tuple[str, list[str]]] = []

    class Log(DispatchMode):
        def __torch_dispatch__(
            self, func: Any, types: Any, args: Any = (), kwargs: Any = None
        ) -> Any:
            seen.append((str(func), [type(a).__name__ for a in args]))
            return func(*args, **(kwargs or {}))

    x = td.ones(2).to("lazy")
    with Log():
        y = x + 0.5
    assert paths == ["fallback"]
    assert seen == [("aten.add.Tensor", ["LazyTensor", "Tensor"])]
    assert y.cpu().tolist() == [1.5, 1.5]
