"""CPU (NumPy) kernels of the pointwise family F1: structured impls and plain kernels.

Structured impls are ``impl(precomputed, *out_variant_args, out)`` (precomputed = the
computation dtype from the meta function) and write into ``out._data``. They compute in the
computation dtype (float16 in float32, as torch's CPU kernels do) and raise torch's
"not implemented for" errors for the dtypes its CPU kernels do not cover. Integer semantics
follow torch, not NumPy: remainder takes the divisor's sign, integer division by zero raises
``ZeroDivisionError`` as a RuntimeError, integer powers with negative exponents are 0, 1 or
-1, sign(nan) is 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from tensordispatch.backends.common import scalar_type_name
from tensordispatch.backends.cpu.fpstate import QUIET_RUN, quiet_call, quiet_fp, quiet_retry
from tensordispatch.backends.cpu.powers import complex_power, int_power
from tensordispatch.backends.meta.pointwise import logical_spec, where_spec
from tensordispatch.backends.overlap import check_written
from tensordispatch.backends.structured import alloc_cpu, prepare_out
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.tensor import Tensor

__all__ = ["POINTWISE_CPU", "check_scalar", "not_implemented"]

Array = np.ndarray[Any, Any]


def not_implemented(kernel: str, dtype: Any) -> NotImplementedError:
    """torch's dispatch-macro error for a dtype a CPU kernel does not cover.

    >>> from tensordispatch.tensor import float32
    >>> not_implemented("bitwise_and_cpu", float32)
    NotImplementedError('"bitwise_and_cpu" not implemented for \\'Float\\'')
    """
    return NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_type_name(dtype)}'")


def _is_float(d: Any) -> bool:
    return bool(d.is_floating_point or d.is_complex)


def _work(dt: Any) -> Any:
    """The NumPy dtype arithmetic runs in: float16 widens to float32."""
    return np.float32 if dt is _dt.float16 else dt._numpy


def _arg(x: Any, dt: Any) -> Array:
    """An operand in the dtype arithmetic runs in: a tensor is converted to the computation
    dtype first (TensorIterator's common dtype), a scalar argument goes straight to the
    arithmetic type (torch's opmath scalar)."""
    if isinstance(x, Tensor):
        if x.dtype is dt and dt is not _dt.float16:  # already the arithmetic dtype: as it is
            return x._data  # type: ignore[no-any-return]
        return x._data.astype(dt._numpy, copy=False).astype(_work(dt), copy=False)
    return np.asarray(x).astype(_work(dt), copy=False)


_CPP_TYPES = {
    "float16": "c10::Half", "float32": "float", "float64": "double", "int64": "int64_t",
    "int32": "int", "int16": "int16_t", "int8": "int8_t", "uint8": "uint8_t", "bool": "bool",
    "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
    "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
}  # fmt: skip


def _overflows(value: Any, dt: Any) -> bool:
    if isinstance(value, complex):
        return not dt.is_complex
    if dt is _dt.bool or dt.is_complex:
        return False
    if dt.is_floating_point:
        return not math.isinf(value) and abs(value) > float(np.finfo(dt._numpy).max)
    info = np.iinfo(dt._numpy)
    if isinstance(value, int) and info.min == 0:  # negative ints wrap into unsigned types
        return value > info.max or -value > info.max
    return bool(value < info.min or value > info.max)


def check_scalar(value: Any, dt: Any, opmath: bool = False) -> None:
    """torch's checked conversion of a Scalar argument to the kernel's C++ type (the
    computation dtype, or its wider "opmath" type: float for float16): a complex number
    for a real type, or a value out of the type's range, is an overflow error.

    >>> from tensordispatch.tensor import int8
    >>> check_scalar(300, int8)
    Traceback (most recent call last):
    ...
    RuntimeError: value cannot be converted to type int8_t without overflow
    """
    target = _dt.float32 if opmath and dt is _dt.float16 else dt
    if _overflows(value, target):
        raise RuntimeError(
            f"value cannot be converted to type {_CPP_TYPES[target.name]} without overflow"
        )


def _store(out: Tensor, result: Any, pre: Any = None) -> None:
    """Write ``result`` (computed in ``pre``'s arithmetic type) into ``out``. A float16
    computation runs in float32 here but in float16 in torch, so its result is rounded to
    float16 first when ``out`` is wider (out= of another dtype)."""
    o = out._data  # float16 outputs overflow to inf, as torch's do: NumPy's FP reports off
    if pre is _dt.float16 and o.dtype != _F16:
        result = quiet_call(np.asarray(result).astype, np.float16)  # overflow: inf, silently
    try:
        QUIET_RUN(_copyto, o, result, casting="unsafe")
    except RuntimeError as e:  # Note [Quiet context] in fpstate.py
        quiet_retry(e, _copyto, o, result, casting="unsafe")


_copyto = np.copyto
_F16 = np.dtype(np.float16)


def _apply_store(fn: Callable[[Array], Array], x: Array, o: Array, pre: Any) -> None:
    """``o[...] = fn(x)``: run whole in the quiet context by the unary impls (a float16
    computation's result rounded to float16 first, as in :func:`_store`)."""
    result = fn(x)
    if pre is _dt.float16 and o.dtype != _F16:
        result = result.astype(_F16)
    _copyto(o, result, casting="unsafe")


# -- binary arithmetic -------------------------------------------------------------------------


def _check_int_divisor(b: Array, out: Tensor) -> None:
    """An integer division by zero raises, but only for an element computed: an empty
    result divides nothing (``b`` only broadcasts to ``out``, so each of it is used)."""
    if out._data.size and np.any(b == 0):
        raise RuntimeError("ZeroDivisionError")


def remainder_out(pre: Any, self: Tensor, other: Tensor, out: Tensor) -> None:
    if pre._category <= 0 or pre.is_complex:  # bool, or Note [Limited unsigned dtypes]
        raise not_implemented("remainder_cpu", pre)
    a, b = _arg(self, pre), _arg(other, pre)
    if not pre.is_floating_point:
        _check_int_divisor(b, out)
        _store(out, np.remainder(a, b), pre)
        return
    with quiet_fp():
        mod = np.fmod(a, b)
        fix = (mod != 0) & ((b < 0) != (mod < 0))
        _store(out, np.where(fix, mod + b, mod), pre)


def _power(pre: Any, a: Array, e: Array) -> Array:
    if pre._category <= 0:  # bool, or Note [Limited unsigned dtypes]
        raise not_implemented("pow", pre)
    if not _is_float(pre):
        return int_power(a, e)
    with quiet_fp():
        if pre.is_complex:
            return complex_power(a, e)
        if not np.ndim(a) and not np.ndim(e):  # NumPy's 0-d power gives (-inf) ** 0.5 nan
            return np.power(np.reshape(a, 1), np.reshape(e, 1)).reshape(())
        return np.power(a, e)


def pow_Tensor_Tensor_out(pre: Any, self: Tensor, exponent: Tensor, out: Tensor) -> None:
    _store(out, _power(pre, _arg(self, pre), _arg(exponent, pre)), pre)


def pow_Tensor_Scalar_out(pre: Any, self: Tensor, exponent: Any, out: Tensor) -> None:
    if exponent == 0:  # torch fills ones and copies for 0 and 1 (any dtype, even bool)
        out._data[...] = 1
    elif exponent == 1:
        _store(out, self._data, pre)
    else:
        if not _is_float(pre) or pre is _dt.float16:  # float16: a checked conversion too
            check_scalar(exponent, pre)
        _store(out, _power(pre, _arg(self, pre), _arg(exponent, pre)), pre)


def pow_Scalar_out(pre: Any, self: Any, exponent: Tensor, out: Tensor) -> None:
    if self == 1 and not isinstance(self, bool):  # ones, whatever the exponent's dtype
        out._data[...] = 1
    else:  # torch runs pow.Tensor_Tensor_out into the resized out: its overlap checks
        check_written(out, (exponent,))  # the base converts as a tensor of the common dtype
        base = np.asarray(self).astype(pre._numpy).astype(_work(pre), copy=False)
        _store(out, _power(pre, base, _arg(exponent, pre)), pre)


def _minmax(ufunc: Any, name: str) -> Callable[..., None]:
    def impl(pre: Any, self: Tensor, other: Tensor, out: Tensor) -> None:
        if self.dtype.is_complex or other.dtype.is_complex:
            raise RuntimeError(f"{name} not implemented for complex tensors.")
        if pre._category < 0:  # Note [Limited unsigned dtypes]
            raise not_implemented(f"{name}_cpu", pre)
        _store(out, ufunc(_arg(self, pre), _arg(other, pre)), pre)

    impl.__name__ = f"{name}_out"
    return impl


def _bitwise(ufunc: Any, name: str) -> Callable[..., None]:
    def impl(pre: Any, self: Tensor, other: Tensor, out: Tensor) -> None:
        if _is_float(pre):
            raise not_implemented(f"{name}_cpu", pre)
        _store(out, ufunc(_arg(self, pre), _arg(other, pre)), pre)

    impl.__name__ = f"{name}_out"
    return impl


def _shift(left: bool) -> Callable[..., None]:
    """torch's shifts on integers: a count below 0 or at least the bit width gives 0 (left),
    or the sign fill (right: -1 for negative signed values, else 0)."""
    name = "lshift" if left else "rshift"

    def impl(pre: Any, self: Tensor, other: Tensor, out: Tensor) -> None:
        if _is_float(pre) or pre._category <= 0:  # bool, Note [Limited unsigned dtypes]
            raise not_implemented(f"{name}_cpu", pre)
        a, b = _arg(self, pre), _arg(other, pre)
        bits = np.dtype(a.dtype).itemsize * 8
        outside = (b < 0) | (b >= bits)
        count = np.where(outside, 0, b)
        if left:
            result = np.where(outside, 0, np.left_shift(a, count))
        else:
            fill = np.right_shift(a, bits - 1) if np.issubdtype(a.dtype, np.signedinteger) else 0
            result = np.where(outside, fill, np.right_shift(a, count))
        _store(out, result, pre)

    impl.__name__ = f"bitwise_{'left' if left else 'right'}_shift_out"
    return impl


def bitwise_not_out(pre: Any, self: Tensor, out: Tensor) -> None:
    if _is_float(pre) or pre._category < 0:  # Note [Limited unsigned dtypes]
        raise not_implemented("bitwise_not_cpu", pre)
    data = self._data
    _store(out, np.logical_not(data) if pre is _dt.bool else np.invert(data), pre)


def div_out_mode(
    pre: Any, self: Tensor, other: Tensor, rounding_mode: str | None, out: Tensor
) -> None:
    """div with rounding_mode (replaces the first version: bool inputs are not implemented
    for 'trunc'/'floor', floor division of floats as torch's div_floor)."""
    if rounding_mode is None:
        with quiet_fp():
            np.true_divide(self._data, other._data, out=out._data, dtype=pre._numpy,
                           casting="unsafe")  # fmt: skip
        return
    common, mode = pre
    if common is _dt.bool or common.is_complex:
        raise not_implemented(f"div_{mode}_cpu", common)
    a, b = _arg(self, common), _arg(other, common)
    if not _is_float(common):
        _check_int_divisor(b, out)
        result = np.floor_divide(a, b)
        if mode == "trunc":
            result = result + ((np.remainder(a, b) != 0) & ((a < 0) != (b < 0))).astype(a.dtype)
        _store(out, result, common)
        return
    with quiet_fp():
        if mode == "floor":
            _store(out, _floor_divide_float(a, b), common)
        else:
            # float16: the quotient is rounded to half before trunc, as torch's vectorized
            # loop does (its scalar tail loop truncates the float quotient; they disagree
            # when the quotient rounds up to an integer: 64.99 -> 65 vs 64).
            _store(out, np.trunc((a / b).astype(common._numpy)), common)


def _floor_divide_float(a: Array, b: Array) -> Array:
    """torch's div_floor for floats: based on fmod, so (a - mod) / b is exact."""
    mod = np.fmod(a, b)
    div = (a - mod) / b
    div = np.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1, div)
    floor = np.floor(div)
    floor = np.where(div - floor > 0.5, floor + 1, floor)
    zero = np.copysign(np.zeros_like(div), a / b)
    return np.where(b == 0, a / b, np.where(div != 0, floor, zero))


# -- unary -------------------------------------------------------------------------------------


_erf = np.frompyfunc(math.erf, 1, 1)


def erf_array(x: Array) -> Array:
    """Elementwise erf (math.erf per element: NumPy has no erf).

    >>> erf_array(np.array([0.0, 1.0])).round(4).tolist()
    [0.0, 0.8427]
    """
    return np.asarray(_erf(x.astype(np.float64)), np.float64).astype(x.dtype)


def _sigmoid(x: Array) -> Array:
    return 1 / (1 + np.exp(-x))


def _unary(fn: Callable[[Array], Array], name: str, real_only: str = "") -> Callable[..., None]:
    def impl(pre: Any, self: Tensor, out: Tensor) -> None:
        if real_only and pre.is_complex:
            raise not_implemented(real_only, pre)
        x, o = _arg(self, pre), out._data
        try:  # fn and the store with NumPy's FP reports off (Note [Quiet context])
            QUIET_RUN(_apply_store, fn, x, o, pre)
        except RuntimeError as e:
            quiet_retry(e, _apply_store, fn, x, o, pre)

    impl.__name__ = f"{name}_out"
    return impl


def _float_only(fn: Callable[[Array], Array], kernel: str, complex_ok: bool) -> Callable[..., None]:
    def impl(pre: Any, self: Tensor, out: Tensor) -> None:
        if not (pre.is_floating_point or (complex_ok and pre.is_complex)):
            raise not_implemented(kernel, pre)
        x, o = _arg(self, pre), out._data
        try:  # fn and the store with NumPy's FP reports off (Note [Quiet context])
            QUIET_RUN(_apply_store, fn, x, o, pre)
        except RuntimeError as e:
            quiet_retry(e, _apply_store, fn, x, o, pre)

    impl.__name__ = f"{kernel}_out"
    return impl


def gelu_out_cpu(pre: Any, self: Tensor, approximate: str, out: Tensor) -> None:
    if not pre.is_floating_point:
        raise not_implemented("GeluKernelImpl", pre)
    x = _arg(self, pre)
    with quiet_fp():
        if approximate == "tanh":
            inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)
            _store(out, 0.5 * x * (1 + np.tanh(inner)), pre)
        else:
            _store(out, 0.5 * x * (1 + erf_array(x * (1 / math.sqrt(2)))), pre)


