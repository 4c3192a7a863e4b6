"""View kernels: device-generic, they compute a view's metadata and share the storage.

Used under CPU and Meta (``view``) and CompositeExplicitAutograd (the rest); each returns
``self._make_view(shape, strides, offset)`` (tensor/), so a CPU view is a NumPy view of
the same buffer and a write through it is visible in its base, as in torch.
"""

from __future__ import annotations

import builtins
from math import prod
from typing import Any

import numpy as np

from tensordispatch.backends.common import scalar_type_name, shape_text, wrap_dim
from tensordispatch.tensor.geometry import CONTIGUOUS_STRIDES as _CONTIGUOUS
from tensordispatch.tensor.geometry import contiguous_of as _contiguous_of
from tensordispatch.tensor.tensor import Tensor, contiguous_strides

__all__ = ["VIEW_KERNELS", "compute_stride", "infer_size", "strided_data"]

_INT64_MAX = 2**63 - 1
_ndarray = np.ndarray
_ALL = builtins.slice(None)
_EMPTY = builtins.slice(0, 0)
_Ints = tuple[int, ...]

# Note [NumPy-derived view data]
# A CPU view's NumPy array is normally built over the storage bytes from its geometry after a
# bounds check (Tensor._view_array, ~0.7 us). For view (of a contiguous tensor), transpose,
# select and slice, NumPy's own reshape / swapaxes / basic indexing of the source's array
# gives exactly that array (same buffer, byte offset and byte strides: these operations
# compute strides as torch does, and the source is in bounds already) for ~0.1 us; permute
# (view_ops.py) is NumPy's transpose likewise, and unsqueeze of a contiguous tensor NumPy's
# reshape (row-major strides in and out, torch's shape[d] * strides[d] for the new dim).
# Elsewhere unsqueeze and expand give size-1 and broadcast dims strides that NumPy's
# indexing, reshape and broadcast_to do not (NumPy: 0 for a new axis), so they build the
# array over the storage with the view's exact byte strides but skip the bounds check
# (`strided_data`, ~0.5 us): a size-1 dim or a stride-0 dim reaches no element the source
# does not. Empty sources and results keep the checked path (its offset rule for empty
# views). Other devices (Meta: no data; lazy payloads) keep ``data=None``.


def strided_data(
    self: Tensor, shape: tuple[int, ...], byte_strides: tuple[int, ...]
) -> np.ndarray[Any, Any] | None:
    """The NumPy array of a non-empty view of ``self``'s elements at ``self``'s offset with
    ``byte_strides``, without the bounds check (Note [NumPy-derived view data]), or None
    when ``self`` has no NumPy data or either is empty (``_make_view`` then builds it).

    >>> from tensordispatch.tensor import tensor
    >>> a = tensor([[1.0, 2.0], [3.0, 4.0]]); strided_data(a, (2, 1, 2), (8, 8, 4)).tolist()
    [[[1.0, 2.0]], [[3.0, 4.0]]]
    """
    data = self._data
    if type(data) is not _ndarray or not data.size or 0 in shape:
        return None
    root = self if self._base is None else self._base
    buffer = root._storage
    if buffer is None:
        buffer = root._storage_bytes()
    return _ndarray(shape, data.dtype, buffer, self._offset * data.itemsize, byte_strides)


def infer_size(shape: Any, numel: int) -> tuple[int, ...]:
    """``shape`` with a -1 resolved against ``numel`` (torch's infer_size).

    >>> infer_size([-1, 3], 6)
    (2, 3)
    """
    given = tuple(shape)
    if -1 not in given:  # the common case, without the conversions and the loop below
        total = prod(given)  # an int only when every size is one (else fall through)
        if total == numel and type(total) is int and (not given or min(given) >= 0):
            return given
    res = [int(s) for s in shape]
    newsize, infer = 1, None
    for i, s in enumerate(res):
        if s == -1:
            if infer is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s >= 0:
            newsize *= s
        else:
            raise RuntimeError(f"invalid shape dimension {s}")
    if numel == newsize or (infer is not None and newsize > 0 and numel % newsize == 0):
        if infer is not None:
            if newsize == 0:
                raise RuntimeError(
                    f"cannot reshape tensor of 0 elements into shape {shape_text(res)} because "
                    "the unspecified dimension size -1 can be any value and is ambiguous"
                )
            res[infer] = numel // newsize
        return tuple(res)
    raise RuntimeError(f"shape '{shape_text(res)}' is invalid for input of size {numel}")


