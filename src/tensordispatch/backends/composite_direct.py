"""The known CPU kernels of the composite factories' inner calls, for a direct call.

Owns one question, asked by the CompositeExplicitAutograd factories (``zeros``, ``ones``,
``full``, ``*_like``; composite.py; ``arange``, ``linspace``, ``eye``: composite_layout.py)
on every call: would the operators they call (``empty.memory_format``, ``empty_strided``,
``fill_.Scalar``; the range factories' out= operators, ``KnownOutKernel``), dispatched now,
run exactly our own BackendSelect and CPU kernels? Must not change what any call computes
or which kernels run: it only skips dispatch hops whose outcome it has checked.

Note [Composite factories call known kernels directly]
torch's ``zeros`` is a CompositeExplicitAutograd kernel that dispatches ``at::empty`` and
``zero_``: in C++ those two dispatches cost ~100 ns; here a full dispatch of ``empty`` (entry,
BackendSelect kernel, redispatch) costs ~1 us and ``fill_`` ~0.5 us, most of a 4x4
``td.zeros``. Their outcome is a pure function of the thread-local words, the tensor
arguments' key set and each operator's published dispatch state, which is replaced (a new
object) by every registration that can change it, and while a ``dispatch_trace`` is open
(Note [Tracing by republishing]). So ``direct_cpu_kernels()`` answers from a memo keyed by
the identity of the three published states, under one set of thread-local words: the
factory bindings' (default included, default excluded plus the autograd and
ADInplaceOrView keys, Note [Factories run below ADInplaceOrView]). For new states it asks
the dispatcher itself (``lookup`` for the full dispatch, ``entry_for`` for the
BackendSelect kernel's redispatch) which callables it would run, and answers yes only when
they are our generated BackendSelect kernels (they redispatch to the device's backend and
pass the arguments on unchanged) and our CPU kernels ``empty_cpu``, ``empty_strided_cpu``
and ``fill_``. The factories then call those CPU kernels themselves, for a CPU device only.
Anything else (a mode, functionalization, vmap, a trace, an override of any of the three
operators at any key, a call made without the binding's exclusion) takes the full dispatch.
"""

from __future__ import annotations

from typing import Any

from tensordispatch.dispatch.keyset import (
    AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW,
    DEFAULT_EXCLUDED_RAW,
    DEFAULT_INCLUDED_RAW,
)
from tensordispatch.dispatch.tls import local_state
from tensordispatch.tensor.device import CPU

__all__ = ["EMPTY_ONLY", "FILL_TOO", "KnownOutKernel", "direct_cpu_kernels"]

_ST = local_state()
_BELOW_AD_WORD = DEFAULT_EXCLUDED_RAW | AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW

# (the three OperatorEntry objects) once looked up; then (states, answer) of the last check
_ENTRIES: tuple[Any, Any, Any] | None = None
# (state of each, answer under the default words, answer under the bindings' words)
_MEMO: tuple[Any, ...] = (None, None, None, 0, 0)


def direct_cpu_kernels() -> int:
    """What the factories may call directly under the current thread-local words (Note
    [Composite factories call known kernels directly]): ``FILL_TOO`` (2) when dispatching
    ``empty.memory_format``, ``empty_strided`` (no tensor arguments, no device) and
    ``fill_.Scalar`` (on a CPU tensor) would run exactly our BackendSelect kernels and our
    CPU kernels ``empty_cpu``, ``empty_strided_cpu`` and ``fill_`` (the factory bindings'
    words, below ADInplaceOrView); ``EMPTY_ONLY`` (1) when that holds for the two ``empty``
    operators only (the default words: ``fill_`` would bump the version counter through
    ADInplaceOrView); 0 otherwise.

    >>> from tensordispatch.backends.aten import below_ad_inplace_or_view
    >>> direct_cpu_kernels(), below_ad_inplace_or_view(direct_cpu_kernels)
    (1, 2)
    """
    words = _ST.__dict__
    if words["included"] is not DEFAULT_INCLUDED_RAW:
        return 0
    excluded = words["excluded"]
    if excluded is DEFAULT_EXCLUDED_RAW:
        at = 3  # the index of its answer in _MEMO
    elif excluded == _BELOW_AD_WORD:
        at = 4
    else:
        return 0
    entries = _ENTRIES or _entries()
    empty, strided, fill = entries
    memo = _MEMO
    if empty.state is memo[0] and strided.state is memo[1] and fill.state is memo[2]:
        return memo[at]  # type: ignore[no-any-return]
    return _check(entries)[at]  # type: ignore[no-any-return]


