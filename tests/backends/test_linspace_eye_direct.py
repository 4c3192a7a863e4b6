"""linspace's and eye's direct calls of our CPU kernels (Note [Composite factories call known
kernels directly]): results equal to torch's, the out= kernels' paths (contiguous and
strided eye), errors, and the full dispatch when an out= kernel is overridden or traced."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import torch

import tensordispatch as td
from tensordispatch.dispatch import dispatch_trace
from tensordispatch.library import Library

LINSPACES: list[tuple[Any, ...]] = [
    (0, 1, 5), (0, 1, 1), (0, 1, 0), (-1.5, 2.5, 7), (3, -3, 4), (0, 10, 11), (1e10, 2e10, 3),
]  # fmt: skip
DTYPES = [None, "float64", "float16", "int32", "int64", "uint8", "complex64"]


def _same(ours: Any, theirs: Any) -> None:
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.stride() == theirs.stride()
    assert ours._version == theirs._version == 0
    got = torch.from_numpy(ours.numpy().copy())
    if theirs.is_floating_point() or theirs.is_complex():
        # torch's vectorized kernels may fuse a multiply-add (FMA): last-bit differences,
        # which the dispatched CPU kernel has too (the direct path calls that same kernel)
        torch.testing.assert_close(got, theirs, rtol=1e-6, atol=1e-6)
    else:
        assert torch.equal(got, theirs)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("args", LINSPACES, ids=str)
def test_linspace_matches_torch(args: tuple[Any, ...], dtype: str | None) -> None:
    kw: dict[str, Any] = {} if dtype is None else {"dtype": getattr(torch, dtype)}
    try:
        expected = torch.linspace(*args, **kw)
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as info:
            td.linspace(*args, **({} if dtype is None else {"dtype": getattr(td, dtype)}))
        assert str(info.value) == str(e)
        return
    _same(td.linspace(*args, **({} if dtype is None else {"dtype": getattr(td, dtype)})), expected)


@pytest.mark.parametrize("dtype", ["float32", "bool", "int64", "complex64", "uint8"])
@pytest.mark.parametrize("nm", [(3, 3), (4, 2), (2, 4), (0, 3), (3, 0), (1, 1), (5, 1)], ids=str)
def test_eye_matches_torch(nm: tuple[int, int], dtype: str) -> None:
    _same(td.eye(*nm, dtype=getattr(td, dtype)), torch.eye(*nm, dtype=getattr(torch, dtype)))


def test_eye_into_a_strided_out_writes_the_diagonal_like_torch() -> None:
    ours, theirs = td.empty(3, 3).t(), torch.empty(3, 3).t()
    td.eye(3, 3, out=ours)
    torch.eye(3, 3, out=theirs)
    assert ours.tolist() == theirs.tolist() and ours.stride() == theirs.stride()


@pytest.mark.parametrize("call", ["eye(-1)", "eye(2, -3)", "linspace(0, 1, -2)"])
def test_errors_are_torchs(call: str) -> None:
    with pytest.raises(RuntimeError) as theirs:
        eval(f"torch.{call}")
    with pytest.raises(RuntimeError) as ours:
        eval(f"td.{call}")
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize(
    ("name", "call"),
    [("eye.m_out", lambda: td.eye(2)), ("linspace.out", lambda: td.linspace(0, 1, 2))],
)
def test_a_user_out_kernel_is_called(name: str, call: Any) -> None:
    seen: list[Any] = []

    def mine(*args: Any, out: Any) -> Any:
        seen.append(args)
        return out

    call()  # the guards have answered yes for these states
    lib = Library("aten", "IMPL")
    with warnings.catch_warnings():  # the "Overriding a previously registered" warning
        warnings.simplefilter("ignore")
        lib.impl(name, mine, "CPU")
    try:
        call()
    finally:
        lib._destroy()
    assert len(seen) == 1
    call()
    assert len(seen) == 1


def test_a_trace_sees_the_inner_calls() -> None:
    td.eye(2)
    td.linspace(0, 1, 3)
    with dispatch_trace() as trace:
        td.eye(2)
        td.linspace(0, 1, 3)
    ops = {h.op for h in trace.hops}
    assert {"aten::eye.m_out", "aten::linspace.out", "aten::empty.memory_format"} <= ops


def test_meta_device_still_dispatches() -> None:
    assert tuple(td.eye(2, 3, device="meta").shape) == (2, 3)
    assert tuple(td.linspace(0, 1, 4, device="meta").shape) == (4,)


@pytest.mark.parametrize("args", LINSPACES, ids=str)
def test_direct_linspace_is_the_dispatched_kernels_bit_for_bit(args: tuple[Any, ...]) -> None:
    from tensordispatch.backends.aten import op

    out = td.empty(max(args[2], 0))
    dispatched = op("linspace.out")(*args, out=out)  # default words: the full dispatch
    assert td.linspace(*args).numpy().tobytes() == dispatched.numpy().tobytes()


def _both_ends(kind: Any, start: float, end: float, steps: int) -> Any:
    """torch's linspace rule in one expression: start + i * step for the first half, end -
    (steps - 1 - i) * step for the rest, every operation in ``kind``."""
    import numpy as np

    lo, hi = kind.type(start), kind.type(end)
    step = (hi - lo) / kind.type(steps - 1)
    i = np.arange(steps, dtype=kind)
    return np.where(i < steps // 2, lo + step * i, hi - step * (kind.type(steps - 1) - i))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("steps", [2, 3, 5, 10, 101, 2048, 2049, 2050, 4097])
def test_linspace_halves_are_the_both_ends_rule_bit_for_bit(dtype: str, steps: int) -> None:
    import numpy as np

    kind = np.dtype(dtype)
    for start, end in [(0, 1), (-2.5, 7.25), (1e4, -3.0), (-0.0, 0.0), (0.1, 0.7), (-6e4, 6e4)]:
        got = td.linspace(start, end, steps, dtype=getattr(td, dtype)).numpy()
        with np.errstate(all="ignore"):
            assert got.tobytes() == _both_ends(kind, start, end, steps).tobytes()