def _rounding(fn: Callable[[Array], Array], name: str, vml: str) -> Callable[..., None]:
    def impl(pre: Any, self: Tensor, out: Tensor) -> None:
        if pre.is_complex:
            if name == "round":
                raise not_implemented(vml, pre)
            raise NotImplementedError(f"{name} is not supported for complex inputs")
        if pre is _dt.bool:
            raise not_implemented(vml, pre)
        _store(out, fn(self._data) if pre.is_floating_point else self._data, pre)

    impl.__name__ = f"{name}_out"
    return impl


def round_decimals_out(pre: Any, self: Tensor, decimals: int, out: Tensor) -> None:
    if not pre.is_floating_point:
        raise not_implemented("round_cpu", pre)
    x = _arg(self, pre)
    with quiet_fp():
        if decimals >= 0:
            scale = np.asarray(10.0**decimals, x.dtype)
            _store(out, np.rint(x * scale) / scale, pre)
        else:
            scale = np.asarray(10.0 ** (-decimals), x.dtype)
            _store(out, np.rint(x / scale) * scale, pre)


def sign_out(pre: Any, self: Tensor, out: Tensor) -> None:
    if pre.is_complex:
        raise NotImplementedError(
            "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
            "torch.sgn instead."
        )
    data = self._data
    if pre._category <= 0:
        if pre is not _dt.bool:  # Note [Limited unsigned dtypes]
            raise not_implemented("sign_cpu", pre)
        _store(out, data, pre)
        return
    _store(out, (data > 0).astype(data.dtype) - (data < 0).astype(data.dtype), pre)