def compute_stride(
    old_shape: tuple[int, ...], old_stride: tuple[int, ...], new_shape: tuple[int, ...]
) -> tuple[int, ...] | None:
    """Strides viewing ``old`` as ``new_shape`` without a copy, or None (torch's
    computeStride).

    >>> compute_stride((2, 3), (3, 1), (3, 2)), compute_stride((2, 3), (1, 2), (6,))
    ((2, 1), None)
    """
    if not old_shape:
        return contiguous_strides(new_shape)
    numel = 1
    for s in old_shape:
        numel *= s
    if numel == 0 and old_shape == new_shape:
        return old_stride
    n = len(new_shape)
    new_stride = [0] * n
    if numel == 0:
        for d in range(n - 1, -1, -1):
            new_stride[d] = 1 if d == n - 1 else max(new_shape[d + 1], 1) * new_stride[d + 1]
        return tuple(new_stride)
    view_d = n - 1
    chunk = old_stride[-1]
    tensor_numel = view_numel = 1
    for td in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[td]
        if td == 0 or (old_shape[td - 1] != 1 and old_stride[td - 1] != tensor_numel * chunk):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_stride[view_d] = view_numel * chunk
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if td > 0:
                chunk = old_stride[td - 1]
                tensor_numel = view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_stride)


# Note [Views of contiguous tensors by plan]
# view's result geometry is a function of the source's shape and the size asked for when the
# source is contiguous: the first 4096 (shape, size) pairs seen with plain ints are kept with
# the source's contiguous strides, the resolved shape and its contiguous strides; a call
# whose source has exactly those strides skips the size checks and stride computation (and
# the data is NumPy's reshape as below). A size that hashes like a kept one but is spelled
# otherwise (True for 1) gets the kept plain-int shape, as the checks would give.
_VIEW_PLANS: dict[tuple[Any, Any], tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = {}


def view(self: Tensor, size: Any) -> Tensor:
    old_shape = self._shape
    shape = size if type(size) is tuple else tuple(size)
    plan = _VIEW_PLANS.get((old_shape, shape))
    if plan is not None and self._strides == plan[0]:
        data = self._data
        new_shape = plan[1]
        return self._make_view(
            new_shape,
            plan[2],
            self._offset,
            data.reshape(new_shape) if type(data) is _ndarray else None,
        )
    numel = prod(old_shape)
    total = prod(shape)
    # the common case inline; infer_size for a -1, a negative size or a mismatch (its errors)
    if total != numel or type(total) is not int or (shape and min(shape) < 0):
        shape = infer_size(size, numel)
    data = self._data
    stride: tuple[int, ...] | None
    contiguous = _CONTIGUOUS.get(old_shape)
    if contiguous is None:
        contiguous = _contiguous_of(old_shape)
    if self._strides == contiguous:
        # computeStride of a contiguous tensor: contiguous strides (Note [NumPy-derived
        # view data]: NumPy's reshape of the C-contiguous array has the same)
        stride = _CONTIGUOUS.get(shape)
        if stride is None:
            stride = _contiguous_of(shape)
        if (
            len(_VIEW_PLANS) < 4096
            and type(size) in (tuple, list)
            and all(type(s) is int for s in size)
            and all(type(s) is int for s in shape)
        ):  # Note [Views of contiguous tensors by plan]
            _VIEW_PLANS[old_shape, tuple(size)] = (contiguous, shape, stride)
        data = data.reshape(shape) if type(data) is _ndarray else None
    else:
        stride = compute_stride(old_shape, self._strides, shape)
        data = None
    if stride is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        )
    return self._make_view(shape, stride, self._offset, data)


def transpose(self: Tensor, dim0: int, dim1: int) -> Tensor:
    shape = self._shape
    ndim = len(shape)
    data = self._data
    if type(data) is not _ndarray:  # other payloads (lazy, meta): the backend's own view
        data = None
    if ndim == 2 and -2 <= dim0 < 2 and -2 <= dim1 < 2 and (dim0 - dim1) % 2:
        # a matrix and its two dims (either spelling): no lists
        strides = self._strides
        return self._make_view(
            (shape[1], shape[0]),
            (strides[1], strides[0]),
            self._offset,
            None if data is None else data.T,
        )
    d0, d1 = wrap_dim(dim0, ndim), wrap_dim(dim1, ndim)
    if not ndim or d0 == d1:
        return self._make_view(shape, self._strides, self._offset, data)
    new_shape, strides = list(shape), list(self._strides)
    new_shape[d0], new_shape[d1] = new_shape[d1], new_shape[d0]
    strides[d0], strides[d1] = strides[d1], strides[d0]
    if data is not None:  # Note [NumPy-derived view data]
        data = data.swapaxes(d0, d1)
    return self._make_view(tuple(new_shape), tuple(strides), self._offset, data)


