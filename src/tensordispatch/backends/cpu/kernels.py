"""CPU kernels over NumPy: structured impls (write into given outputs) and plain kernels.

Structured impls are called by the generated wrappers as ``impl(precomputed, *args, *outs)``
with the out variant's arguments; they write into ``out._data`` (a NumPy view of the out
tensor's storage, any strides) and return nothing. ``precomputed`` is what the group's meta
function returned next to the specs (for TensorIterator-like ops, the computation dtype).
Plain kernels have the operator's own signature and return its result.
"""

from __future__ import annotations

from math import prod
from typing import Any

import numpy as np

from tensordispatch.backends.common import (
    channels_last,
    contiguous_format,
    preserve_format,
    scalar_type_name,
    shape_text,
    strided,
)
from tensordispatch.backends.cpu.fpstate import FP_QUIET, FP_STATE, QUIET_RUN, quiet_fp, quiet_retry
from tensordispatch.backends.cpu.scalars import checked_fill_value
from tensordispatch.backends.math_bits import copy_with_math_bits, dot_with_conj_bits
from tensordispatch.backends.overlap import (
    INTERNAL_OVERLAP,
    PARTIAL_OVERLAP,
    assert_no_internal_overlap,
    check_bias_copy,
    check_written,
    has_internal_overlap,
    partial_overlap,
    torch_element_order,
)
from tensordispatch.backends.structured import alloc_cpu, empty_strided_cpu_array
from tensordispatch.backends.views import view
from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import keyset_raw
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.device import CPU
from tensordispatch.tensor.geometry import contiguous_of
from tensordispatch.tensor.tensor import (
    Tensor,
    new_cpu_tensor,
)

__all__ = ["CPU_KERNELS"]

_CONJ = keyset_raw(DispatchKey.Conjugate)
_CPU_KS = CPU._key_set
_MATH_BITS_RAW = _CONJ | keyset_raw(DispatchKey.Negative)

# -- structured impls: pointwise ---------------------------------------------------------------


# Note [Complex alpha]
# torch's add and sub compute ``self + alpha * other`` and, for complex numbers, multiply by
# alpha even when it is 1: (1 + 0j) * (inf + 0j) is inf + nanj (the product's imaginary part
# has 0 * inf), and the sign of a zero can change, so (1+1j) + inf is inf+nanj; sub is
# add(self, other, -alpha) (for complex numbers a - b and a + (-1) * b differ in the signs
# of zeros: (-0-1j) - (-0-1j) is 0+0j in torch). Every path
# of ours that skips the multiplication for alpha == 1 (structured impls here, the fresh and
# fused kernels of fresh.py and fresh_inplace.py) does so for real dtypes only.
_COMPLEX = 3  # dtypes.py's category rank of complex dtypes


def _scale(b: Any, alpha: Any, cd: Any) -> Any:
    # alpha converted to the computation dtype first, wrapping as a C cast does (uint8 and
    # alpha=-3 multiply by 253), as torch's kernels do; NumPy refuses out-of-range ints.
    a = np.array(alpha).astype(cd)
    try:
        return QUIET_RUN(np.multiply, b, a, dtype=cd, casting="unsafe")
    except RuntimeError as e:  # Note [Quiet context] in fpstate.py
        return quiet_retry(e, np.multiply, b, a, dtype=cd, casting="unsafe")


def add_out(pre: Any, self: Tensor, other: Tensor, alpha: Any, out: Tensor) -> None:
    cd = pre._numpy
    b = other._data
    if alpha != 1 or type(alpha) is bool or pre._category == _COMPLEX:  # Note [Complex alpha]
        b = _scale(b, alpha, cd)
    try:  # NumPy's FP reports off, inline (Note [Quiet context] in fpstate.py)
        QUIET_RUN(np.add, self._data, b, out=out._data, dtype=cd, casting="unsafe")
    except RuntimeError as e:
        quiet_retry(e, np.add, self._data, b, out=out._data, dtype=cd, casting="unsafe")