# -- clamp -------------------------------------------------------------------------------------


def _clamp(pre: Any, self: Tensor, lo: Any, hi: Any, out: Tensor) -> None:
    for bound in (lo, hi):
        if isinstance(bound, complex):  # torch reads a number bound as a double first
            message = "value cannot be converted to type double without overflow"
            raise RuntimeError(message)  # noqa: TRY004 - torch raises RuntimeError
        if bound is not None and not isinstance(bound, Tensor):
            check_scalar(bound, pre)
    x = _arg(self, pre)
    if lo is not None:
        x = np.maximum(x, _arg(lo, pre))
    if hi is not None:
        x = np.minimum(x, _arg(hi, pre))
    _store(out, x, pre)


def clamp_out(pre: Any, self: Tensor, min: Any, max: Any, out: Tensor) -> None:
    """clamp with numbers: torch's scalar kernels do not cover bool (nor the limited dtypes)."""
    if pre._category <= 0:
        which = "" if min is not None and max is not None else "_min" if min is not None else "_max"
        raise not_implemented(f"clamp{which}_scalar_cpu", pre)
    _clamp(pre, self, min, max, out)


def clamp_Tensor_out(pre: Any, self: Tensor, min: Any, max: Any, out: Tensor) -> None:
    """clamp with tensors: one bound is maximum/minimum (bool included), two bounds are
    torch's clamp kernel, which does not cover bool."""
    if min is not None and max is not None:
        if pre._category <= 0 or pre.is_complex:  # bool, Note [Limited unsigned dtypes]
            raise not_implemented("clamp_cpu", pre)
    elif pre.is_complex or pre._category < 0:
        raise not_implemented("maximum_cpu" if max is None else "minimum_cpu", pre)
    _clamp(pre, self, min, max, out)