def t(self: Tensor) -> Tensor:
    ndim = len(self._shape)
    if ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {ndim}D")
    return transpose(self, 0, 0 if ndim < 2 else 1)


def unsqueeze(self: Tensor, dim: int) -> Tensor:
    shape = self._shape
    ndim = len(shape)
    d = dim if 0 <= dim <= ndim else wrap_dim(dim, ndim + 1)
    strides = self._strides
    stride = 1 if d >= ndim else shape[d] * strides[d]
    new_shape = shape[:d] + (1,) + shape[d:]
    new_strides = strides[:d] + (stride,) + strides[d:]
    data = self._data
    contiguous = _CONTIGUOUS.get(shape)
    if contiguous is None:
        contiguous = _contiguous_of(shape)
    if type(data) is not _ndarray:
        data = None
    elif strides == contiguous:  # Note [NumPy-derived view data]
        data = data.reshape(new_shape)  # contiguous in, so NumPy's row-major strides out
    else:
        itemsize = data.itemsize
        data = strided_data(self, new_shape, tuple([s * itemsize for s in new_strides]))
    return self._make_view(new_shape, new_strides, self._offset, data)


def squeeze_dim(self: Tensor, dim: int) -> Tensor:
    ndim = len(self._shape)
    d = wrap_dim(dim, ndim)
    if ndim == 0 or self._shape[d] != 1:
        return self._make_view(self._shape, self._strides, self._offset)
    return self._make_view(
        self._shape[:d] + self._shape[d + 1 :], self._strides[:d] + self._strides[d + 1 :],
        self._offset,
    )  # fmt: skip


def select(self: Tensor, dim: int, index: int) -> Tensor:
    shape = self._shape
    ndim = len(shape)
    if ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = dim if 0 <= dim < ndim else wrap_dim(dim, ndim)
    size = shape[d]
    if not -size <= index < size:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size "
            f"{shape_text(shape)} at dimension {d}"
        )
    if index < 0:
        index += size
    strides = self._strides
    data = self._data
    if type(data) is _ndarray:  # Note [NumPy-derived view data]; `...` keeps 0-d arrays
        data = data[index, ...] if d == 0 else data[(_ALL,) * d + (index, ...)]
    else:
        data = None
    return self._make_view(
        shape[:d] + shape[d + 1 :],
        strides[:d] + strides[d + 1 :],
        self._offset + index * strides[d],
        data,
    )


def slice(self: Tensor, dim: int = 0, start: Any = None, end: Any = None, step: int = 1) -> Tensor:
    shape = self._shape
    ndim = len(shape)
    if ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    d = dim if 0 <= dim < ndim else wrap_dim(dim, ndim)
    size = shape[d]
    lo = 0 if start is None else start
    hi = _INT64_MAX if end is None else end
    if lo < 0:
        lo += size
    if hi < 0:
        hi += size
    lo = 0 if lo < 0 else (size if lo > size else lo)  # noqa: FURB136 - min() is a call
    hi = lo if hi < lo else (size if hi > size else hi)  # noqa: FURB136
    length = (hi - lo + step - 1) // step
    strides = self._strides
    stride = strides[d]
    data = self._data
    if type(data) is _ndarray:  # Note [NumPy-derived view data]
        part = builtins.slice(lo, lo + length * step, step) if length else _EMPTY
        data = data[part] if d == 0 else data[(_ALL,) * d + (part,)]
    else:
        data = None
    return self._make_view(
        shape[:d] + (length,) + shape[d + 1 :],
        strides if step == 1 else strides[:d] + (stride * step,) + strides[d + 1 :],
        self._offset + lo * stride,
        data,
    )


