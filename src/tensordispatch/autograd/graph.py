"""The autograd graph: nodes, edges, saved tensors, per-tensor autograd metadata.

Owns what a recorded graph is made of (torch's Node, Edge, AccumulateGrad, SavedVariable)
and the per-tensor fields autograd adds (output number, grad accumulator, hooks,
retain_grad). Must not run the graph (engine.py) nor build it for an operator (kernels.py).

Note [Edges]
A node's ``next_functions`` is a tuple of ``(node or None, input_nr)`` pairs, one per
differentiable input of the operation that made it, exactly torch's shape: a leaf that
requires grad contributes its AccumulateGrad node, a non-leaf its ``(grad_fn, output_nr)``,
and an input that does not require grad ``(None, 0)``. Each node also keeps, per edge, the
input's shape and dtype, so the engine can reduce a broadcast gradient to the input's shape
(torch's validate_outputs).

Note [Stale view history]
A view's grad_fn describes how it was computed from its root's history at the time. After an
in-place write to the root (or another view of it), that history is stale: torch then
regenerates the view's grad_fn as AsStridedBackward0 over the root's current history. We
record the storage version with a view's grad_fn and regenerate it the same way when it
is read (``grad_fn``, building edges) and the version moved.

Note [Saved tensors and versions]
A saved tensor records the version of its storage when saved; unpacking compares it with
the current version and raises torch's error when an in-place op intervened. A saved
output of the node itself (``result``) is stored without its grad_fn link to avoid a
reference cycle, and re-linked when unpacked, as torch's SavedVariable does.
"""

from __future__ import annotations

import itertools
import operator
import re
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tensordispatch.dispatch.tls import local_state
from tensordispatch.ops.deferred import deferred_op as _deferred_op
from tensordispatch.tensor import Tensor
from tensordispatch.tensor.geometry import is_non_overlapping_and_dense
from tensordispatch.tensor.tensor import AutogradMeta, VersionCounter

__all__ = [
    "AccumulateGrad",
    "GraphRoot",
    "Node",
    "SavedTensor",
    "TensorMeta",
    "collect_next_edges",
    "gradient_edge",
    "meta_of",
]

_empty_strided = _deferred_op(globals(), "_empty_strided", "empty_strided")
NODE_SEQUENCE = itertools.count()  # torch's sequence_nr: creation order of nodes
_ST = local_state()
FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


class TensorMeta(AutogradMeta):
    """AutogradMeta plus the fields the autograd layer needs (torch's AutogradMeta)."""

    __slots__ = (
        "creation_meta",
        "grad_accumulator",
        "hooks",
        "multi_output_of",
        "output_nr",
        "retains_grad",
        "view_version",
    )
    creation_meta: int  # views.py's CreationMeta; unset (read with a default) on most tensors

    def __init__(self) -> None:  # AutogradMeta's fields set here too (one call less)
        self.requires_grad = False
        self.grad: Tensor | None = None
        self.grad_fn: Any = None
        self.output_nr = 0
        # For a view output of a multi-view op (split, unbind): the op's name ("Split"),
        # which forbids in-place writes on it (torch's CreationMeta::MULTI_OUTPUT_NODE).
        self.multi_output_of: str | None = None
        # For a view: the storage version when its grad_fn was set (Note [Stale view history]).
        self.view_version: int | None = None
        self.grad_accumulator: weakref.ref[AccumulateGrad] | None = None
        # A shared empty tuple until the first hook (hooks_list): most tensors have none.
        self.hooks: Sequence[Callable[[Tensor], Tensor | None]] = ()
        self.retains_grad = False
        # ``creation_meta`` (views.py, Note [View creation meta]) is left unset: it is read
        # with a default, and set only on the rare views that forbid in-place writes.

    def hooks_list(self) -> list[Callable[[Tensor], Tensor | None]]:
        """The tensor's hooks as a list that registration may append to."""
        hooks = self.hooks
        if type(hooks) is not list:
            hooks = self.hooks = list(hooks)
        return hooks


def meta_of(t: Tensor) -> TensorMeta:
    """The tensor's TensorMeta, created (or upgraded from the tensor layer's) on demand."""
    m = t._autograd_meta
    if type(m) is TensorMeta:
        return m
    new = TensorMeta()
    if m is not None:
        new.requires_grad, new.grad, new.grad_fn = m.requires_grad, m.grad, m.grad_fn
    t._autograd_meta = new
    return new


