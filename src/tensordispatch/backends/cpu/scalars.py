"""A Python number stored into every element of a tensor (fill_, full, zeros, ones), checked
as torch converts a Scalar to the element type: a value outside the type's range is
RuntimeError "value cannot be converted to type int8_t without overflow" (c10's checked
conversion), not numpy's OverflowError.

Torch's rules, checked against torch 2.13: bool takes any value; an integral type takes
values within its range, and an unsigned one also negative values down to ``-max``
(wrapping: ``fill_(-1)`` on uint8 stores 255); a floating type takes infinities, NaN and
finite values within ``[-max, max]`` (no silent overflow to inf); a complex value converts to
a real type only with a zero imaginary part. Python ints outside ``[-2**63, 2**64)`` are
refused before any of this with Python's own OverflowError, as torch's argument parser does.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tensordispatch.tensor import dtypes as _dt

__all__ = ["checked_fill_value"]

_C_NAMES = {
    _dt.uint8: "uint8_t",
    _dt.int8: "int8_t",
    _dt.int16: "int16_t",
    _dt.int32: "int",
    _dt.int64: "int64_t",
    _dt.float16: "c10::Half",
    _dt.float32: "float",
    _dt.float64: "double",
    _dt.complex64: "c10::complex<float>",
    _dt.complex128: "c10::complex<double>",
    _dt.uint16: "uint16_t",
    _dt.uint32: "uint32_t",
    _dt.uint64: "uint64_t",
}
_INT_RANGE = {
    d: (int(np.iinfo(d._numpy).min), int(np.iinfo(d._numpy).max))
    for d in (_dt.uint8, _dt.int8, _dt.int16, _dt.int32, _dt.int64, *_dt.LIMITED_DTYPES)
}
_FLOAT_MAX = {
    _dt.float16: float(np.finfo(np.float16).max),
    _dt.float32: float(np.finfo(np.float32).max),
    _dt.float64: float(np.finfo(np.float64).max),
    _dt.complex64: float(np.finfo(np.float32).max),
    _dt.complex128: float(np.finfo(np.float64).max),
}


def _overflow(dt: Any) -> RuntimeError:
    return RuntimeError(f"value cannot be converted to type {_C_NAMES[dt]} without overflow")


def _python_int(value: int) -> None:
    if value < -(2**63):
        raise OverflowError("can't convert negative int to unsigned")
    if value >= 2**64:
        raise OverflowError("int too big to convert")


def _integral(value: Any, dt: Any, low: int, high: int) -> int:
    if isinstance(value, int):
        if low <= value <= high:
            return value
        if low == 0 and value < 0 and -value <= high:  # unsigned: wraps, as torch
            return value % (high + 1)
        raise _overflow(dt)
    if math.isnan(value) or value < float(low) or value > float(high):
        raise _overflow(dt)
    return int(value)  # toward zero, as C's conversion


def _floating(value: Any, dt: Any) -> Any:
    limit = _FLOAT_MAX[dt]
    parts = (value.real, value.imag) if isinstance(value, complex) else (value,)
    for part in parts:
        if math.isfinite(part) and not -limit <= float(part) <= limit:
            raise _overflow(dt)
    return value


def _half_fill(value: float) -> float:
    """A one-element float16 fill: no range check, beyond float16's range (65504, rounding
    up from 65520) the value is an infinity."""
    if math.isfinite(value) and abs(value) >= 65520:
        return math.copysign(math.inf, value)
    return value


def checked_fill_value(value: Any, dt: Any, single: bool = False) -> Any:
    """``value`` as stored into a tensor of dtype ``dt``, with torch's overflow check.
    ``single``: the tensor has one element; torch then fills float16 through a double, so
    out-of-range values become infinities (and a complex value names ``double``).

    >>> from tensordispatch.tensor import dtypes
    >>> checked_fill_value(-1, dtypes.uint8), checked_fill_value(2.7, dtypes.int8)
    (255, 2)
    >>> checked_fill_value(300, dtypes.int8)
    Traceback (most recent call last):
      ...
    RuntimeError: value cannot be converted to type int8_t without overflow
    """
    if isinstance(value, int):
        _python_int(value)
    if dt is _dt.bool:
        return bool(value)  # any value converts (NaN and 1j are True)
    half_single = single and dt is _dt.float16
    if isinstance(value, complex) and not dt.is_complex:
        if value.imag != 0:
            raise _overflow(_dt.float64 if half_single else dt)
        value = value.real
    if half_single and isinstance(value, (int, float)):
        return _half_fill(value)
    if not isinstance(value, (int, float, complex)):
        return value  # numpy scalars and others: stored as numpy converts them
    found = _INT_RANGE.get(dt)
    if found is not None:
        return _integral(value, dt, *found)
    if dt in _FLOAT_MAX:
        return _floating(value, dt)
    return value
