"""Composite kernels of the operators functionalization needs (helper A, issue 8).

The inverse view functions (``select_scatter``, ``slice_scatter``, ``diagonal_scatter``,
``as_strided_scatter``: CompositeExplicitAutogradNonFunctional, as in ATen: they clone and
write through a view internally), ``lift`` / ``lift_fresh`` / ``lift_fresh_copy``,
``_unsafe_view``, ``zero_``, ``resize_``, the remaining ``squeeze`` overloads, and the in-place view
operators (``transpose_``, ``t_``, ``unsqueeze_``, ``squeeze_``, ``as_strided_``), which
change a tensor's own sizes, strides and offset. Device-generic: everything goes through
other operators or tensor metadata. Merged into COMPOSITE_KERNELS by backends/composite.py.

Note [Scatter kernels on NumPy]
Functionalization runs a scatter for every mutation through a view, so their cost matters
(benchmarks/bench_functionalize.py). For CPU tensors the composite's clone + copy_ (two
dispatched operators and an allocation through empty_like) is replaced by one NumPy copy and
one ``np.copyto`` into the view; the view itself is still taken by the view operator, so
the checks and the result (values, dtype, strides of a preserve-format clone) are the same.

Where we differ from ATen: ``zero_`` and ``resize_`` are composite kernels (device-generic)
instead of per-backend CPU/Meta kernels, so their dispatch tables list
CompositeExplicitAutograd (a backend such as lazy registers its own kernel over it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensordispatch.backends.aten import op
from tensordispatch.backends.common import shape_text, wrap_dim
from tensordispatch.tensor.geometry import contiguous_strides, extent
from tensordispatch.tensor.tensor import Tensor
from tensordispatch.tensor.values import _MATH_BITS_RAW

__all__ = ["FUNCTIONALIZATION_COMPOSITE"]


def _check_src(src: Tensor, view: Tensor) -> None:
    if src._shape != view._shape:
        raise RuntimeError(
            "expected src to have a size equal to the slice of self. src size = "
            f"{shape_text(src._shape)}, slice size = {shape_text(view._shape)}"
        )


def _scatter(self: Tensor, src: Tensor, view_of: Any) -> Tensor:
    data, source = self._data, src._data
    if data.__class__ is np.ndarray and source.__class__ is np.ndarray:  # Note [Scatter ...]
        copied = data.copy(order="K")
        output = Tensor._wrap_numpy(copied, self.dtype)
        if copied.flags.c_contiguous and copied.ndim:
            # hand the view below its storage bytes (deriving them costs more than the copy)
            output._storage = copied.reshape(-1).view(np.uint8)
        view = view_of(output)
        _check_src(src, view)
        np.copyto(view._data, source, casting="unsafe")
        return output
    output = op("clone")(self)
    view = view_of(output)
    _check_src(src, view)
    op("copy_")(view, src)
    return output


def select_scatter_symint(self: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """A copy of ``self`` whose ``select(dim, index)`` is ``src`` (select's inverse).

    >>> import tensordispatch as td
    >>> td.select_scatter(td.zeros(2, 2), td.ones(2), 0, 1).tolist()
    [[0.0, 0.0], [1.0, 1.0]]
    """
    return _scatter(self, src, lambda o: op("select.int")(o, dim, index))


def slice_scatter(
    self: Tensor,
    src: Tensor,
    dim: int = 0,
    start: int | None = None,
    end: int | None = None,
    step: int = 1,
) -> Tensor:
    """A copy of ``self`` whose ``slice(dim, start, end, step)`` is ``src``."""
    return _scatter(self, src, lambda o: op("slice.Tensor")(o, dim, start, end, step))


def diagonal_scatter(
    self: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1
) -> Tensor:
    """A copy of ``self`` whose ``diagonal(offset, dim1, dim2)`` is ``src``."""
    return _scatter(self, src, lambda o: op("diagonal")(o, offset, dim1, dim2))


def _clone_preserve_strides(self: Tensor) -> Tensor:
    """A copy with the same sizes, strides AND storage offset (in a fresh storage)."""
    span = self._offset + extent(self._shape, self._strides)
    buffer = op("empty.memory_format")([span], dtype=self.dtype, device=self.device)
    out = op("as_strided")(buffer, list(self._shape), list(self._strides), self._offset)
    op("copy_")(out, self)
    return out  # type: ignore[no-any-return]


def as_strided_scatter_symint(
    self: Tensor, src: Tensor, size: Any, stride: Any, storage_offset: int | None = None
) -> Tensor:
    """A copy of ``self`` (same layout) whose ``as_strided(size, stride, offset)`` is ``src``."""
    data = self._data
    if (
        self._offset == 0
        and data.__class__ is np.ndarray
        and data.flags.c_contiguous
        and self._strides == contiguous_strides(self._shape)
    ):  # Note [Scatter kernels on NumPy]: the plain copy has the same layout
        return _scatter(self, src, lambda o: op("as_strided")(o, size, stride, storage_offset))
    output = _clone_preserve_strides(self)
    view = op("as_strided")(output, size, stride, storage_offset)
    _check_src(src, view)
    op("copy_")(view, src)
    return output


def lift(self: Tensor) -> Tensor:
    return self


def lift_fresh(self: Tensor) -> Tensor:
    return self


def _unsafe_view(self: Tensor, size: Any) -> Tensor:
    """``view`` whose result is no view, as torch's: for a CPU tensor a second root over the
    same storage bytes with its own version counter (``_base`` None, version 0); other
    tensors get the view (our views only differ by ``_base``, Note [Views share the root])."""
    v: Tensor = op("view")(self, size)
    if type(v) is not Tensor or not isinstance(v._data, np.ndarray):
        return v
    root = v if v._base is None else v._base
    result = Tensor._make(
        v._data, v._shape, v._strides, v._offset, v.dtype, v.device,
        storage=root._storage_bytes(),
    )  # fmt: skip
    if v._key_set is not result._key_set:  # keep the conjugate / negative bits (a fallthrough)
        result._key_set |= v._key_set & _MATH_BITS_RAW
    return result


def zero_(self: Tensor) -> Tensor:
    return op("fill_.Scalar")(self, 0)  # type: ignore[no-any-return]


def _squeezed(self: Tensor, dims: list[int]) -> Tensor:
    keep = [d for d in range(len(self._shape)) if d not in dims or self._shape[d] != 1]
    return self._make_view(
        tuple(self._shape[d] for d in keep), tuple(self._strides[d] for d in keep), self._offset
    )


def squeeze(self: Tensor, dim: Any = None) -> Tensor:
    """``squeeze()`` (every size-1 dim) and ``squeeze.dims`` (those of ``dim``)."""
    ndim = len(self._shape)
    if dim is None:
        return _squeezed(self, list(range(ndim)))
    dims = [wrap_dim(d, ndim) if ndim else 0 for d in dim]
    return _squeezed(self, dims)


def resize_(self: Tensor, size: Any, *, memory_format: Any = None) -> Tensor:
    """Give ``self`` contiguous sizes ``size``, growing its storage if it is too small (new
    bytes are zero; torch leaves them uninitialized). Device-generic: a CPU storage is
    reallocated, other devices only change metadata. Views made before a growing resize keep
    the old buffer (torch's views see the resized storage)."""
    shape = tuple(int(s) for s in size)
    if any(s < 0 for s in shape):
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {min(shape)}: {list(shape)}"
        )
    strides = contiguous_strides(shape)
    numel = 1
    for s in shape:
        numel *= s
    if isinstance(self._data, np.ndarray):
        itemsize = self.dtype.itemsize
        needed = (self._offset + numel) * itemsize if numel else 0
        current = self._storage_nbytes()
        root = self if self._base is None else self._base
        if needed > current:
            grown = np.zeros(needed, np.uint8)
            grown[:current] = root._storage_bytes()
            root._storage = grown
        self._shape, self._strides = shape, strides
        self._data = root._view_array(shape, strides, self._offset, self.dtype)
        return self
    self._shape, self._strides = shape, strides
    return self


def _set_geometry(self: Tensor, view: Tensor) -> Tensor:
    """Give ``self`` the sizes, strides, offset (and CPU array) of ``view``, a view of it."""
    self._shape = view._shape
    self._strides = view._strides
    self._offset = view._offset
    self._data = view._data
    return self


def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    return _set_geometry(self, op("transpose.int")(self, dim0, dim1))


def t_(self: Tensor) -> Tensor:
    return _set_geometry(self, op("t")(self))


def unsqueeze_(self: Tensor, dim: int) -> Tensor:
    return _set_geometry(self, op("unsqueeze")(self, dim))


def squeeze_(self: Tensor, dim: Any = None) -> Tensor:
    if dim is None:
        view = op("squeeze")(self)
    elif isinstance(dim, int):
        view = op("squeeze.dim")(self, dim)
    else:  # squeeze_.dims
        view = op("squeeze.dims")(self, dim)
    return _set_geometry(self, view)


def as_strided__symint(
    self: Tensor, size: Any, stride: Any, storage_offset: int | None = None
) -> Tensor:
    return _set_geometry(self, op("as_strided")(self, size, stride, storage_offset))


def unfold_backward(grad_in: Tensor, input_sizes: Any, dim: int, size: int, step: int) -> Tensor:
    """The inverse of ``unfold`` (functionalization's and autograd's): a zero tensor of
    ``input_sizes`` with every window of ``grad_in`` added at its place, so positions that
    no window covers are zero and overlapping windows sum (as ATen's CPU kernel).

    >>> import tensordispatch as td
    >>> td.ops.aten.unfold_backward.default(td.ones(2, 2), [5], 0, 2, 2).tolist()
    [1.0, 1.0, 1.0, 1.0, 0.0]
    """
    sizes = list(input_sizes)
    result = op("zeros")(sizes, dtype=grad_in.dtype, device=grad_in.device)
    if not sizes:  # a 0-dim input unfolds to its only element
        return op("add.Tensor")(result, op("view")(grad_in, []))
    d = wrap_dim(dim, len(sizes))
    if step >= size:  # windows do not overlap: one strided copy
        op("copy_")(op("unfold")(result, d, size, step), grad_in)
        return result
    n = len(sizes)
    order = [*range(d), n - 1, *range(d, n - 1)]  # the window dim back to d
    for i in range(grad_in._shape[d]):
        window = op("permute")(op("select.int")(grad_in, d, i), order)
        op("add_.Tensor")(op("narrow")(result, d, i * step, size), window)
    return result


FUNCTIONALIZATION_COMPOSITE: dict[str, Any] = {
    "select_scatter_symint": select_scatter_symint,
    "slice_scatter": slice_scatter,
    "diagonal_scatter": diagonal_scatter,
    "as_strided_scatter_symint": as_strided_scatter_symint,
    "lift": lift,
    "lift_fresh": lift_fresh,
    "_unsafe_view": _unsafe_view,
    "zero_": zero_,
    "squeeze": squeeze,
    "transpose_": transpose_,
    "t_": t_,
    "unsqueeze_": unsqueeze_,
    "squeeze_": squeeze_,
    "as_strided__symint": as_strided__symint,
    "resize_": resize_,
    "unfold_backward": unfold_backward,
}
