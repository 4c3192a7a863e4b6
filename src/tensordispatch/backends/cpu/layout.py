"""CPU (NumPy) kernels of the layout and indexing operators, and factories (F3; the random
ones are in cpu/random.py, merged into this table).

Structured impls (``cat_out``, ``tril_out``, ``gather_out``, ``scatter_*_out``, ``index_out``,
``sort_stable_out``, ``topk_out``) write into their outputs after the meta function in
backends/meta/layout.py checked the inputs; plain kernels run the same checks first. Index
values are bounds-checked here (data-dependent), with torch's messages.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from tensordispatch.backends.common import broadcast_shapes, shape_text
from tensordispatch.backends.cpu.linspace import linspace_out
from tensordispatch.backends.cpu.random import CPU_RANDOM
from tensordispatch.backends.cpu.scalars import checked_fill_value
from tensordispatch.backends.meta.layout import (
    arange_length,
    check_gather_out,
    eye_check,
    flip_meta,
    index_put_check,
    index_select_check,
    index_shape,
    integral_bounds,
    masked_fill_check,
    preserve_strides,
    roll_check,
)
from tensordispatch.backends.overlap import (
    assert_no_internal_overlap,
    assert_no_overlap,
    check_written,
    check_written_no_overlap,
)
from tensordispatch.backends.structured import (
    alloc_cpu,
    empty_strided_cpu_array,
    prepare_out,
    resize_output,
    set_sizes_strides,
)
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.tensor import Tensor, new_cpu_tensor

__all__ = ["CPU_LAYOUT"]


def _like(self: Tensor) -> Tensor:
    return empty_strided_cpu_array(self._shape, preserve_strides(self), self.dtype)


def _check_bounds(index: np.ndarray[Any, Any], size: int, dim: int) -> None:
    """torch's message names the first index out of range in the index's order."""
    if index.size and (index.max() >= size or index.min() < -size):
        bad = index[(index >= size) | (index < -size)].flat[0]
        raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {size}")


# -- structured impls --------------------------------------------------------------------------


def cat_out(pre: Any, tensors: Any, dim: int, out: Tensor) -> None:
    check_written_no_overlap(out, tensors)  # torch: on the resized out
    o, dt = out._data, out.dtype
    parts, same = [], True
    for t in tensors:  # (0,)-shaped inputs are skipped, as torch's legacy rule
        s = t._shape
        if len(s) != 1 or s[0] != 0:
            parts.append(t._data)
            same = same and t.dtype is dt
    if parts and o.size:
        if same:  # straight into out: the same copy, without a temporary
            _np_concatenate(parts, axis=pre, out=o)
        else:  # NumPy's promoted dtype first, then cast as the copy
            np.copyto(o, _np_concatenate(parts, axis=pre), casting="unsafe")


_np_concatenate = np.concatenate


def _tri_out(fn: Any) -> Any:
    def impl(pre: Any, self: Tensor, diagonal: int, out: Tensor) -> None:
        if self.dtype._category < 0:  # Note [Limited unsigned dtypes]
            raise _limited(fn.__name__, self)
        np.copyto(out._data, fn(self._data, diagonal), casting="unsafe")

    return impl


def _along(self_data: Any, d: int, index: Tensor, what: str) -> Any:
    """``self_data`` cut to ``index``'s extent in every dim but ``d`` (gather/scatter use
    an index no larger than the tensors there)."""
    cut = tuple(slice(None) if k == d else slice(0, index._shape[k]) for k in range(index.dim()))
    return self_data[cut]


def gather_out(
    pre: Any, self: Tensor, dim: int, index: Tensor, sparse_grad: bool, out: Tensor
) -> None:
    check_gather_out(out, self, index)  # torch: on the resized out
    if index.numel() == 0:
        return
    if self.dtype._category < 0:  # Note [Limited unsigned dtypes]
        raise _limited("scatter_gather_tensor_cpu", self)
    data = self._data if self.dim() else self._data.reshape(1)
    idx = index._data.astype(np.int64) if index.dim() else index._data.reshape(1)
    size = data.shape[pre]
    if idx.max() >= size or idx.min() < 0:
        bad = idx.max() if idx.max() >= size else idx.min()
        raise RuntimeError(f"index {bad} is out of bounds for dimension {pre} with size {size}")
    result = np.take_along_axis(_along(data, pre, _shape_of(idx), "gather"), idx, axis=pre)
    np.copyto(out._data, result.reshape(out._shape), casting="unsafe")


class _ShapeOnly:
    __slots__ = ("_shape",)

    def __init__(self, shape: tuple[int, ...]) -> None:
        self._shape = shape

    def dim(self) -> int:
        return len(self._shape)


def _shape_of(a: np.ndarray[Any, Any]) -> Any:
    return _ShapeOnly(a.shape)


def _scatter_key(self: Tensor, d: int, index: Tensor) -> tuple[Any, ...]:
    idx = index._data if index.dim() else index._data.reshape(1)
    size = self._shape[d] if self.dim() else 1
    if idx.size and (idx.max() >= size or idx.min() < 0):
        bad = idx.max() if idx.max() >= size else idx.min()
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {size}")
    grid = list(np.indices(idx.shape, sparse=True))
    grid[d] = idx
    return tuple(grid)


def _scatter(
    self: Tensor, d: int, index: Tensor, values: Any, out: Tensor, reduce: str | None
) -> None:
    if out is not self:
        np.copyto(out._data, self._data, casting="unsafe")
    if index.numel() == 0:
        return
    if self.dtype._category < 0:  # Note [Limited unsigned dtypes]
        kernel = "tensor" if isinstance(values, Tensor) else "scalar"
        raise _limited(f"scatter_gather_{kernel}_cpu", self)
    target = out._data if out.dim() else out._data.reshape(1)
    key = _scatter_key(self, d, index)
    if isinstance(values, Tensor):
        src = values._data if values.dim() else values._data.reshape(1)
        vals = src[tuple(slice(0, n) for n in key[d].shape)]
    else:
        vals = np.asarray(values).astype(target.dtype)
    if reduce is None:
        target[key] = vals
    elif reduce == "add":
        np.add.at(target, key, vals)
    else:
        np.multiply.at(target, key, vals)


def scatter_src_out(
    pre: Any, self: Tensor, dim: int, index: Tensor, src: Tensor, out: Tensor
) -> None:
    _scatter(self, pre, index, src, out, None)


def scatter_value_out(
    pre: Any, self: Tensor, dim: int, index: Tensor, value: Any, out: Tensor
) -> None:
    _scatter(self, pre, index, value, out, None)


def scatter_reduce_out(
    pre: Any, self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, out: Tensor
) -> None:
    _scatter(self, pre, index, src, out, reduce)


def scatter_value_reduce_out(
    pre: Any, self: Tensor, dim: int, index: Tensor, value: Any, reduce: str, out: Tensor
) -> None:
    _scatter(self, pre, index, value, out, reduce)


def scatter_add_out(
    pre: Any, self: Tensor, dim: int, index: Tensor, src: Tensor, out: Tensor
) -> None:
    _scatter(self, pre, index, src, out, "add")


def _index_key(self: Tensor, expanded: list[Tensor | None]) -> tuple[Any, ...]:
    key: list[Any] = []
    for dim, t in enumerate(expanded):
        if t is None:
            key.append(slice(None))
            continue
        idx = t._data.astype(np.int64, copy=False)
        _check_bounds(idx, self._shape[dim], dim)
        key.append(idx)
    return tuple(key)


def index_out(pre: Any, self: Tensor, indices: Any, out: Tensor) -> None:
    expanded, _ = pre
    if not out._data.size:
        return  # torch checks index values as it reads elements: none here
    result = self._data[_index_key(self, expanded)]
    np.copyto(out._data, result, casting="unsafe")


def _sort_indices(data: Any, d: int, descending: bool) -> Any:
    """Stable argsort along ``d``; descending keeps equal elements in their order and puts
    NaN first, as torch does."""
    if not descending:
        return np.argsort(data, axis=d, kind="stable")
    n = data.shape[d]
    flipped = np.argsort(np.flip(data, d), axis=d, kind="stable")
    return n - 1 - np.flip(flipped, d)


def sort_stable_out(
    pre: Any, self: Tensor, stable: Any, dim: int, descending: bool, values: Tensor,
    indices: Tensor,
) -> None:  # fmt: skip
    check_written(values, (self,))  # torch: on the resized outputs
    assert_no_internal_overlap(indices)
    if self.dtype.is_complex:
        raise RuntimeError(" Sort does not support complex dtypes on CPU")  # torch's text
    data = self._data if self.dim() else self._data.reshape(1)
    order = _sort_indices(data, pre, descending)
    np.copyto(values._data, np.take_along_axis(data, order, pre).reshape(values._shape))
    np.copyto(indices._data, order.reshape(indices._shape))


def topk_out(
    pre: Any, self: Tensor, k: int, dim: int, largest: bool, sorted: bool, values: Tensor,
    indices: Tensor,
) -> None:  # fmt: skip
    check_written(values, (self,))  # torch: on the resized outputs
    assert_no_internal_overlap(indices)
    if self.dtype._category < 0:  # Note [Limited unsigned dtypes]
        raise _limited("topk_cpu", self)
    data = self._data if self.dim() else self._data.reshape(1)
    order = np.take(_sort_indices(data, pre, largest), np.arange(k), axis=pre)
    np.copyto(values._data, np.take_along_axis(data, order, pre).reshape(values._shape))
    np.copyto(indices._data, order.reshape(indices._shape))


def _scalar(d: Any) -> str:
    from tensordispatch.backends.common import scalar_type_name

    return scalar_type_name(d)


def _limited(kernel: str, t: Tensor) -> NotImplementedError:
    """torch's error for a kernel without the limited dtypes (Note [Limited unsigned dtypes])."""
    return NotImplementedError(f"\"{kernel}\" not implemented for '{_scalar(t.dtype)}'")


