"""Shadow views: where each wrapper's elements sit inside its storage's base, so that an
unobserved in-place operator writes straight into a copy of the base instead of running
its functional variant and a chain of scatters and replays.

Owns the fast paths of Note [Skipping unobserved replays] (wrapper.py) for plain CPU inner
tensors: ``shadow_of`` / ``parent_shadow`` (a wrapper's real view of the base),
``write_target`` + ``commit_write`` (an in-place operator run on a copy of the base),
``regenerate_from_shadow`` (a stale wrapper's value from the current base) and
``dense_copy``. Must not choose operators: callers decide that nobody observes the calls
skipped here (``wrapper.unobserved``) and fall back to torch's algorithm whenever a function
here returns None / False.

Note [Shadow views]
A wrapper's view chain (only exact views: view, transpose, select, slice, diagonal, ...)
picks a fixed set of the base's elements. On a base of C-contiguous layout at storage offset
0 that set is one strided view of the base (sizes, strides, offset), the same whatever the
base's values, so it stays valid when a mutation replaces the base by a new tensor of the
same layout. The view kernel records it as ``w._shadow``, a ``Place`` (geometry only: no
reference to any base, so old bases are freed as in torch), found by running the view
operator on the parent's real view of the base, its shadow (under remove='mutations' the
shadow IS the wrapper's value; without views the value is a dense copy of the shadow:
``view_copy`` and friends return contiguous results). Chains with a view
that cannot be one strided view of the base (``view`` of a transposed shadow, ``expand``,
``as_strided``, ``unfold``, dtype-changing views, conjugate / negative views, in-place
views) or taken in both modes get
no shadow and take the general path. With a shadow:
* an in-place operator on the wrapper (``mul_``, ``copy_``, ``zero_`` ...) runs on the view
  at the shadow's geometry of a fresh copy of the base (same layout), which then becomes
  the base: what the functional variant followed by the scatter chain (or one
  ``as_strided_scatter``) returns, without the functional result, the forward replay, the
  scatters and the replay of the mutated wrapper. Nothing aliases the fresh copy, so every
  argument (an alias of the written tensor included) is read as it was, as the functional
  variant reads it; the operator's own checks (broadcast, dtype) raise before anything
  changes. Operators drawing random numbers are left out (their order over a strided
  target is not promised to be the functional variant's);
* a stale wrapper's value is the shadow over the new base (remove='mutations': what the
  replay of its views returns) or a dense copy of it (its ``*_copy`` replay),
  ``regenerate_from_shadow``.
Values, sizes, strides and offsets are those of torch's algorithm; only the operators
reaching the layers below differ, which is why this only runs unobserved (plain CPU inner
tensors, no dispatch mode, nothing requiring grad).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from tensordispatch.tensor.geometry import contiguous_of as _contiguous
from tensordispatch.tensor.tensor import Tensor, new_cpu_tensor
from tensordispatch.tensor.values import _MATH_BITS_RAW, resolved_values

if TYPE_CHECKING:
    from tensordispatch.transforms.functionalize.wrapper import FunctionalTensor

__all__ = [
    "Place",
    "commit_write",
    "dense_copy",
    "parent_shadow",
    "place_of",
    "regenerate_from_shadow",
    "shadow_of",
    "write_target",
]

_ndarray = np.ndarray


def dense_copy(t: Tensor) -> Tensor:
    """A contiguous copy of a NumPy-backed CPU tensor (what ``clone`` with
    contiguous_format returns for it, without dispatching).

    >>> import tensordispatch as td
    >>> c = dense_copy(td.arange(6.0).view(2, 3).t()); c.stride(), c.tolist()
    ((2, 1), [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]])
    """
    shape = t._shape
    data = t._data
    if t._key_set & _MATH_BITS_RAW:  # a conjugate / negative view: its values, resolved
        data = resolved_values(data, t._key_set)
    return new_cpu_tensor(np.array(data, order="C", copy=True), shape, _contiguous(shape), t.dtype)


# Where a wrapper's elements sit in its base (Note [Shadow views]): sizes, strides and
# storage offset in elements, and the NumPy byte strides of that view.
Place = tuple[tuple[int, ...], tuple[int, ...], int, tuple[int, ...]]


def place_of(view: Tensor) -> Place:
    """The place of ``view``, a real CPU view of a dense base."""
    return (view._shape, view._strides, view._offset, view._data.strides)


def _dense_base(base: Tensor) -> bool:
    """Whether ``base`` has the layout shadows are recorded against (Note [Shadow views])."""
    return (
        base._offset == 0
        and base._data.__class__ is _ndarray
        and base._strides == _contiguous(base._shape)
    )


def _usable_base(storage: Any) -> Tensor | None:
    """The storage's base when shadows apply to it (dense, not requiring grad), else None."""
    base: Tensor = storage.base
    if storage.dense is not base:
        if not _dense_base(base):
            return None
        storage.dense = base
    return None if base._autograd_meta is not None else base


def _array_at(base: Tensor, place: Place) -> Any:
    """The NumPy view of ``base``'s memory at ``place`` (a non-empty place recorded against
    a base of the same layout, so it is in bounds)."""
    array = base._data
    if base._base is not None or not array.flags.c_contiguous:
        array = base._storage_bytes()  # base starts at offset 0 of its root's storage
    item = base._data.itemsize
    return _ndarray(place[0], base._data.dtype, array, place[2] * item, place[3])