class Node:
    """A backward function of the graph (torch's Node); named like torch's grad_fn classes."""

    __slots__ = (
        "__weakref__",
        "_input_meta",
        "_post_hooks",
        "_pre_hooks",
        "_released",
        "_sequence_nr",
        "next_functions",
    )

    def __init__(self) -> None:
        self.next_functions: tuple[tuple[Node | None, int], ...] = ()
        self._input_meta: tuple[tuple[tuple[int, ...], Any] | None, ...] = ()
        self._sequence_nr = next(NODE_SEQUENCE)
        self._released = False
        # Shared empty tuples until the first hook (hook_list): most nodes have none.
        self._pre_hooks: Sequence[Callable[..., Any]] = ()
        self._post_hooks: Sequence[Callable[..., Any]] = ()

    def hook_list(self, pre: bool) -> list[Callable[..., Any]]:
        """The node's pre-hooks (or post-hooks) as a list that registration may append to."""
        if pre:
            if type(self._pre_hooks) is not list:
                self._pre_hooks = list(self._pre_hooks)
            return self._pre_hooks  # type: ignore[return-value]
        if type(self._post_hooks) is not list:
            self._post_hooks = list(self._post_hooks)
        return self._post_hooks  # type: ignore[return-value]

    def name(self) -> str:
        """The node's class name, e.g. ``MulBackward0``."""
        return type(self).__name__

    def apply(self, grads: list[Tensor | None]) -> tuple[Tensor | None, ...]:
        """Gradients for each next edge from the gradients of this node's outputs."""
        raise NotImplementedError

    def release(self) -> None:
        """Free saved values (after a backward without retain_graph)."""
        self._released = True

    def register_hook(self, fn: Callable[..., Any]) -> Any:
        """``fn(grad_inputs, grad_outputs)`` after the node runs (torch's Node.register_hook)."""
        hooks = self.hook_list(False)
        hooks.append(fn)
        return _RemovableHandle(hooks, fn)

    def register_prehook(self, fn: Callable[..., Any]) -> Any:
        """``fn(grad_outputs)`` before the node runs; may return replacement gradients."""
        hooks = self.hook_list(True)
        hooks.append(fn)
        return _RemovableHandle(hooks, fn)

    def __repr__(self) -> str:
        return f"<{self.name()} object at {hex(id(self))}>"


class _RemovableHandle:
    __slots__ = ("_fn", "_hooks")

    def __init__(self, hooks: list[Any], fn: Any) -> None:
        self._hooks = hooks
        self._fn = fn

    def remove(self) -> None:
        if self._fn in self._hooks:
            self._hooks.remove(self._fn)


class GraphRoot(Node):
    """The engine's root: hands the initial gradients to the roots' edges."""

    __slots__ = ("_grads",)

    def __init__(self, edges: list[tuple[Node | None, int]], grads: list[Tensor]) -> None:
        super().__init__()
        self.next_functions = tuple(edges)
        self._input_meta = tuple(None for _ in edges)
        self._grads = grads

    def apply(self, grads: list[Tensor | None]) -> tuple[Tensor | None, ...]:
        return tuple(self._grads)


class AccumulateGrad(Node):
    """Accumulates the incoming gradient into a leaf's ``.grad`` (torch's AccumulateGrad)."""

    __slots__ = ("variable",)

    def __init__(self, variable: Tensor) -> None:  # Node.__init__'s fields, set directly
        self.next_functions = ()
        self._input_meta = ()
        self._released = False
        self._pre_hooks = ()
        self._post_hooks = ()
        self.variable = variable
        self._sequence_nr = 1 << 62  # runs as soon as ready, as in torch (UINT64_MAX)

    def apply(self, grads: list[Tensor | None]) -> tuple[Tensor | None, ...]:
        g = grads[0]
        var = self.variable
        m = var._autograd_meta
        if type(m) is not TensorMeta:
            m = meta_of(var)
        if m.hooks:  # called even without a gradient (every one reaching the leaf was None)
            for hook in m.hooks:
                out = hook(g)  # type: ignore[arg-type]
                if out is not None:
                    g = out
        if g is None:
            return ()
        recording = _ST.grad_enabled
        old = m.grad
        if old is None:
            # torch steals the incoming buffer when nothing else references it; we copy.
            # Under create_graph the copy is recorded (torch's clone_obey_contract).
            m.grad = _recorded_copy(g, var) if recording else _fresh_copy(g, var)
        elif recording:
            m.grad = old + g
        else:  # _add_numpy, inlined (once per leaf per step)
            a, b = old._data, g._data
            if (
                type(a) is _ndarray
                and type(b) is _ndarray
                and old._shape == g._shape
                and old.dtype == g.dtype
            ):
                _iadd(a, b)  # np.add(a, b, out=a) without parsing ``out=``
                root = old if old._base is None else old._base
                vc = root._vc  # old._bump_version(), inlined
                if vc is None:
                    old._bump_version()
                else:
                    vc.version += 1
            elif not _add_numpy(old, g):
                old.add_(g)
        return ()