# -- plain kernels -----------------------------------------------------------------------------


def flip(self: Tensor, dims: Any) -> Tensor:
    flip_meta(self, dims)
    if self.dtype._category < 0 and self.numel():  # Note [Limited unsigned dtypes]
        _flip_limited(self, dims)
    result = _like(self)
    axes = tuple(int(d) for d in dims)
    np.copyto(result._data, np.flip(self._data, axes) if axes and self.dim() else self._data)
    return result


def _flip_limited(self: Tensor, dims: Any) -> None:
    """torch flips rows by copies whatever the dtype, but reversing the elements of the
    innermost (stride 1) dim is a dtype-dispatched kernel, without the limited dtypes."""
    ndim = self.dim()
    for d in dims:
        d = int(d) % ndim if ndim else 0
        if ndim and self._strides[d] == 1 and self._shape[d] > 1:
            raise _limited("flip_cpu", self)


def roll(self: Tensor, shifts: Any, dims: Any = ()) -> Tensor:
    roll_check(self, shifts, dims)
    result = alloc_cpu((self._shape, None, self.dtype))
    if not dims:
        flat = np.roll(self._data.reshape(-1), int(shifts[0]))
        np.copyto(result._data, flat.reshape(self._shape))
    else:
        rolled = np.roll(self._data, [int(s) for s in shifts], [int(d) for d in dims])
        np.copyto(result._data, rolled)
    return result