def _view_at(base: Tensor, place: Place) -> Tensor:
    """A real view of ``base`` at ``place``."""
    shape, strides, offset, _ = place
    if 0 in shape:
        return base._make_view(shape, strides, offset)
    return base._make_view(shape, strides, offset, _array_at(base, place))


def _holds(data: Tensor, place: Place, base: Tensor) -> bool:
    """Whether ``data`` is the real view of ``base`` at ``place``."""
    return (
        data._base is (base if base._base is None else base._base)
        and data._offset == place[2]
        and data._shape == place[0]
        and data._strides == place[1]
    )


def shadow_of(w: FunctionalTensor) -> Tensor | None:
    """A real view of ``w``'s storage's current base at ``w``'s place (Note [Shadow
    views]), or None.

    >>> import tensordispatch as td
    >>> from tensordispatch.transforms.functionalize import to_functional
    >>> x = to_functional(td.arange(6.0))
    >>> s = shadow_of(x.view(2, 3).t()); s.shape, s.stride(), s._base is x._data
    (tensordispatch.Size([3, 2]), (1, 3), True)
    """
    base = _usable_base(w._fstorage)
    if base is None or not w._view_metas:
        return base
    place = w._shadow
    if place is None:
        return None
    data = w._data
    return data if _holds(data, place, base) else _view_at(base, place)


def parent_shadow(w: FunctionalTensor, reapply: bool) -> Tensor | None:
    """The real view of the base a view of an up-to-date ``w`` is taken from, in mode
    ``reapply``, or None (the view kernel's general path). Under remove='mutations' it is
    ``w``'s value itself, so the view equals the one the general path takes."""
    storage = w._fstorage
    base = storage.base
    if storage.dense is not base and _usable_base(storage) is None:
        return None
    data = w._data
    if base._autograd_meta is not None or data._autograd_meta is not None:
        return None
    metas = w._view_metas
    if not metas:
        return base if not reapply or data is base else None
    place = w._shadow
    if place is None or metas[0].reapply_views is not reapply:
        return None
    if reapply:
        return data if _holds(data, place, base) else None
    return _view_at(base, place)


def write_target(w: FunctionalTensor) -> tuple[Tensor, Tensor] | None:
    """Note [Shadow views], writing through: for an in-place operator on an up-to-date ``w``,
    ``(target, new_base)``: a copy of the base (same layout) and ``target``, the view of it
    at ``w``'s place (the copy itself when ``w`` is the base). Running the in-place
    operator on ``target`` makes ``new_base`` what torch's scatters would return, and
    ``target`` holds ``w``'s new value; ``commit_write`` then publishes it. None when this
    does not apply (the caller runs the general algorithm); nothing is changed either way.
    Nothing can alias the fresh copy, so the operator reads every argument as it was."""
    storage = w._fstorage
    if storage.updates or storage.frozen:
        return None
    metas = w._view_metas
    place = w._shadow
    if metas and (place is None or 0 in place[0]):
        return None
    base = _usable_base(storage)
    if base is None:
        return None
    array = base._data.copy()
    new_base = new_cpu_tensor(array, base._shape, base._strides, base.dtype)
    if not metas:
        return new_base, new_base
    shape, strides, offset, byte_strides = place  # type: ignore[misc]
    target = _ndarray(shape, array.dtype, array, offset * array.itemsize, byte_strides)
    return new_base._make_view(shape, strides, offset, target), new_base


def commit_write(w: FunctionalTensor, target: Tensor, new_base: Tensor) -> None:
    """Publish a write made through ``write_target``: ``new_base`` becomes the storage's
    base, ``w`` is up to date (its value the view at its place under remove='mutations', a
    dense copy of it without views: ``*_copy`` replays are contiguous), every alias is
    stale. ``w``'s place does not change."""
    storage = w._fstorage
    storage.base = storage.dense = new_base
    storage.mutations += 1
    storage.generation += 1
    metas = w._view_metas
    if not metas:
        _set_value(w, new_base)
    elif metas[0].reapply_views:
        _set_value(w, target)
    else:
        _set_value(w, dense_copy(target))
    w._generation = storage.generation


def _set_value(w: FunctionalTensor, new: Tensor) -> None:
    """``replace_(w, new, from_regenerate=True)`` for a value of ``w``'s dtype."""
    w._data = new
    w._shape = new._shape
    w._strides = new._strides
    w._offset = new._offset


def regenerate_from_shadow(w: FunctionalTensor) -> bool:
    """Note [Shadow views]: bring a stale ``w`` (no pending updates) up to date from its
    place in the current base. Whether it did."""
    base = _usable_base(w._fstorage)
    place = w._shadow
    if base is None or place is None or base.dtype is not w.dtype or 0 in place[0]:
        return False
    if w._view_metas[0].reapply_views:
        _set_value(w, _view_at(base, place))
    else:
        shape = place[0]
        value = _array_at(base, place).copy()
        _set_value(w, new_cpu_tensor(value, shape, _contiguous(shape), base.dtype))
    w._generation = w._fstorage.generation
    return True