_ndarray = np.ndarray
_iadd = operator.iadd


def _fresh_copy(g: Tensor, var: Tensor) -> Tensor:
    """A copy of ``g`` laid out like ``var`` when ``var`` is C- or F-contiguous, else
    contiguous (torch's clone_obey_contract: a weight's gradient from ``x @ w.t()`` arrives
    transposed and is stored with the weight's strides)."""
    data = g._data
    if isinstance(data, np.ndarray):
        like = var._data
        flags = like.flags if isinstance(like, np.ndarray) else None
        if (
            flags is not None
            and like.shape == data.shape
            and (flags.c_contiguous or flags.f_contiguous)
        ):
            if data.strides == like.strides:  # already laid out like the leaf
                return Tensor._wrap_numpy(data.copy(order="K"), g.dtype)
            out = np.empty_like(like, dtype=data.dtype)
        else:
            out = np.empty(data.shape, data.dtype)
        np.copyto(out, data)
        return Tensor._wrap_numpy(out, g.dtype)
    return g.detach().clone()


def _recorded_copy(g: Tensor, var: Tensor) -> Tensor:
    """A leaf's first gradient under grad mode (create_graph): torch's clone_obey_contract,
    recorded, so a gradient with history keeps it (through CopyBackwards or
    CloneBackward0): a new tensor with the leaf's sizes, strides and dtype when the leaf is
    non-overlapping and dense, else a contiguous clone."""
    if is_non_overlapping_and_dense(var._shape, var._strides):
        out: Tensor = _empty_strided(
            list(var._shape), list(var._strides), dtype=var.dtype, device=var.device
        )
        return out.copy_(g)  # type: ignore[attr-defined,no-any-return]
    from tensordispatch import contiguous_format

    return g.clone(memory_format=contiguous_format)  # type: ignore[attr-defined,no-any-return]


def _add_numpy(acc: Tensor, g: Tensor) -> bool:
    """``acc += g`` directly on NumPy data when both are plain CPU arrays of one shape and
    dtype (the common case of gradient accumulation); False if the op must run instead."""
    a, b = acc._data, g._data
    if (
        isinstance(a, np.ndarray)
        and isinstance(b, np.ndarray)
        and acc._shape == g._shape
        and acc.dtype == g.dtype
    ):
        np.add(a, b, out=a)
        acc._bump_version()
        return True
    return False


class SavedTensor:
    """A tensor saved for backward with its version (Note [Saved tensors and versions])."""

    __slots__ = ("_data", "_is_output", "_output_nr", "_requires_grad", "_version")

    def __init__(self, t: Tensor, is_output: bool) -> None:
        vc = t._vc
        self._version = 0 if vc is None else vc.version
        self._is_output = is_output
        if is_output:  # the fields that re-link an output when it is unpacked
            m = t._autograd_meta
            self._requires_grad = m is not None and m.requires_grad
            self._output_nr = m.output_nr if isinstance(m, TensorMeta) else 0
            self._data = _shallow_alias(t)
        else:
            self._requires_grad = False
            self._output_nr = 0
            self._data = t

    def unpack(self, node: Node) -> Tensor:
        """The saved tensor; raises torch's errors for a freed graph or an in-place change."""
        if node._released:
            raise RuntimeError(FREED_MESSAGE)
        t = self._data
        vc = t._vc  # t._version, inlined
        if (0 if vc is None else vc.version) != self._version:
            raise RuntimeError(modified_message(t, node, self))
        if self._is_output and self._requires_grad:
            m = meta_of(t)
            m.requires_grad = True
            m.grad_fn = node
            m.output_nr = self._output_nr
        return t


def _shallow_alias(t: Tensor) -> Tensor:
    """A tensor sharing ``t``'s data, storage and version counter, without autograd fields."""
    root = t if t._base is None else t._base
    if root._vc is None:
        root._vc = VersionCounter()
        if t is not root:
            t._vc = root._vc
    if type(t) is not Tensor and not isinstance(t._data, np.ndarray):
        # a wrapper subclass (functional, lazy) keeps its class; a Parameter does not
        return _subclass_alias(t, root._vc)
    storage = t._storage
    if storage is None and t is root and isinstance(t._data, np.ndarray):
        storage = t._storage_bytes()  # the alias is a second root over the same storage
    alias = Tensor._make(
        t._data, t._shape, t._strides, t._offset, t.dtype, t.device, storage, root._vc
    )
    alias._key_set = t._key_set
    alias._base = t._base
    return alias


