"""Meta functions and Meta kernels of the layout, indexing and factory operators (F3).

Structured groups (cat, tril/triu, gather, scatter*, index, sort.stable, topk) get one meta
function here (``META_FUNCTIONS_LAYOUT``, merged into META_FUNCTIONS); the unstructured
operators with a ``Meta:`` kernel get it in ``META_KERNELS_LAYOUT``. The checks are torch's,
and the CPU kernels (backends/cpu/layout.py) call the same helpers, so both devices raise
alike. Data-dependent operators (nonzero, masked_select) have no Meta kernel, as in torch.
"""

from __future__ import annotations

import warnings
from typing import Any

from tensordispatch.backends.common import broadcast_shapes, shape_text, wrap_dim
from tensordispatch.backends.meta.factories import (  # noqa: F401 - re-exported
    arange_length,
    arange_size,
    arange_start_out_meta,
    eye_check,
    eye_m_out_meta,
    eye_out_meta,
    integral_bounds,
    linspace_check,
    linspace_out_meta,
)
from tensordispatch.backends.meta.iterator import index_output_strides
from tensordispatch.backends.overlap import (
    assert_no_internal_overlap,
    assert_no_overlap,
    assert_no_partial_overlap,
)
from tensordispatch.backends.structured import alloc_meta, prepare_out
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.dtypes import can_cast, promote_types
from tensordispatch.tensor.tensor import Tensor, dense_strides_like, is_non_overlapping_and_dense

__all__ = [
    "META_FUNCTIONS_LAYOUT",
    "META_KERNELS_LAYOUT",
    "arange_size",
    "check_index_tensor",
    "index_shape",
    "linspace_check",
    "preserve_strides",
]


def preserve_strides(t: Tensor) -> tuple[int, ...]:
    """The strides ``empty_like(t)`` gives (preserve_format)."""
    if is_non_overlapping_and_dense(t._shape, t._strides):
        return t._strides
    return dense_strides_like(t._shape, t._strides)


def _dtype_name(d: Any) -> str:
    return d.name


# -- cat ---------------------------------------------------------------------------------------


# Note [cat's plain case first]
# Most cat calls give tensors of one dtype and rank (at least 1) whose sizes agree but in a
# valid plain-int ``dim``: the general checks below (zero-dim positions, the promoted dtype,
# the legacy skip of (0,)-shaped inputs, per-size errors) then all pass, and their result is
# the shape with ``dim``'s sizes summed. ``_cat_plain`` computes that result in one loop
# (~1 us against ~5 us for two 4x4 tensors) and answers None for anything else, which takes
# the general checks from the start: the same errors in the same order. (0,)-shaped inputs
# among other 1-dim ones add 0 either way; a rank-4 result keeps ``_cat_strides``' rule.


def _cat_plain(tensors: list[Any], dim: Any) -> Any:
    """cat's meta result when every tensor has the first one's dtype and rank (at least 1),
    ``dim`` is a valid plain int and the sizes agree but in ``dim``; else None (Note [cat's
    plain case first])."""
    shape0 = tensors[0]._shape
    n = len(shape0)
    if n == 0 or type(dim) is not int:
        return None
    d = dim + n if dim < 0 else dim
    if not 0 <= d < n:
        return None
    dt = tensors[0].dtype
    head, tail = shape0[:d], shape0[d + 1 :]
    total = 0
    for t in tensors:
        s = t._shape
        if t.dtype is not dt or len(s) != n or s[:d] != head or s[d + 1 :] != tail:
            return None
        total += s[d]
    shape = (*head, total, *tail)
    strides = _cat_strides(tensors, shape) if n == 4 else None
    return ((shape, strides, dt),), d


