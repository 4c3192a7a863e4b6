"""CPU kernels of M1's pointwise operators, merged into CPU_KERNELS by the package: the
impls of the structured ``isposinf.out``, ``isneginf.out``, ``signbit.out``, the unary float
functions (``sinh`` ... ``exp2``), ``trunc``, ``frac``, ``atan2``, ``fmod``, ``hypot``,
``logaddexp`` (their meta functions are in
backends/meta/pointwise_more.py) and the ``nan_to_num.out`` kernel.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensordispatch.backends.cpu.fpstate import quiet_fp
from tensordispatch.backends.cpu.pointwise import (
    _arg,
    _check_int_divisor,
    _float_only,
    _minmax,
    _rounding,
    _store,
    _unary,
    not_implemented,
)
from tensordispatch.backends.meta.pointwise_more import nan_to_num_spec, trace
from tensordispatch.backends.structured import prepare_out
from tensordispatch.tensor.tensor import Tensor

__all__ = ["M1_CPU_KERNELS", "nan_to_num_out"]


def _float_test(test: Any) -> Any:
    def impl(pre: Any, self: Tensor, out: Tensor) -> None:
        if pre.is_floating_point:
            np.copyto(out._data, test(self._data))
        else:  # integers and bool are never infinite
            out._data[...] = False

    impl.__name__ = f"{test.__name__}_out"
    return impl


def signbit_out(pre: Any, self: Tensor, out: Tensor) -> None:
    if pre.is_complex:
        raise NotImplementedError("signbit is not implemented for complex tensors.")
    if pre.is_floating_point:
        np.copyto(out._data, np.signbit(self._data))
    elif pre.name == "bool" or not pre.is_signed:
        out._data[...] = False
    else:
        np.copyto(out._data, self._data < 0)


def _replacement(value: Any, default: Any, real: Any) -> Any:
    if value is None:
        return default
    with np.errstate(over="ignore"):  # torch's static_cast: too large a value becomes inf
        return np.array(value, dtype=np.float64).astype(real)


def nan_to_num_out(
    self: Tensor, nan: Any = None, posinf: Any = None, neginf: Any = None, *, out: Tensor
) -> Tensor:
    """nan_to_num.out: integers and bool are copied; floating parts (real and imaginary
    parts separately) have nan, +inf, -inf replaced, the defaults being 0 and the real
    dtype's largest and lowest finite values, given values cast to it (1e300 in float32 is
    inf, as torch's cast).

    >>> import tensordispatch as td
    >>> x = td.tensor([float("nan"), float("-inf")], dtype=td.float16)
    >>> td.nan_to_num(x)
    tensor([     0., -65504.], dtype=tensordispatch.float16)
    """
    prepare_out(out, nan_to_num_spec(self, out))
    x = self._data
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        np.copyto(out._data, x)
        return out
    real = x.real.dtype
    info = np.finfo(real)
    values = np.array(x, copy=True)
    parts = (values.real, values.imag) if self.dtype.is_complex else (values,)
    nan_value = _replacement(nan, real.type(0), real)
    high = _replacement(posinf, info.max, real)
    low = _replacement(neginf, info.min, real)
    for part in parts:
        part[np.isnan(part)] = nan_value
        part[np.isposinf(part)] = high
        part[np.isneginf(part)] = low
    np.copyto(out._data, values)
    return out


def atan2_out(pre: Any, self: Tensor, other: Tensor, out: Tensor) -> None:
    if pre.is_complex:
        raise not_implemented("atan2_cpu", pre)
    with quiet_fp():
        _store(out, np.arctan2(_arg(self, pre), _arg(other, pre)), pre)


def fmod_out(pre: Any, self: Tensor, other: Tensor, out: Tensor) -> None:
    """fmod.Tensor_out: C's fmod (the result has the dividend's sign); an integer division by
    zero raises, a floating one gives nan."""
    if pre._category <= 0 or pre.is_complex:  # bool, or Note [Limited unsigned dtypes]
        raise not_implemented("fmod_cpu", pre)
    a, b = _arg(self, pre), _arg(other, pre)
    if not pre.is_floating_point:
        _check_int_divisor(b, out)
    with quiet_fp():
        _store(out, np.fmod(a, b), pre)


def _floating_binary(ufunc: Any, name: str, complex_ok: bool) -> Any:
    def impl(pre: Any, self: Tensor, other: Tensor, out: Tensor) -> None:
        if not (pre.is_floating_point or (complex_ok and pre.is_complex)):
            raise not_implemented(f"{name}_cpu", pre)
        with quiet_fp():
            _store(out, ufunc(_arg(self, pre), _arg(other, pre)), pre)

    impl.__name__ = f"{name}_out"
    return impl


def _complex_logaddexp(a: Any, b: Any) -> Any:
    """log(exp(a) + exp(b)) for complex operands, scaled by the operand of larger real part
    (torch's formula: ``max + log1p(exp(min - max))``)."""
    if not np.iscomplexobj(a):
        return np.logaddexp(a, b)
    high = np.where(a.real >= b.real, a, b)
    low = np.where(a.real >= b.real, b, a)
    return high + np.log1p(np.exp(low - high))


def cumprod_out(pre: Any, self: Tensor, dim: int, dtype: Any, out: Tensor) -> None:
    """cumprod.out's impl (``pre`` is the wrapped dim), cumsum_out's way: NumPy's running
    product in the result dtype."""
    from tensordispatch.backends.overlap import check_written

    check_written(out, (self,))
    data = self._data if self.dim() else self._data.reshape(1)
    with quiet_fp():  # integer overflow wraps, float overflow is inf, as torch's
        result = np.cumprod(data, axis=pre, dtype=out.dtype._numpy)
    np.copyto(out._data, result.reshape(out._data.shape))


def _fminmax(ufunc: Any, name: str, integer_kernel: str) -> Any:
    """fmax / fmin: maximum's checks, but an integer dtype runs torch's maximum / minimum
    kernel (nan cannot occur), so a limited unsigned dtype is refused under that name."""
    checked = _minmax(ufunc, name)

    def impl(pre: Any, self: Tensor, other: Tensor, out: Tensor) -> None:
        complex_operand = self.dtype.is_complex or other.dtype.is_complex
        if pre._category < 0 and not complex_operand:  # Note [Limited unsigned dtypes]
            raise not_implemented(integer_kernel, pre)
        checked(pre, self, other, out)

    impl.__name__ = f"{name}_out"
    return impl


M1_CPU_KERNELS: dict[str, Any] = {
    "isposinf_out": _float_test(np.isposinf),
    "isneginf_out": _float_test(np.isneginf),
    "signbit_out": signbit_out,
    "nan_to_num_out": nan_to_num_out,
    "cumprod_out": cumprod_out,
    "logaddexp2_out": _floating_binary(np.logaddexp2, "logaddexp2", complex_ok=False),
    "fmax_out": _fminmax(np.fmax, "fmax", "maximum_cpu"),
    "fmin_out": _fminmax(np.fmin, "fmin", "minimum_cpu"),
    "trace_cpu": trace,  # op-based: the same function is the Meta kernel
    **{
        f"{fn.__name__}_out": _unary(fn, fn.__name__)
        for fn in (np.sinh, np.cosh, np.log2, np.log10, np.exp2)
    },
    # NumPy's names differ: arcsin is torch's asin
    **{
        f"{name}_out": _unary(fn, name)
        for name, fn in (
            ("asin", np.arcsin),
            ("acos", np.arccos),
            ("atan", np.arctan),
            ("asinh", np.arcsinh),
            ("acosh", np.arccosh),
            ("atanh", np.arctanh),
        )
    },
    "trunc_out": _rounding(np.trunc, "trunc", "trunc_vml_cpu"),
    "frac_out": _float_only(lambda x: x - np.trunc(x), "frac_cpu", complex_ok=False),
    "atan2_out": atan2_out,
    "fmod_out": fmod_out,
    "hypot_out": _floating_binary(np.hypot, "hypot", complex_ok=False),
    "logaddexp_out": _floating_binary(_complex_logaddexp, "logaddexp", complex_ok=True),
}
