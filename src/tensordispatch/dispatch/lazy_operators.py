"""Operators defined on first lookup: the dispatcher's side (Note [Operators defined on first
lookup] in codegen/gen_registrations.py).

Owns the `LazyOperators` mixin of `Dispatcher`: pending operator names, each with the
callback that defines it, and materialising them on first lookup or all at once before an
enumeration, with the batch of the defining thread set aside meanwhile (Note [Batched
registration] in dispatcher.py). Must not look operators up itself: dispatcher.py's lookups
call `materialise` on a miss.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from tensordispatch.dispatch.handles import RegistrationHandle

if TYPE_CHECKING:
    from tensordispatch.dispatch.operator import OperatorEntry

__all__ = ["LazyOperators"]


class LazyOperators:
    """Pending operator names of the dispatcher (its fields are set in Dispatcher.__init__)."""

    if TYPE_CHECKING:
        lock: Any
        _lazy: dict[str, Callable[[str], None]]
        _lazy_lock: threading.RLock
        _materialising: set[str]
        _batch_owner: int | None
        _batch_depth: int
        _dirty: dict[OperatorEntry, None]
        _to_announce: dict[OperatorEntry, None]
        _batch_frames: list[tuple[int, dict[OperatorEntry, None], dict[OperatorEntry, None]]]

    def add_lazy_operators(
        self, ns: str, names: Iterable[str], materialise: Callable[[str], None]
    ) -> RegistrationHandle:
        """Have ``materialise("ns::name")`` define (and register kernels for) each operator
        name of ``ns`` the first time it is looked up or registered to; anything that
        enumerates operators materialises every pending name first (Note [Operators defined
        on first lookup] in codegen/gen_registrations.py). The handle drops the names still
        pending.

        >>> from tensordispatch.dispatch.dispatcher import DISPATCHER
        >>> from tensordispatch.library import Library
        >>> lib = Library("doc_lazy", "DEF")
        >>> define = lambda qualified: lib.define("f(Tensor x) -> Tensor")
        >>> h = DISPATCHER.add_lazy_operators("doc_lazy", ["f"], define)
        >>> DISPATCHER.pending_operators("doc_lazy")
        ['doc_lazy::f']
        >>> DISPATCHER.find("doc_lazy::f").qualified_overload_name
        'doc_lazy::f'
        >>> DISPATCHER.pending_operators("doc_lazy")
        []
        >>> h.remove(); lib._destroy()
        """
        qualified = [f"{ns}::{name}" for name in names]
        with self.lock:
            for q in qualified:
                self._lazy[q] = materialise

        def undo() -> None:
            for q in qualified:
                if self._lazy.get(q) is materialise:
                    del self._lazy[q]

        return RegistrationHandle(undo, f"lazy operators of {ns} ({len(qualified)})")

    def pending_operators(self, ns: str | None = None) -> list[str]:
        """Qualified names registered lazily and not defined yet (sorted)."""
        prefix = "" if ns is None else f"{ns}::"
        return sorted(q for q in self._lazy if q.startswith(prefix))

    def materialise(self, qualified: str) -> None:
        """Define ``qualified`` now if it is pending (never call it holding ``self.lock``:
        the callback registers). Other threads wait until it is defined; a lookup of the
        same name from inside the callback returns at once."""
        if qualified not in self._lazy:
            return
        with self._lazy_lock:
            fn = self._lazy.get(qualified)
            if fn is None or qualified in self._materialising:
                return
            self._materialising.add(qualified)
            suspended = self._suspend_batch()
            try:
                fn(qualified)
            finally:
                self._resume_batch(suspended)
                self._materialising.discard(qualified)
                if self._lazy.get(qualified) is fn:
                    del self._lazy[qualified]

    def _suspend_batch(self) -> bool:
        """Set this thread's open batch aside, so an operator defined inside it is published
        (and announced) at once, as if it had been defined at import, before the batch. The
        thread stays the batch owner meanwhile (no other thread's batch can interleave)."""
        with self.lock:
            if self._batch_owner != threading.get_ident():
                return False
            self._batch_frames.append((self._batch_depth, self._dirty, self._to_announce))
            self._batch_depth, self._dirty, self._to_announce = 0, {}, {}
            return True

    def _resume_batch(self, suspended: bool) -> None:
        if not suspended:
            return
        with self.lock:
            depth, dirty, announce = self._batch_frames.pop()
            self._batch_owner = threading.get_ident()
            self._batch_depth = depth
            self._dirty = {**dirty, **self._dirty}
            self._to_announce = {**announce, **self._to_announce}

    def materialise_all(self) -> None:
        """Define every pending operator (before anything enumerates operators)."""
        while self._lazy:
            before = len(self._lazy)
            for qualified in list(self._lazy):
                self.materialise(qualified)
            if len(self._lazy) >= before:  # only names being materialised by this thread
                return
