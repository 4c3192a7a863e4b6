"""Views that ``as_strided`` of their root cannot reproduce: other dtype, conjugate/negative bits.

Owns the history a view gets when its root was written in place (``view_history``) and the
dtype reinterpretation CopySlices needs for a view of another dtype than its root's (Note
[Views of another dtype]). Used by views.py and graph.py; must not register kernels.

Note [Replayed view history]
After an in-place write through a view or its root, torch regenerates the view's grad_fn
from the root's new history: ``as_strided`` (AsStridedBackward0) when the view is
``as_strided`` of its root, else the view's recorded view function replayed on the root,
so the grad_fn is that function's last node (ConjBackward0 for ``y.conj()``,
ViewAsRealBackward0 for ``view_as_real(y)``, AsStridedBackward0 over ViewAsRealBackward0
for ``y.imag``). Our views keep no view function, only geometry, dtype and math bits (Note
[Views replay as strided] in views.py), so ``view_history`` replays a canonical function
that rebuilds exactly those, on the root and with grad mode on, and takes the result's
grad_fn: from a complex root to a real view, ``view_as_real`` (after ``_conj`` when the root
is conjugate) then ``as_strided`` unless the geometry already matches; from a real root to a
complex view, ``as_strided`` to the view's real pairs unless they are the root, then
``view_as_complex``; for the same dtype, ``as_strided`` unless the geometry matches; then
``_neg_view`` and ``_conj`` for the bits that differ. Gradients and values are torch's; the
node names are torch's when the view was made by one such op of its root or of an
``as_strided``-able view (torch's order differs only for a strided view of a conj view:
AsStridedBackward0 over ConjBackward0 in torch, ConjBackward0 over AsStridedBackward0 here).

Note [Views of another dtype]
``view_as_real`` / ``real`` / ``imag`` of a complex root, and ``view_as_complex`` of a real
one, carry their geometry in elements of their own dtype, half or twice the root's itemsize.
CopySlices gives the in-place op's node the view's elements of the root-shaped gradient:
outside the graph it reinterprets the gradient's bytes directly (``_make_view`` with the
view's dtype, offsets converted through bytes); in the graph (create_graph) it reinterprets
the gradient's storage-ordered copy as a flat tensor of the view's dtype with
``view_as_real`` / ``view_as_complex`` (padded with zeros to whole complex elements) and
back, so double backward goes through those ops.
"""

from __future__ import annotations

from typing import Any

from tensordispatch.autograd.graph import Node
from tensordispatch.ops.deferred import deferred_op as _deferred_op
from tensordispatch.tensor import Tensor
from tensordispatch.tensor.values import _CONJ_RAW, _MATH_BITS_RAW, _NEG_RAW

__all__ = ["from_view_dtype", "reinterpreted_view", "to_view_dtype", "view_history"]

_as_strided = _deferred_op(globals(), "_as_strided", "as_strided")
_view_as_real = _deferred_op(globals(), "_view_as_real", "view_as_real")
_view_as_complex = _deferred_op(globals(), "_view_as_complex", "view_as_complex")
_conj = _deferred_op(globals(), "_conj", "_conj")
_neg_view = _deferred_op(globals(), "_neg_view", "_neg_view")
_zeros = _deferred_op(globals(), "_zeros", "zeros")
_cat = _deferred_op(globals(), "_cat", "cat")


def _geometry(t: Tensor) -> tuple[Any, ...]:
    return (tuple(t._shape), tuple(t._strides), t._offset)


def _strided(s: Tensor, shape: Any, strides: Any, offset: int) -> Tensor:
    if _geometry(s) == (tuple(shape), tuple(strides), offset):
        return s
    return _as_strided(s, list(shape), list(strides), offset)  # type: ignore[no-any-return]


