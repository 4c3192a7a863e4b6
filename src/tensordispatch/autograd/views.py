"""In-place operations on views: rebasing history through CopySlices (torch's behaviour).

Owns what happens to the graph when an in-place op writes a tensor: a root simply gets the
op's node as its new grad_fn; a view's root gets a CopySlices node wrapping the op's node,
and the view gets AsStridedBackward0 over the root's new history. Must not register kernels.

Note [Views replay as strided]
torch records a view function per view (or falls back to as_strided). Our views always
share the root's storage and carry absolute sizes, strides and offset
(Note [Views share the root] in tensor.py), so a view of a root is fully described by its
geometry: CopySlices and AsStridedBackward0 rebuild "the view's elements of a
root-shaped gradient" from it, for views of views too. When the graph records
(create_graph), they compute with ``as_strided`` / ``as_strided_scatter`` on a fresh tensor
laid out as the root's storage (``_to_storage``: the gradient permuted into the root's
storage order and made contiguous, or for a root with gaps scattered into a flat span), so
double backward goes through them; otherwise they compute outside the graph. Only a root
that overlaps itself (a zero stride) computes outside the graph then; torch forbids
writing such a tensor in place anyway.

Note [View creation meta]
torch forbids an in-place write, with grad mode on and an operand requiring grad, to a view
whose history autograd cannot rebase safely, and records why when the view is made (its
CreationMeta): made in no_grad mode (NO_GRAD_MODE), one of several views returned by one op
(split, unbind: MULTI_OUTPUT_NODE), returned by a custom Function (IN_CUSTOM_FUNCTION).
A view of such a view inherits it (torch's propagate_creation_meta). We store it as
``TensorMeta.creation_meta`` only when it is not DEFAULT: the autograd kernels of view ops
call ``mark_view`` after computing a view without recording it, or after recording one from
a marked view; recorded multi-output views carry ``multi_output_of`` instead (kernels_general).
A view made in no_grad mode reports ``requires_grad`` of its root, as torch's views do (Note
[Views follow their root's requires_grad] in view_follow.py). Its grad accumulator is a
``NoGradViewSink``, which raises torch's "base was modified" error once the storage was
written in place since the view was made (when the view is used in a recorded computation or
its grad_fn read, where torch regenerates the view's grad_fn and refuses).
``check_view_inplace`` raises torch's message at the write, or when a view's stale grad_fn
is regenerated after a write through its root or another view (``indirect``). Views of
normal tensors made inside ``inference_mode`` (INFERENCE_MODE) are treated like those made
in no_grad mode, with torch's inference-mode messages; as that mode excludes the autograd
keys, no autograd kernel sees them: ``Tensor._make_view`` calls ``mark_inference_mode_view``
through the hook of tensor/inference.py. INFERENCE_MODE sticks: a view of such a view keeps
it whatever mode it is made in (torch's propagate_creation_meta). Note [Views follow their
root's requires_grad] (view_follow.py): a view's flag follows its root's when the root's
changes.
"""

from __future__ import annotations

import re
import weakref
from typing import Any

from tensordispatch.autograd.graph import (
    NO_ACCUMULATOR,
    Node,
    TensorMeta,
    gradient_edge,
    meta_of,
)
from tensordispatch.autograd.view_replay import (
    from_view_dtype,
    reinterpreted_view,
    to_view_dtype,
    view_history,
)
from tensordispatch.dispatch.tls import local_state
from tensordispatch.ops.deferred import deferred_op as _deferred_op
from tensordispatch.tensor import Tensor
from tensordispatch.tensor.inference import set_inference_view_hook
from tensordispatch.tensor.values import _CONJ_RAW, _MATH_BITS_RAW, _NEG_RAW

__all__ = [
    "DEFAULT",
    "DETACHED",
    "INFERENCE_MODE",
    "IN_CUSTOM_FUNCTION",
    "MULTI_OUTPUT_NODE",
    "NO_GRAD_MODE",
    "AsStridedBackward0",
    "CopySlices",
    "NoGradViewSink",
    "check_view_inplace",
    "differentiable_base",
    "mark_inference_mode_view",
    "mark_view",
    "rebase_history",
]

