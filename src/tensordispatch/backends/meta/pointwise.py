"""Meta functions and Meta kernels of the pointwise family F1 (remainder, pow, log & co.,
clamp, where, maximum/minimum, logical and bitwise ops, lerp, addcmul/addcdiv).

Structured meta functions follow backends/meta/structured.py's convention
(``meta(outs, *functional_args) -> (specs, precomputed)``, precomputed = the computation
dtype) and are merged into ``META_FUNCTIONS``. Two TensorIterator flavours occur:

* binary/ternary ops (``build_borrowing_binary_op`` and friends): ``iterator.pointwise``,
  which promotes, broadcasts and checks that the result can be cast to an existing output;
* unary ops built with ``build_unary_op`` (floor, ceil, round, sign, silu, gelu,
  bitwise_not, clamp with numbers): the output must have exactly the input's dtype
  (``Found dtype Double but expected Float``), see :func:`unary_same_dtype`.

Checks that torch makes only in its CPU kernels (not-implemented dtypes) live in the CPU
impls, so 'meta' accepts what torch's meta tensors accept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensordispatch.backends.aten import wrap_number
from tensordispatch.backends.common import (
    broadcast_shapes,
    is_integral,
    scalar_type_name,
    shape_text,
    type_meta_name,
)
from tensordispatch.backends.composite_pointwise import SHIFT_DUNDER_KERNELS
from tensordispatch.backends.meta.iterator import (
    Spec,
    as_computed,
    check_can_cast,
    output_strides,
    pointwise,
)
from tensordispatch.backends.overlap import check_written
from tensordispatch.backends.structured import alloc_meta, prepare_out
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.dtypes import _result_type_of
from tensordispatch.tensor.tensor import Tensor

__all__ = [
    "POINTWISE_META_FUNCTIONS",
    "POINTWISE_META_KERNELS",
    "SHIFT_DUNDER_META_KERNELS",
    "logical_spec",
    "unary_same_dtype",
    "where_spec",
]

MetaResult = tuple[tuple[Spec, ...], Any]

ADDCDIV_INTEGER_MESSAGE = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
    "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can "
    "be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
    "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
    "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
    "for all dtypes."
)


def unary_same_dtype(outs: Any, self: Any, dtype: Any = None) -> MetaResult:
    """TensorIterator's ``build_unary_op``: the output keeps the input's (or ``dtype``'s)
    dtype exactly; an out= tensor of another dtype is an error, not a cast.

    >>> from tensordispatch.tensor import tensor, float64
    >>> unary_same_dtype((tensor([1.0], dtype=float64),), tensor([1.0]))
    Traceback (most recent call last):
    ...
    RuntimeError: Found dtype Double but expected Float
    """
    dt = self.dtype if dtype is None else dtype
    shape = self._shape
    if outs is None:  # the input converted to ``dtype`` first (Note [Converted inputs ...])
        return ((shape, output_strides(shape, as_computed((self,), dt)), dt),), dt
    out = outs[0]
    check_written(out, (self,))
    if out.dtype is not dt:
        raise RuntimeError(
            f"Found dtype {scalar_type_name(out.dtype)} but expected {scalar_type_name(dt)}"
        )
    if out._shape == shape:
        return ((shape, out._strides, dt),), dt
    return ((shape, output_strides(shape, as_computed((self,), dt)), dt),), dt


def _binary(outs: Any, self: Any, other: Any) -> MetaResult:
    return pointwise(outs, (self, other))


def _off_meta(*tensors: Any) -> bool:
    """No operand on 'meta': torch's C++ meta functions check what its meta tensors (Python
    meta registrations) do not."""
    return all(t.device.type != "meta" for t in tensors)


def _minmax(name: str) -> Callable[..., MetaResult]:
    """maximum/minimum: torch's meta function refuses complex before building the iterator
    (so before the out= cast check)."""

    def meta(outs: Any, self: Any, other: Any) -> MetaResult:
        if (self.dtype.is_complex or other.dtype.is_complex) and _off_meta(self, other):
            raise RuntimeError(f"{name} not implemented for complex tensors.")
        return pointwise(outs, (self, other))

    return meta


def sign(outs: Any, self: Any) -> MetaResult:
    """sign refuses complex before the out= dtype check."""
    if self.dtype.is_complex and _off_meta(self):
        raise NotImplementedError(
            "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
            "torch.sgn instead."
        )
    return unary_same_dtype(outs, self)


def _unary_float(outs: Any, self: Any) -> MetaResult:
    return pointwise(outs, (self,), int_to_float=True)


def _unary(outs: Any, self: Any) -> MetaResult:
    return unary_same_dtype(outs, self)


def _real_rounding(name: str) -> Callable[..., MetaResult]:
    """floor/ceil: torch's meta function refuses complex before the out= dtype check."""

    def meta(outs: Any, self: Any) -> MetaResult:
        if self.dtype.is_complex and _off_meta(self):
            raise NotImplementedError(f"{name} is not supported for complex inputs")
        return unary_same_dtype(outs, self)

    return meta


