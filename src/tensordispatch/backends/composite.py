"""CompositeExplicitAutograd kernels: written once for every backend, in terms of other
operators (called through the dispatcher with ``op``) and view metadata.

Keyed by the kernel names of native_functions.yaml's ``CompositeExplicitAutograd:`` and
``CompositeExplicitAutogradNonFunctional:`` entries. Kernels of codegen-generated operators
(``generated`` and ``view_copy`` tags) are not here: the codegen writes their bodies.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensordispatch.backends.aten import op, wrap_number
from tensordispatch.backends.common import (
    contiguous_format,
    preserve_format,
    scalar_type_name,
    strided,
)
from tensordispatch.backends.composite_direct import FILL_TOO, direct_cpu_kernels
from tensordispatch.backends.cpu.kernels import empty_cpu as _cpu_empty
from tensordispatch.backends.cpu.kernels import empty_strided_cpu as _cpu_empty_strided
from tensordispatch.backends.cpu.kernels import fill_ as _cpu_fill
from tensordispatch.backends.cpu.kernels import filled_cpu as _cpu_filled
from tensordispatch.backends.cpu.reductions import mean_all_fast, sum_all_fast
from tensordispatch.backends.structured import empty_strided_cpu_array, resize_output
from tensordispatch.backends.views import VIEW_KERNELS
from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import keyset_raw
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.device import CPU
from tensordispatch.tensor.geometry import contiguous_of
from tensordispatch.tensor.inference import INFERENCE_VC
from tensordispatch.tensor.tensor import (
    Tensor,
    dense_strides_like,
    is_non_overlapping_and_dense,
    new_cpu_tensor,
)

__all__ = ["COMPOSITE_KERNELS"]

_MATH_BITS_RAW = keyset_raw(DispatchKey.Conjugate) | keyset_raw(DispatchKey.Negative)
_CPU_KS = CPU._key_set

_CPU_WORD = CPU._key_set
_np_empty = np.empty


# -- factories ---------------------------------------------------------------------------------


def _filled(size: Any, value: Any, dtype: Any, layout: Any, device: Any, pin_memory: Any) -> Tensor:
    known = (
        direct_cpu_kernels()
        if (device is None or device is CPU)
        and (layout is None or layout is strided)
        and not pin_memory
        else 0
    )  # Note [Composite factories call known kernels directly]
    if known == FILL_TOO:
        return _cpu_filled(size, dtype, value)
    if known:
        t = _cpu_empty(size, dtype=dtype)
    else:
        t = op("empty.memory_format")(
            size, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory
        )
    op("fill_.Scalar")(t, value)
    return t


def zeros(
    size: Any, *, dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: Any = None
) -> Tensor:
    if size and min(size) < 0:
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    return _filled(size, 0, dtype, layout, device, pin_memory)


def ones(
    size: Any, *, dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: Any = None
) -> Tensor:
    return _filled(size, 1, dtype, layout, device, pin_memory)


def _scalar_dtype(value: Any) -> Any:
    if isinstance(value, bool):
        return _dt.bool
    if isinstance(value, int):
        return _dt.int64
    if isinstance(value, complex):
        return _dt.get_default_complex_dtype()
    return _dt.get_default_dtype()


def full(
    size: Any,
    fill_value: Any,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: Any = None,
) -> Tensor:
    if dtype is None:
        dtype = _scalar_dtype(fill_value)
    return _filled(size, fill_value, dtype, layout, device, pin_memory)


def _fill_out(size: Any, value: Any, out: Tensor) -> Tensor:
    shape = tuple(int(s) for s in size)
    if out._shape != shape:  # torch's full/zeros/ones.out call resize_: no deprecation warning
        op("resize_")(out, shape)
    op("fill_.Scalar")(out, value)
    return out


def zeros_out(size: Any, *, out: Tensor) -> Tensor:
    return _fill_out(size, 0, out)


def ones_out(size: Any, *, out: Tensor) -> Tensor:
    return _fill_out(size, 1, out)


def full_out(size: Any, fill_value: Any, *, out: Tensor) -> Tensor:
    return _fill_out(size, fill_value, out)


def empty_like(
    self: Tensor,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: Any = None,
    memory_format: Any = None,
) -> Tensor:
    dtype = self.dtype if dtype is None else dtype
    device = self.device if device is None else device
    if memory_format is None or memory_format is preserve_format:
        if (
            device is CPU
            and (layout is None or layout is strided)
            and not pin_memory
            and direct_cpu_kernels()
        ):  # Note [Composite factories call known kernels directly]
            return _cpu_empty_like(self, dtype)
        if is_non_overlapping_and_dense(self._shape, self._strides):
            return op("empty_strided")(
                list(self._shape), list(self._strides), dtype=dtype, layout=layout,
                device=device, pin_memory=pin_memory,
            )  # fmt: skip
        return op("empty_strided")(
            list(self._shape), list(dense_strides_like(self._shape, self._strides)),
            dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
        )  # fmt: skip
    return op("empty.memory_format")(
        list(self._shape), dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
        memory_format=memory_format,
    )  # fmt: skip


def _cpu_empty_like(self: Tensor, dtype: Any) -> Tensor:
    """empty_like's result on CPU with ``self``'s layout (preserve_format) when our own
    kernels are known to be what dispatch would run (direct_cpu_kernels())."""
    shape, strides = self._shape, self._strides
    if strides == contiguous_of(shape):
        return new_cpu_tensor(_np_empty(shape, dtype._numpy), shape, strides, dtype)
    if not is_non_overlapping_and_dense(shape, strides):
        strides = dense_strides_like(shape, strides)
    return _cpu_empty_strided(list(shape), list(strides), dtype=dtype)


def _filled_like(self: Tensor, value: Any, **options: Any) -> Tensor:
    if not options and self.device is CPU and direct_cpu_kernels() == FILL_TOO:
        # Note [Composite factories call known kernels directly]
        return _cpu_fill(_cpu_empty_like(self, self.dtype), value)
    t = empty_like(self, **options)
    if t._key_set is _CPU_WORD and direct_cpu_kernels() == FILL_TOO:
        return _cpu_fill(t, value)  # Note [Composite factories call known kernels directly]
    op("fill_.Scalar")(t, value)
    return t


def zeros_like(self: Tensor, **options: Any) -> Tensor:
    return _filled_like(self, 0, **options)


def ones_like(self: Tensor, **options: Any) -> Tensor:
    return _filled_like(self, 1, **options)


def fill_Scalar(self: Tensor, value: Any) -> Tensor:
    return _filled_like(self, value)


def fill_Tensor(self: Tensor, value: Tensor) -> Tensor:
    t = empty_like(self)
    op("fill_.Tensor")(t, value)
    return t


# -- scalar overloads: wrap the number, call the Tensor overload --------------------------------


def add_Scalar(self: Tensor, other: Any, alpha: Any = 1) -> Tensor:
    return op("add.Tensor")(self, wrap_number(other), alpha=alpha)


def add__Scalar(self: Tensor, other: Any, alpha: Any = 1) -> Tensor:
    return op("add_.Tensor")(self, wrap_number(other), alpha=alpha)


def sub_Scalar(self: Tensor, other: Any, alpha: Any = 1) -> Tensor:
    return op("sub.Tensor")(self, wrap_number(other), alpha=alpha)


def sub__Scalar(self: Tensor, other: Any, alpha: Any = 1) -> Tensor:
    return op("sub_.Tensor")(self, wrap_number(other), alpha=alpha)


def rsub_Tensor(self: Tensor, other: Tensor, *, alpha: Any = 1) -> Tensor:
    return op("sub.Tensor")(other, self, alpha=alpha)


def rsub_Scalar(self: Tensor, other: Any, alpha: Any = 1) -> Tensor:
    return op("sub.Tensor")(wrap_number(other), self, alpha=alpha)


def mul_Scalar(self: Tensor, other: Any) -> Tensor:
    return op("mul.Tensor")(self, wrap_number(other))


def mul__Scalar(self: Tensor, other: Any) -> Tensor:
    return op("mul_.Tensor")(self, wrap_number(other))


def div_Scalar(self: Tensor, other: Any) -> Tensor:
    return op("div.Tensor")(self, wrap_number(other))


def div__Scalar(self: Tensor, other: Any) -> Tensor:
    return op("div_.Tensor")(self, wrap_number(other))


def div_Scalar_mode(self: Tensor, other: Any, *, rounding_mode: Any) -> Tensor:
    return op("div.Tensor_mode")(self, wrap_number(other), rounding_mode=rounding_mode)


def div__Scalar_mode(self: Tensor, other: Any, *, rounding_mode: Any) -> Tensor:
    return op("div_.Tensor_mode")(self, wrap_number(other), rounding_mode=rounding_mode)


# -- unary, copies, reductions, linear algebra -------------------------------------------------


def abs(self: Tensor) -> Tensor:
    if self.dtype.is_complex:  # torch: a real empty_like (self's layout), then abs.out
        out = op("empty_like")(self, dtype=self.dtype.to_real())
    else:
        out = op("empty.memory_format")([0], dtype=self.dtype, device=self.device)
    return op("abs.out")(self, out=out)


def abs_(self: Tensor) -> Tensor:
    if self.dtype.is_complex:
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    return op("abs.out")(self, out=self)


def clone(self: Tensor, *, memory_format: Any = None) -> Tensor:
    """empty_like + copy_; a NumPy-backed tensor is copied directly (Note [clone of a
    NumPy-backed tensor])."""
    data = self._data
    ks = self._key_set  # a plain CPU tensor's is CPU's own int: an identity test first
    if ks is not _CPU_KS and ks & _MATH_BITS_RAW:  # copy_ resolves the bits (Note [The
        data = None  # math-bit fallback])
    if type(data) is np.ndarray and (
        memory_format is None or memory_format is preserve_format
        or memory_format is contiguous_format
    ):  # fmt: skip
        result = _clone_numpy(self, data, memory_format is contiguous_format)
        if self._vc is INFERENCE_VC and result._vc is not INFERENCE_VC:
            result._bump_version()  # Note [clone of an inference tensor]
        return result
    result = empty_like(self, memory_format=memory_format)
    op("copy_")(result, self)
    return result


# Note [clone of an inference tensor]
# torch's clone is empty_like + copy_ through the dispatcher. For an inference tensor outside
# inference mode no autograd kernel runs first (it has no autograd keys) to exclude
# ADInplaceOrView, so that copy_ bumps the fresh (normal) result to version 1; a normal
# input's autograd kernel excludes it (version 0), and in inference mode the result is an
# inference tensor. The NumPy copy below makes no such call, so it bumps the same way.
# (contiguous, the *_copy operators and to() reach clone or copy_ and follow.)


# Note [clone of a NumPy-backed tensor]
# clone is empty_like + copy_, two more trips through the dispatcher (BackendSelect for the
# allocation, autograd and ADInplaceOrView for copy_), ~10x a view; every generated
# *_copy operator is a clone, and functionalization sends many of them. For a CPU tensor the
# result is a fresh array with empty_like's strides (the input's when non-overlapping and
# dense, else dense ones in the input's dimension order; contiguous_format: C order) and the
# values copied by NumPy. Same result, no inner dispatch; other formats and devices take the
# generic path.
def _clone_numpy(self: Tensor, data: Any, contiguous: bool) -> Tensor:
    shape, strides = self._shape, self._strides
    if not contiguous and not is_non_overlapping_and_dense(shape, strides):
        strides = dense_strides_like(shape, strides)
    dense = contiguous_of(shape)
    if contiguous or strides == dense:  # NumPy's strides of empty arrays are not torch's
        return new_cpu_tensor(np.array(data, order="C", copy=True), shape, dense, self.dtype)
    result = empty_strided_cpu_array(shape, strides, self.dtype)
    np.copyto(result._data, data)
    return result


def copy(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    result = op("empty_strided")(
        list(self._shape), list(self._strides), dtype=self.dtype, device=self.device
    )
    op("copy_")(result, src, non_blocking)
    return result


def sum(self: Tensor, *, dtype: Any = None) -> Tensor:
    if dtype is None:  # Note [Full sum without the second dispatch] (cpu/reductions.py)
        result = sum_all_fast(self)
        if result is not None:
            return result
    return op("sum.dim_IntList")(self, [], dtype=dtype)


def mean(self: Tensor, *, dtype: Any = None) -> Tensor:
    result = mean_all_fast(self, dtype)  # Note [Full sum without the second dispatch]
    if result is not None:
        return result
    return op("mean.dim")(self, [], dtype=dtype)


def dot_out(self: Tensor, tensor: Tensor, *, out: Tensor) -> Tensor:
    result = op("dot")(self, tensor)
    resize_output(out, result._shape)
    return op("copy_")(out, result)


def mv(self: Tensor, vec: Tensor) -> Tensor:
    """torch's mv: the checks of addmv into a fresh result (its "input"), then ``mm``.

    torch's CPU mv checks dims, sizes (against the result's length) and that the three
    tensors share a dtype, naming the result's (``vec``'s) dtype first; its meta kernel
    checks with shorter messages and no dtypes, the result's dtype promoted from both.
    """
    meta = self.device.type == "meta"
    if self.dim() != 2 or vec.dim() != 1:
        if meta:
            raise RuntimeError(f"matrix @ vector expected, got {self.dim()}, {vec.dim()}")
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {self.dim()}, {vec.dim()}")
    (m, k), (n,) = self._shape, vec._shape
    if k != n:
        if meta:
            raise RuntimeError(f"size mismatch, got input ({m}x{k}), vec ({n})")
        raise RuntimeError(f"size mismatch, got input ({m}), mat ({m}x{k}), vec ({n})")
    if self.dtype != vec.dtype and not meta:
        names = [scalar_type_name(t) for t in (vec.dtype, self.dtype, vec.dtype)]
        raise RuntimeError(
            "addmv input tensors must have the same dtype, but got "
            f"{names[0]}, {names[1]}, and {names[2]}"
        )
    if meta and self.dtype != vec.dtype:
        common = _dt.promote_types(self.dtype, vec.dtype)
        self, vec = op("_to_copy")(self, dtype=common), op("_to_copy")(vec, dtype=common)
    if self.dtype._category <= 0 and not meta:  # torch's gemv: no bool (nor the limited
        if m and k:  # dtypes, Note [Limited unsigned dtypes]); empty: no loop
            kind = scalar_type_name(self.dtype)
            raise NotImplementedError(f"\"addmv_impl_cpu\" not implemented for '{kind}'")
        return op("zeros")([m], dtype=_dt.bool, device=self.device)
    column = op("unsqueeze")(vec, 1)
    return op("squeeze.dim")(op("mm")(self, column), 1)


def mv_out(self: Tensor, vec: Tensor, *, out: Tensor) -> Tensor:
    result = mv(self, vec)
    resize_output(out, result._shape)
    return op("copy_")(out, result)


COMPOSITE_KERNELS: dict[str, Any] = {
    "zeros": zeros,
    "zeros_out": zeros_out,
    "ones": ones,
    "ones_out": ones_out,
    "full": full,
    "full_out": full_out,
    "empty_like": empty_like,
    "zeros_like": zeros_like,
    "ones_like": ones_like,
    "fill_Scalar": fill_Scalar,
    "add_Scalar": add_Scalar,
    "add__Scalar": add__Scalar,
    "sub_Scalar": sub_Scalar,
    "sub__Scalar": sub__Scalar,
    "rsub_Tensor": rsub_Tensor,
    "rsub_Scalar": rsub_Scalar,
    "mul_Scalar": mul_Scalar,
    "mul__Scalar": mul__Scalar,
    "div_Scalar": div_Scalar,
    "div__Scalar": div__Scalar,
    "div_Scalar_mode": div_Scalar_mode,
    "div__Scalar_mode": div__Scalar_mode,
    "abs": abs,
    "abs_": abs_,
    "clone": clone,
    "copy": copy,
    "fill_Tensor": fill_Tensor,
    "sum": sum,
    "mean": mean,
    "dot_out": dot_out,
    "mv": mv,
    "mv_out": mv_out,
    **{name: fn for name, fn in VIEW_KERNELS.items() if name != "view"},
}

from tensordispatch.backends.composite_reductions import REDUCTION_COMPOSITE_KERNELS

COMPOSITE_KERNELS.update(REDUCTION_COMPOSITE_KERNELS)

from tensordispatch.backends.composite_pointwise import POINTWISE_COMPOSITE

COMPOSITE_KERNELS.update(POINTWISE_COMPOSITE)

from tensordispatch.backends.composite_layout import COMPOSITE_LAYOUT

COMPOSITE_KERNELS.update(COMPOSITE_LAYOUT)

from tensordispatch.backends.composite_functionalization import FUNCTIONALIZATION_COMPOSITE

COMPOSITE_KERNELS.update(FUNCTIONALIZATION_COMPOSITE)

from tensordispatch.backends.math_bits import MATH_BIT_KERNELS

COMPOSITE_KERNELS.update(MATH_BIT_KERNELS)

from tensordispatch.backends.composite_more import M1_COMPOSITE

COMPOSITE_KERNELS.update(M1_COMPOSITE)
from tensordispatch.backends.math_bits import install

# The Conjugate / Negative fallbacks replace the import-time ones when the first operator is
# defined (this table loads then), so every table dump shows torch's rows (~0.2 ms).
install()
