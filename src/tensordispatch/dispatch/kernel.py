"""KernelFunction: one registered kernel, its calling convention and its debug string.

Owns the kernel kinds (how a Python function wants to be called), the fallthrough and
ambiguity sentinels, and ``make_entry``: the step that turns a resolved table slot into the
plain callable the hot path invokes with the operator's arguments. Must not know about
operators' tables or registration (operator.py, dispatcher.py).

Note [Kernel calling conventions]
A table slot holds a KernelFunction; a call needs a callable taking the operator's
arguments. ``make_entry`` bridges the two once per (slot, final key set) and the result is
cached by the operator (operator.py), so the conventions cost nothing per call:

============================  =====================================  ==================
kind                          called as                              entry
============================  =====================================  ==================
UNBOXED                       ``fn(*args, **kwargs)``                ``fn`` itself
UNBOXED_WITH_KEYSET           ``fn(keyset, *args, **kwargs)``        ``partial``
FALLBACK                      ``fn(op, *args, **kwargs)``            ``partial``
FALLBACK_WITH_KEYSET          ``fn(keyset, op, *args, **kwargs)``    ``partial``
RAW_KEYSET (internal)         ``fn(raw_keyset_int, op, *a, **kw)``   ``partial``
BOXED                         ``fn(op, keyset, stack)``              generated boxer
============================  =====================================  ==================

``keyset`` is the DispatchKeySet after thread-local and fallthrough masking, still holding
the kernel's own key (spec 4.5); ``op`` is the OpOverload; ``stack`` is the list of every
schema argument in order, defaults filled in. A boxed kernel returns the operator's result
(torch pushes it back onto the stack; a Python return value is the same information).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from functools import partial
from typing import TYPE_CHECKING, Any

from tensordispatch.dispatch.errors import AmbiguousAutogradOtherError, FallthroughExecutedError
from tensordispatch.dispatch.keyset import DispatchKeySet

if TYPE_CHECKING:
    from tensordispatch.dispatch.op_overload import OpOverload

__all__ = [
    "AMBIGUOUS_AUTOGRADOTHER",
    "KernelFunction",
    "KernelKind",
    "fallthrough_kernel",
    "make_entry",
]


class KernelKind(IntEnum):
    """How a kernel wants to be called (Note [Kernel calling conventions])."""

    UNBOXED = 0
    UNBOXED_WITH_KEYSET = 1
    FALLBACK = 2
    FALLBACK_WITH_KEYSET = 3
    RAW_KEYSET = 4
    BOXED = 5
    FALLTHROUGH = 6
    AMBIGUOUS = 7


def fallthrough_kernel(*args: object, **kwargs: object) -> Any:
    """The fallthrough sentinel: register it to make the dispatcher skip a key.

    The dispatcher never calls it (the key is masked out of the key set before lookup);
    reaching it through an explicit redispatch is an error (spec 9.5).

    >>> fallthrough_kernel()
    Traceback (most recent call last):
    ...
    tensordispatch.dispatch.errors.FallthroughExecutedError: fallthrough_kernel was executed...
    """
    raise FallthroughExecutedError()


@dataclass(frozen=True, slots=True, eq=False)
class KernelFunction:
    """One registration of a kernel: the function, its kind and its debug string.

    Identity matters (``eq=False``): registering the same function twice gives two
    KernelFunctions, and a handle removes exactly its own.

    >>> k = KernelFunction(fallthrough_kernel, KernelKind.FALLTHROUGH, "registered at x.py:1")
    >>> k.is_fallthrough, k.flags
    (True, 'fallthrough boxed ')
    """

    fn: Callable[..., Any]
    kind: KernelKind
    debug: str
    # Set on internal fallbacks whose whole behaviour is "redispatch with keyset & mask":
    # the dispatcher may then skip them when it builds a cached entry
    # (Note [Collapsing transparent fallbacks] in operator.py).
    redispatch_mask: int | None = None
    # Set on kernels that can build a faster per-operator callable than the generic
    # convention: ``specializer(op, raw)`` returns it, or None to use the generic one
    # (Python's fallback: mode_entry.py, Note [Generated mode entries]).
    specializer: Callable[[Any, int], Callable[..., Any] | None] | None = None

    @property
    def is_fallthrough(self) -> bool:
        """Whether this is the fallthrough sentinel (skipped through the operator's mask)."""
        return self.kind is KernelKind.FALLTHROUGH

    @property
    def flags(self) -> str:
        """The ``[ ... ]`` flags of ``dump``: every Python kernel is boxed, as in torch."""
        return "fallthrough boxed " if self.is_fallthrough else "boxed "


def _ambiguous_kernel(op: OpOverload, *args: object, **kwargs: object) -> Any:
    raise AmbiguousAutogradOtherError(op._entry.qualified_overload_name, op._entry.dump())


#: The kernel compute() puts at AutogradOther when a CompositeImplicitAutograd kernel and
#: a kernel for a backend mapped to AutogradOther both exist (spec 5.2 rule 6).
AMBIGUOUS_AUTOGRADOTHER = KernelFunction(
    _ambiguous_kernel, KernelKind.AMBIGUOUS, "ambiguous_autogradother"
)


def make_entry(
    kernel: KernelFunction,
    op: OpOverload,
    raw: int,
    boxer: Callable[[Callable[..., Any], OpOverload, DispatchKeySet], Callable[..., Any]],
) -> Callable[..., Any]:
    """The callable that runs ``kernel`` for ``op`` with final key set ``raw``, taking the
    operator's arguments as the caller passed them (Note [Kernel calling conventions]).

    ``boxer(fn, op, keyset)`` is the operator's generated boxing adapter factory.

    >>> make_entry(KernelFunction(len, KernelKind.UNBOXED, ""), None, 0, None) is len
    True
    """
    kind = kernel.kind
    fn = kernel.fn
    if kernel.specializer is not None:
        special = kernel.specializer(op, raw)
        if special is not None:
            return special
    if kind is KernelKind.UNBOXED:
        return fn
    if kind is KernelKind.UNBOXED_WITH_KEYSET:
        return partial(fn, DispatchKeySet.from_raw(raw))
    if kind is KernelKind.FALLBACK:
        return partial(fn, op)
    if kind is KernelKind.FALLBACK_WITH_KEYSET:
        return partial(fn, DispatchKeySet.from_raw(raw), op)
    if kind is KernelKind.RAW_KEYSET:
        return partial(fn, raw, op)
    if kind is KernelKind.BOXED:
        return boxer(fn, op, DispatchKeySet.from_raw(raw))
    if kind is KernelKind.AMBIGUOUS:
        return partial(fn, op)
    return fn  # the fallthrough sentinel raises when called
