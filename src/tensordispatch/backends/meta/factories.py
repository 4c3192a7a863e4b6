"""Meta functions of the range and identity factories (arange, linspace, eye): their sizes
and torch's checks, shared by the CPU kernels (backends/cpu/layout.py) and the composite
factories (backends/composite_layout.py). Split from meta/layout.py, which registers the
Meta kernels and re-exports these names.
"""

from __future__ import annotations

import math
from typing import Any

from tensordispatch.backends.structured import prepare_out
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.tensor import Tensor


def arange_size(start: Any, end: Any, step: Any) -> int:
    """The number of elements of arange(start, end, step), with torch's checks."""
    for v, n in ((start, "start"), (end, "end")):
        if isinstance(v, float) and not math.isfinite(v):
            raise RuntimeError(f"unsupported range: {start} -> {end}")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if all(isinstance(v, int) for v in (start, end, step)):
        return max(-((start - end) // step), 0)
    return max(math.ceil((end - start) / step), 0)


def integral_bounds(dtype: Any, *values: Any) -> tuple[Any, ...]:
    """Range bounds as an integral dtype's kernels use them: each cast to int64 first
    (truncation toward zero: linspace(-1.5, 3.5, 3, dtype=int32) is [-1, 1, 3]); floating
    and complex dtypes keep the values."""
    if dtype.is_floating_point or dtype.is_complex:
        return values
    return tuple(v if isinstance(v, int) else int(v.real if isinstance(v, complex) else v)
                 for v in values)  # fmt: skip


def arange_length(start: Any, end: Any, step: Any, dtype: Any) -> int:
    """arange's length for an output of ``dtype``: torch computes it in double, except for
    int64, whose bounds are truncated first (arange(0, -8.000001, -4.0) has 2 int64
    elements, 3 int32 ones; a 0.5 step is ValueError "step must be nonzero" for int64 only)."""
    if type(start) is int and type(end) is int and type(step) is int:  # the common case
        if step > 0 and end >= start:
            return -((start - end) // step)
        if step < 0 and end <= start:
            return -((start - end) // step)
        return arange_size(start, end, step)  # raises the error
    for v in (start, end):
        if isinstance(v, float) and not math.isfinite(v):
            raise RuntimeError(f"unsupported range: {start} -> {end}")
    if dtype is _dt.int64:
        given = step
        start, end, step = integral_bounds(dtype, start, end, step)
        if step == 0 and given != 0:  # torch's int64 check of the truncated step
            raise ValueError("step must be nonzero")
    return arange_size(start, end, step)


def arange_start_out_meta(start: Any, end: Any, step: Any = 1, *, out: Tensor) -> Tensor:
    n = arange_length(start, end, step, out.dtype)
    if out._shape != (n,):
        prepare_out(out, ((n,), None, out.dtype))
    return out


def linspace_check(steps: int) -> None:
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")


def linspace_out_meta(start: Any, end: Any, steps: int, *, out: Tensor) -> Tensor:
    linspace_check(steps)
    prepare_out(out, ((steps,), None, out.dtype))
    return out


def eye_check(n: int, m: int) -> None:
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")


def eye_m_out_meta(n: int, m: int, *, out: Tensor) -> Tensor:
    eye_check(n, m)
    prepare_out(out, ((n, m), None, out.dtype))
    return out


def eye_out_meta(n: int, *, out: Tensor) -> Tensor:
    return eye_m_out_meta(n, n, out=out)