# c10's legacy Python type names, which its TensorImpl::toString prints for CPU tensors of
# these scalar types ("torch.FloatTensor"); any other tensor prints "<Device><Scalar>Type"
_LEGACY_CPU = frozenset({"Byte", "Char", "Short", "Int", "Long", "Half", "Float", "Double"})
_DEVICE_NAMES = {"cpu": "CPU", "meta": "Meta", "lazy": "Lazy"}


def _type_string(t: Tensor) -> str:
    """torch's name of ``t``'s type in its error texts (``expand(torch.FloatTensor{[2, 2]},
    ...)``, ``CPUBoolType``, ``MetaFloatType``)."""
    scalar = scalar_type_name(t.dtype)
    device = t.device.type
    if device == "cpu" and scalar in _LEGACY_CPU:
        return f"torch.{scalar}Tensor"
    return f"{_DEVICE_NAMES.get(device, device.capitalize())}{scalar}Type"


def _expand_plan(self: Tensor, size: Any) -> tuple[_Ints, _Ints, _Ints]:
    """expand's result shape, strides and byte strides (torch's inferExpandGeometry)."""
    sizes = [int(s) for s in size]
    shape, strides = self._shape, self._strides
    ndim, tdim = len(sizes), len(shape)
    lead = ndim - tdim  # the new leading dims
    if lead < 0:
        raise RuntimeError(
            f"expand({_type_string(self)}{{{shape_text(shape)}}}, size={shape_text(sizes)}): "
            f"the number of sizes provided ({ndim}) must be greater or equal to the number of "
            f"dimensions in the tensor ({tdim})"
        )
    out_shape = sizes[:]
    out_strides = [0] * ndim
    for d in range(tdim - 1, -1, -1):  # existing dims, last first (torch's error order)
        s, target = shape[d], sizes[lead + d]
        if target == s or target == -1:
            out_shape[lead + d] = s
            out_strides[lead + d] = strides[d]
        elif s != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({target}) must match the existing size "
                f"({s}) at non-singleton dimension {lead + d}.  Target sizes: "
                f"{shape_text(sizes)}.  Tensor sizes: {shape_text(shape)}"
            )
    if lead:
        for i in range(lead - 1, -1, -1):  # a new dim of size 1 strides like a contiguous one
            target = sizes[i]
            if target == -1:
                raise RuntimeError(
                    f"The expanded size of the tensor (-1) isn't allowed in a leading, "
                    f"non-existing dimension {i}"
                )
            if target == 1 and tdim:  # torch: every stride of an expanded 0-dim tensor is 0
                out_strides[i] = out_shape[i + 1] * out_strides[i + 1] if i + 1 < ndim else 1
    itemsize = self.dtype.itemsize
    return tuple(out_shape), tuple(out_strides), tuple([s * itemsize for s in out_strides])


# Note [Expand plans]
# expand's geometry is a function of the source's shape, strides and itemsize and the sizes
# asked for: the first 4096 geometries met with plain-int sizes keep their result shape,
# strides and byte strides, and a call with the same key skips the checks and the loop. A
# size that hashes and compares like a kept one (True for 1, a NumPy integer) converts to
# the same int, so its plan is the one the loop would give.
_EXPAND_PLANS: dict[tuple[Any, ...], tuple[_Ints, _Ints, _Ints]] = {}


def expand(self: Tensor, size: Any, *, implicit: bool = False) -> Tensor:
    key = (
        self._shape,
        self._strides,
        size if type(size) is tuple else tuple(size),
        self.dtype.itemsize,
    )
    try:
        plan = _EXPAND_PLANS.get(key)
    except TypeError:  # an unhashable size: the checks below say what is wrong with it
        plan = None
    if plan is None:
        plan = _expand_plan(self, size)
        if all(type(s) is int for s in key[2]):  # Note [Expand plans]
            if len(_EXPAND_PLANS) >= 4096:
                _EXPAND_PLANS.clear()
            _EXPAND_PLANS[key] = plan
    new_shape, new_strides, byte_strides = plan
    data = self._data
    if type(data) is _ndarray:  # Note [NumPy-derived view data]
        data = strided_data(self, new_shape, byte_strides)
    else:
        data = None
    return self._make_view(new_shape, new_strides, self._offset, data)


VIEW_KERNELS: dict[str, Any] = {
    "view": view,
    "transpose": transpose,
    "t": t,
    "unsqueeze": unsqueeze,
    "squeeze_dim": squeeze_dim,
    "select": select,
    "slice": slice,
    "expand": expand,
}
