"""dtypes, the default dtype, and torch's type promotion (`promote_types`, `result_type`).

This module owns the fourteen scalar types tensordispatch supports and the rules that combine
them. It knows nothing about dispatch; `result_type` reads only `dtype`, `dim()` and the
wrapped-number flag of tensor arguments, so it works for any tensor-like object.

bfloat16 is left out on purpose: NumPy has no bfloat16, so the CPU backend could not compute
in it honestly (it would have to round float32 results by hand after every op). torch's
float8 types are left out too.

Note [Limited unsigned dtypes]
uint16, uint32 and uint64 are torch's "limited support" dtypes: tensors of them can be made,
copied, converted, viewed, printed and turned into NumPy arrays, but only a few operators
compute on them (the CPU kernels torch dispatches them to; which ones is measured against
torch 2.13 by tests/tensor/test_limited_dtypes_ops.py), and they promote only with
themselves and with floating dtypes: any other pair raises torch's "Promotion for uint16,
uint32, uint64 types is not supported" error, from `promote_types` and so from every
operator that combines dtypes. Their ScalarType codes are 27, 28 and 29 (after bfloat16's
15 and the float8 and bits types we lack), as in torch.
They are integral to torch, but here their category rank is their own, below bool's. Every
fast path of the CPU backend admits only the ranks it knows (bool to complex), so a limited
dtype always takes the general path (meta function, then the kernel), where each CPU kernel
that torch does not instantiate for these dtypes raises torch's "not implemented for
'UInt16'" error; the common dtypes pay nothing for it. The promotion rules and `can_cast`
treat the rank as integral where torch's rules read a category.

Note [Default dtype is process-global]
torch keeps the default floating dtype in one process-wide variable, not per thread, and
we mirror that: `set_default_dtype` in one thread is seen by all threads. It is the one
process-global flag of this layer; tests change it only through `default_dtype_guard`.
"""

from __future__ import annotations

import contextlib
import numbers
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "ALL_DTYPES",
    "LIMITED_DTYPES",
    "bool",
    "can_cast",
    "cdouble",
    "cfloat",
    "complex64",
    "complex128",
    "default_dtype_guard",
    "double",
    "dtype",
    "float",
    "float16",
    "float32",
    "float64",
    "from_numpy_dtype",
    "get_default_dtype",
    "half",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "long",
    "promote_types",
    "result_type",
    "set_default_dtype",
    "short",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
]

_builtin_bool = bool
_builtin_int = int
_builtin_float = float
_builtin_complex = complex

