"""Structured meta functions: one per structured group, keyed by the group's functional name.

A meta function checks the inputs and describes the outputs; it never computes values. It
is called as ``meta(outs, *args)`` with the functional variant's arguments (defaults filled
in by the generated wrapper) and ``outs``: None for the functional variant, else the
existing outputs (``(self,)`` for inplace, the out arguments for out=), which is torch's
``maybe_get_output()``. It returns ``(specs, precomputed)``: one ``(shape, strides or None,
dtype)`` per output, and a value handed to the backend's impl (torch's ``precomputed``;
here usually the computation dtype). The same table serves the CPU wrappers, the Meta
kernels and, later, lazy shape inference.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensordispatch.backends.aten import wrap_number
from tensordispatch.backends.common import (
    check_batch_pair,
    expand_check,
    is_integral,
    reduction_dims,
    reduction_shape,
    scalar_type_name,
    shape_text,
    type_meta_name,
    wrap_dim,
)
from tensordispatch.backends.limited import refuse_limited
from tensordispatch.backends.meta.iterator import Spec, pointwise
from tensordispatch.backends.meta.pointwise import unary_same_dtype
from tensordispatch.backends.overlap import check_written
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.tensor import Tensor

__all__ = ["META_FUNCTIONS", "reduction_shape"]

MetaResult = tuple[tuple[Spec, ...], Any]


# -- pointwise ---------------------------------------------------------------------------------


def _check_alpha(common: Any, alpha: Any) -> None:
    """torch's alpha_check against the computation dtype."""
    if type(alpha) is int:
        return
    if isinstance(alpha, bool) and common is not _dt.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if not (common.is_floating_point or common.is_complex) and not isinstance(alpha, int):
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating point number."
        )
    if not common.is_complex and isinstance(alpha, complex):
        raise RuntimeError(
            "For non-complex input tensors, argument alpha must not be a complex number."
        )


def add_Tensor(outs: Any, self: Any, other: Any, alpha: Any = 1) -> MetaResult:
    result = pointwise(outs, (self, other))
    if result[1]._category < 0:  # Note [Limited unsigned dtypes]
        refuse_limited("add_stub", result[1], self, other)
    if type(alpha) is not int:
        _check_alpha(result[1], alpha)
    return result


def sub_Tensor(outs: Any, self: Any, other: Any, alpha: Any = 1) -> MetaResult:
    if self.dtype is _dt.bool or other.dtype is _dt.bool:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
            "`^` or `logical_xor()` operator instead."
            if self.dtype is _dt.bool and other.dtype is _dt.bool
            else "Subtraction, the `-` operator, with a bool tensor is not supported. If you "
            "are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return add_Tensor(outs, self, other, alpha)


def mul_Tensor(outs: Any, self: Any, other: Any) -> MetaResult:
    return pointwise(outs, (self, other))


def div_Tensor(outs: Any, self: Any, other: Any) -> MetaResult:
    return pointwise(outs, (self, other), int_to_float=True)


def div_Tensor_mode(
    outs: Any, self: Any, other: Any, rounding_mode: str | None = None
) -> MetaResult:
    if rounding_mode is None:
        return div_Tensor(outs, self, other)
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(
            "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
            f"'{rounding_mode}'"
        )
    specs, common = pointwise(outs, (self, other))
    if common._category < 0:  # Note [Limited unsigned dtypes]
        refuse_limited(f"div_{rounding_mode}_cpu", common, self, other)
    return specs, (common, rounding_mode)


def _unary_float(outs: Any, self: Any) -> MetaResult:
    return pointwise(outs, (self,), int_to_float=True)


def neg(outs: Any, self: Any) -> MetaResult:
    if self.dtype is _dt.bool:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
            "to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    if self.dtype._category < 0:  # Note [Limited unsigned dtypes]
        refuse_limited("neg_cpu", self.dtype, self)
    return unary_same_dtype(outs, self)  # build_borrowing_unary_op: out of self's dtype