# torch's CreationMeta values (Note [View creation meta]).
DEFAULT, IN_CUSTOM_FUNCTION, MULTI_OUTPUT_NODE, NO_GRAD_MODE, INFERENCE_MODE = range(5)
# Ours: ``detach()`` of a view (and views made from it) share the root's storage, so they
# keep ``_base`` (Note [Views share the root]), but autograd treats them as no view, as
# torch's non-differentiable views: an in-place write gives them their own history.
DETACHED = -1
_ST = local_state()

_empty_strided = _deferred_op(globals(), "_empty_strided", "empty_strided")
_zeros = _deferred_op(globals(), "_zeros", "zeros")
_as_strided = _deferred_op(globals(), "_as_strided", "as_strided")
_as_strided_scatter = _deferred_op(globals(), "_as_strided_scatter", "as_strided_scatter")


def _contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def _storage_order(shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, ...] | None:
    """The dims of a dense root in storage order (outermost first): the root is then a
    contiguous tensor of the shape in that order, permuted. None for a root with gaps or
    overlaps. Dims of size 1 may have any stride."""
    order = tuple(sorted(range(len(shape)), key=lambda d: (-strides[d], d)))
    expected = _contiguous_strides(tuple(shape[d] for d in order))
    for d, e in zip(order, expected, strict=True):
        if shape[d] != 1 and strides[d] != e:
            return None
    return order


def _recording(base_meta: tuple[Any, ...]) -> tuple[int, ...] | int | None:
    """How to compute in the graph (Note [Views replay as strided]): the dense root's
    storage order, or for a root with gaps the length of its storage span; None when grad
    mode is off or the root overlaps itself."""
    from tensordispatch.autograd.grad_mode import is_grad_enabled

    if not is_grad_enabled():
        return None
    shape, strides, _, _ = base_meta
    order = _storage_order(tuple(shape), tuple(strides))
    if order is not None:
        return order
    if any(s == 0 and n > 1 for n, s in zip(shape, strides, strict=True)):
        return None
    return 1 + sum((n - 1) * s for n, s in zip(shape, strides, strict=True))


def _to_storage(grad: Tensor, plan: tuple[int, ...] | int, base_meta: tuple[Any, ...]) -> Tensor:
    """``grad`` (root-shaped) as a fresh tensor at storage offset 0 whose elements sit where
    the root keeps them, so the view's geometry relative to the root indexes it directly."""
    if isinstance(plan, int):  # a root with gaps: a flat storage span, zeros in the gaps
        shape, strides = list(base_meta[0]), list(base_meta[1])
        return _as_strided_scatter(_zeros([plan], dtype=grad.dtype), grad, shape, strides, 0)
    if plan != tuple(range(len(plan))):
        grad = grad.permute(list(plan))
    from tensordispatch.backends.common import contiguous_format

    return grad.clone(memory_format=contiguous_format)


def _from_storage(t: Tensor, plan: tuple[int, ...] | int, base_meta: tuple[Any, ...]) -> Tensor:
    """The root-shaped gradient held by ``t`` (the inverse of ``_to_storage``)."""
    if isinstance(plan, int):
        return _as_strided(t, list(base_meta[0]), list(base_meta[1]), 0)
    if plan == tuple(range(len(plan))):
        return t
    return t.permute(sorted(range(len(plan)), key=plan.__getitem__))


def _storage_zeros(plan: tuple[int, ...] | int, base_meta: tuple[Any, ...], dtype: Any) -> Tensor:
    if isinstance(plan, int):
        return _zeros([plan], dtype=dtype)
    return _zeros([base_meta[0][d] for d in plan], dtype=dtype)


def _relative(geometry: tuple[Any, ...], base_meta: tuple[Any, ...]) -> tuple[Any, ...]:
    shape, strides, offset = geometry
    return list(shape), list(strides), offset - base_meta[2]


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


def _math_bits(view: Tensor, base: Tensor) -> int:
    """The conjugate / negative bits the view adds to its root's values (Note [The conjugate
    and negative bits] in ops/decompositions_conj.py): the view is bits(as_strided(root))."""
    return (view._key_set ^ base._key_set) & _MATH_BITS_RAW  # type: ignore[no-any-return]


