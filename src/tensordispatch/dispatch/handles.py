"""Registration handles and the registration lock (Notes [Removal from finalizers] and
[Entry lifetime] in dispatcher.py).

Owns `RegistrationHandle` (undoes exactly one registration) and `RegistryLock` (the
dispatcher's lock, which applies removals deferred by finalizers when entered). Must not
register anything itself.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tensordispatch.dispatch.dispatcher import Dispatcher

__all__ = ["RegistrationHandle", "RegistryLock"]


def _dispatcher() -> Dispatcher:
    from tensordispatch.dispatch.dispatcher import DISPATCHER

    return DISPATCHER


class RegistrationHandle:
    """Undoes exactly one registration; ``remove()`` is idempotent and thread-safe.

    >>> from tensordispatch.library import Library
    >>> lib = Library("doc_handle", "DEF")
    >>> lib.define("f(Tensor x) -> Tensor")
    'f'
    >>> h = lib.handles[-1]
    >>> h.remove(); h.removed
    True
    >>> lib._destroy()
    """

    __slots__ = ("_undo", "description", "removed")

    def __init__(self, undo: Callable[[], None], description: str) -> None:
        self._undo = undo
        self.removed = False
        self.description = description

    def remove(self) -> None:
        """Undo the registration (a second call does nothing)."""
        with _dispatcher().lock:
            self._remove_locked()

    def _remove_locked(self) -> None:
        if not self.removed:
            self.removed = True
            self._undo()

    def _remove_from_finalizer(self) -> None:
        """Removal requested by garbage collection (Note [Removal from finalizers])."""
        if _dispatcher().lock.try_enter():
            try:
                self._remove_locked()
            finally:
                _dispatcher().lock.release()
        else:
            _dispatcher().pending_removals.append(self)

    def __repr__(self) -> str:
        state = "removed" if self.removed else "live"
        return f"<RegistrationHandle {self.description} ({state})>"


class RegistryLock:
    """The registration lock; entering it first applies removals deferred by finalizers."""

    def __init__(self, dispatcher: Dispatcher) -> None:
        self._lock = threading.Lock()
        self._dispatcher = dispatcher

    def __enter__(self) -> None:
        self._lock.acquire()
        self._dispatcher.drain_pending_removals()

    def __exit__(self, *exc: object) -> None:
        self._lock.release()

    def try_enter(self) -> bool:
        """Acquire without blocking (False if anyone, this thread included, holds it)."""
        if not self._lock.acquire(blocking=False):
            return False
        self._dispatcher.drain_pending_removals()
        return True

    def release(self) -> None:
        """Release after ``try_enter``."""
        self._lock.release()