# Category ranks: bool < integral < floating < complex (torch's promotion categories).
# The limited unsigned dtypes are integral to torch but carry their own rank below bool
# (Note [Limited unsigned dtypes]).
_LIMITED, _BOOL, _INTEGRAL, _FLOATING, _COMPLEX = -1, 0, 1, 2, 3


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class dtype:
    """A scalar type, compared by identity like ``torch.dtype``.

    >>> import tensordispatch.tensor as tdt
    >>> tdt.float32, tdt.float32.itemsize, tdt.float32.is_floating_point
    (tensordispatch.float32, 4, True)
    >>> tdt.float64.to_complex(), tdt.complex64.to_real()
    (tensordispatch.complex128, tensordispatch.float32)
    """

    name: str
    itemsize: _builtin_int
    _category: _builtin_int
    is_signed: _builtin_bool
    _index: _builtin_int
    _numpy: np.dtype[Any]
    # Plain slots set once from the category (read on every operator call; a property costs
    # ~30 ns more per read). Read-only like the other fields (frozen).
    is_floating_point: _builtin_bool = field(init=False)
    is_complex: _builtin_bool = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "is_floating_point", self._category == _FLOATING)
        object.__setattr__(self, "is_complex", self._category == _COMPLEX)

    def to_real(self) -> dtype:
        """The real counterpart of a complex dtype (other dtypes map to themselves)."""
        if self._category == _COMPLEX:
            return _FLOAT_OF_SIZE[self.itemsize // 2]
        return self

    def to_complex(self) -> dtype:
        """The complex dtype of the same precision as a floating or complex dtype."""
        if self._category == _FLOATING and self.itemsize in _COMPLEX_OF_SIZE:
            return _COMPLEX_OF_SIZE[self.itemsize]
        if self._category == _COMPLEX:
            return self
        if self._category != _FLOATING:  # torch's own message
            raise RuntimeError(f"Unknown Complex ScalarType for {_SCALAR_TYPE_NAMES[self.name]}")
        raise RuntimeError(
            f"{self!r}.to_complex(): float16's complex counterpart is complex32, which "
            "tensordispatch does not have; use a float32 or float64 dtype"
        )

    @property
    def numpy_dtype(self) -> np.dtype[Any]:
        """The NumPy dtype the CPU backend stores this dtype as."""
        return self._numpy

    def __repr__(self) -> str:
        return f"tensordispatch.{self.name}"

    def __reduce__(self) -> str:
        return self.name


# c10's ScalarType names, as torch's messages print them
_SCALAR_TYPE_NAMES = {
    "bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
    "int64": "Long", "float16": "Half", "float32": "Float", "float64": "Double",
    "complex64": "ComplexFloat", "complex128": "ComplexDouble", "uint16": "UInt16",
    "uint32": "UInt32", "uint64": "UInt64",
}  # fmt: skip


def _make(name: str, np_name: str, category: _builtin_int, signed: _builtin_bool) -> dtype:
    npd = np.dtype(np_name)
    return dtype(name, npd.itemsize, category, signed, len(_ALL), npd)


_ALL: list[dtype] = []
for _spec in (
    ("bool", "bool", _BOOL, False),
    ("uint8", "uint8", _INTEGRAL, False),
    ("int8", "int8", _INTEGRAL, True),
    ("int16", "int16", _INTEGRAL, True),
    ("int32", "int32", _INTEGRAL, True),
    ("int64", "int64", _INTEGRAL, True),
    ("float16", "float16", _FLOATING, True),
    ("float32", "float32", _FLOATING, True),
    ("float64", "float64", _FLOATING, True),
    ("complex64", "complex64", _COMPLEX, True),
    ("complex128", "complex128", _COMPLEX, True),
    ("uint16", "uint16", _LIMITED, False),  # Note [Limited unsigned dtypes]
    ("uint32", "uint32", _LIMITED, False),
    ("uint64", "uint64", _LIMITED, False),
):
    _ALL.append(_make(*_spec))

bool, uint8, int8, int16, int32, int64, float16, float32, float64, complex64, complex128 = _ALL[:11]
uint16, uint32, uint64 = _ALL[11:]
LIMITED_DTYPES: frozenset[dtype] = frozenset(_ALL[11:])
ALL_DTYPES: tuple[dtype, ...] = tuple(_ALL)

# torch's alias names for the same objects.
half, float, double = float16, float32, float64
cfloat, cdouble = complex64, complex128
short, int, long = int16, int32, int64

_FLOAT_OF_SIZE = {2: float16, 4: float32, 8: float64}
_COMPLEX_OF_SIZE = {4: complex64, 8: complex128}

_FROM_NUMPY: dict[np.dtype[Any], dtype] = {d._numpy: d for d in _ALL}


def from_numpy_dtype(npd: np.dtype[Any]) -> dtype | None:
    """Our dtype for a NumPy dtype in native byte order, or None if there is none.

    >>> import numpy as np
    >>> from_numpy_dtype(np.dtype("int32")), from_numpy_dtype(np.dtype("uint16"))
    (tensordispatch.int32, tensordispatch.uint16)
    >>> from_numpy_dtype(np.dtype("float128")) is None
    True
    """
    found = _FROM_NUMPY.get(npd)
    if found is None and npd.isnative:
        for d in _ALL:  # equal dtypes spelled differently ('l' vs 'q')
            if d._numpy == npd:
                return d
    return found


# ---------------------------------------------------------------------------------------------
# default dtype (Note [Default dtype is process-global])

_default_dtype: dtype = float32


def get_default_dtype() -> dtype:
    """The dtype Python floats become (float32 unless changed).

    >>> get_default_dtype()
    tensordispatch.float32
    """
    return _default_dtype


def set_default_dtype(d: dtype) -> None:
    """Set the process-wide default floating dtype, like ``torch.set_default_dtype``.

    Only float32 and float64 are accepted: torch also takes float16, whose complex
    counterpart (complex32) tensordispatch does not have.

    >>> set_default_dtype(float64); get_default_dtype()
    tensordispatch.float64
    >>> set_default_dtype(float32)
    """
    global _default_dtype
    if d is not float32 and d is not float64:
        raise TypeError(
            f"set_default_dtype: the default dtype must be tensordispatch.float32 or "
            f"tensordispatch.float64 (given {d!r}); pass one of those"
        )
    _default_dtype = d


@contextlib.contextmanager
def default_dtype_guard(d: dtype) -> Iterator[None]:
    """Set the default dtype for a ``with`` block, restoring the previous one after it.

    >>> with default_dtype_guard(float64):
    ...     get_default_dtype()
    tensordispatch.float64
    >>> get_default_dtype()
    tensordispatch.float32
    """
    previous = _default_dtype
    set_default_dtype(d)
    try:
        yield
    finally:
        set_default_dtype(previous)


def get_default_complex_dtype() -> dtype:
    """complex64 under a float32 default, complex128 under float64."""
    return complex128 if _default_dtype is float64 else complex64


# ---------------------------------------------------------------------------------------------
# promote_types


def _promote_rule(a: dtype, b: dtype) -> dtype | None:
    """The promoted dtype of a pair, None where torch refuses (Note [Limited unsigned dtypes])."""
    if a is b:
        return a
    if a._category == _LIMITED or b._category == _LIMITED:
        # a limited dtype promotes only with itself (above) or a floating dtype, which wins
        if a._category == _FLOATING:
            return a
        return b if b._category == _FLOATING else None
    if a._category != b._category:
        hi, lo = (a, b) if a._category > b._category else (b, a)
        if hi._category == _COMPLEX and lo._category == _FLOATING:
            # the complex result keeps the precision of the wider of the two
            return _COMPLEX_OF_SIZE[max(hi.itemsize // 2, lo.itemsize, 4)]
        return hi
    if a._category == _INTEGRAL and a.is_signed != b.is_signed:
        signed = a if a.is_signed else b
        return int16 if signed.itemsize == 1 else signed  # uint8 needs one more bit
    return a if a.itemsize >= b.itemsize else b


_PROMOTE: tuple[tuple[dtype | None, ...], ...] = tuple(
    tuple(_promote_rule(a, b) for b in _ALL) for a in _ALL
)


def _promotion_error(type1: dtype, type2: dtype) -> RuntimeError:
    # torch's own text (c10's promoteTypes), naming both ScalarTypes in argument order
    return RuntimeError(
        f"Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
        f"{_SCALAR_TYPE_NAMES[type1.name]} and {_SCALAR_TYPE_NAMES[type2.name]}"
    )


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """The smallest dtype both dtypes convert to without leaving their category.

    >>> promote_types(uint8, int8), promote_types(int64, float16)
    (tensordispatch.int16, tensordispatch.float16)
    >>> promote_types(float64, complex64), promote_types(uint32, float16)
    (tensordispatch.complex128, tensordispatch.float16)
    >>> promote_types(uint16, int32)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    RuntimeError: Promotion for uint16, uint32, uint64 types is not supported, ... UInt16 and Int
    """
    promoted = _PROMOTE[type1._index][type2._index]
    if promoted is None:
        raise _promotion_error(type1, type2)
    return promoted


def can_cast(from_: dtype, to: dtype) -> _builtin_bool:
    """Whether a value of dtype `from_` may be cast to `to` under torch's casting rule.

    Casting may not lower the category (complex -> real, floating -> integral,
    non-bool -> bool).

    >>> can_cast(float64, float16), can_cast(float32, int32), can_cast(int8, bool)
    (True, False, False)
    >>> can_cast(int8, uint16), can_cast(uint64, int8), can_cast(float16, uint32)
    (True, True, False)
    """
    if from_._category == _BOOL:
        return True
    # the limited dtypes are integral here (torch's rule knows no other category)
    source = _INTEGRAL if from_._category == _LIMITED else from_._category
    target = _INTEGRAL if to._category == _LIMITED else to._category
    return target >= source and target != _BOOL


# ---------------------------------------------------------------------------------------------
# result_type
#
# Note [Result type of tensors and scalars]
# Operands are sorted into three tiers: tensors with at least one dimension, zero-dim
# tensors, and wrapped numbers (Python scalars, and 0-dim tensors made from them). Each
# tier is promoted on its own; then a lower tier changes the result only when it belongs to
# a higher category (bool < integral < floating < complex) than the tier above it. Floats
# among the wrapped numbers count as the default dtype, complex ones as its complex twin.
# A complex lower tier over a floating upper tier gives the complex type of the upper
# tier's precision.


def _scalar_dtype(value: object) -> dtype:
    # torch reads Python bools as bool, ints and NumPy integers as int64, Python complex
    # numbers (np.complex128 included) as complex, and every other number as a float:
    # NumPy bools and np.complex64 too (the latter losing its imaginary part).
    if isinstance(value, _builtin_bool):
        return bool
    if isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, np.bool_):
        return int64
    if isinstance(value, _builtin_complex):
        return get_default_complex_dtype()
    if isinstance(value, (numbers.Number, np.number, np.bool_)):
        return _default_dtype
    raise TypeError(
        f"result_type: expected a Tensor or a Python number (bool, int, float, complex), "
        f"given {type(value).__name__}; convert the value to a Tensor or a Python number"
    )


def _combine_categories(higher: dtype | None, lower: dtype | None) -> dtype | None:
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher._category == _COMPLEX:
        return higher
    if lower._category == _COMPLEX:
        if higher is float16:
            raise TypeError(
                "result_type: a float16 tensor with a complex scalar or zero-dim tensor "
                "computes in complex32 in torch, which tensordispatch does not have; "
                "convert the float16 operand to float32 first"
            )
        return higher.to_complex() if higher._category == _FLOATING else lower
    if higher._category == _FLOATING:
        return higher
    if higher._category == _BOOL or lower._category == _FLOATING:
        return promote_types(higher, lower)
    return higher


def _result_type_of(operands: tuple[object, ...]) -> dtype:
    """result_type over any number of tensors and Python scalars (the ops layer uses this)."""
    dim_result: dtype | None = None
    zero_result: dtype | None = None
    wrapped_result: dtype | None = None
    for op in operands:
        current = getattr(op, "dtype", None)
        if not isinstance(current, dtype):
            current = _scalar_dtype(op)
            wrapped = True
        elif getattr(op, "_wrapped_number", False):
            if current._category == _FLOATING:
                current = _default_dtype
            elif current._category == _COMPLEX:
                current = get_default_complex_dtype()
            wrapped = True
        else:
            if op.dim() > 0:  # type: ignore[attr-defined]
                dim_result = current if dim_result is None else promote_types(dim_result, current)
                continue
            wrapped = False
        if wrapped:
            wrapped_result = (
                current if wrapped_result is None else promote_types(wrapped_result, current)
            )
        else:
            zero_result = current if zero_result is None else promote_types(zero_result, current)
    result = _combine_categories(dim_result, _combine_categories(zero_result, wrapped_result))
    if result is None:
        raise TypeError("result_type: needs at least one operand (given none); pass two")
    return result


def result_type(tensor1: object, tensor2: object) -> dtype:
    """The dtype an arithmetic op on the two operands computes in (see torch.result_type).

    Either operand may be a Tensor or a Python bool/int/float/complex.

    >>> result_type(1, 2.5), result_type(True, 2), result_type(3, 1j)
    (tensordispatch.float32, tensordispatch.int64, tensordispatch.complex64)
    """
    return _result_type_of((tensor1, tensor2))