def _index_select(self: Tensor, dim: int, index: Tensor) -> tuple[Any, tuple[int, ...]]:
    d, shape = index_select_check(self, dim, index)
    if self.dtype._category < 0:  # Note [Limited unsigned dtypes]
        raise _limited("index_select", self)
    idx = index._data.reshape(-1).astype(np.int64)
    size = self._shape[d] if self.dim() else 1
    if idx.size and (idx.max() >= size or idx.min() < -size):
        raise IndexError("index out of range in self")
    data = self._data if self.dim() else self._data.reshape(1)
    return np.take(data, idx, axis=d).reshape(shape), shape


def index_select(self: Tensor, dim: int, index: Tensor) -> Tensor:
    values, shape = _index_select(self, dim, index)
    result = alloc_cpu((shape, None, self.dtype))
    np.copyto(result._data, values)
    return result


def index_select_out(self: Tensor, dim: int, index: Tensor, *, out: Tensor) -> Tensor:
    values, shape = _index_select(self, dim, index)
    check_written_no_overlap(out, (self, index))  # torch: before resizing out
    prepare_out(out, (shape, None, self.dtype))
    np.copyto(out._data, values, casting="unsafe")
    return out


def _masked_fill_case(self: Tensor, indices: Any, values: Tensor) -> bool:
    """Whether torch's index_put_ hands this call to masked_fill_ (one-element value, one
    bool mask matching the dims it covers), which has no overlap check."""
    if _numel(values._shape) != 1:
        return False
    masks = [(i, t) for i, t in enumerate(indices) if t is not None]
    if len(masks) != 1 or masks[0][1].dtype not in (_dt.bool, _dt.uint8):
        return False
    start, mask = masks[0]
    return mask._shape == self._shape[start : start + len(mask._shape)]


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def index_put_impl_(
    self: Tensor, indices: Any, values: Tensor, accumulate: bool = False, unsafe: bool = False
) -> Tensor:
    # torch's order: the masked_fill_ hand-off (one-element value, one bool mask: the value's
    # item is filled in, whatever its dtype), else the overlap checks, the shape, the dtype
    masked = not accumulate and _masked_fill_case(self, indices, values)
    if not masked:
        assert_no_overlap(self, values)  # torch's index_put_ checks value and indices
        for t in indices:
            if t is not None:
                assert_no_overlap(self, t)
    shape, expanded, _ = index_shape(self, list(indices))
    key = _index_key(self, expanded)
    try:
        vals = np.broadcast_to(values._data, shape)
    except ValueError:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {shape_text(values._shape)} cannot be "
            f"broadcast to indexing result of shape {shape_text(shape)}"
        ) from None
    if not masked:
        index_put_check(self, indices, values)
    if self.dtype._category < 0 and vals.size:  # Note [Limited unsigned dtypes]
        raise _limited("masked_fill" if masked else "index_put", self)
    if accumulate:
        np.add.at(self._data, key, vals)
    else:
        self._data[key] = vals
    return self


