"""Meta functions and kernels of M1's pointwise operators, merged into the pointwise tables
(backends/meta/pointwise.py): the force-boolean structured ops ``isposinf``, ``isneginf``,
``signbit`` (TensorIterator's ``build_borrowing_unary_force_boolean_op``: a bool output of
the input's shape, the computation in the input's dtype), the unary float functions
(``sinh`` ... ``exp2``: integers compute in the default dtype), ``trunc``, ``frac``, the
binary ``atan2`` (float), ``fmod``, ``hypot``, ``logaddexp`` (promoting), and
``nan_to_num.out``'s Meta kernel.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensordispatch.backends.common import scalar_type_name
from tensordispatch.backends.meta.iterator import as_computed, output_strides, pointwise
from tensordispatch.backends.meta.pointwise import (
    _binary,
    _minmax,
    _real_rounding,
    _unary,
    _unary_float,
)
from tensordispatch.backends.overlap import check_written
from tensordispatch.backends.structured import prepare_out
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.tensor import Tensor

__all__ = ["M1_META_FUNCTIONS", "M1_META_KERNELS", "nan_to_num_spec", "trace"]


def _force_boolean(name: str, complex_text: str) -> Callable[..., Any]:
    """The meta function of a unary op with a bool result: ``complex_text`` (empty: complex
    allowed here) refuses complex input, then an out= tensor must be bool."""

    def meta(outs: Any, self: Tensor) -> Any:
        if complex_text and self.dtype.is_complex:
            raise RuntimeError(complex_text)
        shape = self._shape
        if outs is not None:
            out = outs[0]
            if out.dtype is not _dt.bool:
                raise RuntimeError(f"{name} does not support non-boolean outputs.")
            check_written(out, (self,))
            if out._shape == shape:
                return ((shape, out._strides, _dt.bool),), self.dtype
        strides = output_strides(shape, as_computed((self,), self.dtype))
        return ((shape, strides, _dt.bool),), self.dtype

    meta.__name__ = name
    return meta


def _binary_float(outs: Any, self: Tensor, other: Tensor) -> Any:
    """atan2: TensorIterator's binary float op (integers and bool compute in the default
    dtype)."""
    return pointwise(outs, (self, other), int_to_float=True)


def cumprod(outs: Any, self: Tensor, dim: int, dtype: Any = None) -> Any:
    """cumprod's meta function (cumsum's rules: integers and bool multiply in int64 unless
    ``dtype`` is given; the computation dim is the ``pre`` the impl receives)."""
    from tensordispatch.backends.common import wrap_dim
    from tensordispatch.backends.meta.reductions import promoted_int64

    d = wrap_dim(dim, self.dim())
    dt = promoted_int64(self, dtype) if outs is None or dtype is not None else outs[0].dtype
    if dt is _dt.bool and self.numel() and self.dim() and self.device.type != "meta":
        raise NotImplementedError("\"cumprod_out_cpu\" not implemented for 'Bool'")
    return ((self._shape, None, dt),), d


def nan_to_num_spec(self: Tensor, out: Tensor) -> Any:
    """nan_to_num.out's checks (out keeps the input's dtype) and its output spec.

    >>> from tensordispatch.tensor import tensor, float64
    >>> nan_to_num_spec(tensor([1.0]), tensor([0.0], dtype=float64))
    Traceback (most recent call last):
    ...
    RuntimeError: nan_to_num: dtype of out: Double should be same as input: Float
    """
    if out.dtype is not self.dtype:
        raise RuntimeError(
            f"nan_to_num: dtype of out: {scalar_type_name(out.dtype)} should be same as input: "
            f"{scalar_type_name(self.dtype)}"
        )
    if out is not self:
        check_written(out, (self,))
    shape = self._shape
    if out._shape == shape:
        return (shape, out._strides, self.dtype)
    return (shape, output_strides(shape, as_computed((self,), self.dtype)), self.dtype)


def nan_to_num_out_meta(
    self: Tensor, nan: Any = None, posinf: Any = None, neginf: Any = None, *, out: Tensor
) -> Tensor:
    prepare_out(out, nan_to_num_spec(self, out))
    return out


M1_META_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "isposinf": _force_boolean("isposinf", "isposinf does not support complex inputs."),
    "isneginf": _force_boolean("isneginf", "isneginf does not support complex inputs."),
    # signbit refuses complex in its CPU kernel (NotImplementedError), not on meta
    "signbit": _force_boolean("signbit", ""),
    **{
        n: _unary_float
        for n in (
            "sinh",
            "cosh",
            "asin",
            "acos",
            "atan",
            "asinh",
            "acosh",
            "atanh",
            "log2",
            "log10",
            "exp2",
        )
    },
    "trunc": _real_rounding("trunc"),
    "frac": _unary,
    "atan2": _binary_float,
    "fmod.Tensor": _binary,
    "hypot": _binary,
    "logaddexp": _binary,
    "cumprod": cumprod,
    "logaddexp2": _binary,
    "fmax": _minmax("fmax"),
    "fmin": _minmax("fmin"),
}


def trace(self: Tensor) -> Tensor:
    """aten::trace's CPU and Meta kernel: the sum of a matrix's diagonal (integers sum to
    int64, as sum). A backend kernel as torch's (trace_cpu), not a composite one: a lazy
    tensor falls back to the CPU instead of viewing its diagonal unfunctionalized.

    >>> import tensordispatch as td
    >>> td.trace(td.arange(9).reshape(3, 3))
    tensor(12)
    """
    from tensordispatch.backends.aten import op

    if self.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self.dim()}")
    if self.dtype._category < 0 and self.device.type == "cpu":  # Note [Limited unsigned dtypes]
        raise NotImplementedError(f"\"trace\" not implemented for '{scalar_type_name(self.dtype)}'")
    return op("sum")(op("diagonal")(self))  # type: ignore[no-any-return]


M1_META_KERNELS: dict[str, Any] = {"nan_to_num_out_meta": nan_to_num_out_meta, "trace_meta": trace}
