"""linspace's CPU kernels (split from cpu/layout.py, session 8): ``linspace_out`` (the
structured out= kernel, torch's element formula) and ``linspace_cpu`` (a fresh result for the
composite's direct branch and the binding's one hop, backends/composite_fast_arange.py).
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from tensordispatch.backends.common import scalar_type_name
from tensordispatch.backends.cpu.scalars import checked_fill_value
from tensordispatch.backends.meta.layout import integral_bounds, linspace_check
from tensordispatch.backends.structured import resize_output
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.tensor import Tensor, new_cpu_tensor

__all__ = ["linspace_cpu", "linspace_out"]

_ONE = (1,)


# Note [linspace from both ends by plan]
# torch's CPU linspace computes the first half of the values as ``start + step * i`` and the
# second as ``end - step * j`` (j counting down to 0), each operation rounded in the result's
# floating type (in double for integral results). Below 2050 steps every index is exact in
# float16, so the two index ranges are one vector per (steps, type), kept read-only
# (``_both_ends_index``): the values are then one multiply into the result and one add and
# one subtract over its halves, the same operations on the same operands as computing each
# half's indices afresh. ``linspace_cpu`` (the composite's direct branch and the binding's
# one hop, backends/composite_fast_arange.py) makes a fresh result this way for plain int
# or float bounds that pass ``checked_fill_value``'s overflow check unchanged (finite,
# within the type's range; anything else takes ``linspace_out``'s general checks).
#
# Up to 16 steps (session 8) ``linspace_cpu`` computes float32 and float64 values as Python
# floats and stores them with one ``np.array`` (``_few_values``): float64 arithmetic is
# Python's; a float32 operation is the double operation rounded to float32 (``struct``'s
# "f" packing, C's cast), which equals float32 arithmetic for +, -, *, / of float32
# operands (double has more than 2 * 24 + 2 bits, so the double rounding is innocuous;
# ``step * i`` is even exact in double, and needs no rounding when i is 0 or a power of two),
# and the last rounding of each value is the store.

_LINSPACE_INDEX: dict[tuple[int, Any], np.ndarray[Any, Any]] = {}
_PLAN_STEPS = 2049  # every index and steps - 1 - index exact in float16 up to here
_FLOAT_LIMIT = {
    d: float(np.finfo(d._numpy).max) for d in (_dt.float16, _dt.float32, _dt.float64)
}  # the real floating dtypes: linspace_cpu's own
_multiply, _add, _subtract = np.multiply, np.add, np.subtract


def _both_ends_index(steps: int, kind: Any) -> np.ndarray[Any, Any]:
    """``0, 1, ..., half - 1, steps - 1 - half, ..., 1, 0`` in ``kind`` (read-only, kept per
    (steps, kind)): the multipliers of ``step`` in both halves (Note [linspace from both
    ends by plan]).

    >>> _both_ends_index(5, np.dtype(np.float32)).tolist()
    [0.0, 1.0, 2.0, 1.0, 0.0]
    """
    key = (steps, kind)
    index = _LINSPACE_INDEX.get(key)
    if index is None:
        half = steps // 2
        index = np.concatenate(
            (np.arange(half, dtype=kind), np.arange(steps - 1 - half, -1, -1, dtype=kind))
        )
        index.flags.writeable = False
        if len(_LINSPACE_INDEX) < 512:
            _LINSPACE_INDEX[key] = index
    return index


def _from_both_ends(values: Any, lo: Any, hi: Any, step: Any, steps: int) -> None:
    """Writes torch's linspace values into ``values`` (``steps`` <= 2049 elements of
    ``lo``'s type; Note [linspace from both ends by plan])."""
    half = steps // 2
    _multiply(step, _both_ends_index(steps, values.dtype), out=values)
    first, second = values[:half], values[half:]
    _add(lo, first, out=first)
    _subtract(hi, second, out=second)


def linspace_cpu(start: Any, end: Any, steps: Any, dt: Any) -> Tensor | None:
    """``linspace(start, end, steps, dtype=dt)``'s fresh CPU result for a real floating
    ``dt``, plain int or float bounds within its range and 2 to 2049 steps (Note [linspace
    from both ends by plan]), else None (then ``linspace_out`` decides, errors included).

    >>> from tensordispatch.tensor import float32, int64
    >>> linspace_cpu(0, 1, 5, float32), linspace_cpu(0, 1, 5, int64)
    (tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000]), None)
    """
    limit = _FLOAT_LIMIT.get(dt)
    if limit is None or type(steps) is not int or not 2 <= steps <= _PLAN_STEPS:
        return None
    for v in (start, end):
        t = type(v)
        if not (
            (t is float or (t is int and -9223372036854775808 <= v <= 9223372036854775807))
            and -limit <= v <= limit
        ):
            return None
    kind = dt._numpy
    if steps <= _SMALL_STEPS and dt is not _dt.float16:
        small = _few_values(start, end, steps, dt is _dt.float32)
        if small is not None:
            return new_cpu_tensor(_np_array(small, kind), (steps,), _ONE, dt)
    to = kind.type
    lo, hi = to(start), to(end)
    step = (hi - lo) / to(steps - 1)
    values = _np_empty(steps, kind)
    _from_both_ends(values, lo, hi, step, steps)
    return new_cpu_tensor(values, (steps,), _ONE, dt)