def comparison_of(kernel: str | None) -> Callable[..., MetaResult]:
    """The meta function of eq/ne/lt/le/gt/ge: compute in the common dtype, write bool (or an
    existing output's dtype, without a can-cast check: torch's comparison TensorIterator).
    `kernel`: the CPU kernel's name when it refuses the limited dtypes (lt/le/gt/ge)."""

    def comparison(outs: Any, self: Any, other: Any) -> MetaResult:
        if not isinstance(other, Tensor):
            other = wrap_number(other)
        if outs is not None:
            check_written(outs[0], (self, other))
        specs, common = pointwise(None, (self, other))
        if common._category < 0 and kernel is not None:  # Note [Limited unsigned dtypes]
            refuse_limited(kernel, common, self, other)
        if outs is None:
            shape, strides, _ = specs[0]
            return ((shape, strides, _dt.bool),), common
        out = outs[0]
        shape = specs[0][0]
        if out._shape == shape:
            return ((shape, out._strides, out.dtype),), common
        if out is self:
            raise RuntimeError(
                f"output with shape {shape_text(out._shape)} doesn't match the broadcast shape "
                f"{shape_text(shape)}"
            )
        return ((shape, specs[0][1], out.dtype),), common

    return comparison


comparison = comparison_of(None)


# -- reductions --------------------------------------------------------------------------------


def _reduce(outs: Any, self: Any, dim: Any, keepdim: bool, out_dtype: Any) -> MetaResult:
    if outs is not None:
        out_dtype = out_dtype if out_dtype is not None else outs[0].dtype
    dims = reduction_dims(dim, self.dim())
    return ((reduction_shape(self._shape, dims, keepdim), None, out_dtype),), dims


def sum_dim_IntList(
    outs: Any, self: Any, dim: Any, keepdim: bool = False, dtype: Any = None
) -> MetaResult:
    out_dtype = dtype
    if outs is None and dtype is None:
        out_dtype = _dt.int64 if is_integral(self.dtype, True) else self.dtype
    return _reduce(outs, self, dim, keepdim, out_dtype)


def mean_dim(
    outs: Any, self: Any, dim: Any, keepdim: bool = False, dtype: Any = None
) -> MetaResult:
    in_dtype = self.dtype if dtype is None else dtype
    if not (in_dtype.is_floating_point or in_dtype.is_complex):
        what = "Input" if dtype is None else "Optional"
        raise RuntimeError(
            "mean(): could not infer output dtype. "
            f"{what} dtype must be either a floating point or complex dtype. "
            f"Got: {scalar_type_name(in_dtype)}"
        )
    if outs is not None and dtype is None:  # torch: the result takes out's dtype (sum_out)
        out_dtype = outs[0].dtype
        if not (out_dtype.is_floating_point or out_dtype.is_complex):  # then div_ in place
            raise RuntimeError(
                f"result type {scalar_type_name(_dt.get_default_dtype())} can't be cast to the "
                f"desired output type {scalar_type_name(out_dtype)}"
            )
        return _reduce(outs, self, dim, keepdim, out_dtype)
    return _reduce(outs, self, dim, keepdim, in_dtype)


def aminmax(outs: Any, self: Any, dim: Any = None, keepdim: bool = False) -> MetaResult:
    """Two outputs (min, max) of self's dtype, over one dim or all of them."""
    ndim = self.dim()
    if dim is not None:
        d = wrap_dim(dim, ndim)
        if ndim and self._shape[d] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
        shape = reduction_shape(self._shape, (d,), keepdim) if ndim else ()
        axis = d if ndim else None
    else:
        if self.numel() == 0:
            raise RuntimeError(
                "aminmax(): cannot compute aminmax over an empty dimension as the operation "
                "has no identity."
            )
        shape = (1,) * ndim if keepdim else ()
        axis = None
    if self.dtype._category < 0:  # Note [Limited unsigned dtypes]
        refuse_limited("aminmax_cpu", self.dtype, self)
    if self.dtype.is_complex and self.device.type != "meta":  # torch's CPU kernel's checks
        kind = scalar_type_name(self.dtype)
        if dim is not None and ndim == 0:
            raise RuntimeError(f"aminmax not implemented for {kind}")
        raise NotImplementedError(f"\"aminmax_cpu\" not implemented for '{kind}'")
    spec = (shape, None, self.dtype)
    return (spec, spec), axis


# -- linear algebra ----------------------------------------------------------------------------


def _mat_product_check(a: Any, b: Any) -> None:
    if a._shape[1] != b._shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({a._shape[0]}x{a._shape[1]} and "
            f"{b._shape[0]}x{b._shape[1]})"
        )