def _through_bits(grad: Tensor | None, bits: int) -> Tensor | None:
    """A gradient through the bits' views (ConjBackward0: conj; NegViewBackward0: neg)."""
    if grad is None or not bits:
        return grad
    if bits & _CONJ_RAW and grad.dtype.is_complex:
        grad = grad.conj_physical()
    if bits & _NEG_RAW:
        grad = grad.neg()
    return grad


class CopySlices(Node):
    """The root's node after an in-place op on one of its views (torch's CopySlices)."""

    __slots__ = ("_base_meta", "bits", "fn", "geometry", "view_dtype")

    def __init__(self, base: Tensor, view: Tensor, fn: Node) -> None:
        super().__init__()
        self.fn = fn
        self.bits = _math_bits(view, base)
        self.geometry = (view._shape, view._strides, view._offset)
        # Note [Views of another dtype] in view_replay.py: real / imag / view_as_real ...
        self.view_dtype = None if view.dtype is base.dtype else view.dtype
        self._base_meta = (base._shape, base._strides, base._offset, base.dtype)
        self.next_functions = (gradient_edge(base), *fn.next_functions[1:])
        self._input_meta = ((base._shape, base.dtype), *fn._input_meta[1:])

    def apply(self, grads: list[Tensor | None]) -> tuple[Tensor | None, ...]:
        from tensordispatch.autograd.grad_mode import no_grad

        order = None if grads[0] is None else _recording(self._base_meta)
        if order is not None:
            return self._apply_recorded(grads[0], order)  # type: ignore[arg-type]
        shape, strides, offset, dtype = self._base_meta
        proto = Tensor._make_meta(shape, strides, dtype)
        proto._offset = offset
        result = _root_shaped(proto, grads[0])
        with no_grad():
            if self.view_dtype is None:
                grad_slice = _view_of(result, proto, self.geometry)
            else:
                grad_slice = reinterpreted_view(result, proto, self.geometry, self.view_dtype)
            res = self.fn.apply([_through_bits(grad_slice.clone(), self.bits)])
            if res[0] is None:
                grad_slice.fill_(0)
            else:
                grad_slice.copy_(_through_bits(res[0], self.bits))
        return (result, *res[1:])

    def _apply_recorded(
        self, grad: Tensor, plan: tuple[int, ...] | int
    ) -> tuple[Tensor | None, ...]:
        meta = self._base_meta
        size, stride, offset = _relative(self.geometry, meta)
        root = space = _to_storage(grad.reshape(list(meta[0])), plan, meta)
        if self.view_dtype is not None:  # Note [Views of another dtype] in view_replay.py
            space, offset, undo = to_view_dtype(root, self.view_dtype, offset + meta[2], meta[2])
        res = self.fn.apply([_through_bits(_as_strided(space, size, stride, offset), self.bits)])
        dtype = space.dtype
        src = res[0] if res[0] is not None else _zeros(size, dtype=dtype)
        src = _through_bits(src, self.bits)
        # root outside the view + src inside it, written so that the derivative never goes
        # through as_strided_scatter's self formula (torch's keeps the slice)
        from tensordispatch.autograd.grad_mode import no_grad

        with no_grad():
            zeros = _zeros(list(space._shape), dtype=dtype)
            outside = _as_strided_scatter(zeros + 1, _zeros(size, dtype=dtype), size, stride,
                                          offset)  # fmt: skip
        space = space * outside + _as_strided_scatter(zeros, src, size, stride, offset)
        if self.view_dtype is not None:
            space = from_view_dtype(space, root, undo)
        return (_from_storage(space, plan, meta), *res[1:])

    def release(self) -> None:
        self._released = True
        self.fn.release()


