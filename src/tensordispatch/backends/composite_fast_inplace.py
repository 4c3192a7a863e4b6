"""One-hop in-place methods for the generated bindings: ``a.add_(b)`` and ``a.copy_(b)``
straight to the write and the version bump the full dispatch would do, when it is known to
be exactly that; and ``t.to(...)`` calls that change nothing (Note [One-hop Tensor.to],
called by the hand-written binding in ops/bindings.py).

Owns the hops of the method bindings (codegen/gen_python.py's ``ONE_HOP_METHODS``; kept out
of backends/cpu/, whose package loads every CPU kernel, so that the bindings importing it
leave ``import tensordispatch`` as light as before; the kernels are looked up at the first
check): each is
called with the caller's arguments and returns the result, or None when it does not apply
(the binding then takes the full dispatch, unchanged). Must not change what any call
computes, raises or shows: it only skips hops whose outcome it has checked.

Note [One-hop in-place methods]
The full path of ``a.add_(b)`` on two CPU tensors is: the entry (table lookup), the
autograd entry (no input requires grad: a redispatch), the ADInplaceOrView entry (the
excluded word set around the call, then ``self``'s version bumped), the fused CPU kernel
(Note [Fused in-place kernels]), which for two plain roots of one dtype and shape is one
ufunc call into ``self``'s array. That is ~0.8 us of dispatch around ~0.3 us of NumPy on
a 4x4 tensor. The kernels each layer runs are a pure function of the thread-local words,
the arguments' key sets and the operator's published state; the ``InplaceGuard`` of
ops/indexing_fast.py answers, per published state (a trace, a registration or a mode
republishes or changes the words), whether the chain is the plain autograd kernel, the plain
ADInplaceOrView kernel (Note [Plain kernel markers]) and a backends/ CPU kernel. A hop
checks that chain, that the kernel is the one it mirrors, the default words, two exact
``Tensor`` objects with the plain CPU key set and no autograd metadata (so no input
requires grad and no view creation meta applies, whatever the grad mode), ``self``'s
version counter already made (not an inference tensor's), and the kernel's own commonest
case (add_: two plain roots of one dtype and shape, a floating or integral dtype, alpha
absent; copy_: one dtype and shape, no zero stride in ``self``, different storage). Then it
does that case's write and the bump, in the full path's order. Anything else returns None
before any effect.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensordispatch.dispatch.keyset import DEFAULT_EXCLUDED_RAW, DEFAULT_INCLUDED_RAW
from tensordispatch.dispatch.tls import local_state
from tensordispatch.tensor.device import CPU as _CPU
from tensordispatch.tensor.geometry import contiguous_of as _contiguous_of
from tensordispatch.tensor.tensor import _CPU_KEY_SET, Tensor, VersionCounter

__all__ = ["add_", "contiguous", "copy_", "flatten", "reshape", "to"]

_ST = local_state()
_DX = DEFAULT_EXCLUDED_RAW
_DI = DEFAULT_INCLUDED_RAW
_CPU_KS = _CPU_KEY_SET
_Tensor, _VersionCounter = Tensor, VersionCounter
_np_add = np.add
_FLOATING = 2  # dtypes.py's category ranks: bool 0, integral 1, floating 2, complex 3
# fpstate's quiet ufunc runner and its retry (Note [Quiet context]), bound at the first check
QUIET_RUN: Any = None
quiet_retry: Any = None


class _Lazy:
    """An ``InplaceGuard`` (ops/indexing_fast.py) and the kernel a hop mirrors, made on the
    first call (the ops and backends modules are loaded by then)."""

    __slots__ = ("guard", "kernel", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self.guard: Any = None
        self.kernel: Any = None

    def plain(self) -> bool:
        """True when the operator's chain ends in the mirrored kernel (Note [One-hop
        in-place methods])."""
        g = self.guard
        if g is None:
            g = self._make()
        if g.entry.state is g.state or g.recheck():
            return g.kernel is self.kernel  # type: ignore[no-any-return]
        return False

    def _make(self) -> Any:
        global QUIET_RUN, quiet_retry
        from tensordispatch.backends.cpu import fpstate
        from tensordispatch.backends.cpu.fresh_inplace import CPU_INPLACE_KERNELS
        from tensordispatch.backends.cpu.kernels import copy_ as cpu_copy_
        from tensordispatch.ops.indexing_fast import InplaceGuard

        self.kernel = cpu_copy_ if self.name == "copy_" else CPU_INPLACE_KERNELS[self.name]
        QUIET_RUN, quiet_retry = fpstate.QUIET_RUN, fpstate.quiet_retry
        self.guard = InplaceGuard(self.name)
        return self.guard


_ADD = _Lazy("add_.Tensor")
_COPY = _Lazy("copy_")


def add_(self: Any, other: Any) -> Tensor | None:
    """``self.add_(other)`` by one hop, or None when the binding must take the full
    dispatch (Note [One-hop in-place methods]).

    >>> import tensordispatch as td
    >>> a, b = td.ones(2), td.full((2,), 2.0)
    >>> add_(a, b), a.add_(b)  # a fresh tensor has no version counter: the full path makes it
    (None, tensor([3., 3.]))
    >>> add_(a, b) is a, a.tolist(), a._version, add_(a, td.ones(2, dtype=td.int64))
    (True, [5.0, 5.0], 2, None)
    """
    if type(self) is not _Tensor or type(other) is not _Tensor:
        return None
    dt = self.dtype
    if (
        self._key_set != _CPU_KS
        or other._key_set != _CPU_KS
        or self._autograd_meta is not None
        or other._autograd_meta is not None
        or other.dtype is not dt
        or other._shape != self._shape
        or self._base is not None
        or other._base is not None
        or self._storage is not None
        or other._wrapped_number
        or not 1 <= dt._category <= _FLOATING
        or 0 in self._strides
    ):
        return None
    vc = self._vc
    words = _ST.__dict__
    if (
        type(vc) is not _VersionCounter
        or words["excluded"] is not _DX
        or words["included"] is not _DI
        or not _ADD.plain()
    ):
        return None
    a, b = self._data, other._data
    try:
        QUIET_RUN(_np_add, a, b, out=a)
    except RuntimeError as e:  # Note [Quiet context] in fpstate.py
        quiet_retry(e, _np_add, a, b, out=a)
    vc.version += 1
    return self


def copy_(self: Any, src: Any) -> Tensor | None:
    """``self.copy_(src)`` by one hop, or None (Note [One-hop in-place methods]).

    >>> import tensordispatch as td
    >>> a, b = td.zeros(2), td.ones(2)
    >>> b.add_(b)  # makes b's version counter
    tensor([2., 2.])
    >>> copy_(a, b), copy_(b, td.ones(2))
    (None, tensor([1., 1.]))
    """
    if type(self) is not _Tensor or type(src) is not _Tensor:
        return None
    if (
        self._key_set != _CPU_KS
        or src._key_set != _CPU_KS
        or self._autograd_meta is not None
        or src._autograd_meta is not None
        or self.dtype is not src.dtype
        or self._shape != src._shape
        or 0 in self._strides
    ):
        return None
    ra = self if self._base is None else self._base
    rb = src if src._base is None else src._base
    vc = ra._vc
    words = _ST.__dict__
    if (
        ra is rb
        or (ra._storage is not None and ra._storage is rb._storage)
        or type(vc) is not _VersionCounter
        or words["excluded"] is not _DX
        or words["included"] is not _DI
        or not _COPY.plain()
    ):
        return None
    self._data[...] = src._data
    vc.version += 1
    return self


# Note [One-hop Tensor.to]
# ``t.to(t.dtype)`` and ``t.to("cpu")`` on a CPU tensor change nothing: the full path is the
# hand-written binding (ops/bindings.py), the entry of ``to.dtype`` / ``to.dtype_layout``
# (argument checks, table lookup) and the CompositeImplicitAutograd kernel (ops/
# decompositions_layout.py's ``to``), which returns ``self``: ~1.7-3 us for no work. Which
# kernel runs is a pure function of the thread-local words, ``self``'s key set and the
# operator's published state, so ``to`` here returns ``self`` only for an exact Tensor with
# the plain CPU key set (any requires_grad: the kernel returns self whatever the autograd
# metadata), under the default words, when the operator's state (memoized by identity) has
# no tracer and resolves that key set to that kernel. Anything else (another dtype or
# device, a mode, a trace, an override of ``to`` at any key) returns None: the binding's
# full path. ``t.contiguous()`` (the generated method, ``ONE_HOP_METHODS``) is the same
# case: its decomposition returns ``self`` when ``is_contiguous()``; the hop answers only for
# exactly the contiguous strides of the shape (the full path decides the size-1-dim cases).


class _ResolvedHop:
    """Whether ``name`` called on a plain CPU tensor under the default words runs exactly
    the decomposition ``kernel`` (``<module of ops/>.<function>``; Note [One-hop
    Tensor.to]), memoized per published state."""

    __slots__ = ("answer", "entry", "kernel", "name", "state")

    def __init__(self, name: str, kernel: str) -> None:
        self.name, self.kernel = name, kernel
        self.entry: Any = None
        self.state: Any = None
        self.answer = False

    def ready(self) -> bool:
        words = _ST.__dict__
        if words["excluded"] is not _DX or words["included"] is not _DI:
            return False
        entry = self.entry
        if entry is not None and entry.state is self.state:
            return self.answer
        return self._check()

    def _check(self) -> bool:
        from importlib import import_module

        from tensordispatch.backends.aten import op

        module, _, name = self.kernel.rpartition(".")
        kernel = getattr(import_module(f"tensordispatch.ops.{module}"), name)
        self.entry = entry = op(self.name)._entry
        state = entry.state
        self.answer = state.tracer is None and state.lookup(_DX, _DI, _CPU_KS) is kernel
        self.state = state  # after the answer: a reader matching the state sees its answer
        return self.answer


_TO_DTYPE = _ResolvedHop("to.dtype", "decompositions_layout.to")
_TO_DEVICE = _ResolvedHop("to.dtype_layout", "decompositions_layout.to")  # for a device
_CONTIGUOUS = _ResolvedHop("contiguous", "decompositions_layout.contiguous")
_RESHAPE = _ResolvedHop("reshape", "decompositions.reshape")
_FLATTEN = _ResolvedHop("flatten.using_ints", "decompositions_layout.flatten")


def to(self: Any, arg: Any) -> Tensor | None:
    """``self.to(arg)`` by one hop when ``arg`` is ``self``'s dtype or the CPU device (then
    ``self``), or None (Note [One-hop Tensor.to]).

    >>> import tensordispatch as td
    >>> t = td.ones(2)
    >>> to(t, td.float32) is t, to(t, "cpu") is t, to(t, td.float64), to(t, "meta")
    (True, True, None, None)
    """
    if type(self) is not _Tensor or self._key_set != _CPU_KS:
        return None
    if arg is self.dtype:
        hop = _TO_DTYPE
    elif type(arg) is str and arg == "cpu" or arg is _CPU:
        hop = _TO_DEVICE
    else:
        return None
    return self if hop.ready() else None


def contiguous(self: Any) -> Tensor | None:
    """``self.contiguous()`` by one hop: ``self`` for a plain CPU tensor with exactly the
    contiguous strides of its shape (what the decomposition returns, after its
    ``is_contiguous()``), else None (Note [One-hop Tensor.to], which covers it).

    >>> import tensordispatch as td
    >>> t = td.ones(2, 3)
    >>> contiguous(t) is t, contiguous(t.t()), contiguous(td.ones(2, device="meta"))
    (True, None, None)
    """
    if type(self) is not _Tensor or self._key_set != _CPU_KS:
        return None
    if self._strides != _contiguous_of(self._shape) or not _CONTIGUOUS.ready():
        return None
    return self


# Note [One-hop reshape]
# ``t.reshape(shape)`` of a contiguous tensor is always a view: the full path is the entry,
# the CompositeImplicitAutograd decomposition (``infer_size``, ``compute_stride``, then
# ``view`` through the dispatcher: the entry, the autograd kernel's plain redispatch, the
# view kernel), ~5.5 us on a 4x4 tensor where torch takes ~1.7. ``t.flatten()`` is the
# decomposition ``flatten``: ``self`` for 1 dim, else that reshape. Under the default words
# with grad mode on (in no_grad the view kernel's autograd kernel marks the view) and a
# tensor with no autograd metadata, when ``reshape`` (and ``flatten.using_ints``) resolve the
# CPU key set to those decompositions and ``view``'s chain is the plain autograd kernel and
# the view kernel (``ViewGuard`` of ops/indexing_fast.py), the hop does ``infer_size``'s
# work for a valid shape (no -1: the shape itself; one -1: the quotient) and calls the view
# kernel with the same arguments. A shape of anything but plain ints, a non-contiguous
# tensor, or a shape ``infer_size`` would refuse (or a -1 among 0 elements) returns None:
# the full path, its checks and its messages. (``t.view(size)`` itself takes no hop: its
# dispatch, ~0.45 us, costs less than these checks; measured, session 7.)

_VIEW: Any = None  # ops/indexing_fast.py's ViewGuard of aten::view, made at the first call


def _view_chain() -> Any:
    """The view kernel when ``view``'s chain is plain (Note [One-hop reshape]), else None."""
    global _VIEW
    g = _VIEW
    if g is None:
        from tensordispatch.ops.indexing_fast import ViewGuard

        g = _VIEW = ViewGuard("view", "view")
    if g.entry.state is g.state or g.recheck():
        return g.kernel
    return None


