"""arange's direct path (Note [Composite factories call known kernels directly]): the
``KnownOutKernel`` guard's answers, results equal to torch's and to the dispatched kernels'
(bit for bit), and the full dispatch whenever ``arange.start_out`` is overridden or traced."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
import tensordispatch.backends.composite  # composite_layout imports it first
from tensordispatch.backends import composite_layout
from tensordispatch.backends.aten import below_ad_inplace_or_view, op
from tensordispatch.backends.composite_direct import KnownOutKernel
from tensordispatch.backends.cpu.kernels import empty_cpu
from tensordispatch.backends.cpu.layout import arange_cpu, arange_start_out
from tensordispatch.dispatch import dispatch_trace
from tensordispatch.library import Library

RANGES: list[tuple[Any, ...]] = [
    (10,),
    (0,),
    (-3,),
    (2, 11, 3),
    (5, -5, -2),
    (10.0,),
    (0.0,),
    (1, 2, 0.25),
    (-1.5, 2.5, 0.5),
    (3.0, -1.0, -0.7),
    (0, 1, 0.1),
    (1e16, 1e16 + 8, 2.0),
    (-0.0, 2.0, 1.0),
    (0.0, -2.0, -1.0),
    (0, 5.5),
]
DTYPES = [None, "int64", "int32", "float64", "float32", "float16", "uint8"]


def _call(m: Any, args: tuple[Any, ...], dtype: str | None) -> Any:
    kw = {} if dtype is None else {"dtype": getattr(m, dtype)}
    return m.arange(*args, **kw)


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("args", RANGES, ids=str)
def test_arange_matches_torch(args: tuple[Any, ...], dtype: str | None) -> None:
    try:
        expected = _call(torch, args, dtype)
    except (RuntimeError, ValueError) as e:
        with pytest.raises(type(e)):
            _call(td, args, dtype)
        return
    got = _call(td, args, dtype)
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(expected.shape) and got.stride() == expected.stride()
    assert got._version == expected._version == 0
    ours, theirs = got.numpy(), expected.numpy()
    # torch's vectorized kernel may fuse start + i * step (FMA): last-bit differences, which
    # the dispatched CPU kernel has too (the next test pins the fused path to it bit for bit)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6 if dtype == "float16" else 1e-12)
    assert np.array_equal(np.signbit(ours), np.signbit(theirs))  # -0.0 keeps its sign


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")
@pytest.mark.parametrize("dtype", ["int64", "float64", "float32", "float16"])
@pytest.mark.parametrize("args", [a if len(a) == 3 else (0, a[-1], 1) for a in RANGES], ids=str)
def test_fused_values_are_the_kernels_bit_for_bit(args: tuple[Any, ...], dtype: str) -> None:
    dt = getattr(td, dtype)
    try:
        n = composite_layout.arange_length(*args, dt)
    except (RuntimeError, ValueError):
        return
    out = arange_start_out(*args, out=empty_cpu([n], dtype=dt))
    fused = arange_cpu(*args, n, dt)
    assert fused is not None and fused.dtype is dt and fused.stride() == out.stride()
    assert fused._data.tobytes() == out._data.tobytes()


def test_the_guard_knows_the_kernel_under_the_binding_words_only() -> None:
    g = KnownOutKernel("arange.start_out", arange_start_out)
    assert g.known() is False  # default words: ADInplaceOrView would bump the version
    assert below_ad_inplace_or_view(g.known) is True


def test_a_user_arange_out_kernel_is_called_by_arange() -> None:
    seen: list[Any] = []

    def my_arange(start: Any, end: Any, step: Any = 1, *, out: Any) -> Any:
        seen.append((start, end, step))
        out._data[...] = 7
        return out

    td.arange(3)  # the guard has answered yes for this state
    lib = Library("aten", "IMPL")
    with warnings.catch_warnings():  # the "Overriding a previously registered" warning
        warnings.simplefilter("ignore")
        lib.impl("arange.start_out", my_arange, "CPU")
    try:
        got = td.arange(3)
    finally:
        lib._destroy()
    assert seen == [(0, 3, 1)] and got.tolist() == [7, 7, 7]
    assert td.arange(3).tolist() == [0, 1, 2]


def test_a_trace_sees_the_inner_calls() -> None:
    td.arange(4.0)
    with dispatch_trace() as trace:
        td.arange(4.0)
    ops = [h.op for h in trace.hops]
    assert "aten::arange.start_out" in ops and "aten::empty.memory_format" in ops


def test_meta_device_still_dispatches() -> None:
    t = td.arange(5, device="meta")
    assert t.device.type == "meta" and tuple(t.shape) == (5,)


def test_fused_result_is_a_fresh_root() -> None:
    t = td.arange(6)
    assert t._base is None and t._data.flags.c_contiguous
    assert np.shares_memory(t._data, t.view(2, 3)._data)


def test_arange_direct_op_call_under_default_words_bumps_like_torch() -> None:
    # op("arange") outside the binding runs the dispatched composite, as before
    t, expected = op("arange")(4), torch.ops.aten.arange(4)
    assert t.tolist() == expected.tolist() and t._version == expected._version
