"""The Functionalize shortcut for traced pointwise operators (lazy/shortcut.py): taken only
when nothing could observe the skipped steps, and the same results as the fallback path."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch import lazy
from tensordispatch.lazy import shortcut
from tensordispatch.lazy.kernels import op_plan
from tensordispatch.lazy.shortcut import eligible
from tensordispatch.transforms.functionalize.wrapper import (
    FunctionalTensor,
    from_functional,
    to_functional,
)


@pytest.fixture
def no_fast_methods() -> Iterator[None]:
    """FunctionalTensor without lazy's fast operator methods (the shortcut kernel's tests)."""
    saved = {name: FunctionalTensor.__dict__.get(name) for name in shortcut.FAST_METHODS}
    for name, method in saved.items():
        if method is not None:
            delattr(FunctionalTensor, name)
    yield
    for name, method in saved.items():
        if method is not None:
            setattr(FunctionalTensor, name, method)


@pytest.fixture
def paths(monkeypatch: pytest.MonkeyPatch, no_fast_methods: None) -> list[str]:
    """Which path each shortcut-kernel call took: "short" or "fallback"."""
    return _record_paths(monkeypatch)


def _record_paths(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    taken: list[str] = []
    real_fallback, real_wrap = shortcut.functionalize_fallback, shortcut.wrap_result
    real_fast = shortcut._fast_wrap

    def fallback(*args: Any, **kwargs: Any) -> Any:
        taken.append("fallback")
        return real_fallback(*args, **kwargs)

    def wrap(t: Any) -> Any:
        taken.append("short")
        return real_wrap(t)

    def fast(t: Any) -> Any:
        taken.append("fast")
        return real_fast(t)

    monkeypatch.setattr(shortcut, "functionalize_fallback", fallback)
    monkeypatch.setattr(shortcut, "wrap_result", wrap)
    monkeypatch.setattr(shortcut, "_fast_wrap", fast)
    for name in shortcut.FAST_METHODS:  # calls inlined entirely (lazy/inline_methods.py)
        method = FunctionalTensor.__dict__.get(name)
        if method is not None:
            monkeypatch.setattr(FunctionalTensor, name, _recording(method, taken))
    return taken


def _recording(method: Callable[..., Any], taken: list[str]) -> Callable[..., Any]:
    """``method``, recording "fast" for a call that took none of the recorded paths."""

    def recorded(*args: Any, **kwargs: Any) -> Any:
        before = len(taken)
        result = method(*args, **kwargs)
        if len(taken) == before:
            taken.append("fast")
        return result

    recorded.__name__ = method.__name__
    return recorded


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


@pytest.mark.parametrize(
    ("call", "path"),
    [
        (lambda lib, t: lib.exp(t), "short"),
        (lambda lib, t: lib.ops.aten.add.Scalar(t, 2.5), "short"),
        (lambda lib, t: lib.ops.aten.bitwise_and.Scalar_Tensor(3, (t * 4).to(lib.int64)), "short"),
        (lambda lib, t: lib.ops.aten.add.Tensor(t, t, alpha=-2), "fallback"),
    ],
    ids=["unary", "scalar_argument", "scalar_first", "keyword"],
)
def test_unrolled_and_generic_kernels_match_eager_and_torch(
    paths: list[str], call: Callable[[Any, Any], Any], path: str
) -> None:
    data = np.array([0.25, 1.5, -2.0], dtype=np.float32)
    got = call(td, td.from_numpy(data.copy()).to("lazy")).cpu()
    eager = call(td, td.from_numpy(data.copy()))
    expected = call(torch, torch.from_numpy(data.copy()))
    assert paths[-1] == path
    assert got.dtype == eager.dtype
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.numpy(), eager.numpy())  # our CPU kernels, bit for bit
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6)  # torch: ulps (exp)


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


def test_stale_wrapper_is_synced_before_tracing(no_fast_methods: None) -> None:
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


# -- fast operator methods (Note [Fast operator methods]) -------------------------------------


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Lazy's fast operator methods installed, and the path each call took."""
    handle = None
    if FunctionalTensor.__dict__.get("__add__") is None:
        handle = shortcut.install_methods()
    yield _record_paths(monkeypatch)
    if handle is not None:
        handle.remove()


def _program(x: Any, z: Any) -> Any:
    y = x + 0.5
    y = y * 0.999
    y = y - z
    y = y / z
    return y * 3


def _ir_and_counters(x: Any, z: Any) -> tuple[str, dict[str, int | None]]:
    lazy.metrics.reset_metrics()
    y = _program(x, z)
    names = ("lazy::add", "lazy::mul", "lazy::sub", "lazy::div", "CreateLtcTensor")
    return lazy.debug.dump_ir([y]), {n: lazy.metrics.counter_value(n) for n in names}


def test_fast_methods_build_the_same_graph_as_the_dispatcher(fast: list[str]) -> None:
    x = td.tensor([1.0, -2.0, 3.0]).to("lazy")
    z = td.tensor([2.0, 4.0, -8.0]).to("lazy")
    fast_ir, fast_counts = _ir_and_counters(x, z)
    assert fast == ["fast"] * 5
    handle = shortcut.install_methods()  # saves the current methods, then:
    for name in shortcut.FAST_METHODS:
        setattr(FunctionalTensor, name, getattr(td.Tensor, name))
    try:
        slow_ir, slow_counts = _ir_and_counters(x, z)
    finally:
        handle.remove()
    assert fast == ["fast"] * 5 + ["short"] * 5
    assert fast_ir == slow_ir
    assert fast_counts == slow_counts == {
        "lazy::add": 1, "lazy::mul": 2, "lazy::sub": 1, "lazy::div": 1, "CreateLtcTensor": 5
    }  # fmt: skip