def _replay(base: Tensor, view: Tensor) -> Tensor:
    """``view`` rebuilt from ``base`` by view operators (Note [Replayed view history])."""
    bits = (view._key_set ^ base._key_set) & _MATH_BITS_RAW
    s = base
    if view.dtype is not base.dtype:
        if base.dtype.is_complex:
            if bits & _CONJ_RAW:
                s = _conj(s)
                bits &= ~_CONJ_RAW
            s = _strided(_view_as_real(s), view._shape, view._strides, view._offset)
        else:
            pairs = ((*view._shape, 2), (*(2 * st for st in view._strides), 1))
            s = _view_as_complex(_strided(s, *pairs, 2 * view._offset))
    else:
        s = _strided(s, view._shape, view._strides, view._offset)
    if bits & _NEG_RAW:
        s = _neg_view(s)
    if bits & _CONJ_RAW and s.dtype.is_complex:
        s = _conj(s)
    return s


def view_history(base: Tensor, view: Tensor) -> Node:
    """``view``'s grad_fn over its root ``base``'s current history (Note [Replayed view
    history]): AsStridedBackward0 for a view that is ``as_strided`` of its root, else the
    last node of the replayed view operators.

    >>> import tensordispatch as td
    >>> y = td.tensor([1 + 2j, 3j], requires_grad=True).clone()
    >>> v = y.conj()
    >>> _ = v.mul_(2)
    >>> v.grad_fn.name(), view_history(y, y.imag).name()
    ('ConjBackward0', 'AsStridedBackward0')
    """
    from tensordispatch.autograd.views import AsStridedBackward0

    if view.dtype is base.dtype and not (view._key_set ^ base._key_set) & _MATH_BITS_RAW:
        return AsStridedBackward0(base, view)
    from tensordispatch.autograd.grad_mode import enable_grad

    with enable_grad():
        replayed = _replay(base, view)
    return replayed._autograd_meta.grad_fn  # type: ignore[union-attr,no-any-return]


def reinterpreted_view(t: Tensor, base: Tensor, geometry: tuple[Any, ...], dtype: Any) -> Tensor:
    """The view with ``geometry`` (in elements of ``dtype``, offset absolute as ``base``'s)
    of the fresh ``t`` laid out as ``base`` (Note [Views of another dtype])."""
    shape, strides, offset = geometry
    size = dtype.itemsize
    start = offset * size - (base._offset - t._offset) * t.dtype.itemsize
    if start % size:
        raise RuntimeError(
            f"CopySlices: a {dtype} view at byte {start} of its {t.dtype} root's storage does "
            f"not start at a whole element; write through a view aligned to {size} bytes"
        )
    return t._make_view(shape, strides, start // size, dtype=dtype)


def to_view_dtype(root: Tensor, dtype: Any, offset: int, base_offset: int) -> tuple[Any, ...]:
    """The fresh storage-ordered ``root`` as a flat tensor of the view's ``dtype``, with the
    view's storage ``offset`` made relative to it, and what ``from_view_dtype`` needs."""
    flat = root.reshape([-1])
    if root.dtype.is_complex:  # to real: twice the elements
        return _view_as_real(flat).reshape([-1]), offset - 2 * base_offset, (0, flat.numel())
    start = 2 * offset - base_offset  # in the root's elements; pad to whole complex elements
    front = start % 2
    back = (front + flat.numel()) % 2
    parts = [flat]
    if front:
        parts.insert(0, _zeros([1], dtype=root.dtype))
    if back:
        parts.append(_zeros([1], dtype=root.dtype))
    if len(parts) > 1:
        flat = _cat(parts)
    return _view_as_complex(flat.reshape([-1, 2])), (start + front) // 2, (front, root.numel())


def from_view_dtype(space: Tensor, root: Tensor, undo: tuple[int, int]) -> Tensor:
    """The inverse of ``to_view_dtype``: a tensor shaped and typed as ``root``."""
    front, n = undo
    if space.dtype.is_complex:
        flat = _view_as_real(space).reshape([-1])
        if front or flat.numel() != n:
            flat = flat[front : front + n]
        return flat.reshape(list(root._shape))
    return _view_as_complex(space.reshape([-1, 2])).reshape(list(root._shape))