def sub_out(pre: Any, self: Tensor, other: Tensor, alpha: Any, out: Tensor) -> None:
    cd = pre._numpy
    b = other._data
    if pre._category == _COMPLEX:  # torch's add(self, other, -alpha): Note [Complex alpha]
        add_out(pre, self, other, -alpha, out)
        return
    if alpha != 1:
        b = _scale(b, alpha, cd)
    try:
        QUIET_RUN(np.subtract, self._data, b, out=out._data, dtype=cd, casting="unsafe")
    except RuntimeError as e:
        quiet_retry(e, np.subtract, self._data, b, out=out._data, dtype=cd, casting="unsafe")


def mul_out(pre: Any, self: Tensor, other: Tensor, out: Tensor) -> None:
    cd = pre._numpy
    if pre is _dt.bool:
        np.logical_and(self._data, other._data, out=out._data, casting="unsafe")
        return
    a, b, o = self._data, other._data, out._data
    try:
        QUIET_RUN(np.multiply, a, b, out=o, dtype=cd, casting="unsafe")
    except RuntimeError as e:
        quiet_retry(e, np.multiply, a, b, out=o, dtype=cd, casting="unsafe")


def div_out(pre: Any, self: Tensor, other: Tensor, out: Tensor) -> None:
    a, b, o, cd = self._data, other._data, out._data, pre._numpy
    try:
        QUIET_RUN(np.true_divide, a, b, out=o, dtype=cd, casting="unsafe")
    except RuntimeError as e:
        quiet_retry(e, np.true_divide, a, b, out=o, dtype=cd, casting="unsafe")


def div_out_mode(
    pre: Any, self: Tensor, other: Tensor, rounding_mode: str | None, out: Tensor
) -> None:
    if rounding_mode is None:
        div_out(pre, self, other, out)
        return
    common, mode = pre
    cd = common._numpy
    a = self._data.astype(cd, copy=False)
    b = other._data.astype(cd, copy=False)
    if common.is_floating_point or common.is_complex:
        with quiet_fp():
            result = np.floor_divide(a, b) if mode == "floor" else np.trunc(np.true_divide(a, b))
    else:
        if np.any(b == 0):
            raise RuntimeError("ZeroDivisionError")
        if common is _dt.bool:
            result = a
        else:
            result = np.floor_divide(a, b)
            if mode == "trunc":
                fix = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
                result = result + fix.astype(cd)
    np.copyto(out._data, result, casting="unsafe")


def _unary(ufunc: Any) -> Any:
    def impl(pre: Any, self: Tensor, out: Tensor) -> None:
        token = FP_STATE.set(FP_QUIET)  # np.errstate(all="ignore"), cheaply (see fpstate.py)
        try:
            ufunc(self._data, out=out._data, dtype=pre._numpy, casting="unsafe")
        finally:
            FP_STATE.reset(token)

    impl.__name__ = f"{ufunc.__name__}_out"
    return impl


def _comparison(ufunc: Any, name: str) -> Any:
    ordered = name[:2] in ("lt", "le", "gt", "ge")  # torch has no order of complex numbers

    def impl(pre: Any, self: Tensor, other: Any, out: Tensor) -> None:
        if ordered and pre.is_complex:
            raise NotImplementedError(
                f"\"{name[:2]}_cpu\" not implemented for '{scalar_type_name(pre)}'"
            )
        cd = pre._numpy
        b = other._data if isinstance(other, Tensor) else np.asarray(other)
        ufunc(self._data.astype(cd, copy=False), b.astype(cd, copy=False), out=out._data,
              casting="unsafe")  # fmt: skip

    impl.__name__ = name
    return impl


_COMPARISONS = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal,
}  # fmt: skip


# -- structured impls: reductions and linear algebra -------------------------------------------


def sum_out(pre: Any, self: Tensor, dim: Any, keepdim: bool, dtype: Any, out: Tensor) -> None:
    axis = pre if self._shape else None  # a 0-dim tensor reduces over its dim 0 as a whole
    # np.add.reduce is what np.sum calls for an ndarray, without its Python wrappers (~300 ns);
    # NumPy's FP reports off as torch never warns (Note [Quiet context] in fpstate.py).
    data, cd, o = self._data, out.dtype._numpy, out._data
    try:
        QUIET_RUN(_add_reduce, data, axis=axis, dtype=cd, keepdims=keepdim, out=o)
    except RuntimeError as e:
        quiet_retry(e, _add_reduce, data, axis=axis, dtype=cd, keepdims=keepdim, out=o)