def clamp_min_out(pre: Any, self: Tensor, min: Any, out: Tensor) -> None:
    if pre._category <= 0:  # bool, or Note [Limited unsigned dtypes]
        raise not_implemented("clamp_min_scalar_cpu", pre)
    _clamp(pre, self, min, None, out)


def clamp_max_out(pre: Any, self: Tensor, max: Any, out: Tensor) -> None:
    if pre._category <= 0:  # bool, or Note [Limited unsigned dtypes]
        raise not_implemented("clamp_max_scalar_cpu", pre)
    _clamp(pre, self, None, max, out)


def clamp_min_Tensor_out(pre: Any, self: Tensor, min: Tensor, out: Tensor) -> None:
    clamp_Tensor_out(pre, self, min, None, out)


def clamp_max_Tensor_out(pre: Any, self: Tensor, max: Tensor, out: Tensor) -> None:
    clamp_Tensor_out(pre, self, None, max, out)


# -- lerp, addcmul, addcdiv --------------------------------------------------------------------


def _lerp(pre: Any, self: Tensor, end: Tensor, weight: Any, out: Tensor, kernel: str) -> None:
    if not _is_float(pre):
        raise not_implemented(kernel, pre)
    if not isinstance(weight, Tensor):
        check_scalar(weight, pre, opmath=True)
    a, b, w = _arg(self, pre), _arg(end, pre), _arg(weight, pre)
    with quiet_fp():
        _store(out, np.where(np.abs(w) < 0.5, a + w * (b - a), b - (b - a) * (1 - w)), pre)


