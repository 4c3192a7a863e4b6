"""mean(x) computed without its second dispatch (Note [Full sum without the second dispatch],
the mean paragraph, in backends/cpu/reductions.py), and the nested operators' tables checked
by the sum and mean fast paths.

Oracles: torch 2.13 for values, dtypes, shapes and error texts; the dispatched
``mean.dim(x, [])`` (the path the fast path replaces) for bit-identity; a kernel registered
later and a logging mode for "nothing observing the nested call is skipped".
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch.autograd import no_grad
from tensordispatch.backends.cpu.reductions import mean_all_fast, sum_all_fast
from tensordispatch.dispatch import DispatchMode, dispatch_trace
from tensordispatch.library import Library

from .overrides import impl_quietly

_FLOATS = ["float16", "float32", "float64"]


def _sample(dtype: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray[Any, Any]:
    data = np.random.default_rng(seed).standard_normal(shape) * 10 + 3
    return np.asarray(data).astype(dtype)


def _views(data: np.ndarray[Any, Any]) -> Iterator[td.Tensor]:
    base = td.from_numpy(data.copy())
    yield base
    if base.dim() >= 2:
        yield base.t()
        yield base[1:, ::2]


@pytest.mark.parametrize("dtype", _FLOATS)
@pytest.mark.parametrize("shape", [(), (1,), (3,), (2, 3), (4, 5, 6)])
def test_mean_matches_torch(dtype: str, shape: tuple[int, ...]) -> None:
    data = _sample(dtype, shape)
    ours, theirs = td.from_numpy(data.copy()).mean(), torch.from_numpy(data.copy()).mean()
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1] == dtype
    assert tuple(ours.shape) == tuple(theirs.shape) == ()
    assert ours.stride() == theirs.stride() == ()
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=2e-3)


@pytest.mark.parametrize(("given", "wanted"), [("float32", "float64"), ("float16", "float32")])
def test_mean_with_dtype_matches_torch(given: str, wanted: str) -> None:
    data = _sample(given, (5, 7))
    ours = td.from_numpy(data.copy()).mean(dtype=getattr(td, wanted))
    theirs = torch.from_numpy(data.copy()).mean(dtype=getattr(torch, wanted))
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1] == wanted
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


@pytest.mark.parametrize("dtype", _FLOATS)
@pytest.mark.parametrize("shape", [(3,), (37, 129), (300, 1000)])
def test_fast_path_is_bit_identical_to_the_dispatched_mean(
    dtype: str, shape: tuple[int, ...]
) -> None:
    for x in _views(_sample(dtype, shape)):
        fast = mean_all_fast(x)
        assert fast is not None
        slow = td.ops.aten.mean.dim(x, [])
        assert fast.dtype == slow.dtype and fast.shape == slow.shape
        assert fast.numpy().tobytes() == slow.numpy().tobytes()


@pytest.mark.parametrize(("given", "wanted"), [("float32", "float64"), ("float64", "float16")])
def test_fast_path_with_dtype_is_bit_identical(given: str, wanted: str) -> None:
    for x in _views(_sample(given, (37, 129), seed=1)):
        fast = mean_all_fast(x, getattr(td, wanted))
        assert fast is not None
        slow = td.ops.aten.mean.dim(x, [], dtype=getattr(td, wanted))
        assert fast.dtype == slow.dtype
        assert fast.numpy().tobytes() == slow.numpy().tobytes()


def test_special_values_are_the_dispatched_means() -> None:
    for values in ([1.0, float("inf")], [float("inf"), -float("inf")], [float("nan"), 1.0],
                   [65504.0, 65504.0], [-0.0, -0.0]):  # fmt: skip
        x = td.tensor(values, dtype=td.float16)
        fast, slow = mean_all_fast(x), td.ops.aten.mean.dim(x, [])
        assert fast is not None
        assert fast.numpy().tobytes() == slow.numpy().tobytes()
        if values[0] != 65504.0:  # a known difference of the CPU kernel: see the next test
            theirs = torch.tensor(values, dtype=torch.float16).mean()
            np.testing.assert_array_equal(fast.numpy(), theirs.numpy())


@pytest.mark.xfail(strict=True, reason="cpu/kernels.py mean_out sums float16 in float16")
def test_float16_mean_accumulates_in_float32_as_torchs() -> None:
    values = [65504.0, 65504.0]
    theirs = torch.tensor(values, dtype=torch.float16).mean()
    ours = td.tensor(values, dtype=td.float16).mean()
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_declined_inputs_take_the_dispatched_path_and_match_torch() -> None:
    assert mean_all_fast(td.zeros(0)) is None  # empty: the kernel writes NaN
    assert np.isnan(td.zeros(0).mean().item()) and torch.zeros(0).mean().isnan()
    c = [1 + 2j, 3 - 1j]
    assert mean_all_fast(td.tensor(c)) is None
    assert td.tensor(c).mean().item() == torch.tensor(c).mean().item()
    assert mean_all_fast(td.tensor([1.0]), td.int64) is None
    assert mean_all_fast(td.tensor([1, 2]), td.float32) is None
    assert td.tensor([1, 2]).mean(dtype=td.float32).item() == 1.5
    assert torch.tensor([1, 2]).mean(dtype=torch.float32).item() == 1.5


def test_integer_input_error_is_torchs() -> None:
    with pytest.raises(RuntimeError) as theirs:
        torch.tensor([1, 2]).mean()
    with pytest.raises(RuntimeError) as ours:
        td.tensor([1, 2]).mean()
    assert (
        str(ours.value)
        == str(theirs.value)
        == (
            "mean(): could not infer output dtype. Input dtype must be either a floating point or "
            "complex dtype. Got: Long"
        )
    )


def test_integral_dtype_error_is_torchs() -> None:
    with pytest.raises(RuntimeError) as theirs:
        torch.tensor([1.0, 2.0]).mean(dtype=torch.int32)
    with pytest.raises(RuntimeError) as ours:
        td.tensor([1.0, 2.0]).mean(dtype=td.int32)
    assert (
        str(ours.value)
        == str(theirs.value)
        == (
            "mean(): could not infer output dtype. Optional dtype must be either a floating point "
            "or complex dtype. Got: Int"
        )
    )


def test_fast_path_declines_when_the_nested_call_would_record() -> None:
    x = td.tensor([1.0, 2.0]).requires_grad_()
    assert mean_all_fast(x) is None
    with no_grad():
        assert mean_all_fast(x) is not None


def test_gradient_through_mean_is_torchs() -> None:
    data = _sample("float32", (2, 3))
    tx = torch.from_numpy(data.copy()).requires_grad_()
    dx = td.from_numpy(data.copy()).requires_grad_()
    (tx * tx).mean().backward()
    loss = (dx * dx).mean()
    assert type(loss.grad_fn).__name__ == "MeanBackward0"
    assert loss.item() == pytest.approx((tx * tx).mean().item(), rel=1e-6)
    loss.backward()
    np.testing.assert_allclose(dx.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


def test_a_mode_sees_torchs_calls() -> None:
    x = td.tensor([1.0, 2.0])
    seen: list[str] = []

    class Log(DispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    with Log():
        assert mean_all_fast(x) is None
        assert x.mean().item() == 1.5
    assert seen == ["aten.mean.default"]


def test_trace_still_shows_the_nested_mean() -> None:
    x = td.tensor([1.0, 2.0, 3.0])
    with dispatch_trace() as trace:
        assert x.mean().item() == 2.0
    hops = [line.split()[0] for line in str(trace).splitlines()]
    assert hops == ["aten::mean", "aten::mean", "aten::mean.dim", "aten::mean.dim"]


@pytest.mark.parametrize(("name", "method", "fast"), [
    ("sum.dim_IntList", "sum", sum_all_fast), ("mean.dim", "mean", mean_all_fast),
])  # fmt: skip
@pytest.mark.parametrize("key", ["CPU", "Autograd", "AutogradCPU"])
def test_a_kernel_registered_later_for_the_nested_operator_is_called(
    lib: Library, name: str, method: str, fast: Any, key: str
) -> None:
    x = td.tensor([1.0, 2.0])
    assert fast(x) is not None
    calls: list[str] = []

    def override(self: Any, dim: Any, keepdim: bool = False, *, dtype: Any = None) -> Any:
        calls.append(key)
        return td.tensor(42.0)

    impl_quietly(lib, name, override, key)
    assert fast(x) is None
    assert getattr(x, method)().item() == 42.0  # torch's composite calls the override too
    assert calls == [key]
    lib._destroy()
    assert fast(x) is not None and getattr(x, method)().item() in (3.0, 1.5)


def test_torch_calls_a_later_cpu_kernel_of_the_nested_operator_too() -> None:
    """The oracle for the test above: torch's sum and mean reach a CPU override of their
    nested operator."""
    lib = torch.library.Library("aten", "IMPL")
    try:
        with warnings.catch_warnings():  # torch's "Overriding a previously registered kernel"
            warnings.simplefilter("ignore")
            for name in ("sum.dim_IntList", "mean.dim"):
                lib.impl(name, lambda *a, **k: torch.tensor(42.0), "CPU")
        assert torch.tensor([1.0, 2.0]).sum().item() == 42.0
        assert torch.tensor([1.0, 2.0]).mean().item() == 42.0
    finally:
        lib._destroy()
    assert torch.tensor([1.0, 2.0]).mean().item() == 1.5


@pytest.mark.parametrize(("name", "method"), [("sum.dim_IntList", "sum"), ("mean.dim", "mean")])
def test_a_later_ad_inplace_or_view_kernel_of_the_nested_operator_is_not_reached(
    lib: Library, name: str, method: str
) -> None:
    """Below the outer operator's autograd kernel a functional call skips ADInplaceOrView, in
    torch (checked here) as in ours: the fast path may skip it too."""
    seen: list[str] = []

    nested = torch.ops.aten.sum.dim_IntList if method == "sum" else torch.ops.aten.mean.dim

    def theirs(*args: Any, **kwargs: Any) -> Any:
        seen.append("torch")
        with torch._C._AutoDispatchBelowADInplaceOrView():
            return nested(*args, **kwargs)

    tlib = torch.library.Library("aten", "IMPL")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tlib.impl(name, theirs, "ADInplaceOrView")
        assert getattr(torch.tensor([1.0, 2.0]), method)().item() in (3.0, 1.5)
    finally:
        tlib._destroy()

    def ours(*args: Any, **kwargs: Any) -> Any:
        seen.append("ours")
        return td.tensor(42.0)

    impl_quietly(lib, name, ours, "ADInplaceOrView")
    x = td.tensor([1.0, 2.0])
    assert getattr(x, method)().item() in (3.0, 1.5)
    assert seen == []