_add_reduce = np.add.reduce


def mean_out(pre: Any, self: Tensor, dim: Any, keepdim: bool, dtype: Any, out: Tensor) -> None:
    if self.numel() == 0:  # every output element averages nothing (np.mean would warn)
        out._data[...] = np.nan
        return
    data = self._data if dtype is None else self._data.astype(dtype._numpy)
    with quiet_fp():
        axis = pre if self.dim() else None
        result = np.mean(data, axis=axis, keepdims=keepdim, dtype=(dtype or self.dtype)._numpy)
    np.copyto(out._data, result, casting="unsafe")


def aminmax_out(
    pre: Any,
    self: Tensor,
    dim: Any,
    keepdim: bool,
    min: Tensor,
    max: Tensor,
) -> None:
    keep = keepdim and (dim is not None or self.dim() > 0)
    np.copyto(min._data, np.amin(self._data, axis=pre, keepdims=keep), casting="unsafe")
    np.copyto(max._data, np.amax(self._data, axis=pre, keepdims=keep), casting="unsafe")


def _check_matmul_dtype(name: str, t: Tensor) -> None:
    if t.dtype is _dt.bool:
        raise NotImplementedError(f"\"{name}\" not implemented for 'Bool'")


def _outer_product(self: Tensor, mat2: Tensor, out: Tensor) -> bool:
    """A (batched) matrix product with contraction size 1 is one product per element:
    np.multiply gives matmul's values exactly (no accumulation) ~3x faster than NumPy's matmul
    for it (per-sample weight gradients). Real dtypes other than float16 only (complex
    products and half rounding may differ from the matmul loop). True when done."""
    dt = self.dtype
    if self._shape[-1] != 1 or dt.is_complex or dt is _dt.float16:
        return False
    a, b, o = self._data, mat2._data, out._data
    try:  # NumPy's FP reports off, as matmul's (Note [Quiet context] in fpstate.py)
        QUIET_RUN(np.multiply, a, b, out=o)
    except RuntimeError as e:
        quiet_retry(e, np.multiply, a, b, out=o)
    return True


def _quiet_matmul(a: Any, b: Any, o: Any) -> None:
    """np.matmul into ``o`` with NumPy's FP reports off (float16 overflows to inf silently,
    as torch)."""
    try:
        QUIET_RUN(np.matmul, a, b, out=o)
    except RuntimeError as e:  # Note [Quiet context] in fpstate.py
        quiet_retry(e, np.matmul, a, b, out=o)


def mm_out(pre: Any, self: Tensor, mat2: Tensor, out: Tensor) -> None:
    assert_no_internal_overlap(out)  # torch: its copy back into a strided result
    _check_matmul_dtype("addmm_impl_cpu_", self)
    if not _outer_product(self, mat2, out):
        _quiet_matmul(self._data, mat2._data, out._data)


def bmm_out(pre: Any, self: Tensor, mat2: Tensor, out: Tensor) -> None:
    _check_matmul_dtype("bmm", self)
    if not _outer_product(self, mat2, out):
        _quiet_matmul(self._data, mat2._data, out._data)


def addmm_out(
    pre: Any, self: Tensor, mat1: Tensor, mat2: Tensor, beta: Any, alpha: Any, out: Tensor
) -> None:
    if beta != 0 and out is not self:  # torch copies self into out first
        check_bias_copy(out, self)
    assert_no_internal_overlap(out)
    _check_matmul_dtype("addmm_impl_cpu_", mat1)
    product = np.matmul(mat1._data, mat2._data)
    if alpha != 1:
        product = np.multiply(product, alpha, dtype=product.dtype, casting="unsafe")
    if beta == 0:
        np.copyto(out._data, product, casting="unsafe")
        return
    bias = (
        self._data
        if beta == 1
        else np.multiply(self._data, beta, dtype=product.dtype, casting="unsafe")
    )
    np.add(bias, product, out=out._data, casting="unsafe")