def mm(outs: Any, self: Any, mat2: Any) -> MetaResult:
    if self.dim() != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.dim() != 2:
        raise RuntimeError("mat2 must be a matrix")
    if self.dtype is not mat2.dtype:
        raise RuntimeError(
            "expected m1 and m2 to have the same dtype, but got: "
            f"{type_meta_name(self.dtype)} != {type_meta_name(mat2.dtype)}"
        )
    _mat_product_check(self, mat2)
    if self.dtype._category < 0 and self._shape[1] and self._shape[0] and mat2._shape[1]:
        refuse_limited("addmm_impl_cpu_", self.dtype, self, mat2)  # Note [Limited unsigned dtypes]
    return (((self._shape[0], mat2._shape[1]), None, self.dtype),), None


def addmm(outs: Any, self: Any, mat1: Any, mat2: Any, beta: Any = 1, alpha: Any = 1) -> MetaResult:
    if mat1.dim() != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {mat1.dim()}-D tensor")
    if mat2.dim() != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {mat2.dim()}-D tensor")
    _mat_product_check(mat1, mat2)
    if self.dtype is not mat2.dtype:
        raise RuntimeError(
            "self and mat2 must have the same dtype, but got "
            f"{scalar_type_name(self.dtype)} and {scalar_type_name(mat2.dtype)}"
        )
    if mat1.dtype is not mat2.dtype:
        raise RuntimeError(
            "mat1 and mat2 must have the same dtype, but got "
            f"{scalar_type_name(mat1.dtype)} and {scalar_type_name(mat2.dtype)}"
        )
    shape = (mat1._shape[0], mat2._shape[1])
    expand_check(self, shape)
    if mat1.dtype._category < 0 and mat1._shape[1] and shape[0] and shape[1]:
        refuse_limited("addmm_impl_cpu_", mat1.dtype, self, mat1, mat2)  # Note [Limited ...]
    return ((shape, None, mat1.dtype),), None


def bmm(outs: Any, self: Any, mat2: Any) -> MetaResult:
    bs, n, _ = check_batch_pair(self, mat2)
    if self.dtype is not mat2.dtype:
        raise RuntimeError(
            "expected scalar type "
            f"{scalar_type_name(self.dtype)} but found {scalar_type_name(mat2.dtype)}"
        )
    if self.dtype._category < 0 and bs and n and mat2._shape[1] and mat2._shape[2]:
        refuse_limited("bmm", self.dtype, self, mat2)  # Note [Limited unsigned dtypes]
    return (((bs, n, mat2._shape[2]), None, self.dtype),), None


def _named(table: dict[str, Callable[..., MetaResult]]) -> dict[str, Callable[..., MetaResult]]:
    return table


# Keyed by the structured group's functional operator name (torch's meta struct name).
META_FUNCTIONS: dict[str, Callable[..., MetaResult]] = _named(
    {
        "add.Tensor": add_Tensor,
        "sub.Tensor": sub_Tensor,
        "mul.Tensor": mul_Tensor,
        "div.Tensor": div_Tensor,
        "div.Tensor_mode": div_Tensor_mode,
        "neg": neg,
        **{
            f"{c}.{o}": comparison_of(None if c in ("eq", "ne") else f"{c}_cpu")
            for c in ("eq", "ne", "lt", "le", "gt", "ge")
            for o in ("Tensor", "Scalar")
        },
        "exp": _unary_float,
        "sin": _unary_float,
        "cos": _unary_float,
        "sqrt": _unary_float,
        "sum.dim_IntList": sum_dim_IntList,
        "mean.dim": mean_dim,
        "aminmax": aminmax,
        "mm": mm,
        "bmm": bmm,
        "addmm": addmm,
    }
)

from tensordispatch.backends.meta.reductions import REDUCTION_META_FUNCTIONS

META_FUNCTIONS.update(REDUCTION_META_FUNCTIONS)

from tensordispatch.backends.meta.pointwise import POINTWISE_META_FUNCTIONS

META_FUNCTIONS.update(POINTWISE_META_FUNCTIONS)

from tensordispatch.backends.meta.layout import META_FUNCTIONS_LAYOUT

META_FUNCTIONS.update(META_FUNCTIONS_LAYOUT)

from tensordispatch.backends.meta.nn import NN_META_FUNCTIONS

META_FUNCTIONS.update(NN_META_FUNCTIONS)

from tensordispatch.backends.meta.linalg import LINALG_META_FUNCTIONS

META_FUNCTIONS.update(LINALG_META_FUNCTIONS)

from tensordispatch.backends.meta.pointwise_more import M1_META_FUNCTIONS

META_FUNCTIONS.update(M1_META_FUNCTIONS)