def cat(outs: Any, tensors: Any, dim: int = 0) -> Any:
    if type(tensors) is not list:
        tensors = list(tensors)
    if outs is None and tensors:
        plain = _cat_plain(tensors, dim)
        if plain is not None:
            return plain
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t.dim() == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    out_dtype = tensors[0].dtype
    for t in tensors[1:]:
        out_dtype = promote_types(out_dtype, t.dtype)
    legacy = [t.dim() == 1 and t._shape[0] == 0 for t in tensors]  # skipped, as in torch
    real = [t for t, skip in zip(tensors, legacy, strict=True) if not skip]
    ref = real[0] if real else tensors[0]
    d = wrap_dim(dim, ref.dim())
    shape = list(ref._shape)
    if real:
        shape[d] = 0
    for i, t in enumerate(tensors):
        if legacy[i] and real:
            continue
        if t.dim() != ref.dim():
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {ref.dim()} and {t.dim()}"
            )
        for k in range(ref.dim()):
            if k != d and t._shape[k] != ref._shape[k]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{ref._shape[k]} but got size {t._shape[k]} for tensor number {i} in "
                    "the list."
                )
        if real:
            shape[d] += t._shape[d]
    if outs is not None:
        if not can_cast(out_dtype, outs[0].dtype):
            raise TypeError(
                "torch.cat(): input types can't be cast to the desired output type "
                f"{_scalar(outs[0].dtype)}"
            )
        out_dtype = outs[0].dtype
    return ((tuple(shape), _cat_strides(real, tuple(shape)), out_dtype),), d


def _channels_last(t: Tensor) -> bool:
    from tensordispatch.backends.cpu.kernels import channels_last_strides
    from tensordispatch.tensor.tensor import contiguous_strides

    if t.dim() != 4:
        return False
    return t._strides == channels_last_strides(t._shape) != contiguous_strides(t._shape)