def _masked_fill(self: Tensor, mask: Tensor, value: Any) -> Tensor:
    masked_fill_check(self, mask, value)
    if self.dtype._category < 0:  # Note [Limited unsigned dtypes]
        raise _limited("masked_fill", self)
    if isinstance(value, Tensor):
        value = value.item()
    # the value as the element type holds it, with torch's overflow check (a tensor's too)
    value = checked_fill_value(value, self.dtype)
    fill = np.asarray(value)
    np.copyto(self._data, fill.astype(self.dtype._numpy), where=mask._data)
    return self


def masked_select(self: Tensor, mask: Tensor) -> Tensor:
    if mask.dtype is not _dt.bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    if self.dtype._category < 0:  # Note [Limited unsigned dtypes]
        raise _limited("masked_select", self)
    shape = broadcast_shapes(self._shape, mask._shape)
    values = np.broadcast_to(self._data, shape)[np.broadcast_to(mask._data, shape)]
    result = alloc_cpu(((values.shape[0],), None, self.dtype))
    np.copyto(result._data, values)
    return result


def masked_select_out(self: Tensor, mask: Tensor, *, out: Tensor) -> Tensor:
    result = masked_select(self, mask)
    check_written_no_overlap(out, (self, mask))  # torch: before resizing out
    prepare_out(out, (result._shape, None, self.dtype))
    np.copyto(out._data, result._data)
    return out


def nonzero(self: Tensor) -> Tensor:
    """Coordinates of the nonzero elements, one row each; torch's result is the transpose of
    a contiguous (ndim, n) tensor, so its strides are (1, n)."""
    if self.dtype._category < 0:  # Note [Limited unsigned dtypes]
        raise _limited("nonzero_count_cpu", self)
    coords = np.argwhere(self._data)
    n, ndim = coords.shape
    result = empty_strided_cpu_array((n, ndim), (1, n), _dt.int64)
    np.copyto(result._data, coords)
    return result


def nonzero_out(self: Tensor, *, out: Tensor) -> Tensor:
    result = nonzero(self)
    if out.dtype is not _dt.int64:
        raise RuntimeError(
            # torch's text, without the space before the dtype
            f"nonzero: Expected out tensor to have scalar type Long but got scalar type"
            f"{_scalar(out.dtype)}"
        )
    check_written_no_overlap(out, (self,))  # torch: before resizing out
    if resize_output(out, result._shape):  # its deprecation warning when out had elements
        set_sizes_strides(out, result._shape, result._strides)  # torch's (1, N) strides
    np.copyto(out._data, result._data)
    return out


# -- factories ---------------------------------------------------------------------------------