EMPTY_ONLY = 1
FILL_TOO = 2


def _entries() -> tuple[Any, Any, Any]:
    from tensordispatch.backends.aten import op

    global _ENTRIES
    _ENTRIES = (
        op("empty.memory_format")._entry,
        op("empty_strided")._entry,
        op("fill_.Scalar")._entry,
    )
    return _ENTRIES


def _check(entries: tuple[Any, Any, Any]) -> tuple[Any, ...]:
    """Ask the dispatcher what the three operators' current states run, under the default
    words and under the factory bindings' words, and remember the answers."""
    from tensordispatch.backends.aten import backend_select_keyset
    from tensordispatch.backends.cpu.kernels import empty_cpu, empty_strided_cpu, fill_
    from tensordispatch.generated import registrations as gen

    global _MEMO
    states = tuple(e.state for e in entries)
    empty, strided, fill = states
    below = backend_select_keyset(None, None, None)
    answers = []
    for excluded in (DEFAULT_EXCLUDED_RAW, _BELOW_AD_WORD):
        ok = (
            all(s.tracer is None for s in states)
            and empty.lookup(excluded, DEFAULT_INCLUDED_RAW, 0)
            is gen.backend_select_empty_memory_format
            and empty.entry_for(below) is empty_cpu
            and strided.lookup(excluded, DEFAULT_INCLUDED_RAW, 0)
            is gen.backend_select_empty_strided
            and strided.entry_for(below) is empty_strided_cpu
        )
        fills = ok and fill.lookup(excluded, DEFAULT_INCLUDED_RAW, CPU._key_set) is fill_
        answers.append(FILL_TOO if fills else EMPTY_ONLY if ok else 0)
    _MEMO = (*states, *answers)
    return _MEMO


class KnownOutKernel:
    """Whether an out= operator (``arange.start_out``, ``linspace.out``) dispatched on a CPU
    ``out`` under the factory bindings' words would run exactly our CPU kernel ``kernel``
    (Note [Composite factories call known kernels directly]), memoized per published state
    as ``direct_cpu_kernels`` is. Under those words ADInplaceOrView and the autograd keys are
    excluded, so the one kernel is the whole call.

    >>> from tensordispatch.backends.aten import below_ad_inplace_or_view
    >>> from tensordispatch.backends.cpu.layout import arange_start_out
    >>> g = KnownOutKernel("arange.start_out", arange_start_out)
    >>> g.known(), below_ad_inplace_or_view(g.known)
    (False, True)
    """

    __slots__ = ("answer", "entry", "kernel", "name", "state")

    def __init__(self, name: str, kernel: Any) -> None:
        self.name, self.kernel = name, kernel
        self.entry: Any = None
        self.state: Any = None
        self.answer = False

    def known(self) -> bool:
        """True when the current words are the bindings' and the call would run ``kernel``."""
        words = _ST.__dict__
        if words["included"] is not DEFAULT_INCLUDED_RAW or words["excluded"] != _BELOW_AD_WORD:
            return False
        entry = self.entry
        if entry is not None and entry.state is self.state:
            return self.answer
        return self._check()

    def _check(self) -> bool:
        from tensordispatch.backends.aten import op

        self.entry = entry = op(self.name)._entry
        state = entry.state
        self.answer = state.tracer is None and (
            state.lookup(_BELOW_AD_WORD, DEFAULT_INCLUDED_RAW, CPU._key_set) is self.kernel
        )
        self.state = state  # after the answer: a reader matching the state sees its answer
        return self.answer