class AsStridedBackward0(Node):
    """A view's grad_fn after its root was rebased: scatter the gradient into the root. Only
    for a view that is ``as_strided`` of its root (Note [Replayed view history])."""

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
        order = None if grads[0] is None else _recording(self._base_meta)
        if order is not None:
            size, stride, rel = _relative(self.geometry, self._base_meta)
            zeros = _storage_zeros(order, self._base_meta, grads[0].dtype)  # type: ignore[union-attr]
            scattered = _as_strided_scatter(zeros, grads[0], size, stride, rel)
            return (_from_storage(scattered, order, self._base_meta),)
        proto = Tensor._make_meta(shape, strides, dtype)
        proto._offset = offset
        result = _root_shaped(proto, None)
        with no_grad():
            _view_of(result, proto, self.geometry).copy_(grads[0])
        return (result,)


def differentiable_base(t: Tensor) -> Tensor | None:
    """The root ``t`` is a view of for autograd: None for a root or a detached view.

    >>> import tensordispatch as td
    >>> x = td.ones(3)
    >>> differentiable_base(x[1:]) is x, differentiable_base(x[1:].detach())
    (True, None)
    """
    base = t._base
    if base is not None and _creation_meta(t._autograd_meta) == DETACHED:
        return None
    return base


# Out-of-place view operators with in-place variants that change only the metadata
# (t_, transpose_, unsqueeze_, squeeze_, as_strided_, swapdims_, swapaxes_).
_VIEW_OPS = frozenset(
    {"t", "transpose", "unsqueeze", "squeeze", "as_strided", "swapdims", "swapaxes"}
)


def _changes_view_only(node: Node) -> bool:
    """Whether ``node`` records an in-place op whose out-of-place form is a view op: it
    rewrites the tensor's geometry, not the data its base sees (torchgen sets the history
    of such ops instead of rebasing it)."""
    info = getattr(type(node), "info", None)
    if info is None:
        return False
    name = info.schema.name.name
    return bool(name.inplace) and name.base in _VIEW_OPS


def rebase_history(self: Tensor, node: Node) -> None:
    """Make ``node`` the history of ``self`` after an in-place op (Note [Views replay as
    strided]). An op changing only a view's metadata (``v.t_()``) gives the view ``node``
    and leaves its base's history alone, as torch's."""
    base = differentiable_base(self)
    if base is not None and _changes_view_only(node):
        m = meta_of(self)
        m.requires_grad = True
        m.grad_fn = node
        m.output_nr = 0
        m.view_version = self._version  # the history is current for this version
        return
    if base is None:
        m = meta_of(self)
        was = m.requires_grad
        m.requires_grad = True
        m.grad_fn = node
        m.output_nr = 0
        if not was and self._vc is not None:
            _view_follow.follow_root(self, True)
        return
    copy_slices = CopySlices(base, self, node)
    bm = meta_of(base)
    was = bm.requires_grad
    bm.requires_grad = True
    bm.grad_fn = copy_slices
    bm.output_nr = 0
    m = meta_of(self)
    m.requires_grad = True
    m.grad_fn = view_history(base, self)
    m.output_nr = 0
    m.grad_accumulator = None  # a following view's sink (view_follow.py)
    m.view_version = self._version
    if not was:
        _view_follow.follow_root(base, True)


def _creation_meta(m: object) -> int:
    if type(m) is not TensorMeta:
        return DEFAULT
    cm: int = getattr(m, "creation_meta", DEFAULT)
    if cm == DEFAULT and m.multi_output_of is not None:
        return MULTI_OUTPUT_NODE
    return cm


def mark_view(result: object, source: object, many: bool = False) -> None:
    """The creation meta of a view op's output(s) ``result`` made from ``source`` (Note [View
    creation meta]): NO_GRAD_MODE in no_grad mode, MULTI_OUTPUT_NODE for an unrecorded output
    of a multi-view op (``many``), else what ``source`` carries.

    >>> import tensordispatch as td
    >>> x = td.ones(3).requires_grad_()
    >>> with td.no_grad():
    ...     v = x[:2]
    >>> v.requires_grad, v.grad_fn, v._autograd_meta.creation_meta == NO_GRAD_MODE
    (True, None, True)
    """
    if not _ST.grad_enabled:
        if type(result) in (tuple, list):
            for r in result:  # type: ignore[attr-defined]
                _mark_no_grad(r, source)
            return
        _mark_no_grad(result, source)
        return
    prev = _creation_meta(getattr(source, "_autograd_meta", None))
    new = MULTI_OUTPUT_NODE if many and prev != INFERENCE_MODE else prev
    if new == DEFAULT:
        return
    for r in result if type(result) in (tuple, list) else (result,):  # type: ignore[attr-defined]
        if isinstance(r, Tensor) and r._base is not None and r is not source:
            meta_of(r).creation_meta = new


