"""More view kernels (as_strided, permute, diagonal, unfold, split, unbind, alias, detach,
view_as_real / view_as_complex) and the out= kernels of the list-returning view copies.

Like backends/views.py: device-generic, metadata only; every result is
``self._make_view(shape, strides, offset)`` of the same storage (for CPU a NumPy view of
the same buffer), with torch's strides and offsets. ``detach`` is the exception torch makes
too: it shares storage and version counter but is not a view (no ``_base``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensordispatch.backends.aten import op
from tensordispatch.backends.common import shape_text, wrap_dim
from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import keyset_raw
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.device import CPU
from tensordispatch.tensor.tensor import Tensor, VersionCounter

__all__ = ["VIEW_CPU_META_KERNELS", "VIEW_OP_KERNELS"]

_CONJ_RAW = keyset_raw(DispatchKey.Conjugate)
_MATH_BITS_RAW = _CONJ_RAW | keyset_raw(DispatchKey.Negative)
_CPU_KS = CPU._key_set
_ndarray = np.ndarray


def as_strided(self: Tensor, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:
    shape = tuple(int(s) for s in size)
    strides = tuple(int(s) for s in stride)
    if len(shape) != len(strides):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in strides):
        raise RuntimeError(
            "as_strided: Negative strides are not supported at the moment, got strides: "
            f"{shape_text(strides)}"
        )
    offset = self._offset if storage_offset is None else int(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    return self._make_view(shape, strides, offset)


def permute(self: Tensor, dims: Any) -> Tensor:
    ndim = len(self._shape)
    if len(dims) != ndim:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            "length of the desired ordering of dimensions i.e. input.dim() = "
            f"{ndim} is not equal to len(dims) = {len(dims)}"
        )
    wrapped = [d if type(d) is int and 0 <= d < ndim else wrap_dim(int(d), ndim) for d in dims]
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    old_shape, old_strides = self._shape, self._strides
    shape = tuple([old_shape[d] for d in wrapped])
    strides = tuple([old_strides[d] for d in wrapped])
    data = self._data
    # Note [NumPy-derived view data] (backends/views.py): NumPy's transpose permutes the
    # byte strides as torch permutes the strides
    data = data.transpose(wrapped) if type(data) is _ndarray else None
    return self._make_view(shape, strides, self._offset, data)


def diagonal(self: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    ndim = len(self._shape)
    d1, d2 = wrap_dim(dim1, ndim), wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    start = self._offset
    if offset >= 0:
        size = max(min(self._shape[d1], self._shape[d2] - offset), 0)
        if size > 0:
            start += offset * self._strides[d2]
    else:
        size = max(min(self._shape[d1] + offset, self._shape[d2]), 0)
        if size > 0:
            start -= offset * self._strides[d1]
    step = self._strides[d1] + self._strides[d2]
    if ndim == 2:  # the matrix diagonal, without the comprehensions below (~0.4 us)
        return self._make_view((size,), (step,), start)
    keep = [d for d in range(ndim) if d not in (d1, d2)]
    shape = tuple([self._shape[d] for d in keep]) + (size,)
    strides = tuple([self._strides[d] for d in keep]) + (step,)
    return self._make_view(shape, strides, start)


def unfold(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    ndim = len(self._shape)
    d = wrap_dim(dimension, ndim)
    length = self._shape[d] if ndim else 1
    if size > length:
        raise RuntimeError(
            f"maximum size for tensor at dimension {d} is {length} but size is {size}"
        )
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if ndim == 0:
        return self._make_view((size,), (1,), self._offset)
    shape, strides = list(self._shape), list(self._strides)
    shape[d] = (length - size) // step + 1
    strides[d] = step * self._strides[d]
    return self._make_view(
        (*shape, size), (*strides, self._strides[d]), self._offset
    )  # fmt: skip


def _narrow(self: Tensor, dim: int, start: int, length: int) -> Tensor:
    return op("slice.Tensor")(self, dim, start, start + length)


def split(self: Tensor, split_size: int, dim: int = 0) -> list[Tensor]:
    if self.dim() == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    if split_size < 0:
        raise RuntimeError(
            f"split expects split_size be non-negative, but got split_size={split_size}"
        )
    d = wrap_dim(dim, self.dim())
    size = self._shape[d]
    if split_size == 0 and size != 0:
        raise RuntimeError(
            f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}"
        )
    count = max((size + split_size - 1) // split_size, 1) if split_size else 1
    last = split_size - (split_size * count - size)
    return [
        _narrow(self, d, i * split_size, split_size if i < count - 1 else last)
        for i in range(count)
    ]


def split_with_sizes(self: Tensor, split_sizes: Any, dim: int = 0) -> list[Tensor]:
    if self.dim() == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, self.dim())
    size = self._shape[d]
    sizes = [int(s) for s in split_sizes]
    if any(s < 0 for s in sizes):
        raise RuntimeError(
            "split_with_sizes expects split_sizes have only non-negative entries, but got "
            f"split_sizes={shape_text(sizes)}"
        )
    if sum(sizes) != size:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's "
            f"size at dimension {d}), but got split_sizes={shape_text(sizes)}"
        )
    result, start = [], 0
    for s in sizes:
        result.append(_narrow(self, d, start, s))
        start += s
    return result


def unbind(self: Tensor, dim: int = 0) -> list[Tensor]:
    if self.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, self.dim())
    select = op("select.int")
    return [select(self, d, i) for i in range(self._shape[d])]


def alias(self: Tensor) -> Tensor:
    return self._make_view(self._shape, self._strides, self._offset)


def detach(self: Tensor) -> Tensor:
    """A new tensor over the same storage and version counter, not a view (torch's detach:
    ``_base`` is None)."""
    root = self if self._base is None else self._base
    if root._vc is None:
        root._vc = VersionCounter()
    storage = root._storage_bytes() if self._data is not None else root._storage
    result = Tensor._make(
        self._data, self._shape, self._strides, self._offset, self.dtype, self.device,
        storage=storage, version_counter=root._vc,
    )  # fmt: skip
    ks = self._key_set
    if ks is not _CPU_KS and ks & _MATH_BITS_RAW:  # it keeps the conjugate / negative bits
        result._key_set |= ks & _MATH_BITS_RAW
    return result


def view_as_real(self: Tensor) -> Tensor:
    if self._key_set & _CONJ_RAW:  # a Conjugate fallthrough (Note [The math-bit fallback])
        raise RuntimeError(
            " ".join(  # noqa: FLY002 - no adjacent literals (STYLE.md)
                [
                    "view_as_real doesn't work on unresolved conjugated tensors.  To resolve",
                    "the conjugate tensor so you can view it as real, use self.resolve_conj();",
                    "however, be warned that the resulting tensor will NOT alias the original.",
                ]
            )
        )
    if not self.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    real = self.dtype.to_real()
    return self._make_view(
        (*self._shape, 2),
        tuple(2 * s for s in self._strides) + (1,),
        2 * self._offset,
        dtype=real,
    )


def view_as_complex(self: Tensor) -> Tensor:
    if self.dtype not in (_dt.float16, _dt.float32, _dt.float64):
        raise RuntimeError(
            "view_as_complex is only supported for half, float and double tensors, but got a "
            f"tensor of scalar type: {_scalar_name(self.dtype)}"
        )
    if not self._shape or self._shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if self._strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in self._strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if self._offset % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    if self.dtype is _dt.float16:
        raise RuntimeError("view_as_complex: complex32 has no NumPy equivalent here")
    cdt = _dt.complex64 if self.dtype is _dt.float32 else _dt.complex128
    return self._make_view(
        self._shape[:-1], tuple(s // 2 for s in self._strides[:-1]), self._offset // 2,
        dtype=cdt,
    )  # fmt: skip


def _scalar_name(d: Any) -> str:
    from tensordispatch.backends.common import scalar_type_name

    return scalar_type_name(d)


# -- out= kernels of the list-returning view copies (ATen's CompositeExplicitAutograd) -----------


def _check_count(name: str, results: list[Tensor], out: Any) -> None:
    if len(out) != len(results):
        raise RuntimeError(
            f"{name} expected an out= argument of size {len(results)}, got size {len(out)}"
        )


def _resize_copy_into(name: str, results: list[Tensor], out: Any) -> None:
    """split_with_sizes_copy.out / unbind_copy.int_out: each output is resized (warning if it
    had elements), then must have the piece's dtype, then is copied into."""
    from tensordispatch.backends.common import type_meta_name
    from tensordispatch.backends.structured import resize_output

    _check_count(name, results, out)
    for o, r in zip(out, results, strict=True):
        resize_output(o, r._shape)
        if o.dtype is not r.dtype:
            raise RuntimeError(
                f"Expected out tensor to have dtype {type_meta_name(r.dtype)}, but got "
                f"{type_meta_name(o.dtype)} instead"
            )
        op("copy_")(o, r)