def arange_start_out(start: Any, end: Any, step: Any = 1, *, out: Tensor) -> Tensor:
    if out.dtype.is_complex or out.dtype._category <= 0:  # Note [Limited unsigned dtypes]
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{_scalar(out.dtype)}'")
    n = arange_length(start, end, step, out.dtype)
    numel = out._data.size
    if numel != n:  # torch resizes only an out of another numel, warning when it had any
        if numel:
            warnings.warn(
                f"The number of elements in the out tensor of shape {shape_text(out._shape)} "
                f"is {numel} which does not match the computed number of elements {n}. Note "
                "that this may occur as a result of rounding error. The out tensor will be "
                f"resized to a tensor of shape ({n},).",
                UserWarning,
                stacklevel=2,
            )
        set_sizes_strides(out, (n,), (1,))
    values: np.ndarray[Any, Any]
    if out.dtype.is_floating_point:
        values = np.arange(n, dtype=np.float64) * float(step) + float(start)
    else:
        start, step = integral_bounds(out.dtype, start, step)
        if out.dtype is _dt.int64 and out._data.flags.c_contiguous:
            # exact in int64 (the length keeps start + (n - 1) * step between the bounds)
            out._data[...] = np.arange(start, start + n * step, step, dtype=np.int64)[:n]
            return out
        values = np.arange(n, dtype=np.int64) * int(step) + int(start)
    np.copyto(out._data, values, casting="unsafe")
    return out


def arange_cpu(start: Any, end: Any, step: Any, n: int, dt: Any) -> Tensor | None:
    """What ``arange_start_out(start, end, step, out=empty_cpu([n], dtype=dt))`` returns, in
    one step, for an int64 or floating ``dt`` and ``n = arange_length(start, end, step, dt)``
    (its checks already made): the same NumPy values, with no ``out`` to fill. None when
    NumPy's int64 range does not have exactly ``n`` elements (the kernel then decides).

    >>> from tensordispatch.tensor import float32, int64
    >>> arange_cpu(0, 5, 2, 3, int64), arange_cpu(1, 2, 0.25, 4, float32)
    (tensor([0, 2, 4]), tensor([1.0000, 1.2500, 1.5000, 1.7500]))
    """
    r: np.ndarray[Any, Any]
    if dt is _dt.int64:
        if type(start) is not int or type(step) is not int:
            start, step = integral_bounds(dt, start, step)
        r = _np_arange(start, start + n * step, step, dtype=_INT64)
        if r.shape[0] != n:
            return None
    else:  # the kernel's arange * step + start in float64, in place; the same cast
        r = _np_arange(n, dtype=_FLOAT64)
        if step != 1:  # x * 1.0 is x, bit for bit
            r *= float(step)
        if start != 0 or step < 0:  # x + 0.0 is x unless x is -0.0 (0 * a negative step)
            r += float(start)
        if dt is not _dt.float64:
            r = r.astype(dt._numpy)
    return new_cpu_tensor(r, (n,), _ONE, dt)


_np_arange = np.arange
_INT64 = np.dtype(np.int64)
_FLOAT64 = np.dtype(np.float64)


_ONE = (1,)


def eye_m_out(n: int, m: int, *, out: Tensor) -> Tensor:
    eye_check(n, m)
    resize_output(out, (n, m))
    if out.dtype._category < 0:  # Note [Limited unsigned dtypes]
        raise _limited("eye", out)
    o = out._data
    o.fill(0)
    k = min(n, m)
    if o.flags.c_contiguous:  # the diagonal is every (m + 1)-th element of the flat array
        o.reshape(-1)[: k * (m + 1) : m + 1] = 1
    else:
        o[np.arange(k), np.arange(k)] = 1
    return out


def eye_out(n: int, *, out: Tensor) -> Tensor:
    return eye_m_out(n, n, out=out)


CPU_LAYOUT: dict[str, Any] = {
    "cat_out": cat_out,
    "tril_out": _tri_out(np.tril),
    "triu_out": _tri_out(np.triu),
    "gather_out": gather_out,
    "scatter_src_out": scatter_src_out,
    "scatter_value_out": scatter_value_out,
    "scatter_reduce_out": scatter_reduce_out,
    "scatter_value_reduce_out": scatter_value_reduce_out,
    "scatter_add_out": scatter_add_out,
    "index_out": index_out,
    "sort_stable_out": sort_stable_out,
    "topk_out": topk_out,
    "flip": flip,
    "roll": roll,
    "index_select": index_select,
    "index_select_out": index_select_out,
    "index_put_impl_": index_put_impl_,
    "masked_fill__Scalar": _masked_fill,
    "masked_fill__Tensor": _masked_fill,
    "masked_select": masked_select,
    "masked_select_out": masked_select_out,
    "nonzero": nonzero,
    "nonzero_out": nonzero_out,
    "arange_start_out": arange_start_out,
    "linspace_out": linspace_out,
    "eye_out": eye_out,
    "eye_m_out": eye_m_out,
    **CPU_RANDOM,  # uniform_, normal_, random_ (cpu/random.py)
}