def _subclass_alias(t: Tensor, vc: Any) -> Tensor:
    """A copy of ``t``'s slots (every class of its MRO) without autograd metadata."""
    alias = object.__new__(type(t))
    for cls in type(t).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if name in ("__weakref__", "__dict__"):
                continue
            try:
                object.__setattr__(alias, name, object.__getattribute__(t, name))
            except AttributeError:
                pass
    if hasattr(t, "__dict__"):
        alias.__dict__.update(t.__dict__)
    alias._autograd_meta = None
    alias._vc = vc
    return alias


def modified_message(t: Tensor, node: Node, saved: SavedTensor) -> str:
    """torch's message for a saved tensor modified in place."""
    dims = ", ".join(str(s) for s in t._shape)
    name = _legacy_type_name(t)
    where = ""
    m = t._autograd_meta
    fn = m.grad_fn if m is not None and not saved._is_output else node
    if saved._is_output or fn is not None:
        owner = node if saved._is_output else fn
        base = re.sub(r"Backward\d+$", "", owner.name())
        nr = saved._output_nr if saved._is_output else getattr(m, "output_nr", 0)
        where = f", which is output {nr} of {base},"
    return (
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{name} [{dims}]]{where} is at version {t._version}; expected "
        f"version {saved._version} instead. Hint: enable anomaly detection to find the "
        "operation that failed to compute its gradient, with "
        "tensordispatch.autograd.set_detect_anomaly(True, check_nan=False)."
    )


_LEGACY = {
    "float32": "FloatTensor",
    "float64": "DoubleTensor",
    "float16": "HalfTensor",
    "int64": "LongTensor",
    "int32": "IntTensor",
}


def _legacy_type_name(t: Tensor) -> str:
    short = str(t.dtype).rsplit(".", 1)[-1]
    return f"tensordispatch.{_LEGACY.get(short, short)}"


def grad_accumulator(t: Tensor) -> AccumulateGrad:
    """The leaf's AccumulateGrad node (one per leaf while the graph holds it, as in torch)."""
    m = meta_of(t)
    ref = m.grad_accumulator
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(t)
        m.grad_accumulator = weakref.ref(acc)
    return acc


def view_grad_fn(t: Tensor) -> Any:
    """``t``'s grad_fn, regenerated for a view whose root was written in place since
    (Note [Stale view history])."""
    m = t._autograd_meta
    if m is None:
        return None
    fn = m.grad_fn
    if fn is None and type(m) is TensorMeta:  # a view following its root: views.py
        stale = getattr(m.grad_accumulator, "stale_grad_fn", None)  # NoGradViewSink's
        if stale is not None:
            return stale(t)
    if fn is not None and type(m) is TensorMeta and m.view_version is not None:
        base = t._base
        if base is not None and t._version != m.view_version:
            bm = base._autograd_meta
            if bm is not None and bm.grad_fn is not None:
                from tensordispatch.autograd.view_replay import view_history
                from tensordispatch.autograd.views import check_view_inplace

                check_view_inplace(t, indirect=True)
                fn = m.grad_fn = view_history(base, t)
                m.output_nr = 0
            m.view_version = t._version
    return fn


_NO_EDGE: tuple[None, int] = (None, 0)


class _NoAccumulator:
    """What a following view's ``NoGradViewSink`` (views.py) hands back in place of a grad
    accumulator: the view has none of its own, so its edge is ``(None, 0)``, as torch's."""

    __slots__ = ()


NO_ACCUMULATOR = _NoAccumulator()


def gradient_edge(t: Tensor) -> tuple[Node | None, int]:
    """The edge a gradient for ``t`` flows along (Note [Edges])."""
    m = t._autograd_meta
    if m is None:
        return _NO_EDGE
    fn = m.grad_fn
    mine = type(m) is TensorMeta
    if fn is not None:
        if not mine:
            return (fn, 0)
        if m.view_version is not None:  # type: ignore[union-attr]
            fn = view_grad_fn(t)
        return (fn, m.output_nr)  # type: ignore[union-attr]
    if m.requires_grad:
        if not mine:
            return (grad_accumulator(t), 0)
        ref = m.grad_accumulator  # type: ignore[union-attr]
        acc = ref() if ref is not None else None
        if acc is None:  # grad_accumulator(t), inlined: the common case per new graph
            acc = AccumulateGrad(t)
            m.grad_accumulator = weakref.ref(acc)  # type: ignore[union-attr]
        elif acc is NO_ACCUMULATOR:
            return _NO_EDGE
        return (acc, 0)
    return _NO_EDGE


def collect_next_edges(tensors: tuple[Tensor | None, ...]) -> tuple[tuple[Node | None, int], ...]:
    """The edges of a node whose differentiable inputs are ``tensors``."""
    return tuple([_NO_EDGE if t is None else gradient_edge(t) for t in tensors])