def round_decimals(outs: Any, self: Any, decimals: int = 0) -> MetaResult:
    return unary_same_dtype(outs, self)


def gelu(outs: Any, self: Any, approximate: str = "none") -> MetaResult:
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return unary_same_dtype(outs, self)


# -- pow ---------------------------------------------------------------------------------------


def pow_Tensor_Scalar(outs: Any, self: Any, exponent: Any) -> MetaResult:
    if (
        not (self.dtype.is_floating_point or self.dtype.is_complex)
        and isinstance(exponent, int)
        and exponent < 0
    ):
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    specs, common = pointwise(outs, (self, wrap_number(exponent)))
    shape, strides, dt = specs[0]
    if outs is None or outs[0]._shape != shape:  # torch: a unary op on self.to(common)
        strides = output_strides(shape, as_computed((self,), common))
    return ((shape, strides, dt),), common


def pow_Scalar(outs: Any, self: Any, exponent: Any) -> MetaResult:
    """A number raised to a tensor: a contiguous output of the exponent's shape. torch's meta
    function builds no TensorIterator: memory overlap is checked by the CPU impl, after the
    out= tensor was resized (and not at all for a base of 1, which fills ones)."""
    _, common = pointwise(None, (wrap_number(self), exponent))
    if outs is not None:
        check_can_cast(common, outs[0])
    dt = common if outs is None else outs[0].dtype
    return ((exponent._shape, None, dt),), common


# -- clamp -------------------------------------------------------------------------------------


def _clamp_numbers(outs: Any, self: Any, bounds: tuple[Any, ...]) -> MetaResult:
    """clamp / clamp_min / clamp_max with numbers: promotion over self and the numbers,
    no promotion in place, then a unary op on self converted to the result dtype."""
    result = self.dtype
    if result.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    if not result.is_floating_point:
        result = _result_type_of((self, *(wrap_number(b) for b in bounds)))
        if result is not self.dtype and outs is not None and outs[0] is self:
            raise RuntimeError(
                f"result type {scalar_type_name(result)} can't be cast to the desired output "
                f"type {type_meta_name(self.dtype)}"
            )
        if result.is_complex:
            raise NotImplementedError("clamp is not supported for complex types")
    # a floating self keeps its dtype: a complex number fails in the kernel's conversion
    return unary_same_dtype(outs, self, result)


def clamp(outs: Any, self: Any, min: Any = None, max: Any = None) -> MetaResult:
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    return _clamp_numbers(outs, self, tuple(b for b in (min, max) if b is not None))


def clamp_Tensor(outs: Any, self: Any, min: Any = None, max: Any = None) -> MetaResult:
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if self.dtype.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    return pointwise(outs, (self, *(b for b in (min, max) if b is not None)))


def clamp_bound(outs: Any, self: Any, bound: Any) -> MetaResult:
    """clamp_min / clamp_max with a number."""
    return _clamp_numbers(outs, self, (bound,))


def clamp_bound_Tensor(outs: Any, self: Any, bound: Any) -> MetaResult:
    return pointwise(outs, (self, bound))


