"""Lazy backend settings (torch._lazy.config): forcing an operator onto the eager fallback,
and when the NumPy lowering compiles a new graph.

Owns the per-thread settings (fields of the dispatcher's thread-local state, as the house
style keeps every mutable setting; torch's force-fallback is process-wide): the operator
forced onto the fallback, and whether a new graph's first run compiles its source at once
instead of interpreting it (lowering.py Note [First run interpreted]; read by the thread
that syncs). Must not trace.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from tensordispatch.dispatch.tls import local_state, register_field

__all__ = [
    "FORCING",
    "FORCING_LOCK",
    "FORCING_STARTED",
    "compile_on_first_run",
    "force_fallback",
    "get_compile_on_first_run",
    "get_force_fallback",
    "set_compile_on_first_run",
    "set_force_fallback",
]

register_field("lazy_force_fallback", "")
register_field("lazy_compile_on_first_run", False)
_ST = local_state()
#: How many threads force an operator onto the fallback now, changed under FORCING_LOCK;
#: FORCING_STARTED's hooks run (under the lock) when it leaves 0 (inline_methods.py Note
#: [The default-state test]: the inlined methods' validations are dropped then, and none
#: is recorded while any thread forces).
FORCING = [0]
FORCING_LOCK = threading.Lock()
FORCING_STARTED: list[Callable[[], None]] = []


def set_force_fallback(configval: str) -> None:
    """Run operator ``configval`` (``"aten::sub"``: every overload) through the eager CPU
    fallback instead of tracing it; ``""`` turns it off (torch._lazy.config)."""
    with FORCING_LOCK:
        was = bool(_ST.lazy_force_fallback)
        _ST.lazy_force_fallback = configval
        if configval and not was:
            FORCING[0] += 1
            if FORCING[0] == 1:
                for hook in FORCING_STARTED:
                    hook()
        elif was and not configval:
            FORCING[0] -= 1


def get_force_fallback() -> str:
    """The operator currently forced onto the fallback (``""``: none).

    >>> get_force_fallback()
    ''
    """
    return str(_ST.lazy_force_fallback)


@contextmanager
def force_fallback(configval: str) -> Iterator[None]:
    """``set_force_fallback`` for the duration of a block, restored afterwards.

    >>> with force_fallback("aten::sub"):
    ...     get_force_fallback()
    'aten::sub'
    """
    previous = get_force_fallback()
    set_force_fallback(configval)
    try:
        yield
    finally:
        set_force_fallback(previous)


def set_compile_on_first_run(enabled: bool) -> None:
    """With ``True``, the NumPy lowering compiles a new graph's source before its first run
    instead of interpreting that run and compiling on the second (Note [First run
    interpreted]); the results are the same bits either way. ``False`` (the default)
    removes the thread's own value, so the thread-local state the tracing fast paths check
    stays at its base size."""
    if enabled:
        _ST.lazy_compile_on_first_run = True
    else:
        _ST.__dict__.pop("lazy_compile_on_first_run", None)


def get_compile_on_first_run() -> bool:
    """Whether new graphs are compiled before their first run (default False).

    >>> get_compile_on_first_run()
    False
    """
    return bool(_ST.lazy_compile_on_first_run)


@contextmanager
def compile_on_first_run(enabled: bool = True) -> Iterator[None]:
    """``set_compile_on_first_run`` for the duration of a block, restored afterwards.

    >>> with compile_on_first_run():
    ...     get_compile_on_first_run()
    True
    """
    previous = get_compile_on_first_run()
    set_compile_on_first_run(enabled)
    try:
        yield
    finally:
        set_compile_on_first_run(previous)