# -- plain kernels -----------------------------------------------------------------------------


def abs_out(self: Tensor, *, out: Tensor) -> Tensor:
    from tensordispatch.backends.meta.kernels import abs_out_meta

    check_written(out, (self,))
    abs_out_meta(self, out=out)  # torch checks (and resizes) out before the kernel refuses bool
    if self.dtype._category <= 0:  # bool, or Note [Limited unsigned dtypes]
        kind = scalar_type_name(self.dtype)
        raise NotImplementedError(f"\"abs_cpu\" not implemented for '{kind}'")
    np.copyto(out._data, np.abs(self._data), casting="unsafe")
    return out


def dot(self: Tensor, tensor: Tensor) -> Tensor:
    from tensordispatch.backends.meta.kernels import dot_meta

    ks, kt = self._key_set, tensor._key_set  # (a plain CPU tensor's is CPU's own int)
    if (ks is not _CPU_KS or kt is not _CPU_KS) and (ks | kt) & _CONJ:  # a fallthrough
        return dot_with_conj_bits(self, tensor, dot)
    spec = dot_meta(self, tensor)
    result = alloc_cpu((spec._shape, None, spec.dtype))
    result._data[...] = np.dot(self._data, tensor._data)
    return result


def _dtype_device(dtype: Any, layout: Any, device: Any) -> Any:
    if layout is not None and layout is not strided:
        raise RuntimeError(f"only strided tensors are supported here, got layout {layout}")
    return _dt.get_default_dtype() if dtype is None else dtype


def check_size(size: Any, what: str = "") -> tuple[int, ...]:
    """A shape from a size argument, with torch's negative-dimension error."""
    shape = tuple(size)
    total = prod(shape)  # an int only when every size is one: then no conversion is needed
    if type(total) is int and (not shape or min(shape) >= 0):
        return shape
    shape = tuple([int(s) for s in size])
    for s in shape:
        if s < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {s}: {shape_text(shape)}"
            )
    return shape


def channels_last_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """NHWC strides of a 4-d shape (torch's channels_last)."""
    if len(shape) != 4:
        raise RuntimeError("required rank 4 tensor to use channels_last format")
    _, c, h, w = (max(s, 1) for s in shape)
    return (h * w * c, 1, w * c, c)


# Note [Shapes seen by empty]
# empty's size check (check_size: ints, none negative) and contiguous strides are the same
# for every call with one shape, so the first 1024 valid shapes made of plain ints are kept
# with their strides. A size that hashes like a kept one but is spelled otherwise (True for
# 1, a NumPy integer) gets the kept plain-int tuple as its shape.
_SHAPES: dict[tuple[int, ...], tuple[tuple[int, ...], tuple[int, ...]]] = {}
_np_empty = np.empty


def empty_cpu(
    size: Any,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: Any = None,
    memory_format: Any = None,
) -> Tensor:
    if memory_format is None and layout is None:  # Note [Shapes seen by empty]
        plan = _SHAPES.get(tuple(size))
        if plan is not None:
            dt = _dt.get_default_dtype() if dtype is None else dtype
            return new_cpu_tensor(_np_empty(plan[0], dt._numpy), plan[0], plan[1], dt)
    dt = _dtype_device(dtype, layout, device)
    shape = check_size(size)
    if memory_format is None or memory_format is contiguous_format:
        strides = contiguous_of(shape)
        if len(_SHAPES) < 1024 and all(type(s) is int for s in shape):
            _SHAPES[shape] = (shape, strides)
        return new_cpu_tensor(np.empty(shape, dt._numpy), shape, strides, dt)
    if memory_format is channels_last:
        return empty_strided_cpu_array(shape, channels_last_strides(shape), dt)
    if memory_format is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the empty operator")
    raise RuntimeError(f"unsupported memory format {memory_format}")


