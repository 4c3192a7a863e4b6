"""A view's requires_grad following its root's (torch's views read their base's flag).

Owns ``follow_root``: what a change of a root's (or a view's own) requires_grad does to the
views made of it. Must not record graphs; the sinks and creation metas are views.py's.

Note [Views follow their root's requires_grad]
torch's view reports ``requires_grad`` when it requires grad itself, has a grad_fn, or its
root requires grad, read each time: ``v = x[:2]; x.requires_grad_()`` makes ``v`` require
grad (grad_fn None, a leaf, no accumulator of its own), whatever mode ``v`` was made in,
and turning the root off turns such a view off again. Reading the root on every check would
put a lookup on the no-grad path of every operator (the generated entries read
``_autograd_meta.requires_grad`` directly). Instead the root pushes its flag to its views
when the flag changes, which is rare: the version counter, shared by a root and its views,
lists them weakly with the version at each view's making (``Tensor._make_view`` appends
one entry; dead entries are pruned as the list doubles), and
``follow_root`` runs when a root's flag changes (the ``requires_grad`` setter through
tensor.py's hook, ``detach_``, and ``rebase_history`` when an in-place op makes the root
require grad). A view without a grad_fn or a flag of its own then gets ``requires_grad``
and a ``NoGradViewSink`` as its grad accumulator; that marks it as following. Once the
storage was written in place since the view was made, using the view or reading its grad_fn
regenerates the grad_fn as AsStridedBackward0 over the root's history (torch's indirect
rebase), or raises torch's error for a view whose creation meta forbids it. A view setting
its own flag to False keeps reporting its root's.
Cost: the entry (a weak reference and a tuple, made, pruned and freed) is ~0.2 us per view,
about a fifth of ``x[:2]`` (1.16 -> 1.40 us, CPU time, loaded machine); the no-grad and
recording paths of other operators do not change.
"""

from __future__ import annotations

from tensordispatch.autograd.graph import TensorMeta, meta_of
from tensordispatch.autograd.views import (
    DETACHED,
    NoGradViewSink,
    _creation_meta,
    differentiable_base,
)
from tensordispatch.tensor import Tensor
from tensordispatch.tensor.tensor import VersionCounter, set_requires_grad_hook

__all__ = ["follow_root"]


def _following(m: object) -> bool:
    """Whether a view's meta marks it as reporting its root's requires_grad only."""
    return (
        type(m) is TensorMeta and m.grad_fn is None and type(m.grad_accumulator) is NoGradViewSink
    )


def _start_following(v: Tensor, version: int) -> None:
    m = meta_of(v)
    m.requires_grad = True
    cm = _creation_meta(m)
    m.grad_accumulator = NoGradViewSink(v._vc, cm, version, v)  # type: ignore[assignment]


def follow_root(t: Tensor, value: bool) -> None:
    """After ``t``'s own requires_grad became ``value``: a root's views without a grad_fn or
    a flag of their own follow it; a view turning its flag off keeps its root's (Note
    [Views follow their root's requires_grad]).

    >>> import tensordispatch as td
    >>> x = td.ones(3)
    >>> v = x[:2]
    >>> _ = x.requires_grad_()  # calls follow_root(x, True)
    >>> v.requires_grad, v.grad_fn, v.is_leaf
    (True, None, True)
    >>> _ = x.requires_grad_(False)
    >>> v.requires_grad
    False
    """
    vc = t._vc
    if type(vc) is not VersionCounter:
        return
    if t._base is not None:  # a view's own flag
        m = t._autograd_meta
        if value:
            if _following(m):
                m.grad_accumulator = None  # type: ignore[union-attr]
            return
        base = differentiable_base(t)
        bm = None if base is None else base._autograd_meta
        if bm is not None and bm.requires_grad and (m is None or m.grad_fn is None):
            made = [n for r, n in vc.views if r() is t]
            _start_following(t, made[0] if made else vc.version)
        return
    for ref, version in vc.prune():
        v = ref()
        if v is None or v._base is not t:
            continue
        m = v._autograd_meta
        if not value and _following(m):
            m.requires_grad = False  # type: ignore[union-attr]
            m.grad_accumulator = None  # type: ignore[union-attr]
            continue
        own = m is not None and (m.requires_grad or m.grad_fn is not None)
        if value and not own and _creation_meta(m) != DETACHED:
            _start_following(v, version)


set_requires_grad_hook(follow_root)
