"""``Tensor.__getitem__`` / ``__setitem__``: torch's Python indexing over the operators.

Installed on Tensor by the generated methods module (codegen/model.py PYTHON_METHODS).

Note [Indexing: basic then advanced]
Like torch (not NumPy), the index is applied left to right: an int selects (``select.int``,
dim removed), a slice slices (``slice.Tensor``, any positive step), None inserts a dim
(``unsqueeze``), Ellipsis skips the dims the rest does not name, a Python bool is a
one-element mask on a new dim. Those give a view of the same storage. Tensor (and list)
indices are collected at the dims they stand for and applied last by ``index.Tensor``
(a copy); assignment to such an index goes through ``index_put_``. So ``x[0, :, [1, 2]]``
has shape (3, 2) for x of shape (2, 3, 4), where NumPy gives (2, 3). In a tuple key, a
slice covering its whole dim (``:``, ``0:``, ``::1``, ``0:big``) is skipped, so ``x[:, 1]`` is
one ``select.int``; a lone slice (``x[:]``) always slices; a key that leaves ``self`` as it is
(``x[...]``, ``x[:, :]``) gives ``alias``: the same operators torch's indexing emits.
"""

from __future__ import annotations

from typing import Any

from tensordispatch.backends.aten import op
from tensordispatch.ops.indexing_advanced import advanced_assign, advanced_index
from tensordispatch.ops.indexing_fast import assign, basic_view, plain_cpu
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.tensor import Tensor

__all__ = ["getitem", "setitem"]

_MASKS = (_dt.bool, _dt.uint8)


def _as_tuple(key: Any) -> tuple[Any, ...]:
    if isinstance(key, tuple):
        return key
    return (key,)


def _to_tensor(item: Any) -> Tensor:
    from tensordispatch.tensor import tensor

    t = tensor(item)
    if t.numel() == 0:
        return tensor(item, dtype=_dt.int64)
    return t


def _consumed(item: Any) -> int:
    if item is None or item is Ellipsis or isinstance(item, bool):
        return 0
    if isinstance(item, Tensor) and item.dtype in _MASKS:
        return item.dim()
    return 1


def _check_item(item: Any) -> Any:
    if isinstance(item, (list, tuple)):
        return _to_tensor(item)
    if isinstance(item, Tensor) and item.dim() == 0:
        if item.dtype is _dt.bool:
            return bool(item.item())
        if not (item.dtype.is_floating_point or item.dtype.is_complex):
            return int(item.item())  # torch selects with a 0-dim integer tensor (a view)
    if isinstance(item, (int, slice, Tensor)) or item is None or item is Ellipsis:
        return item
    if hasattr(item, "__index__"):
        return item.__index__()
    raise IndexError(
        "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
        f"valid indices (got {type(item).__name__})"
    )


def _select(result: Tensor, dim: int, index: int, position: int) -> Tensor:
    """``select.int`` at ``dim``; torch's message names the item's ``position`` in the key
    (``x[..., 5]`` on a 3-d x: "dimension 1"), not ``dim``."""
    # after two Ellipses dim may pass the end, where torch reads sizes out of bounds
    # (undefined); we report size 0
    size = result._shape[dim] if dim < len(result._shape) else 0
    if not -size <= index < size:
        raise IndexError(
            f"index {index} is out of bounds for dimension {position} with size {size}"
        )
    return op("select.int")(result, dim, index)  # type: ignore[no-any-return]


def _slice(result: Tensor, dim: int, item: slice) -> Tensor:
    step = 1 if item.step is None else int(item.step)
    if step <= 0:
        raise ValueError("step must be greater than zero")
    start = None if item.start is None else int(item.start)
    stop = None if item.stop is None else int(item.stop)
    return op("slice.Tensor")(result, dim, start, stop, step)  # type: ignore[no-any-return]


def _covers(item: slice, size: int) -> bool:
    """Whether a slice of a tuple key is skipped as torch skips it: start 0 (or None), step 1
    (or None), stop None or at least the size; ``-size:`` is not normalised, so it slices."""
    start, stop, step = item.start, item.stop, item.step
    return (
        (start is None or (type(start) is int and start == 0))
        and (step is None or (type(step) is int and step == 1))
        and (stop is None or (type(stop) is int and stop >= size))
    )