_np_empty, _np_array = np.empty, np.array
_SMALL_STEPS = 16
_F32 = struct.Struct("f")
_pack32, _unpack32 = _F32.pack, _F32.unpack
_EXACT32 = 2**24  # float32 holds every int up to here


def _few_values(start: Any, end: Any, steps: int, single: bool) -> list[float] | None:
    """The values of a linspace of 2 to 16 steps as Python floats, to be stored as float32
    (``single``) or float64 (Note [linspace from both ends by plan], the few-steps
    paragraph), or None when a bound or the span needs NumPy's own handling (an int beyond
    2**24 for float32, an infinite span: the kernel's NumPy scalars warn).

    >>> _few_values(0, 1, 5, False), _few_values(0, 0.1, 3, True)[1]
    ([0.0, 0.25, 0.5, 0.75, 1.0], 0.05000000074505806)
    """
    if not single:  # Python floats are IEEE doubles: NumPy's float64 scalars exactly
        lo, hi = float(start), float(end)
        step = (hi - lo) / (steps - 1)
        if step - step != 0:  # inf or nan: NumPy warns on the overflow
            return None
        half = steps // 2
        return [lo + step * i for i in range(half)] + [
            hi - step * j for j in range(steps - 1 - half, -1, -1)
        ]
    if (type(start) is int and not -_EXACT32 <= start <= _EXACT32) or (
        type(end) is int and not -_EXACT32 <= end <= _EXACT32
    ):
        return None
    up, pk = _unpack32, _pack32
    # an int bound here is exact in float32; step * i is exact for i 0 or a power of two
    lo = float(start) if type(start) is int else up(pk(start))[0]
    hi = float(end) if type(end) is int else up(pk(end))[0]
    span = up(pk(hi - lo))[0]  # native "f" packing: an overflow is inf, without an error
    if span - span != 0:  # the float32 span overflows: NumPy's inf and its warning
        return None
    step = up(pk(span / (steps - 1)))[0]
    half = steps // 2
    return [lo + (up(pk(step * i))[0] if i & (i - 1) else step * i) for i in range(half)] + [
        hi - (up(pk(step * j))[0] if j & (j - 1) else step * j)
        for j in range(steps - 1 - half, -1, -1)
    ]


def linspace_out(start: Any, end: Any, steps: int, *, out: Tensor) -> Tensor:
    linspace_check(steps)
    if out.dtype._category <= 0 and steps > 1:  # 0 and 1 steps are no kernel call in torch
        kind = scalar_type_name(out.dtype)  # (bool, and Note [Limited unsigned dtypes])
        raise NotImplementedError(f"\"linspace_cpu\" not implemented for '{kind}'")
    resize_output(out, (steps,))
    if steps:  # the bounds as the element type holds them (checked; unsigned ones wrap)
        start = checked_fill_value(start, out.dtype)
        if steps > 1:
            end = checked_fill_value(end, out.dtype)
    start, end = integral_bounds(out.dtype, start, end)
    complex_ = isinstance(start, complex) or isinstance(end, complex) or out.dtype.is_complex
    values: Any
    if complex_:
        values = np.linspace(start, end, steps, dtype=np.complex128)
    elif steps > 1:  # from both ends, as torch: each half is start + i*step or end - j*step
        # in the output's floating type (float32 rounds each operation as torch's kernel
        # does), in double for integral outputs
        kind = out.dtype._numpy if out.dtype.is_floating_point else np.dtype(np.float64)
        lo, hi = kind.type(start), kind.type(end)
        step = (hi - lo) / kind.type(steps - 1)
        if steps <= _PLAN_STEPS:  # Note [linspace from both ends by plan]
            o = out._data
            if o.dtype == kind and o.flags.c_contiguous:  # written in place: the same values
                _from_both_ends(o, lo, hi, step, steps)
                return out
            values = np.empty(steps, kind)
            _from_both_ends(values, lo, hi, step, steps)
        else:
            half = steps // 2
            i = np.arange(steps, dtype=kind)
            values = np.where(i < half, lo + step * i, hi - step * (kind.type(steps - 1) - i))
    else:
        values = float(start)
    np.copyto(out._data, values, casting="unsafe")
    return out