def filled_cpu(size: Any, dtype: Any, value: Any) -> Tensor:
    """``fill_(empty_cpu(size, dtype=dtype), value)`` in one step, for callers that know
    those two kernels are what dispatch would run (Note [Composite factories call known
    kernels directly] in backends/composite_direct.py): zeros straight from ``np.zeros``.

    >>> from tensordispatch.tensor import int8
    >>> filled_cpu([2], int8, 3), filled_cpu([1, 2], None, 0)
    (tensor([3, 3], dtype=tensordispatch.int8), tensor([[0., 0.]]))
    """
    plan = _SHAPES.get(tuple(size))
    if plan is None:
        return fill_(empty_cpu(size, dtype=dtype), value)
    dt = _dt.get_default_dtype() if dtype is None else dtype
    shape = plan[0]
    if type(value) is int and value == 0:  # not -0.0: np.zeros has +0.0
        return new_cpu_tensor(_np_zeros(shape, dt._numpy), shape, plan[1], dt)
    t = new_cpu_tensor(_np_empty(shape, dt._numpy), shape, plan[1], dt)
    return fill_(t, value)


_np_zeros = np.zeros


def empty_strided_cpu(
    size: Any,
    stride: Any,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: Any = None,
) -> Tensor:
    if layout is None:  # Note [Shapes seen by empty], for contiguous strides
        plan = _STRIDED.get((tuple(size), tuple(stride)))
        if plan is not None:
            dt = _dt.get_default_dtype() if dtype is None else dtype
            return new_cpu_tensor(_np_empty(plan[0], dt._numpy), plan[0], plan[1], dt)
    dt = _dtype_device(dtype, layout, device)
    strides = tuple(stride)
    if type(sum(strides)) is not int:  # not all ints (sum of ints is an int)
        strides = tuple([int(s) for s in stride])
    shape = check_size(size)
    if (
        len(_STRIDED) < 1024
        and strides == contiguous_of(shape)
        and all(type(s) is int for s in shape)
        and all(type(s) is int for s in strides)
    ):
        _STRIDED[shape, strides] = (shape, strides)
    return empty_strided_cpu_array(shape, strides, dt)


# (size, stride) -> the plain-int (shape, strides) of the first 1024 contiguous pairs seen
_STRIDED: dict[tuple[Any, Any], tuple[tuple[int, ...], tuple[int, ...]]] = {}


def fill_(self: Tensor, value: Any) -> Tensor:
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(
                "fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.dim()} dimensions."
            )
        # a tensor's value wraps, as torch's (no overflow check)
        np.copyto(self._data, np.asarray(value.item(), value.dtype._numpy), casting="unsafe")
        return self
    if not (type(value) is int and 0 <= value <= 127):  # those fit every dtype
        # one element: torch fills through a double (float16 overflows to inf)
        value = checked_fill_value(value, self.dtype, self._data.size == 1)
    self._data.fill(value)  # NumPy's a[...] = value, the same conversion, ~2x cheaper
    return self


def _root(t: Tensor) -> Tensor:
    return t if t._base is None else t._base


def _same_data(a: Tensor, b: Tensor) -> bool:
    """torch's early exit of copy_: two views of exactly the same elements."""
    return (
        _root(a) is _root(b)
        and a._offset == b._offset
        and a._strides == b._strides
        and a._shape == b._shape
        and a.dtype == b.dtype
    )


def check_no_overlap(out: Tensor, src: Tensor) -> None:
    """torch's TensorIterator memory-overlap checks for one output and one input
    (backends/overlap.py: internal overlap of ``out``, then partial overlap with ``src``)."""
    if has_internal_overlap(out):
        raise RuntimeError(INTERNAL_OVERLAP)
    if partial_overlap(out, src):
        raise RuntimeError(PARTIAL_OVERLAP)