def _cat_strides(tensors: list[Tensor], shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """The result keeps channels_last when every input suggests it (torch's cat), else it
    is contiguous."""
    from tensordispatch.backends.cpu.kernels import channels_last_strides

    if tensors and all(_channels_last(t) for t in tensors):
        return channels_last_strides(shape)
    return None


def _scalar(d: Any) -> str:
    from tensordispatch.backends.common import scalar_type_name

    return scalar_type_name(d)


# -- tril / triu -------------------------------------------------------------------------------


def _tri(name: str) -> Any:
    def meta(outs: Any, self: Tensor, diagonal: int = 0) -> Any:
        if self.dim() < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        return ((self._shape, None, self.dtype),), None

    return meta


# -- gather / scatter --------------------------------------------------------------------------


def _check_index_dtype(name: str, index: Tensor) -> None:
    if index.dtype not in (_dt.int64, _dt.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")


def _gather_shape_check(self: Tensor, d: int, index: Tensor) -> None:
    ndim = max(self.dim(), 1)
    if max(index.dim(), 1) != ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for k in range(index.dim()):
        if k != d and index._shape[k] > (self._shape[k] if self.dim() else 1):
            raise RuntimeError(
                f"Size does not match at dimension {k} expected index "
                f"{shape_text(index._shape)} to be no larger than self "
                f"{shape_text(self._shape)} apart from dimension {d}"
            )


def check_gather_out(out: Tensor, self: Tensor, index: Tensor) -> None:
    """torch's gather checks of the (resized) out tensor, on every device."""
    assert_no_internal_overlap(out)
    assert_no_overlap(out, self)
    assert_no_partial_overlap(out, index)


def gather(outs: Any, self: Tensor, dim: int, index: Tensor, sparse_grad: bool = False) -> Any:
    d = wrap_dim(dim, self.dim())
    if outs is not None and outs[0]._data is None and outs[0]._shape == index._shape:
        check_gather_out(outs[0], self, index)  # meta; CPU checks in its impl, after resizing
    if index.numel() != 0:  # torch checks an empty index for nothing, not even its dtype
        if index.dtype not in (_dt.int64, _dt.int32):
            raise RuntimeError("gather(): Expected dtype int32/int64 for index")
        _gather_shape_check(self, d, index)
    return ((index._shape, None, self.dtype),), d


def _scatter_check(
    self: Tensor, d: int, index: Tensor, src: Tensor | None, method: str = "scatter"
) -> None:
    _check_index_dtype(method, index)
    if src is not None and src.dtype is not self.dtype:
        raise RuntimeError(f"{method}(): Expected self.dtype to be equal to src.dtype")
    if index.numel() == 0:
        return
    ndim = max(self.dim(), 1)
    if max(index.dim(), 1) != ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if src is not None and max(src.dim(), 1) != ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    for k in range(index.dim()):
        if k != d and index._shape[k] > (self._shape[k] if self.dim() else 1):
            raise RuntimeError(
                f"Expected index {shape_text(index._shape)} to be no larger than self "
                f"{shape_text(self._shape)} apart from dimension {d}"
                + (
                    f" and to be no larger size than src {shape_text(src._shape)}"
                    if src is not None
                    else ""
                )
            )
        if src is not None and index._shape[k] > (src._shape[k] if src.dim() else 1):
            raise RuntimeError(
                f"Expected index {shape_text(index._shape)} to be no larger than self "
                f"{shape_text(self._shape)} apart from dimension {d} and to be no larger size "
                f"than src {shape_text(src._shape)}"
            )


_REDUCES = {"add": "add", "multiply": "multiply"}

# Deprecation warnings already given (torch gives them once per process).
WARNED: set[str] = set()


def _check_reduce(reduce: str) -> None:
    if reduce not in _REDUCES:
        raise RuntimeError("reduce argument must be either add or multiply.")


def _scatter_result(outs: Any, self: Tensor) -> Any:
    return ((self._shape, None, self.dtype),)


def scatter_src(outs: Any, self: Tensor, dim: int, index: Tensor, src: Tensor) -> Any:
    d = wrap_dim(dim, self.dim())
    _scatter_check(self, d, index, src)
    return _scatter_result(outs, self), d


def scatter_value(outs: Any, self: Tensor, dim: int, index: Tensor, value: Any) -> Any:
    d = wrap_dim(dim, self.dim())
    _scatter_check(self, d, index, None)
    return _scatter_result(outs, self), d


def scatter_reduce(
    outs: Any, self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str
) -> Any:
    _check_reduce(reduce)
    if "scatter_reduce_src" in WARNED:
        return scatter_src(outs, self, dim, index, src)
    WARNED.add("scatter_reduce_src")  # torch warns once per process (TORCH_WARN_ONCE)
    warnings.warn(
        "The reduce argument of torch.scatter with Tensor src is deprecated and will be "
        "removed in a future PyTorch release. Use torch.scatter_reduce instead for more "
        "reduction options.",
        UserWarning,
        stacklevel=2,
    )
    return scatter_src(outs, self, dim, index, src)


def scatter_value_reduce(
    outs: Any, self: Tensor, dim: int, index: Tensor, value: Any, reduce: str
) -> Any:
    _check_reduce(reduce)
    return scatter_value(outs, self, dim, index, value)


def scatter_add(outs: Any, self: Tensor, dim: int, index: Tensor, src: Tensor) -> Any:
    d = wrap_dim(dim, self.dim())
    _scatter_check(self, d, index, src, "scatter_add")
    return _scatter_result(outs, self), d


# -- index.Tensor (advanced indexing) ----------------------------------------------------------


def check_index_tensor(t: Tensor) -> None:
    """Index tensors must be long, int, byte or bool."""
    if t.dtype not in (_dt.int64, _dt.int32, _dt.uint8, _dt.bool):
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")


def _expand_masks(self: Tensor, indices: Any) -> list[Tensor | None]:
    """Bool/byte masks become their nonzero coordinates (one index per masked dim)."""
    from tensordispatch.backends.aten import op

    result: list[Tensor | None] = []
    for idx in indices:
        if idx is None:
            result.append(None)
            continue
        check_index_tensor(idx)
        if idx.dtype in (_dt.bool, _dt.uint8):
            start = len(result)
            for k in range(idx.dim()):
                if start + k >= self.dim() or idx._shape[k] != self._shape[start + k]:
                    raise IndexError(
                        f"The shape of the mask {shape_text(idx._shape)} at index {k} does not "
                        f"match the shape of the indexed tensor {shape_text(self._shape)} at "
                        f"index {start + k}"
                    )
            if idx.device.type == "meta":
                raise NotImplementedError(
                    "aten::index.Tensor: indexing a meta tensor with a boolean mask has a "
                    "data-dependent shape; there is no Meta kernel for it"
                )
            coords = op("nonzero")(idx)
            result.extend(op("select.int")(coords, 1, k) for k in range(idx.dim()))
        else:
            result.append(idx)
    return result


def index_shape(self: Tensor, indices: Any) -> tuple[tuple[int, ...], list[Tensor | None], bool]:
    """The result shape of ``self[indices]`` (torch's advanced indexing), the indices with
    masks expanded, and whether the indexed dims were adjacent (kept in place)."""
    if len(indices) > self.dim():
        raise IndexError(
            f"too many indices for tensor of dimension {self.dim()} (got {len(indices)})"
        )
    expanded = _expand_masks(self, indices)
    if len(expanded) > self.dim():
        raise IndexError(
            f"too many indices for tensor of dimension {self.dim()} (got {len(expanded)})"
        )
    positions = [i for i, t in enumerate(expanded) if t is not None]
    bshape: tuple[int, ...] = ()
    for i in positions:
        try:
            bshape = broadcast_shapes(bshape, expanded[i]._shape)  # type: ignore[union-attr]
        except RuntimeError:
            shapes = ", ".join(shape_text(t._shape) for t in expanded if t is not None)
            raise IndexError(
                f"shape mismatch: indexing tensors could not be broadcast together with shapes "
                f"{shapes}"
            ) from None
    adjacent = not positions or positions[-1] - positions[0] + 1 == len(positions)
    if not positions:
        shape = self._shape
    elif adjacent:
        shape = self._shape[: positions[0]] + bshape + self._shape[positions[-1] + 1 :]
    else:
        shape = bshape + tuple(
            self._shape[i] for i in range(self.dim()) if i >= len(expanded) or expanded[i] is None
        )
    return shape, expanded, adjacent


def index_Tensor(outs: Any, self: Tensor, indices: Any) -> Any:
    shape, expanded, adjacent = index_shape(self, list(indices))
    strides = index_output_strides(self, expanded, adjacent, shape)
    return ((shape, strides, self.dtype),), (expanded, adjacent)


# -- sort / topk -------------------------------------------------------------------------------


def sort_stable(
    outs: Any, self: Tensor, stable: Any, dim: int = -1, descending: bool = False
) -> Any:
    d = wrap_dim(dim, self.dim())
    strides = preserve_strides(self)
    return ((self._shape, strides, self.dtype), (self._shape, strides, _dt.int64)), d


def topk(
    outs: Any, self: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True
) -> Any:
    d = wrap_dim(dim, self.dim())
    size = self._shape[d] if self.dim() else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    shape = list(self._shape)
    if self.dim():
        shape[d] = k
    return ((tuple(shape), None, self.dtype), (tuple(shape), None, _dt.int64)), d


META_FUNCTIONS_LAYOUT: dict[str, Any] = {
    "cat": cat,
    "tril": _tri("tril"),
    "triu": _tri("triu"),
    "gather": gather,
    "scatter.src": scatter_src,
    "scatter.value": scatter_value,
    "scatter.reduce": scatter_reduce,
    "scatter.value_reduce": scatter_value_reduce,
    "scatter_add": scatter_add,
    "index.Tensor": index_Tensor,
    "sort.stable": sort_stable,
    "topk": topk,
}


# -- unstructured Meta kernels -----------------------------------------------------------------


def flip_meta(self: Tensor, dims: Any) -> Tensor:
    ndim = self.dim()
    seen: list[int] = []
    for d in dims:
        w = wrap_dim(d, ndim)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.append(w)
    return alloc_meta((self._shape, preserve_strides(self), self.dtype), self.device)


def roll_check(self: Tensor, shifts: Any, dims: Any) -> None:
    if len(shifts) != len(dims) and not (len(dims) == 0 and len(shifts) == 1):
        raise RuntimeError(
            f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}"
        )
    if not dims and len(shifts) != 1:
        raise RuntimeError("`shifts` required")
    for d in dims:
        wrap_dim(d, self.dim())


def roll_meta(self: Tensor, shifts: Any, dims: Any = ()) -> Tensor:
    roll_check(self, shifts, dims)
    return alloc_meta((self._shape, None, self.dtype), self.device)


def index_select_check(self: Tensor, dim: int, index: Tensor) -> tuple[int, tuple[int, ...]]:
    """The wrapped dim and result shape of index_select, with torch's checks."""
    d = wrap_dim(dim, self.dim())
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index.dtype not in (_dt.int64, _dt.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    shape = list(self._shape)
    if shape:
        shape[d] = index.numel()
    return d, tuple(shape)


def index_select_meta(self: Tensor, dim: int, index: Tensor) -> Tensor:
    _, shape = index_select_check(self, dim, index)
    return alloc_meta((shape, None, self.dtype), self.device)


def index_select_out_meta(self: Tensor, dim: int, index: Tensor, *, out: Tensor) -> Tensor:
    _, shape = index_select_check(self, dim, index)
    prepare_out(out, (shape, None, self.dtype))
    return out


def index_put_check(self: Tensor, indices: Any, values: Tensor) -> None:
    """index_put_'s dtype rule and the broadcast of values to the indexed shape."""
    if values.dtype is not self.dtype:
        raise RuntimeError(
            f"Index put requires the source and destination dtypes match, got "
            f"{_scalar(self.dtype)} for the destination and {_scalar(values.dtype)} for the "
            "source."
        )


def index_put_impl_meta_(
    self: Tensor, indices: Any, values: Tensor, accumulate: bool = False, unsafe: bool = False
) -> Tensor:
    index_put_check(self, indices, values)
    if any(t is not None and t.dtype in (_dt.bool, _dt.uint8) for t in indices):
        return self  # a mask's count of True is data: nothing more to check on meta (torch)
    shape, _, _ = index_shape(self, list(indices))
    index_put_broadcast_check(shape, values)
    return self


def index_put_broadcast_check(shape: tuple[int, ...], values: Tensor) -> None:
    """``values`` must broadcast to the indexing result (torch's CPU check; torch's meta path
    skips it, ours runs it on both devices: docs/CODEGEN.md)."""
    target = broadcast_shapes(shape, values._shape) if _broadcasts(shape, values) else None
    if target != shape:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {shape_text(values._shape)} cannot be "
            f"broadcast to indexing result of shape {shape_text(shape)}"
        )


def _broadcasts(shape: tuple[int, ...], values: Tensor) -> bool:
    try:
        broadcast_shapes(shape, values._shape)
    except RuntimeError:
        return False
    return True


def masked_fill_check(self: Tensor, mask: Tensor, value: Any) -> None:
    if mask.dtype is not _dt.bool:
        raise RuntimeError(
            "masked_fill_ only supports boolean masks, but got mask with dtype "
            f"{_type_meta(mask.dtype)}"
        )
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{value.dim()} dimension(s)."
        )
    shape = broadcast_shapes(self._shape, mask._shape)
    if shape != self._shape:
        raise RuntimeError(
            f"output with shape {shape_text(self._shape)} doesn't match the broadcast shape "
            f"{shape_text(shape)}"
        )


def _type_meta(d: Any) -> str:
    from tensordispatch.backends.common import type_meta_name

    return type_meta_name(d)


def masked_fill_meta_(self: Tensor, mask: Tensor, value: Any) -> Tensor:
    masked_fill_check(self, mask, value)
    return self


def random_meta_(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    return self


META_KERNELS_LAYOUT: dict[str, Any] = {
    "flip_meta": flip_meta,
    "roll_meta": roll_meta,
    "index_select_meta": index_select_meta,
    "index_select_out_meta": index_select_out_meta,
    "index_put_impl_meta_": index_put_impl_meta_,
    "masked_fill_meta_": masked_fill_meta_,
    "arange_start_out": arange_start_out_meta,
    "linspace_out": linspace_out_meta,
    "eye_out": eye_out_meta,
    "eye_m_out": eye_m_out_meta,
    "random_meta_": random_meta_,
}