def lerp_Scalar(pre: Any, self: Tensor, end: Tensor, weight: Any, out: Tensor) -> None:
    _lerp(pre, self, end, weight, out, "lerp_kernel_scalar")


def lerp_Tensor(pre: Any, self: Tensor, end: Tensor, weight: Tensor, out: Tensor) -> None:
    _lerp(pre, self, end, weight, out, "lerp_kernel_tensor")


def addcmul_out(
    pre: Any, self: Tensor, tensor1: Tensor, tensor2: Tensor, value: Any, out: Tensor
) -> None:
    if pre._category <= 0:  # bool, or Note [Limited unsigned dtypes]
        raise not_implemented("addcmul_cpu_out", pre)
    check_scalar(value, pre, opmath=True)
    v = _arg(value, pre)
    with quiet_fp():
        _store(out, _arg(self, pre) + v * _arg(tensor1, pre) * _arg(tensor2, pre), pre)


def addcdiv_out(
    pre: Any, self: Tensor, tensor1: Tensor, tensor2: Tensor, value: Any, out: Tensor
) -> None:
    check_scalar(value, pre, opmath=True)
    v = _arg(value, pre)
    with quiet_fp():
        _store(out, _arg(self, pre) + v * (_arg(tensor1, pre) / _arg(tensor2, pre)), pre)


# -- unstructured: where, logical ops ----------------------------------------------------------


def where(condition: Tensor, self: Tensor, other: Tensor) -> Tensor:
    out = alloc_cpu(where_spec(condition, self, other))
    _store(out, np.where(condition._data.astype(bool), self._data, other._data))
    return out


def where_self_out(condition: Tensor, self: Tensor, other: Tensor, *, out: Tensor) -> Tensor:
    check_written(out, (condition, self, other))
    prepare_out(out, where_spec(condition, self, other, out))
    _store(out, np.where(condition._data.astype(bool), self._data, other._data))
    return out


def _logical(ufunc: Any) -> Callable[..., Tensor]:
    def kernel(self: Tensor, other: Tensor, *, out: Tensor) -> Tensor:
        check_written(out, (self, other))
        prepare_out(out, logical_spec(out, (self, other)))
        if self.dtype._category < 0 or other.dtype._category < 0:  # Note [Limited ...]
            raise not_implemented(f"{ufunc.__name__}_cpu", self.dtype)
        _store(out, ufunc(self._data != 0, other._data != 0))
        return out

    kernel.__name__ = f"{ufunc.__name__}_out"
    return kernel