def _mark_no_grad(r: Any, source: Any, cm: int | None = None) -> None:
    """NO_GRAD_MODE on a view made in no_grad mode (it overrides what ``source`` carries,
    as torch's propagate_creation_meta does for everything but INFERENCE_MODE, which
    sticks), or ``cm``; the view reports its root's requires_grad but gets no accumulator."""
    base = getattr(r, "_base", None)
    if base is None or r is source:
        return
    m = r._autograd_meta
    if m is None:
        m = r._autograd_meta = TensorMeta()
    elif type(m) is not TensorMeta:
        m = meta_of(r)
    if cm is None:
        cm = NO_GRAD_MODE
        sm = getattr(source, "_autograd_meta", None)
        if type(sm) is TensorMeta and getattr(sm, "creation_meta", DEFAULT) == INFERENCE_MODE:
            cm = INFERENCE_MODE
    m.creation_meta = cm
    if m.grad_fn is None:
        root = base._autograd_meta
        if root is not None and root.requires_grad:
            m.requires_grad = True
            m.grad_accumulator = NoGradViewSink(r._vc, cm, view=r)  # type: ignore[assignment]


def mark_inference_mode_view(view: Tensor) -> None:
    """INFERENCE_MODE on a view of a normal tensor made in inference mode (called by
    ``Tensor._make_view``; Note [View creation meta]): like a view made in no_grad mode.

    >>> import tensordispatch as td
    >>> x = td.ones(3).requires_grad_()
    >>> with td.inference_mode():
    ...     v = x[:2]
    >>> v.requires_grad, v.grad_fn, v.is_inference(), v._autograd_meta.creation_meta
    (True, None, False, 4)
    """
    _mark_no_grad(view, None, INFERENCE_MODE)


set_inference_view_hook(mark_inference_mode_view)


class NoGradViewSink:
    """Stands in for the weak reference to the grad accumulator of a view that reports its
    root's requires_grad (``gradient_edge`` calls it): it hands back ``NO_ACCUMULATOR``, the
    view's edge is ``(None, 0)`` and no gradient reaches it, as torch's. It remembers the
    storage version when the view was made: once the view, its root or another view was
    written in place, using the view in a recorded computation, or reading its grad_fn,
    raises torch's error (torch regenerates the view's grad_fn then and refuses).

    >>> import tensordispatch as td
    >>> x = td.ones(3).requires_grad_()
    >>> with td.no_grad():
    ...     v = x[:2]
    ...     _ = x.add_(1)
    >>> v * 2  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    RuntimeError: A view was created in no_grad mode and its base or another view of its ...
    """

    __slots__ = ("cm", "vc", "version", "view")

    def __init__(
        self, vc: Any, cm: int = NO_GRAD_MODE, version: int | None = None, view: Any = None
    ) -> None:
        self.vc = vc
        self.version = (None if vc is None else vc.version) if version is None else version
        self.cm = cm
        self.view = None if view is None else weakref.ref(view)

    def stale_grad_fn(self, view: Tensor) -> Node | None:
        """None while the storage was not written in place since the view was made; then
        ``view``'s grad_fn regenerated as AsStridedBackward0 over its root's history, or
        torch's error for a view whose creation meta forbids that (torch's indirect rebase;
        Note [Views follow their root's requires_grad])."""
        vc = self.vc
        if vc is None or vc.version == self.version:
            return None
        if self.cm in (NO_GRAD_MODE, INFERENCE_MODE):
            raise RuntimeError(
                _INFERENCE_INDIRECT if self.cm == INFERENCE_MODE else _NO_GRAD_INDIRECT
            )
        check_view_inplace(view, indirect=True)
        base = view._base
        m = meta_of(view)
        m.grad_accumulator = None
        fn = m.grad_fn = view_history(base, view)  # type: ignore[arg-type]
        m.output_nr = 0
        m.view_version = view._version
        return fn

    def __call__(self) -> Any:
        view = None if self.view is None else self.view()
        if view is not None:
            fn = self.stale_grad_fn(view)
            if fn is not None:
                return fn  # the edge (fn, 0): the regenerated grad_fn's output 0
        elif self.vc is not None and self.vc.version != self.version:
            raise RuntimeError(
                _INFERENCE_INDIRECT if self.cm == INFERENCE_MODE else _NO_GRAD_INDIRECT
            )
        return NO_ACCUMULATOR