def test_fast_methods_match_torch_lazy(fast: list[str]) -> None:
    data = np.linspace(-1, 1, 8, dtype=np.float32)
    results = []
    for lib in (td, torch):
        x = lib.from_numpy(data.copy()).to("lazy")
        z = lib.from_numpy(data[::-1].copy() + 3).to("lazy")
        results.append(_program(x, z).cpu().numpy())
    assert fast == ["fast"] * 5
    np.testing.assert_array_equal(results[0], results[1])


_SLOW_CASES = {
    "keyword": lambda x: x.__add__(x, alpha=2),
    "zero": lambda x: x + 0.0,
    "negative_zero": lambda x: x * -0.0,
    "nan": lambda x: x + float("nan"),
    "bool": lambda x: x * True,
    "cpu_tensor": lambda x: x * td.tensor(2.0),
    "reflected": lambda x: 0.5 + x,
}


@pytest.mark.parametrize("case", sorted(_SLOW_CASES))
def test_other_calls_take_the_tensor_method(fast: list[str], case: str) -> None:
    data = np.array([1.0, -2.0, 4.0], dtype=np.float32)
    got = _SLOW_CASES[case](td.from_numpy(data.copy()).to("lazy")).cpu().numpy()
    expected = _SLOW_CASES[case](td.from_numpy(data.copy())).numpy()
    assert "fast" not in fast
    np.testing.assert_array_equal(got, expected)


def test_requires_grad_or_grad_mode_state_takes_the_tensor_method(fast: list[str]) -> None:
    x = td.ones(3).to("lazy").requires_grad_()
    y = (x * 3.0 + 1.0).sum()
    assert "fast" not in fast
    y.backward()
    assert x.grad.cpu().tolist() == [3.0, 3.0, 3.0]


def test_stale_wrapper_takes_the_tensor_method(fast: list[str]) -> None:
    x = td.zeros(4).to("lazy")
    x.view(2, 2).add_(1)  # x is stale until synced
    y = x * 2
    assert fast[-1:] == ["short"]
    assert y.cpu().tolist() == [2.0, 2.0, 2.0, 2.0]


def test_forced_fallback_and_modes_take_the_tensor_method(fast: list[str]) -> None:
    from tensordispatch.dispatch.modes import DispatchMode

    class Quiet(DispatchMode):
        def __torch_dispatch__(
            self, func: Any, types: Any, args: Any = (), kwargs: Any = None
        ) -> Any:
            return func(*args, **(kwargs or {}))

    x = td.ones(2).to("lazy")
    with lazy.config.force_fallback("add"):
        y = x + 1.0
    with Quiet():
        z = x * 3.0
    assert "fast" not in fast
    assert (y.cpu().tolist(), z.cpu().tolist()) == ([2.0, 2.0], [3.0, 3.0])


def test_a_kernel_registered_later_is_not_bypassed(fast: list[str]) -> None:
    from tensordispatch.dispatch.library import Library

    seen: list[str] = []

    def autograd_lazy_add(self: Any, other: Any, *, alpha: Any = 1) -> Any:
        seen.append("mine")
        return td.ops.aten.mul.Tensor(self, other)

    x = td.tensor([1.0, 2.0]).to("lazy")
    lib = Library("aten", "IMPL")
    lib.impl("add.Tensor", autograd_lazy_add, "AutogradLazy")
    try:
        y = x + 3.0
    finally:
        lib._destroy()
    assert seen == ["mine"]
    assert y.cpu().tolist() == [3.0, 6.0]
    assert (x + 3.0).cpu().tolist() == [4.0, 5.0]
    assert fast == ["short", "fast"]


def test_remove_restores_the_tensor_methods(no_fast_methods: None) -> None:
    handle = shortcut.install_methods()
    assert FunctionalTensor.__add__.__name__ == "lazy_fast_add"
    handle.remove()
    assert "__add__" not in FunctionalTensor.__dict__
    assert FunctionalTensor.__add__ is td.Tensor.__add__


def test_fast_methods_come_and_go_with_the_backend() -> None:
    from tensordispatch.lazy.registration import install, uninstall

    names = sorted(shortcut.FAST_METHODS)
    assert [FunctionalTensor.__dict__[n].__name__ for n in names] == [
        "lazy_fast_add", "lazy_fast_mul", "lazy_fast_sub", "lazy_fast_div"
    ]  # fmt: skip
    uninstall()
    try:
        assert [n for n in names if n in FunctionalTensor.__dict__] == []
    finally:
        install()
    assert FunctionalTensor.__add__.__name__ == "lazy_fast_add"


def test_an_unexpected_dispatcher_state_means_the_normal_path(
    fast: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tensordispatch.dispatch.library import Library

    def broken(*args: Any) -> bool:
        raise AttributeError("the dispatcher's published state changed layout")

    monkeypatch.setattr(shortcut, "_runs_autograd_then", broken)
    x = td.tensor([1.0, 2.0]).to("lazy")
    lib = Library("aten", "IMPL")  # an unrelated kernel republishes add's dispatch state
    lib.impl("add.Tensor", lambda self, other, *, alpha=1: self, "HPU")
    try:
        y = x + 3.0  # validated again for the new state: the check fails, not the call
    finally:
        lib._destroy()
    assert "fast" not in fast
    assert y.cpu().tolist() == [4.0, 5.0]