# -- lerp, addcmul, addcdiv --------------------------------------------------------------------


def _same_dtype(self: Any, other: Any, what: str) -> None:
    if other.dtype is not self.dtype:
        raise RuntimeError(
            f"expected dtype {type_meta_name(self.dtype)} for `{what}` but got dtype "
            f"{type_meta_name(other.dtype)}"
        )


def lerp_Scalar(outs: Any, self: Any, end: Any, weight: Any) -> MetaResult:
    _same_dtype(self, end, "end")
    return pointwise(outs, (self, end))


def lerp_Tensor(outs: Any, self: Any, end: Any, weight: Any) -> MetaResult:
    _same_dtype(self, end, "end")
    if weight.dim() != 0:
        _same_dtype(self, weight, "weight")
    return pointwise(outs, (self, end, weight))


def addcmul(outs: Any, self: Any, tensor1: Any, tensor2: Any, value: Any = 1) -> MetaResult:
    return pointwise(outs, (self, tensor1, tensor2))


def addcdiv(outs: Any, self: Any, tensor1: Any, tensor2: Any, value: Any = 1) -> MetaResult:
    if not (tensor1.dtype.is_floating_point or tensor1.dtype.is_complex) and not (
        tensor2.dtype.is_floating_point or tensor2.dtype.is_complex
    ):
        raise RuntimeError(ADDCDIV_INTEGER_MESSAGE)
    return pointwise(outs, (self, tensor1, tensor2))


# -- unstructured: where, logical ops (spec helpers shared with the CPU kernels) ---------------

_WARNED_UINT8 = [False]


def where_spec(condition: Any, self: Any, other: Any, out: Any = None) -> Spec:
    """Output spec of where(condition, self, other): result_type(self, other), the broadcast
    shape of all three, TensorIterator strides over all three."""
    if condition.dtype is _dt.uint8:
        if not _WARNED_UINT8[0]:
            import warnings

            _WARNED_UINT8[0] = True
            warnings.warn(
                "where received a uint8 condition tensor. This behavior is deprecated and will "
                "be removed in a future version of PyTorch. Use a boolean condition instead.",
                UserWarning,
                stacklevel=3,
            )
    elif condition.dtype is not _dt.bool:
        raise RuntimeError(
            "where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{scalar_type_name(condition.dtype)}"
        )
    result = _result_type_of((self, other))
    if out is not None and out.dtype is not result:
        raise RuntimeError(
            f"Expected out type to be {scalar_type_name(result)} but got "
            f"{scalar_type_name(out.dtype)}"
        )
    if result._category < 0:  # bool does not promote with these (Note [Limited unsigned dtypes])
        shape = broadcast_shapes(condition._shape, broadcast_shapes(self._shape, other._shape))
    else:
        specs, _ = pointwise(None, (condition, self, other))
        shape = specs[0][0]  # self and other are converted to the result dtype, not condition
    return (shape, output_strides(shape, [condition, *as_computed((self, other), result)]), result)


def logical_spec(out: Any, inputs: tuple[Any, ...]) -> Spec:
    """Output spec of a logical op into ``out`` (any dtype: no can-cast check)."""
    specs, _ = pointwise(None, inputs)
    shape, strides, _ = specs[0]
    if any(out is t for t in inputs) and out._shape != shape:
        raise RuntimeError(
            f"output with shape {shape_text(out._shape)} doesn't match the broadcast shape "
            f"{shape_text(shape)}"
        )
    return (shape, strides, out.dtype)


def where_meta(condition: Tensor, self: Tensor, other: Tensor) -> Tensor:
    return alloc_meta(where_spec(condition, self, other), _meta_device(condition, self, other))


def where_self_out_meta(condition: Tensor, self: Tensor, other: Tensor, *, out: Tensor) -> Tensor:
    prepare_out(out, where_spec(condition, self, other, out))
    return out


def _meta_device(*tensors: Tensor) -> Any:
    for t in tensors:
        if t.device.type != "cpu":
            return t.device
    return None


def _logical_out_meta(self: Tensor, other: Tensor, *, out: Tensor) -> Tensor:
    prepare_out(out, logical_spec(out, (self, other)))
    return out