def copy_(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    """copy_ on CPU. Note [copy_ of one dtype and shape]: the common call (same dtype, same
    shape, no zero stride in ``self``, the two over different storage) can neither overlap
    nor need a cast or a broadcast, so it is one NumPy assignment (``a[...] = b`` is ~3x
    cheaper than ``np.copyto``); everything else takes the checked path.

    >>> import tensordispatch as td
    >>> a, b = td.zeros(2, 2), td.ones(2, 2)
    >>> copy_(a, b) is a, a.tolist()
    (True, [[1.0, 1.0], [1.0, 1.0]])
    """
    ks = self._key_set  # bits differ (Note [The math-bit fallback]; identity test first)
    if ks is not src._key_set and (ks ^ src._key_set) & _MATH_BITS_RAW:
        return copy_with_math_bits(self, src)
    if self.dtype is src.dtype and self._shape == src._shape and 0 not in self._strides:
        ra = self if self._base is None else self._base
        rb = src if src._base is None else src._base
        if ra is not rb and (ra._storage is None or ra._storage is not rb._storage):
            self._data[...] = src._data
            return self
    return _copy_checked(self, src)


def _copy_checked(self: Tensor, src: Tensor) -> Tensor:
    from tensordispatch.backends.meta.kernels import check_copy_shapes

    if _same_data(self, src):
        return self
    check_copy_shapes(self, src)
    check_no_overlap(self, src)
    if self.dtype is src.dtype and self._shape == src._shape:
        order = torch_element_order(self, src)
        if order is not None:  # Note [Overlaps torch allows but computes in its own order]
            a, b = self._data, src._data
            for i in order:
                a[i] = b[i]
            return self
    data = src._data
    if src.dtype.is_complex and not self.dtype.is_complex:
        if self.dtype is _dt.bool:
            data = data != 0  # torch: nonzero is True (2j too), no warning
        else:
            _warn_complex_to_real()
            data = data.real
    np.copyto(self._data, data, casting="unsafe")
    return self


_WARNED: set[str] = set()


def _warn_complex_to_real() -> None:
    """torch's TORCH_WARN_ONCE: the first complex-to-real copy of the process warns."""
    if "complex to real" not in _WARNED:
        _WARNED.add("complex to real")
        import warnings

        warnings.warn(
            "Casting complex values to real discards the imaginary part",
            UserWarning,
            stacklevel=3,
        )


CPU_KERNELS: dict[str, Any] = {
    "add_out": add_out,
    "sub_out": sub_out,
    "mul_out": mul_out,
    "div_out": div_out,
    "div_out_mode": div_out_mode,
    "neg_out": _unary(np.negative),
    "exp_out": _unary(np.exp),
    "sin_out": _unary(np.sin),
    "cos_out": _unary(np.cos),
    "sqrt_out": _unary(np.sqrt),
    "sum_out": sum_out,
    "mean_out": mean_out,
    "aminmax_out": aminmax_out,
    "mm_out": mm_out,
    "bmm_out": bmm_out,
    "addmm_out": addmm_out,
    "abs_out": abs_out,
    "dot": dot,
    "empty_cpu": empty_cpu,
    "empty_strided_cpu": empty_strided_cpu,
    "fill_": fill_,
    "copy_": copy_,
    "view": view,
    **{
        f"{c}_{o}_out": _comparison(u, f"{c}_{o}_out")
        for c, u in _COMPARISONS.items()
        for o in ("Tensor", "Scalar")
    },
}

from tensordispatch.backends.cpu.reductions import REDUCTION_CPU_KERNELS

CPU_KERNELS.update(REDUCTION_CPU_KERNELS)

from tensordispatch.backends.cpu.pointwise import POINTWISE_CPU

CPU_KERNELS.update(POINTWISE_CPU)

from tensordispatch.backends.composite_pointwise import SHIFT_DUNDER_KERNELS

CPU_KERNELS.update(SHIFT_DUNDER_KERNELS)

from tensordispatch.backends.cpu.layout import CPU_LAYOUT
from tensordispatch.backends.view_ops import VIEW_CPU_META_KERNELS

CPU_KERNELS.update(CPU_LAYOUT, **VIEW_CPU_META_KERNELS)

from tensordispatch.backends.cpu.nn import NN_CPU_KERNELS

CPU_KERNELS.update(NN_CPU_KERNELS)

from tensordispatch.backends.cpu.linalg import LINALG_CPU_KERNELS

CPU_KERNELS.update(LINALG_CPU_KERNELS)
