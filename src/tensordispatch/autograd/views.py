"""In-place operations on views: rebasing history through CopySlices (torch's behaviour).

Owns what happens to the graph when an in-place op writes a tensor: a root simply gets the
op's node as its new grad_fn; a view's root gets a CopySlices node wrapping the op's node,
and the view gets AsStridedBackward0 over the root's new history. Must not register kernels.

Note [Views replay as strided]
torch records a view function per view (or falls back to as_strided). Our views always
share the root's storage and carry absolute sizes, strides and offset
(Note [Views share the root] in tensor.py), so a view of a root is fully described by its
geometry: CopySlices and AsStridedBackward0 rebuild "the view's elements of a
root-shaped gradient" from it, for views of views too. These two nodes compute with
NumPy-backed operations outside the graph, so double backward through an in-place write
on a view is not supported (torch supports it).
"""

from __future__ import annotations

from typing import Any

from tensordispatch.autograd.graph import Node, gradient_edge, meta_of
from tensordispatch.backends.aten import op
from tensordispatch.tensor import Tensor

__all__ = ["AsStridedBackward0", "CopySlices", "rebase_history"]

_empty_strided = op("empty_strided")
_zeros = op("zeros")


def _root_shaped(base: Tensor, grad: Tensor | None) -> Tensor:
    """A tensor with the root's shape, strides and offset-free storage, holding ``grad``
    (zeros if None)."""
    from tensordispatch.autograd.grad_mode import no_grad

    with no_grad():
        out = _empty_strided(list(base._shape), list(base._strides), dtype=base.dtype)
        if grad is None:
            out.fill_(0)
        else:
            out.copy_(grad)
    return out


def _view_of(t: Tensor, base: Tensor, geometry: tuple[Any, ...]) -> Tensor:
    shape, strides, offset = geometry
    return t._make_view(shape, strides, offset - base._offset + t._offset)


class CopySlices(Node):
    """The root's node after an in-place op on one of its views (torch's CopySlices)."""

    __slots__ = ("_base_meta", "fn", "geometry")

    def __init__(self, base: Tensor, view: Tensor, fn: Node) -> None:
        super().__init__()
        self.fn = fn
        self.geometry = (view._shape, view._strides, view._offset)
        self._base_meta = (base._shape, base._strides, base._offset, base.dtype)
        self.next_functions = (gradient_edge(base), *fn.next_functions[1:])
        self._input_meta = ((base._shape, base.dtype), *fn._input_meta[1:])

    def apply(self, grads: list[Tensor | None]) -> tuple[Tensor | None, ...]:
        from tensordispatch.autograd.grad_mode import no_grad

        shape, strides, offset, dtype = self._base_meta
        proto = Tensor._make_meta(shape, strides, dtype)
        proto._offset = offset
        result = _root_shaped(proto, grads[0])
        with no_grad():
            grad_slice = _view_of(result, proto, self.geometry)
            res = self.fn.apply([grad_slice.clone()])
            if res[0] is None:
                grad_slice.fill_(0)
            else:
                grad_slice.copy_(res[0])
        return (result, *res[1:])

    def release(self) -> None:
        self._released = True
        self.fn.release()


class AsStridedBackward0(Node):
    """A view's grad_fn after its root was rebased: scatter the gradient into the root."""

    __slots__ = ("_base_meta", "geometry")

    def __init__(self, base: Tensor, view: Tensor) -> None:
        super().__init__()
        self.geometry = (view._shape, view._strides, view._offset)
        self._base_meta = (base._shape, base._strides, base._offset, base.dtype)
        self.next_functions = (gradient_edge(base),)
        self._input_meta = ((base._shape, base.dtype),)

    def apply(self, grads: list[Tensor | None]) -> tuple[Tensor | None, ...]:
        from tensordispatch.autograd.grad_mode import no_grad

        shape, strides, offset, dtype = self._base_meta
        proto = Tensor._make_meta(shape, strides, dtype)
        proto._offset = offset
        result = _root_shaped(proto, None)
        with no_grad():
            _view_of(result, proto, self.geometry).copy_(grads[0])
        return (result,)


def rebase_history(self: Tensor, node: Node) -> None:
    """Make ``node`` the history of ``self`` after an in-place op (Note [Views replay as
    strided])."""
    base = self._base
    if base is None:
        m = meta_of(self)
        m.requires_grad = True
        m.grad_fn = node
        m.output_nr = 0
        return
    copy_slices = CopySlices(base, self, node)
    bm = meta_of(base)
    bm.requires_grad = True
    bm.grad_fn = copy_slices
    bm.output_nr = 0
    m = meta_of(self)
    m.requires_grad = True
    m.grad_fn = AsStridedBackward0(base, self)
    m.output_nr = 0
    m.view_version = self._version