def _apply(self: Tensor, key: Any) -> tuple[Tensor, list[Tensor | None]]:
    """The view after the basic indices and the tensor indices left to apply
    (Note [Indexing: basic then advanced])."""
    items: list[Any] = []
    named = 0
    for k in _as_tuple(key):  # ints and slices (the common items) without calls
        t = type(k)
        if t is int or t is slice:
            named += 1
        elif k is not None and k is not Ellipsis:
            k = _check_item(k)
            named += _consumed(k)
        items.append(k)
    if named > self.dim():
        raise IndexError(f"too many indices for tensor of dimension {self.dim()}")
    result, dim = self, 0
    tuple_key = isinstance(key, tuple)  # a lone slice is always sliced, as in torch
    indices: list[Tensor | None] = []
    for position, item in enumerate(items):
        if item is Ellipsis:  # each one skips the dims the key does not name, as in torch
            skip = self.dim() - named
            dim += skip
            indices += [None] * skip
        elif isinstance(item, bool):
            result = op("unsqueeze")(result, dim)
            indices.append(_to_tensor([item]))
            dim += 1
        elif isinstance(item, int):
            result = _select(result, dim, item, position)
        elif isinstance(item, slice):
            size = result._shape[dim] if dim < len(result._shape) else 0  # see _select
            if not (tuple_key and _covers(item, size)):
                result = _slice(result, dim, item)
            indices.append(None)
            dim += 1
        elif item is None:
            result = op("unsqueeze")(result, dim)
            indices.append(None)
            dim += 1
        else:
            indices.append(item)
            dim += _consumed(item)
            indices += [None] * (_consumed(item) - 1)
    while indices and indices[-1] is None:
        indices.pop()
    return result, indices


def _pad_masks(indices: list[Tensor | None]) -> list[Tensor | None]:
    """One entry per dim a mask covers is what _apply recorded; index.Tensor wants the mask
    once, so drop the placeholder entries after each multi-dim mask."""
    out: list[Tensor | None] = []
    skip = 0
    for t in indices:
        if skip:
            skip -= 1
            continue
        out.append(t)
        if t is not None and t.dtype in _MASKS and t.dim() > 1:
            skip = t.dim() - 1
    return out


def getitem(self: Tensor, key: Any) -> Tensor:
    """``self[key]``: a view for ints, slices, None and Ellipsis; a copy through
    ``index.Tensor`` when the key has tensors, lists or bools.

    >>> import tensordispatch as td
    >>> x = td.tensor([[0, 1, 2], [3, 4, 5]])
    >>> x[1], x[:, ::2]._base is x, x[None, ..., 1].shape, x[x > 3]
    (tensor([3, 4, 5]), True, tensordispatch.Size([1, 2]), tensor([4, 5]))
    """
    if plain_cpu(self):  # Notes [Basic indexing in one hop], [Advanced indexing in one hop]
        fast = basic_view(self, key)
        if fast is None:
            fast = advanced_index(self, key)
        if fast is not None:
            return fast
    if self._shape:  # a lone int or slice: the one operator, without _apply's bookkeeping
        if type(key) is int:
            return _select(self, 0, key, 0)
        if type(key) is slice:
            return _slice(self, 0, key)
    result, indices = _apply(self, key)
    if indices:
        return op("index.Tensor")(result, _pad_masks(indices))  # type: ignore[no-any-return]
    if result is self:
        return op("alias")(self)  # type: ignore[no-any-return]
    return result


def _value_tensor(self: Tensor, value: Any) -> Tensor:
    if isinstance(value, Tensor):
        return value  # index_put_ requires self's dtype, as torch's assignment does
    from tensordispatch.tensor import tensor

    return tensor(value, dtype=self.dtype, device=self.device)


def _leading_ones(sizes: tuple[int, ...]) -> int:
    lead = 0
    while lead < len(sizes) and sizes[lead] == 1:
        lead += 1
    return lead


def _copy_value(result: Tensor, value: Tensor) -> None:
    """torch's assignment of a tensor (its copy_to): ``copy_`` when the shapes are equal;
    a 0-dim CPU value is a fill (torch's ``fill_.Tensor``, which we do not have: ``copy_``
    broadcasts it alike); else ``view`` without the value's leading size-1 dims, ``expand``
    to the target's shape if that differs (its message for a value that does not fit) and
    ``copy_``."""
    if value._shape != result._shape and (value._shape or value.device.type != "cpu"):
        value = op("view")(value, list(value._shape[_leading_ones(value._shape) :]))
        if value._shape != result._shape:
            value = op("expand")(value, list(result._shape))
    op("copy_")(result, value)


def setitem(self: Tensor, key: Any, value: Any) -> None:
    """``self[key] = value``: ``copy_``/``fill_`` into the view, or ``index_put_`` when the
    key has tensors.

    >>> import tensordispatch as td
    >>> x = td.zeros(2, 3); x[0, 1:] = 5; x[x == 0] = td.tensor(1.0); x.tolist()
    [[1.0, 5.0, 5.0], [1.0, 1.0, 1.0]]
    """
    if plain_cpu(self):  # Notes [Assignment in one hop], [Advanced indexing in one hop]
        t = type(key)
        if t is Tensor or t is list:  # never basic: straight to the advanced one
            if advanced_assign(self, key, value):
                return
        elif assign(self, key, value) or advanced_assign(self, key, value):
            return
    result, indices = _apply(self, key)
    if indices:
        values = _value_tensor(self, value)
        lead = _leading_ones(values._shape)
        if lead:  # torch views the value without them, as for basic keys
            values = op("view")(values, list(values._shape[lead:]))
        op("index_put_")(result, _pad_masks(indices), values)
        return
    if isinstance(value, Tensor):
        _copy_value(result, value)
    else:
        op("fill_.Scalar")(result, value)
