"""``dispatch_trace()``: record every hop of every call, printable as an indented tree.

Owns the trace records and the recording wrapper. torch has this only in debug builds; ours
is always available and costs nothing when off (Note [Tracing by republishing]).

Note [Tracing by republishing]
The hot path has no "am I tracing?" test. Opening the first trace republishes every
operator's table state with a tracer (operator.py): the cache entries built from then on
are wrapped in a recorder and transparent fallbacks are not collapsed, so each hop (the
autograd fallback, then the backend kernel, ...) is visible. Closing the last trace
republishes plain states. Records go to the trace opened by the calling thread; calls
made by other threads meanwhile pass through the recorder without recording.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tensordispatch.dispatch.dispatcher import DISPATCHER
from tensordispatch.dispatch.kernel import KernelFunction
from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import DispatchKeySet, highest_priority_key_raw

__all__ = ["DispatchTrace", "Hop", "dispatch_trace"]


@dataclass(frozen=True, slots=True)
class Hop:
    """One kernel invocation: operator, the key set it received, the key that chose it,
    the kernel's debug string and provenance label, and the nesting depth."""

    op: str
    keyset: DispatchKeySet
    key: DispatchKey
    debug: str
    label: str
    depth: int

    def __str__(self) -> str:
        return f"{'  ' * self.depth}{self.op} {self.keyset!r} -> {self.key}: {self.debug} [{self.label}]"


@dataclass(slots=True)
class DispatchTrace:
    """The hops recorded by one ``dispatch_trace()`` block, in call order."""

    hops: list[Hop] = field(default_factory=list)
    depth: int = 0

    def __str__(self) -> str:
        return "\n".join(str(h) for h in self.hops)


class _Tracer:
    """Builds recording entries (operator.py calls ``wrap`` while a trace is open)."""

    def __init__(self) -> None:
        self.local = threading.local()

    def wrap(
        self, op: str, raw: int, slot: tuple[KernelFunction, str], fn: Callable[..., Any]
    ) -> Callable[..., Any]:
        local = self.local
        kernel, label = slot
        keyset = DispatchKeySet.from_raw(raw)
        key = highest_priority_key_raw(raw)

        def traced(*args: Any, **kwargs: Any) -> Any:
            trace: DispatchTrace | None = getattr(local, "trace", None)
            if trace is None:
                return fn(*args, **kwargs)
            trace.hops.append(Hop(op, keyset, key, kernel.debug, label, trace.depth))
            trace.depth += 1
            try:
                return fn(*args, **kwargs)
            finally:
                trace.depth -= 1

        return traced


@contextmanager
def dispatch_trace() -> Iterator[DispatchTrace]:
    """Record every dispatcher hop made by this thread inside the block.

    >>> from tensordispatch.library import Library
    >>> from tensordispatch.dispatch import backend_tensor_keyset, BackendComponent
    >>> import tensordispatch.ops as ops
    >>> lib = Library("doc_trace", "DEF"); _ = lib.define("f(Tensor x) -> Tensor")
    >>> _ = lib.impl("f", lambda x: x, "CPU", debug="fn_cpu")
    >>> class T: _key_set = backend_tensor_keyset(BackendComponent.CPUBit).raw
    >>> with dispatch_trace() as trace:
    ...     _ = ops.doc_trace.f(T())
    >>> print(trace)  # doctest: +ELLIPSIS
    doc_trace::f DispatchKeySet(CPU, AutogradCPU) -> AutogradCPU: registered at ...fallbacks.py:... [backend fallback]
      doc_trace::f DispatchKeySet(CPU) -> CPU: fn_cpu [kernel]
    >>> lib._destroy()
    """
    with DISPATCHER.lock:
        DISPATCHER.open_traces += 1
        if DISPATCHER.tracer is None:
            DISPATCHER.tracer = _Tracer()
            DISPATCHER._refresh_all()
        tracer = DISPATCHER.tracer
    trace = DispatchTrace()
    previous = getattr(tracer.local, "trace", None)
    tracer.local.trace = trace
    try:
        yield trace
    finally:
        tracer.local.trace = previous
        with DISPATCHER.lock:
            DISPATCHER.open_traces -= 1
            if DISPATCHER.open_traces == 0:
                DISPATCHER.tracer = None
                DISPATCHER._refresh_all()