def logical_not_out_meta(self: Tensor, *, out: Tensor) -> Tensor:
    prepare_out(out, logical_spec(out, (self,)))
    return out


# Keyed by the structured group's functional operator name.
POINTWISE_META_FUNCTIONS: dict[str, Callable[..., MetaResult]] = {
    "remainder.Tensor": _binary,
    "pow.Tensor_Tensor": _binary,
    "pow.Tensor_Scalar": pow_Tensor_Scalar,
    "pow.Scalar": pow_Scalar,
    **{
        n: _unary_float
        for n in ("log", "log1p", "expm1", "rsqrt", "reciprocal", "tan", "tanh", "sigmoid")
    },
    "erf": _unary_float,
    **{n: _unary for n in ("silu", "round", "bitwise_not")},
    "floor": _real_rounding("floor"),
    "ceil": _real_rounding("ceil"),
    "sign": sign,
    "gelu": gelu,
    "round.decimals": round_decimals,
    "clamp": clamp,
    "clamp.Tensor": clamp_Tensor,
    "clamp_min": clamp_bound,
    "clamp_max": clamp_bound,
    "clamp_min.Tensor": clamp_bound_Tensor,
    "clamp_max.Tensor": clamp_bound_Tensor,
    "maximum": _minmax("maximum"),
    "minimum": _minmax("minimum"),
    **{f"bitwise_{n}.Tensor": _binary for n in ("and", "or", "xor")},
    **{f"bitwise_{n}_shift.Tensor": _binary for n in ("left", "right")},
    "lerp.Scalar": lerp_Scalar,
    "lerp.Tensor": lerp_Tensor,
    "addcmul": addcmul,
    "addcdiv": addcdiv,
}

# Explicit ``Meta:`` kernels of the unstructured operators, keyed by yaml kernel name.
POINTWISE_META_KERNELS: dict[str, Any] = {
    "where_meta": where_meta,
    "where_self_out_meta": where_self_out_meta,
    "logical_and_out_meta": _logical_out_meta,
    "logical_or_out_meta": _logical_out_meta,
    "logical_xor_out_meta": _logical_out_meta,
    "logical_not_out_meta": logical_not_out_meta,
}


def shift_dtype_check(name: str, self: Tensor, other: Any) -> None:
    """The dtype checks torch's meta path makes for ``__lshift__`` / ``__rshift__`` (and the
    in-place forms): an integer ``self`` (bool refused), an integer shift tensor or an int
    number (a bool number passes, as it is an int).  Torch's CPU kernels check differently:
    they promote a bool ``self`` and refuse floats only in the loop.

    >>> import tensordispatch as td
    >>> td.tensor([True], device="meta") << 1
    Traceback (most recent call last):
    ...
    RuntimeError: lshift: Expected input tensor to have an integral dtype. Got tensordispatch.bool
    """
    if not is_integral(self.dtype, include_bool=False):
        raise RuntimeError(
            f"{name}: Expected input tensor to have an integral dtype. Got {self.dtype}"
        )
    if isinstance(other, Tensor):
        if not is_integral(other.dtype, include_bool=False):
            raise RuntimeError(
                f"{name}: Expected shift value to have an integral dtype. Got {other.dtype}"
            )
    elif not isinstance(other, int):
        raise RuntimeError(f"{name}: Expected shift value to be an int. Got {other}")  # noqa: TRY004


def _checked_shift(name: str, kernel: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def checked(self: Tensor, other: Any) -> Tensor:
        shift_dtype_check(name, self, other)
        return kernel(self, other)

    return checked


# Meta kernels of __lshift__ / __rshift__ / __ilshift__ / __irshift__: the CPU kernels behind
# torch's meta dtype checks (bitwise_*_shift itself has no such check on meta, as in torch).
SHIFT_DUNDER_META_KERNELS: dict[str, Callable[..., Tensor]] = {
    k: _checked_shift("lshift" if "lshift" in k else "rshift", fn)
    for k, fn in SHIFT_DUNDER_KERNELS.items()
}