def split_copy_Tensor_out(self: Tensor, split_size: int, dim: int = 0, *, out: Any) -> None:
    """torch copies each piece with copy_ and no resize: an output must be a shape the piece
    broadcasts to (an empty or wrong-shape output is an error), any dtype (cast)."""
    pieces = split(self, split_size, dim)
    _check_count("split_copy_Tensor_out()", pieces, out)
    for o, r in zip(out, pieces, strict=True):
        op("copy_")(o, r)


def split_with_sizes_copy_out(self: Tensor, split_sizes: Any, dim: int = 0, *, out: Any) -> None:
    pieces = split_with_sizes(self, split_sizes, dim)
    _resize_copy_into("split_with_sizes_copy_out", pieces, out)


def unbind_copy_int_out(self: Tensor, dim: int = 0, *, out: Any) -> None:
    _resize_copy_into("unbind_copy_int_out", unbind(self, dim), out)


VIEW_OP_KERNELS: dict[str, Any] = {
    "permute": permute,
    "diagonal": diagonal,
    "split": split,
    "split_with_sizes": split_with_sizes,
    "unbind": unbind,
    "alias": alias,
    "detach": detach,
    "split_copy_Tensor_out": split_copy_Tensor_out,
    "split_with_sizes_copy_out": split_with_sizes_copy_out,
    "unbind_copy_int_out": unbind_copy_int_out,
}
"""CompositeExplicitAutograd view kernels, merged into COMPOSITE_KERNELS."""

VIEW_CPU_META_KERNELS: dict[str, Any] = {
    "as_strided": as_strided,
    "unfold": unfold,
    "view_as_real": view_as_real,
    "view_as_complex": view_as_complex,
}
"""``CPU, Meta`` view kernels, merged into CPU_KERNELS and META_KERNELS."""
