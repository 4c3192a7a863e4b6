"""Python dispatch modes: ``DispatchMode`` (torch's TorchDispatchMode) and its mode stack.

Owns the per-thread mode stack (``local_state().modes``, innermost last) and the global
fallbacks of Python and PythonTLSSnapshot (``python_fallback_kernel``,
``python_tls_snapshot_fallback``, installed by fallbacks.py). Must not know about tables or
registrations: a mode reaches the dispatcher only through those two fallbacks and the TLS
include set.

Note [Modes as dispatch keys]
As in torch, a mode is not a check on the hot path. Entering the first mode TLS-includes
Python and PythonTLSSnapshot; leaving the last un-includes them. The included word is part
of the call cache's key (operator.py, Note [Published dispatch state]), so calls made with
no mode active look up exactly the entries they did before any mode existed, and calls
under a mode land on different, separately cached entries. With no mode, nothing here runs.

A call under a mode reaches PythonTLSSnapshot's fallback first (the highest key; torch
records the thread's TLS there for parts of its Python machinery a mode handler never sees:
in 2.13 a handler sees the TLS of whatever redispatched to Python, e.g. an autograd
kernel's exclude guard, checked live; ours only redispatches and is marked transparent, so
it costs nothing unless a trace is open). The keys in between (autograd, ADInplaceOrView,
...) run as usual; Python's fallback then runs the innermost mode's
``__torch_dispatch__(func, types, args, kwargs)`` with:

* the mode popped, so the handler's own calls go to the next mode down, or, with the
  stack empty, to the kernels below Python (Python and PythonTLSSnapshot un-included);
* every key above Python excluded on top of the current exclude set: calls made by the
  handler start below autograd, as in torch 2.13, where a handler sees ``exclude =
  current + keys above Python`` (checked live).

Everything is restored in ``finally``, also when the handler raises. ``types`` holds the
types of the tensor arguments whose key set carries Python (tensor subclasses with a
``__torch_dispatch__``); it is ``()`` for plain tensors, as in torch.

Cost (benchmarks/bench_dispatch.py): with no mode, nothing. For an operator with a schema,
Python's slot does not run ``python_fallback_kernel`` but a kernel generated for the
operator (mode_entry.py, Note [Generated mode entries]) with the same behaviour and no loop
over the arguments. A call under a trivial mode is then ~3.5 plain calls (outer entry, the
generated entry's bookkeeping, the handler, the inner call), ~0.21x torch's
TorchDispatchMode on the same machine (the issue's target is 0.2x; what remains is
interpreter work per bytecode, mostly the thread-local swap torch's semantics require).

Note [Canonical mode words]
Under one mode with default thread-local state, the included word is always
``INCLUDED_WITH_MODES_RAW`` and, inside the handler, the excluded word is always
``HANDLER_EXCLUDED_RAW``: pushing and popping modes and the generated mode entries
(mode_entry.py) store these very objects rather than fresh ints of equal value. The mode
entry then swaps words without integer arithmetic, and the handler's own calls find their
cache level by identity, as plain calls find the default one (calling.py).

Where we differ from torch: a handler returning NotImplemented raises the TypeError
immediately (torch would go on to try tensor subclasses' ``__torch_dispatch__``; our
tensors have no Python-key subclasses yet). A Python-key call with no mode active
redispatches below Python.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Any

from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import (
    BACKEND_MASK_RAW,
    DEFAULT_EXCLUDED_RAW,
    DEFAULT_INCLUDED_RAW,
    FULL_RAW,
    full_after_raw,
    keyset_raw,
)
from tensordispatch.dispatch.tls import local_state

__all__ = [
    "ABOVE_PYTHON_RAW",
    "HANDLER_EXCLUDED_RAW",
    "INCLUDED_WITH_MODES_RAW",
    "NOT_MODE_WORD_RAW",
    "PYTHON_AFTER_RAW",
    "PYTHON_BIT_RAW",
    "DispatchMode",
    "_disable_current_modes",
    "_get_current_dispatch_mode",
    "_get_current_dispatch_mode_stack",
    "_len_torch_dispatch_stack",
    "_pop_mode",
    "_pop_mode_temporarily",
    "_push_mode",
    "not_implemented_message",
    "python_fallback_kernel",
    "python_tls_snapshot_fallback",
    "python_types",
]

_STATE = local_state()

_PYTHON_BIT = PYTHON_BIT_RAW = keyset_raw(DispatchKey.Python)
_MODE_WORD = _PYTHON_BIT | keyset_raw(DispatchKey.PythonTLSSnapshot)
# Every functionality strictly above Python (PythonDispatcher stays: FULL_AFTER keeps it).
_ABOVE_PYTHON = ABOVE_PYTHON_RAW = (
    FULL_RAW & ~full_after_raw(DispatchKey.Python) & ~_PYTHON_BIT & ~BACKEND_MASK_RAW
)
# Positive (bits 0-61): ``&`` with a negative int is slower in CPython.
_NOT_MODE_WORD = NOT_MODE_WORD_RAW = FULL_RAW & ~_MODE_WORD
_PYTHON_AFTER = PYTHON_AFTER_RAW = full_after_raw(DispatchKey.Python)
# Note [Canonical mode words]: the common thread-local words under a mode and inside its
# handler, as single int objects, so the hot paths can recognize them by identity.
INCLUDED_WITH_MODES_RAW = DEFAULT_INCLUDED_RAW | _MODE_WORD
HANDLER_EXCLUDED_RAW = DEFAULT_EXCLUDED_RAW | _ABOVE_PYTHON
_SNAPSHOT_AFTER = full_after_raw(DispatchKey.PythonTLSSnapshot)


class DispatchMode:
    """A Python dispatch mode: every operator call made inside ``with mode:`` in this thread
    goes to ``mode.__torch_dispatch__(func, types, args, kwargs)`` (torch's
    TorchDispatchMode; Note [Modes as dispatch keys]).

    ``func`` is the OpOverload, ``args`` a tuple and ``kwargs`` a dict of what the caller
    passed. Calls made inside the handler skip this mode: ``func(*args, **kwargs)`` runs
    the next mode down, or the kernels.

    >>> from tensordispatch.library import Library
    >>> from tensordispatch.dispatch import backend_tensor_keyset, BackendComponent
    >>> import tensordispatch.ops as ops
    >>> lib = Library("doc_mode", "DEF"); _ = lib.define("f(Tensor x) -> Tensor")
    >>> _ = lib.impl("f", lambda x: "kernel", "CPU")
    >>> class T: _key_set = backend_tensor_keyset(BackendComponent.CPUBit).raw
    >>> class Log(DispatchMode):
    ...     def __torch_dispatch__(self, func, types, args=(), kwargs=None):
    ...         print("saw", func, types)
    ...         return func(*args, **(kwargs or {}))
    >>> with Log():
    ...     ops.doc_mode.f(T())
    saw doc_mode.f.default ()
    'kernel'
    >>> lib._destroy()
    """

    def __init__(self, _dispatch_key: Any = None) -> None:
        pass

    def __torch_dispatch__(
        self,
        func: Any,
        types: tuple[type, ...],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        """Handle one operator call; subclasses override it (the base raises)."""
        raise NotImplementedError(
            " ".join(
                [
                    f"{type(self).__name__}.__torch_dispatch__ is not implemented;",
                    "a DispatchMode subclass must override",
                    "__torch_dispatch__(self, func, types, args, kwargs)",
                ]
            )
        )

    def __enter__(self) -> DispatchMode:
        _push_mode(self)
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        _pop_mode()

    @classmethod
    def push(cls, *args: Any, **kwargs: Any) -> DispatchMode:
        """Construct a mode (torch's ``TorchDispatchMode.push`` spelling); enter it with
        ``with``."""
        return cls(*args, **kwargs)

    @classmethod
    def is_infra_mode(cls) -> bool:
        """Whether this is an infrastructure mode (torch's notion); never, for now."""
        return False


def _push_mode(mode: DispatchMode) -> None:
    """Push ``mode`` on this thread's stack (the first mode TLS-includes the Python keys).

    >>> m = DispatchMode(); _push_mode(m); _get_current_dispatch_mode() is m
    True
    >>> _pop_mode() is m, _get_current_dispatch_mode()
    (True, None)
    """
    st = _STATE
    if not st.modes:
        included = st.included | _MODE_WORD
        # the canonical object when it is the common word (Note [Canonical mode words])
        st.included = INCLUDED_WITH_MODES_RAW if included == INCLUDED_WITH_MODES_RAW else included
    st.modes.append(mode)


def _pop_mode() -> DispatchMode:
    """Pop the innermost mode of this thread's stack and return it (the last one popped
    un-includes the Python keys).

    >>> _pop_mode()
    Traceback (most recent call last):
    ...
    RuntimeError: trying to pop from empty mode stack: no DispatchMode is active in this thread; ...
    """
    st = _STATE
    modes = st.modes
    if not modes:
        raise RuntimeError(
            " ".join(
                [
                    "trying to pop from empty mode stack:",
                    "no DispatchMode is active in this thread;",
                    "pop only modes this thread pushed (prefer `with mode:`)",
                ]
            )
        )
    mode: DispatchMode = modes.pop()
    if not modes:
        included = st.included & _NOT_MODE_WORD
        st.included = DEFAULT_INCLUDED_RAW if included == DEFAULT_INCLUDED_RAW else included
    return mode


def _get_current_dispatch_mode() -> DispatchMode | None:
    """The innermost active mode of this thread, or None.

    >>> _get_current_dispatch_mode() is None
    True
    """
    modes = _STATE.modes
    return modes[-1] if modes else None


def _get_current_dispatch_mode_stack() -> list[DispatchMode]:
    """A copy of this thread's mode stack, outermost first.

    >>> _get_current_dispatch_mode_stack()
    []
    """
    return list(_STATE.modes)


def _len_torch_dispatch_stack() -> int:
    """How many modes are active in this thread.

    >>> _len_torch_dispatch_stack()
    0
    """
    return len(_STATE.modes)


@contextmanager
def _pop_mode_temporarily() -> Iterator[DispatchMode]:
    """Pop the innermost mode for the block, push it back after.

    >>> with DispatchMode() as m:
    ...     with _pop_mode_temporarily() as popped:
    ...         popped is m, _len_torch_dispatch_stack()
    (True, 0)
    """
    mode = _pop_mode()
    try:
        yield mode
    finally:
        _push_mode(mode)


@contextmanager
def _disable_current_modes() -> Iterator[list[DispatchMode]]:
    """Pop every mode for the block (yielding them, outermost first), push them back after.

    >>> with DispatchMode(), DispatchMode():
    ...     with _disable_current_modes() as popped:
    ...         len(popped), _len_torch_dispatch_stack()
    (2, 0)
    """
    popped = [_pop_mode() for _ in range(len(_STATE.modes))][::-1]
    try:
        yield popped
    finally:
        for mode in popped:
            _push_mode(mode)


def python_types(values: tuple[Any, ...]) -> tuple[type, ...]:
    """Types of the tensor arguments carrying the Python key, in order, without repeats
    (the ``types`` of ``__torch_dispatch__``).

    >>> python_types((1, [2.0]))
    ()
    """
    found: list[type] = []
    for value in values:
        for x in value if value.__class__ in _SEQUENCES else (value,):
            ks = getattr(x, "_key_set", 0)
            if ks.__class__ is int and ks & _PYTHON_BIT and x.__class__ not in found:
                found.append(x.__class__)
    return tuple(found)


_SEQUENCES = (list, tuple)


def python_tls_snapshot_fallback(raw: int, op: Any, *args: Any, **kwargs: Any) -> Any:
    """PythonTLSSnapshot's global fallback: continue below PythonTLSSnapshot (Note [Modes as
    dispatch keys]: torch records the TLS here for machinery a mode handler never sees).
    Registered transparent, so calls skip it unless a trace is open."""
    return op.redispatch(raw & _SNAPSHOT_AFTER, *args, **kwargs)


def python_fallback_kernel(raw: int, op: Any, *args: Any, **kwargs: Any) -> Any:
    """Python's global fallback: with a mode active in this thread, run the innermost
    mode's handler with that mode popped and the keys above Python excluded (Note [Modes
    as dispatch keys]); with none (a tensor carrying the Python key), redispatch below
    Python."""
    d = _STATE.__dict__  # plain dict reads (Note [Reading the thread-local state])
    modes = d["modes"]
    if not modes:
        return op.redispatch(raw & _PYTHON_AFTER, *args, **kwargs)
    # ``types``: one OR over the dispatch arguments first (the entry function has already
    # checked that they are tensors), as usually none of them carries Python.
    facts = op._entry.facts
    bits = 0
    npos = len(args)
    for i, form in facts.dispatch:
        x = args[i] if i < npos else kwargs.get(facts.names[i])
        if x is None:
            continue
        if form == "t" or form == "t?":
            bits |= x._key_set
        else:
            for y in x:
                if y is not None:
                    bits |= y._key_set
    types = python_types((*args, *kwargs.values())) if bits & _PYTHON_BIT else ()
    included = d["included"]
    excluded = d["excluded"]
    mode = modes.pop()
    if not modes:
        d["included"] = included & _NOT_MODE_WORD
    d["excluded"] = excluded | _ABOVE_PYTHON
    try:
        result = mode.__torch_dispatch__(op, types, args, kwargs)
    finally:
        modes.append(mode)
        d["included"] = included
        d["excluded"] = excluded
    if result is NotImplemented:
        raise TypeError(not_implemented_message(op, mode))
    return result


def not_implemented_message(op: Any, mode: DispatchMode) -> str:
    """The error of a handler that returned NotImplemented."""
    return "\n".join(
        [
            f"Multiple dispatch failed for 'tensordispatch.ops.{op}';"
            + " all __torch_dispatch__ handlers returned NotImplemented:",
            "",
            f"  - mode object {mode!r}",
            "",
            "Return a result from __torch_dispatch__, e.g. func(*args, **kwargs)"
            + " to run the kernels below the mode.",
        ]
    )