def _node_name(fn: Node) -> str:
    return re.sub(r"Backward\d*$", "", fn.name())


_SUFFIX = {
    MULTI_OUTPUT_NODE: (
        "This view is the output of a function that returns multiple views. Such functions "
        "do not allow the output views to be modified inplace. You should replace the "
        "inplace operation by an out-of-place one."
    ),
    NO_GRAD_MODE: (
        "Given that this use case is ambiguous and error-prone, it is forbidden. You can "
        "clarify your code by moving both the view and the inplace either both inside the "
        "no_grad block (if you don't want the inplace to be tracked) or both outside (if you "
        "want the inplace to be tracked)."
    ),
    INFERENCE_MODE: (
        "Given that this use case is ambiguous and error-prone, it is forbidden. You can "
        "clarify your code by moving both the view and the inplace either both inside the "
        "inference_mode block (if you don't want the inplace to be tracked) or both outside "
        "(if you want the inplace to be tracked)."
    ),
    IN_CUSTOM_FUNCTION: (
        "This view was created inside a custom Function (or because an input was returned "
        "as-is) and the autograd logic to handle view+inplace would override the custom "
        "backward associated with the custom Function, leading to incorrect gradients. This "
        "behavior is forbidden. You can fix this by cloning the output of the custom Function."
    ),
}


_NO_GRAD_INDIRECT = (
    "A view was created in no_grad mode and its base or another view of its base has been "
    "modified inplace with grad mode enabled. " + _SUFFIX[NO_GRAD_MODE]
)
_INFERENCE_INDIRECT = (
    "A view was created in inference mode and its base or another view of its base has been "
    "modified inplace in normal mode. " + _SUFFIX[INFERENCE_MODE]
)


def view_inplace_message(t: Tensor, indirect: bool = False) -> str | None:
    """torch's message for an in-place write to ``t`` that its creation meta forbids, or None
    (Note [View creation meta])."""
    m = t._autograd_meta
    cm = _creation_meta(m)
    if cm in (DEFAULT, DETACHED) or t._base is None or type(m) is not TensorMeta:
        return None
    fn = m.grad_fn
    what = "its base or another view of its base has been" if indirect else "is being"
    if cm in (NO_GRAD_MODE, INFERENCE_MODE) or fn is None:
        prefix = "A view was created in"
        if fn is not None:
            name = _node_name(fn)
            prefix = f"Output {m.output_nr} of {name} is a view of a view which was created in"
        if cm == INFERENCE_MODE:
            head = f"{prefix} inference mode and {what} modified inplace in normal mode."
        else:
            head = f"{prefix} no_grad mode and {what} modified inplace with grad mode enabled."
    else:
        head = f"Output {m.output_nr} of {_node_name(fn)} is a view and {what} modified inplace."
    return f"{head} {_SUFFIX[cm]}"


def check_view_inplace(t: Tensor, indirect: bool = False) -> None:
    """Raise torch's error when ``t`` is a view whose creation meta forbids an in-place write
    with grad mode on (Note [View creation meta]).

    >>> import tensordispatch as td
    >>> x = td.ones(3).requires_grad_()
    >>> with td.no_grad():
    ...     v = x[:2]
    >>> check_view_inplace(v)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    RuntimeError: A view was created in no_grad mode and is being modified inplace with ...
    """
    msg = view_inplace_message(t, indirect)
    if msg is not None:
        raise RuntimeError(msg)


# registers follow_root as tensor.py's requires_grad hook; imported last (it imports this module)
import tensordispatch.autograd.view_follow as _view_follow