def reshape(self: Any, shape: Any) -> Tensor | None:
    """``self.reshape(shape)`` by one hop: the view kernel's result for a contiguous plain
    CPU tensor and a list of plain ints, else None (Note [One-hop reshape]).

    >>> import tensordispatch as td
    >>> t = td.ones(2, 3)
    >>> reshape(t, [3, -1]).shape, reshape(t.t(), [6]), reshape(t, [4, -1])
    (tensordispatch.Size([3, 2]), None, None)
    """
    if (
        type(self) is not _Tensor
        or self._key_set != _CPU_KS
        or self._autograd_meta is not None
        or type(shape) is not list
        or self._strides != _contiguous_of(self._shape)
    ):
        return None
    known, free = 1, 0
    for s in shape:
        if type(s) is not int:
            return None
        if s >= 0:
            known *= s
        elif s == -1:
            free += 1
        else:
            return None  # infer_size's error: the full path's
    if not _ST.grad_enabled or not _RESHAPE.ready():
        return None
    kernel = _view_chain()
    if kernel is None:
        return None
    numel = self.numel()
    if not free and known == numel:  # infer_size's answer: the shape itself
        size = shape
    elif free == 1 and known > 0 and numel % known == 0:  # infer_size's one inferred dim
        size = shape.copy()
        size[shape.index(-1)] = numel // known
    else:
        return None  # an error, or a 0-element -1 case: infer_size decides on the full path
    return kernel(self, size)  # type: ignore[no-any-return]


def flatten(self: Any) -> Tensor | None:
    """``self.flatten()`` by one hop: ``self`` for 1 dim, else the one-hop reshape to the
    number of elements (a 0-dim tensor: ``[1]``), or None (Note [One-hop reshape]).

    >>> import tensordispatch as td
    >>> t = td.ones(2, 3)
    >>> flatten(t).shape, flatten(t[0]) is not None, flatten(t.t())
    (tensordispatch.Size([6]), True, None)
    """
    if type(self) is not _Tensor or self._key_set != _CPU_KS or not _FLATTEN.ready():
        return None
    shape = self._shape
    if len(shape) == 1:  # the decomposition's start == end: self
        return self
    return reshape(self, [self.numel()] if shape else [1])
