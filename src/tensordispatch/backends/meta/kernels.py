"""Meta kernels of unstructured operators: metadata only, the same checks as the CPU ones.

Structured groups get their Meta kernels generated from META_FUNCTIONS; this table holds
the ``Meta:`` kernels that native_functions.yaml names explicitly.
"""

from __future__ import annotations

from typing import Any

from tensordispatch.backends.common import (
    broadcast_shapes,
    channels_last,
    contiguous_format,
    preserve_format,
    scalar_type_name,
    shape_text,
    strided,
)
from tensordispatch.backends.meta.iterator import check_can_cast, output_strides
from tensordispatch.backends.structured import alloc_meta, prepare_out
from tensordispatch.backends.views import view
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.tensor import Tensor

__all__ = ["META_KERNELS", "check_copy_shapes", "copy_meta_", "dot_meta"]


def _dtype(dtype: Any, layout: Any) -> Any:
    if layout is not None and layout is not strided:
        raise RuntimeError(f"only strided tensors are supported here, got layout {layout}")
    return _dt.get_default_dtype() if dtype is None else dtype


def _size(size: Any) -> tuple[int, ...]:
    shape = tuple(int(s) for s in size)
    for s in shape:
        if s < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {s}: {shape_text(shape)}"
            )
    return shape


def empty_meta(
    size: Any,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: Any = None,
    memory_format: Any = None,
) -> Tensor:
    from tensordispatch.backends.cpu.kernels import channels_last_strides

    dt = _dtype(dtype, layout)
    shape = _size(size)
    if memory_format is None or memory_format is contiguous_format:
        return alloc_meta((shape, None, dt))
    if memory_format is channels_last:
        return alloc_meta((shape, channels_last_strides(shape), dt))
    if memory_format is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the empty operator")
    raise RuntimeError(f"unsupported memory format {memory_format}")


def empty_strided_meta(
    size: Any,
    stride: Any,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: Any = None,
) -> Tensor:
    return alloc_meta((_size(size), tuple(int(s) for s in stride), _dtype(dtype, layout)))


def fill_meta_(self: Tensor, value: Any) -> Tensor:
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(
            "fill_ only supports 0-dimension value tensor but got tensor with "
            f"{value.dim()} dimensions."
        )
    return self


def check_copy_shapes(self: Tensor, src: Tensor) -> None:
    """copy_'s shape rule: ``src`` must broadcast to ``self``'s shape."""
    shape = broadcast_shapes(self._shape, src._shape)
    if shape != self._shape:
        raise RuntimeError(
            f"output with shape {shape_text(self._shape)} doesn't match the broadcast shape "
            f"{shape_text(shape)}"
        )


def copy_meta_(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    """copy_ on Meta: the shape rule, and a meta source has no data to give a tensor that
    has some (reached whenever either tensor is on meta, Meta being the higher backend)."""
    if self.device.type != "meta":
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    check_copy_shapes(self, src)
    return self


def copy_meta(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    copy_meta_(self, src)
    return alloc_meta((self._shape, self._strides, self.dtype))


def abs_out_meta(self: Tensor, *, out: Tensor) -> Tensor:
    """abs.out: a complex ``self`` into a real ``out`` is computed in complex and copied
    (can-cast check, contiguous resize); otherwise TensorIterator's unary op, whose output
    must have ``self``'s dtype (complex into complex keeps the modulus as real part).

    >>> import tensordispatch as td
    >>> abs_out_meta(td.tensor([1]), out=td.empty(0))
    Traceback (most recent call last):
    ...
    RuntimeError: Found dtype Float but expected Long
    """
    if self.dtype.is_complex and not out.dtype.is_complex:
        check_can_cast(self.dtype.to_real(), out)
        prepare_out(out, (self._shape, None, out.dtype))
        return out
    if out.dtype is not self.dtype:
        raise RuntimeError(
            f"Found dtype {scalar_type_name(out.dtype)} but expected {scalar_type_name(self.dtype)}"
        )
    prepare_out(out, (self._shape, output_strides(self._shape, (self,)), out.dtype))
    return out


def dot_meta(self: Tensor, tensor: Tensor) -> Tensor:
    if self.dim() != 1 or tensor.dim() != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {self.dim()}D and {tensor.dim()}D tensors"
        )
    if self.dtype is not tensor.dtype:
        raise RuntimeError(
            "dot : expected both vectors to have same dtype, but found "
            f"{scalar_type_name(self.dtype)} and {scalar_type_name(tensor.dtype)}"
        )
    n, m = self._shape[0], tensor._shape[0]
    if n != m:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same "
            f"number of elements, but got {n} and {m} elements respectively"
        )
    if self.dtype._category <= 0 and self.device.type == "cpu":  # torch's CPU dot: no bool
        kind = scalar_type_name(self.dtype)  # (nor Note [Limited unsigned dtypes])
        raise NotImplementedError(f"\"dot\" not implemented for '{kind}'")
    return alloc_meta(((), None, self.dtype))


META_KERNELS: dict[str, Any] = {
    "empty_meta": empty_meta,
    "empty_strided_meta": empty_strided_meta,
    "fill_meta_": fill_meta_,
    "copy_meta_": copy_meta_,
    "copy_meta": copy_meta,
    "abs_out_meta": abs_out_meta,
    "dot_meta": dot_meta,
    "view": view,
}

from tensordispatch.backends.meta.reductions import REDUCTION_META_KERNELS

META_KERNELS.update(REDUCTION_META_KERNELS)

from tensordispatch.backends.meta.pointwise import POINTWISE_META_KERNELS

META_KERNELS.update(POINTWISE_META_KERNELS)

from tensordispatch.backends.meta.pointwise import SHIFT_DUNDER_META_KERNELS

META_KERNELS.update(SHIFT_DUNDER_META_KERNELS)

from tensordispatch.backends.meta.layout import META_KERNELS_LAYOUT
from tensordispatch.backends.view_ops import VIEW_CPU_META_KERNELS

META_KERNELS.update(META_KERNELS_LAYOUT, **VIEW_CPU_META_KERNELS)

from tensordispatch.backends.meta.nn import NN_META_KERNELS

META_KERNELS.update(NN_META_KERNELS)

from tensordispatch.backends.meta.pointwise_more import M1_META_KERNELS

META_KERNELS.update(M1_META_KERNELS)