def logical_not_out(self: Tensor, *, out: Tensor) -> Tensor:
    check_written(out, (self,))
    prepare_out(out, logical_spec(out, (self,)))
    if self.dtype._category < 0:  # Note [Limited unsigned dtypes]
        raise not_implemented("logical_not_cpu", self.dtype)
    _store(out, self._data == 0)
    return out


def fill__Tensor(self: Tensor, value: Tensor) -> Tensor:
    """fill_.Tensor: a 0-dim ``value`` copied into every element with copy_'s rules (wrapping
    casts, the complex-to-real warning, the overlap check of an expanded ``self``), unlike
    fill_.Scalar's overflow check. The value is read first, so a view of ``self`` works.

    >>> import tensordispatch as td
    >>> x = td.arange(3.0)
    >>> fill__Tensor(x, x[2]).tolist()
    [2.0, 2.0, 2.0]
    """
    from tensordispatch.backends.cpu.kernels import copy_  # kernels imports this module
    from tensordispatch.backends.meta.kernels import fill_meta_

    fill_meta_(self, value)
    snapshot = alloc_cpu(((), None, value.dtype))
    snapshot._data[...] = value._data
    return copy_(self, snapshot)


POINTWISE_CPU: dict[str, Any] = {
    "fill__Tensor": fill__Tensor,
    "remainder_out": remainder_out,
    "pow_Tensor_Tensor_out": pow_Tensor_Tensor_out,
    "pow_Tensor_Scalar_out": pow_Tensor_Scalar_out,
    "pow_Scalar_out": pow_Scalar_out,
    "div_out_mode": div_out_mode,
    "log_out": _unary(np.log, "log"),
    "log1p_out": _unary(np.log1p, "log1p"),
    "expm1_out": _unary(np.expm1, "expm1"),
    "rsqrt_out": _unary(lambda x: 1 / np.sqrt(x), "rsqrt"),
    # 1 / x, not np.reciprocal: its complex path gives nan+nanj at 0 and -0.0 imaginary parts
    # where torch (and NumPy division) give inf+nanj and +0.0.
    "reciprocal_out": _unary(lambda x: 1 / x, "reciprocal"),
    "tan_out": _unary(np.tan, "tan"),
    "tanh_out": _unary(np.tanh, "tanh"),
    "sigmoid_out": _unary(_sigmoid, "sigmoid"),
    "erf_out": _unary(erf_array, "erf", real_only="erf_vml_cpu"),
    "silu_out": _float_only(lambda x: x * _sigmoid(x), "silu_cpu", complex_ok=True),
    "gelu_out_cpu": gelu_out_cpu,
    "floor_out": _rounding(np.floor, "floor", "floor_vml_cpu"),
    "ceil_out": _rounding(np.ceil, "ceil", "ceil_vml_cpu"),
    "round_out": _rounding(np.rint, "round", "round_vml_cpu"),
    "round_decimals_out": round_decimals_out,
    "sign_out": sign_out,
    "clamp_out": clamp_out,
    "clamp_Tensor_out": clamp_Tensor_out,
    "clamp_min_out": clamp_min_out,
    "clamp_min_Tensor_out": clamp_min_Tensor_out,
    "clamp_max_out": clamp_max_out,
    "clamp_max_Tensor_out": clamp_max_Tensor_out,
    "maximum_out": _minmax(np.maximum, "maximum"),
    "minimum_out": _minmax(np.minimum, "minimum"),
    "bitwise_and_out": _bitwise(np.bitwise_and, "bitwise_and"),
    "bitwise_or_out": _bitwise(np.bitwise_or, "bitwise_or"),
    "bitwise_xor_out": _bitwise(np.bitwise_xor, "bitwise_xor"),
    "bitwise_not_out": bitwise_not_out,
    "bitwise_left_shift_out": _shift(left=True),
    "bitwise_right_shift_out": _shift(left=False),
    "lerp_Scalar": lerp_Scalar,
    "lerp_Tensor": lerp_Tensor,
    "addcmul_out": addcmul_out,
    "addcdiv_out": addcdiv_out,
    "where": where,
    "where_self_out": where_self_out,
    "logical_and_out": _logical(np.logical_and),
    "logical_or_out": _logical(np.logical_or),
    "logical_xor_out": _logical(np.logical_xor),
    "logical_not_out": logical_not_out,
}
