"""sum(x) computed without its second dispatch (Note [Full sum without the second dispatch]
in backends/cpu/reductions.py).

Oracles: torch 2.13 for values, dtypes and shapes; the dispatched ``sum.dim_IntList(x, [])``
(the path the fast path replaces) for bit-identity; the dispatch trace and a logging mode for
"nothing observing the nested call is skipped".
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch.autograd import no_grad
from tensordispatch.backends.cpu.reductions import sum_all_fast
from tensordispatch.dispatch import DispatchMode, dispatch_trace

_DTYPES = ["float32", "float64", "float16", "int32", "int64", "uint8", "bool", "complex64"]


def _sample(dtype: str, shape: tuple[int, ...]) -> np.ndarray[Any, Any]:
    rng = np.random.default_rng(0)
    data = np.asarray(rng.standard_normal(shape) * 10)
    if dtype == "bool":
        return np.asarray(data > 0)
    if dtype == "complex64":
        return np.asarray(data + 1j * (data - 1)).astype(np.complex64)
    return data.astype(dtype)


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (0,), (4, 0, 2)])
def test_sum_matches_torch(dtype: str, shape: tuple[int, ...]) -> None:
    data = _sample(dtype, shape)
    ours, theirs = td.from_numpy(data.copy()).sum(), torch.from_numpy(data.copy()).sum()
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape) == ()
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-3)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "bool", "complex64"])
def test_fast_path_is_bit_identical_to_the_dispatched_sum(dtype: str) -> None:
    data = _sample(dtype, (37, 129))
    for x in (td.from_numpy(data), td.from_numpy(data).t(), td.from_numpy(data)[3:, ::2]):
        fast = sum_all_fast(x)
        assert fast is not None
        slow = td.ops.aten.sum.dim_IntList(x, [])
        assert fast.dtype == slow.dtype and fast.shape == slow.shape
        assert fast.stride() == slow.stride() == ()
        assert fast.numpy().tobytes() == slow.numpy().tobytes()


def test_fast_path_declines_when_the_nested_call_would_record() -> None:
    x = td.tensor([1.0, 2.0]).requires_grad_()
    assert sum_all_fast(x) is None
    with no_grad():
        assert sum_all_fast(x) is not None


def test_fast_path_declines_for_a_given_dtype_and_under_a_mode() -> None:
    x = td.tensor([1.0, 2.0])
    seen: list[str] = []

    class Log(DispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    with Log():
        assert sum_all_fast(x) is None
        x.sum()
    assert seen == ["aten.sum.default"]
    assert x.sum(dtype=td.float64).dtype == td.float64


def test_trace_still_shows_the_nested_sum() -> None:
    x = td.tensor([1.0, 2.0, 3.0])
    with dispatch_trace() as trace:
        assert x.sum().item() == 6.0
    hops = [line.split()[0] for line in str(trace).splitlines()]
    assert hops == ["aten::sum", "aten::sum", "aten::sum.dim_IntList", "aten::sum.dim_IntList"]


def test_gradient_through_sum_is_torchs() -> None:
    data = _sample("float32", (2, 3))
    tx = torch.from_numpy(data.copy()).requires_grad_()
    dx = td.from_numpy(data.copy()).requires_grad_()
    (tx * tx).sum().backward()
    loss = (dx * dx).sum()
    assert type(loss.grad_fn).__name__ == "SumBackward0"
    loss.backward()
    np.testing.assert_array_equal(dx.grad.numpy(), tx.grad.numpy())
