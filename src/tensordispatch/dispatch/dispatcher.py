"""The Dispatcher: the process-wide registry of operators, fallbacks and namespace claims.

Owns registration (def / impl / fallback / library claim, each returning a
RegistrationHandle that undoes exactly it), its validation and its lock. Every mutation
happens under one lock and ends with the affected tables recomputed and republished
(operator.py); dispatch never takes the lock. Must not parse user-facing arguments
(Library does) or run kernels.

Note [Entry lifetime]
torch deletes an operator entry when its last def and impl handles go. We move it out of
the registry instead, into a weak dictionary: if nothing references it, it is collected
(so namespaces created and destroyed by the thousand in tests cost nothing); if a user
still holds its OpOverload, a later def or impl of the same name revives that very object,
so the OpOverload works again. Global-fallback changes refresh live entries only; a revived
entry is refreshed on revival.

Note [Removal from finalizers]
A Library undoes its registrations when garbage collected, as in torch. Collection can run
at any allocation, including inside a registration that holds the lock halfway through a
mutation; a finalizer must neither wait for the lock (deadlock) nor mutate under a holder's
feet. So a finalizer removes its handles only if it can take the lock at once; otherwise
it queues them, and the next holder applies them as soon as it takes the lock, before
touching anything.

Note [Batched registration]
Each registration recomputes and republishes its operator's table (~30 us); a def
followed by four impls does it five times (plus twice when the entry is created). Inside
``with DISPATCHER.batch():`` the registrations made by the batching thread do every check
and store at once, as always (a rejected one still leaves no trace and raises where it is
made), but only mark their operators dirty; leaving the outermost batch recomputes and
publishes each dirty operator once, from its final registrations, so the result is the
same as without the batch in any order. Until then other threads (and this one) keep
seeing the operators' previous tables, as if the whole batch were one registration made
at its end; ``check_invariants`` and ``dump_table`` of a dirty operator are stale
meanwhile. Registrations by other threads during a batch are not deferred. A global
fallback change inside a batch marks every live operator dirty.

Note [Registration listeners]
``add_registration_listener(fn)`` (torch's ``Dispatcher::addRegistrationListener``): after
a def or an impl on an entry is published, ``fn(entry)`` runs in the registering thread,
outside the registration lock, so a listener may itself register (and is then called again
for its own registration: a listener must be idempotent). Inside a batch, each entry a def
or an impl touched is announced once, after the batch has published it. An exception from
a listener propagates to the registration that triggered it; the registration stays made.

Note [Atomic registration]
Every check runs before the first mutation, so a rejected registration leaves the
dispatcher exactly as it was (spec 6.7): the entry of a rejected first impl is created
only after its checks pass, a def checks every existing kernel's signature before storing
its schema, an alias-key fallback checks every slot before filling any.
"""

from __future__ import annotations

import threading
import warnings
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from tensordispatch.dispatch.calling import CallingFacts
from tensordispatch.dispatch.errors import (
    DuplicateRegistrationError,
    KernelSignatureError,
    LibraryError,
    SchemaNotFoundError,
)
from tensordispatch.dispatch.handles import RegistrationHandle, RegistryLock
from tensordispatch.dispatch.kernel import KernelFunction, KernelKind
from tensordispatch.dispatch.keys import (
    NUM_RUNTIME_ENTRIES,
    DispatchKey,
    is_alias_key,
    key_name,
    key_of_slot,
    slot_of,
)
from tensordispatch.dispatch.keyset import alias_runtime_keys, keyset_raw, table_index
from tensordispatch.dispatch.lazy_operators import LazyOperators
from tensordispatch.dispatch.op_overload import OpOverloadPacket, make_packet, refresh_packet
from tensordispatch.dispatch.operator import OperatorEntry
from tensordispatch.dispatch.signature import kernel_site, signature_problem

if TYPE_CHECKING:
    # annotations only: the schema model loads with the first operator def (issue 4)
    from tensordispatch.schema.model import FunctionSchema

__all__ = ["DISPATCHER", "Dispatcher", "RegistrationHandle", "kernel_site"]

_Announce = dict[OperatorEntry, None]  # entries a batch announces to the listeners at its end


class Dispatcher(LazyOperators):
    """The registry (one instance, ``DISPATCHER``). See the module docstring."""

    def __init__(self) -> None:
        self.lock = RegistryLock(self)
        self.pending_removals: list[RegistrationHandle] = []
        # Live entries; dead ones (no def, no kernel) wait in _dead while anything (an
        # OpOverload held by a user) still references them, so a re-registration revives
        # the same object (Note [Entry lifetime]).
        self.entries: dict[tuple[str, str], OperatorEntry] = {}
        self._dead: weakref.WeakValueDictionary[tuple[str, str], OperatorEntry] = (
            weakref.WeakValueDictionary()
        )
        self.fallbacks: list[KernelFunction | None] = [None] * NUM_RUNTIME_ENTRIES
        self.libraries: dict[str, str] = {}  # namespace -> debug of its DEF library
        self.override_warned = False
        # Set while any dispatch_trace() is open (trace.py): tables are republished with
        # recording entries, so tracing costs nothing when off.
        self.tracer: Any = None
        self.open_traces = 0
        self._by_name: dict[str, list[OperatorEntry]] = {}  # def'd overloads, in order
        self._packets: dict[str, OpOverloadPacket] = {}
        # Note [Batched registration]: the batching thread, its depth, the dirty entries.
        self._batch_owner: int | None = None
        self._batch_depth = 0
        self._dirty: dict[OperatorEntry, None] = {}
        # Note [Registration listeners]: replaced as a whole (calls read it without the lock)
        self._listeners: tuple[Callable[[OperatorEntry], None], ...] = ()
        self._to_announce: dict[OperatorEntry, None] = {}
        # Note [Operators defined on first lookup] (codegen/gen_registrations.py): qualified
        # name -> the callback that defines it; a name leaves the dict once defined.
        self._lazy: dict[str, Callable[[str], None]] = {}
        self._lazy_lock = threading.RLock()
        self._materialising: set[str] = set()
        # the batching thread's batches set aside while it defines an operator
        # (_suspend_batch): it keeps the ownership, so no other thread's batch interleaves
        self._batch_frames: list[tuple[int, dict[OperatorEntry, None], _Announce]] = []

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Defer table refreshes of this thread's registrations to the end of the block
        (Note [Batched registration]); nests; re-raises whatever the block raised.

        >>> from tensordispatch.library import Library
        >>> with DISPATCHER.batch():
        ...     lib = Library("doc_batch", "DEF")
        ...     _ = lib.define("f(Tensor x) -> Tensor")
        ...     _ = lib.impl("f", lambda x: x, "CPU")
        ...     DISPATCHER.find("doc_batch::f").table[slot_of(DispatchKey.CPU)] is None
        True
        >>> DISPATCHER.find("doc_batch::f").table[slot_of(DispatchKey.CPU)][1]
        'kernel'
        >>> lib._destroy()
        """
        me = threading.get_ident()
        with self.lock:
            owner = self._batch_owner is None or self._batch_owner == me
            if owner:
                self._batch_owner = me
                self._batch_depth += 1
        announce: dict[OperatorEntry, None] = {}
        try:
            yield
        finally:
            if owner:
                with self.lock:
                    self._batch_depth -= 1
                    if self._batch_depth == 0:
                        if not self._batch_frames:
                            self._batch_owner = None
                        dirty, self._dirty = self._dirty, {}
                        for entry in dirty:
                            entry.refresh(self.fallbacks, self.tracer)
                        announce, self._to_announce = self._to_announce, {}
        for entry in announce:
            self._announce(entry)

    def add_registration_listener(
        self, fn: Callable[[OperatorEntry], None], *, replay_existing: bool = False
    ) -> RegistrationHandle:
        """Call ``fn(entry)`` after every def or impl published from now on (Note
        [Registration listeners]); with ``replay_existing``, first for every live entry
        that has a schema, as torch does. The handle's ``remove()`` stops the calls.

        >>> seen = []
        >>> h = DISPATCHER.add_registration_listener(lambda e: seen.append(e.qualified_name))
        >>> from tensordispatch.library import Library
        >>> lib = Library("doc_listen", "DEF"); _ = lib.define("f(Tensor x) -> Tensor")
        >>> _ = lib.impl("f", lambda x: x, "CPU"); h.remove(); lib._destroy(); seen
        ['doc_listen::f', 'doc_listen::f']
        """
        if replay_existing:
            self.materialise_all()
        with self.lock:
            self._listeners = (*self._listeners, fn)
            existing = [e for e in self.entries.values() if e.is_live and e.schema is not None]

        def undo() -> None:
            self._listeners = tuple(f for f in self._listeners if f is not fn)

        handle = RegistrationHandle(undo, f"registration listener {kernel_site(fn)}")
        if replay_existing:
            for entry in existing:
                fn(entry)
        return handle

    def _announce(self, entry: OperatorEntry) -> None:
        """Tell the listeners about a published def or impl (called without the lock)."""
        if not self._listeners:
            return
        if self._deferring():
            self._to_announce[entry] = None
            return
        for fn in self._listeners:
            fn(entry)

    def _deferring(self) -> bool:
        """Whether this thread is inside a batch (not one set aside by _suspend_batch)."""
        return self._batch_depth > 0 and self._batch_owner == threading.get_ident()

    def _refresh(self, entry: OperatorEntry) -> None:
        """Recompute and publish ``entry`` now, or at the end of this thread's batch."""
        if self._deferring():
            self._dirty[entry] = None
        else:
            entry.refresh(self.fallbacks, self.tracer)

    def drain_pending_removals(self) -> None:
        """Apply removals that finalizers could not do (called with the lock held)."""
        while self.pending_removals:
            self.pending_removals.pop()._remove_locked()

    # ----- lookup ---------------------------------------------------------------------------

    def find(self, qualified: str, overload: str = "") -> OperatorEntry | None:
        """The live entry of ``ns::name`` / overload, or None."""
        entry = self.entries.get((qualified, overload))
        if entry is None and qualified in self._lazy:
            self.materialise(qualified)
            entry = self.entries.get((qualified, overload))
        return entry if entry is not None and entry.is_live else None

    def find_schema_or_throw(self, qualified: str, overload: str = "") -> OperatorEntry:
        """The entry if it has a schema, else torch's schema-lookup error (spec 9.6)."""
        entry = self.find(qualified, overload)
        if entry is None:
            raise SchemaNotFoundError(f"Could not find schema for {qualified}.{overload}")
        if entry.schema is None:
            raise SchemaNotFoundError(
                " ".join(
                    [
                        f"Could not find schema for {qualified}.{overload} but we found an",
                        "implementation; did you forget to def() the operator?",
                    ]
                )
            )
        return entry

    def overloads_of(self, qualified: str) -> list[OperatorEntry]:
        """Def'd overloads of one operator name, in definition order."""
        if qualified in self._lazy:
            self.materialise(qualified)
        return list(self._by_name.get(qualified, ()))

    def packet(self, qualified: str) -> OpOverloadPacket | None:
        """The (cached) packet of a def'd operator name, or None if it has no overload."""
        packet = self._packets.get(qualified)
        if packet is None:
            if qualified in self._lazy:
                self.materialise(qualified)
            with self.lock:
                entries = self._by_name.get(qualified)
                if not entries:
                    return None
                packet = self._packets.get(qualified)
                if packet is None:
                    packet = self._packets[qualified] = make_packet(qualified)
                    refresh_packet(packet, entries)
        return packet

    def defines(self, qualified: str) -> bool:
        """Whether the operator name has an overload, or will have one when first looked up
        (Note [Operators defined on first lookup]); no lock, nothing is defined.

        >>> from tensordispatch.library import Library
        >>> lib = Library("doc_defines", "DEF"); _ = lib.define("__f__(Tensor x) -> Tensor")
        >>> DISPATCHER.defines("doc_defines::__f__"), DISPATCHER.defines("doc_defines::g")
        (True, False)
        >>> lib._destroy(); DISPATCHER.defines("doc_defines::__f__")
        False
        """
        return bool(self._by_name.get(qualified)) or qualified in self._lazy

    def refresh_packet(self, qualified: str) -> None:
        """Re-point a cached packet at its overloads' current entries (lock held)."""
        packet = self._packets.get(qualified)
        if packet is not None:
            refresh_packet(packet, self._by_name.get(qualified, []))

    def live_entries(self) -> list[OperatorEntry]:
        """Every live entry (every pending operator is defined first)."""
        if self._lazy:
            self.materialise_all()
        return [e for e in self.entries.values() if e.is_live]

    def _entry(self, qualified: str, overload: str) -> OperatorEntry:
        key = (qualified, overload)
        entry = self.entries.get(key)
        if entry is None:
            entry = self._dead.pop(key, None)
            if entry is None:
                entry = OperatorEntry(qualified, overload)
            self._refresh(entry)
            self.entries[key] = entry
        return entry

    def _bury_if_dead(self, entry: OperatorEntry) -> None:
        if not entry.is_live:
            key = (entry.qualified_name, entry.overload)
            if self.entries.get(key) is entry:
                del self.entries[key]
                self._dead[key] = entry

    # ----- library claims -------------------------------------------------------------------

    def claim_namespace(self, ns: str, debug: str) -> RegistrationHandle:
        """A DEF library's claim on ``ns`` (spec 6.1, error 9.7)."""
        with self.lock:
            previous = self.libraries.get(ns)
            if previous is not None:
                raise LibraryError(
                    " ".join(
                        [
                            "Only a single TORCH_LIBRARY can be used to register the namespace",
                            f"{ns}; please put all of your definitions in a single TORCH_LIBRARY",
                            "block.  If you were trying to specify implementations, consider using",
                            "TORCH_LIBRARY_IMPL (which can be duplicated).  If you really intended",
                            "to",
                            "define operators for a single namespace in a distributed way, you can",
                            "use TORCH_LIBRARY_FRAGMENT to explicitly indicate this.  Previous",
                            f"registration of TORCH_LIBRARY was {previous}; latest registration",
                            f"was {debug}",
                        ]
                    )
                )
            self.libraries[ns] = debug

        def undo() -> None:
            del self.libraries[ns]

        return RegistrationHandle(undo, f"library {ns}")

    # ----- def ------------------------------------------------------------------------------

    def register_def(
        self, schema: FunctionSchema, debug: str, alias_analysis: str, tags: tuple[Any, ...]
    ) -> RegistrationHandle:
        """Store a schema (spec 6.2): duplicate check, then every kernel's signature."""
        qualified, overload = schema.qualified_name, schema.overload_name
        if qualified in self._lazy:
            self.materialise(qualified)
        with self.lock:
            existing = self.entries.get((qualified, overload))
            if existing is not None and existing.schema is not None:
                raise DuplicateRegistrationError(
                    " ".join(
                        [
                            f"Tried to register an operator ({schema}) with the same name and",
                            "overload",
                            "name multiple times. Each overload's schema should only be registered",
                            f"with a single call to def(). Duplicate registration: {debug}.",
                            f"Original registration: {existing.schema_debug}",
                        ]
                    )
                )
            if existing is not None:
                facts = CallingFacts.of(schema)
                for kernels in existing.kernels.values():
                    for k in kernels:
                        self._check_signature(schema, debug, facts, k)
            entry = self._entry(qualified, overload)
            entry.set_schema(schema, debug, alias_analysis, tags)
            self._by_name.setdefault(qualified, []).append(entry)
            self._refresh(entry)
            self.refresh_packet(qualified)
        self._announce(entry)

        def undo() -> None:
            entry.clear_schema()
            overloads = self._by_name[qualified]
            overloads.remove(entry)
            if not overloads:
                del self._by_name[qualified]
            self.refresh_packet(qualified)
            self._refresh(entry)
            self._bury_if_dead(entry)

        return RegistrationHandle(undo, f"def {schema}")

    def _check_signature(
        self, schema: FunctionSchema, schema_debug: str, facts: CallingFacts, k: KernelFunction
    ) -> None:
        if k.kind not in (KernelKind.UNBOXED, KernelKind.UNBOXED_WITH_KEYSET):
            return
        problem = signature_problem(k.fn, facts, k.kind is KernelKind.UNBOXED_WITH_KEYSET)
        if problem is None:
            return
        raise KernelSignatureError(
            "\n".join(
                [
                    "The kernel's Python signature doesn't match the operator schema.",
                    f"  operator: {schema.qualified_name}"
                    + (f".{schema.overload_name}" if schema.overload_name else ""),
                    f"  expected schema: {schema}",
                    f"    {schema_debug}",
                    f"  kernel: {kernel_site(k.fn)}",
                    f"    {k.debug}",
                    f"  reason: {problem}",
                    (
                        " ".join(
                            [
                                "Make the kernel accept the schema's arguments (positional ones by",
                                "position, keyword-only ones by name), or take *args, **kwargs.",
                            ]
                        )
                    ),
                ]
            )
        )

    # ----- impl -----------------------------------------------------------------------------

    def register_impl(
        self, qualified: str, overload: str, key: DispatchKey, kernel: KernelFunction
    ) -> RegistrationHandle:
        """Add a kernel under ``key`` (spec 6.3): newest wins, older become inactive."""
        if qualified in self._lazy:
            self.materialise(qualified)
        with self.lock:
            existing = self.entries.get((qualified, overload))
            if existing is not None and existing.schema is not None:
                assert existing.facts is not None
                self._check_signature(
                    existing.schema, existing.schema_debug, existing.facts, kernel
                )
            entry = self._entry(qualified, overload)
            stack = entry.kernels.setdefault(key, [])
            if stack:
                self._warn_override(entry, key, kernel)
            stack.insert(0, kernel)
            self._refresh(entry)
        self._announce(entry)

        def undo() -> None:
            lst = entry.kernels[key]
            lst[:] = [k for k in lst if k is not kernel]
            if not lst:
                del entry.kernels[key]
            self._refresh(entry)
            self._bury_if_dead(entry)

        return RegistrationHandle(undo, f"impl {entry.qualified_overload_name} {key_name(key)}")

    def _warn_override(self, entry: OperatorEntry, key: DispatchKey, new: KernelFunction) -> None:
        if self.override_warned or key in (DispatchKey.Meta, DispatchKey.MTIA):
            return
        self.override_warned = True
        op = str(entry.schema) if entry.schema is not None else entry.qualified_overload_name
        debug = entry.schema_debug or "no debug info"
        warnings.warn(
            "\n".join(
                [
                    "Warning only once for all operators,  other operators may also be overridden.",
                    (
                        " ".join(
                            [
                                "  Overriding a previously registered kernel for the same operator",
                                "and the same dispatch key",
                            ]
                        )
                    ),
                    f"  operator: {op}",
                    f"    {debug}",
                    f"  dispatch key: {key_name(key)}",
                    # torch names the kernel that fixed the operator's C++ signature,
                    # which a Python kernel never does (spec 6.8): always this text.
                    "  previous kernel: no debug info",
                    f"       new kernel: {new.debug}",
                ]
            ),
            UserWarning,
            stacklevel=4,
        )

    # ----- fallback -------------------------------------------------------------------------

    def register_fallback(self, key: DispatchKey, kernel: KernelFunction) -> RegistrationHandle:
        """A global fallback for ``key`` (an alias fills every key it covers), spec 6.4."""
        with self.lock:
            if is_alias_key(key):
                slots = [slot_of(k) for k in alias_runtime_keys(key)]
            elif key != DispatchKey.Undefined:
                # A building-block key (Dense, ...) lands where torch puts it: the slot its
                # key set indexes, i.e. the CPU slot of its block.
                slots = [table_index(keyset_raw(key))]
            else:
                raise LibraryError(
                    " ".join(
                        [
                            "fallback(..., 'Undefined'): the Undefined slot serves calls without",
                            "tensor arguments and can only be filled by",
                            "CompositeExplicitAutograd(-NonFunctional) or CompositeImplicitAutograd",
                            "kernels of each operator; register one of those with Library.impl",
                            "instead.",
                        ]
                    )
                )
            for slot in slots:
                previous = self.fallbacks[slot]
                if previous is not None:
                    raise DuplicateRegistrationError(
                        " ".join(
                            [
                                "Tried to register multiple backend fallbacks for the same",
                                "dispatch",
                                f"key {key_name(key_of_slot(slot))}; previous registration",
                                f"{previous.debug}, new registration {kernel.debug}",
                            ]
                        )
                    )
            for slot in slots:
                self.fallbacks[slot] = kernel
            self._refresh_slots(slots)

        def undo() -> None:
            for slot in slots:
                if self.fallbacks[slot] is kernel:
                    self.fallbacks[slot] = None
            self._refresh_slots(slots)

        return RegistrationHandle(undo, f"fallback {key_name(key)}")

    def _refresh_slots(self, slots: list[int]) -> None:
        # A fallback only feeds rule 9 of its own slots (Note [The table is never stale]).
        if self._deferring():
            self._dirty.update(dict.fromkeys(self.entries.values()))
            return
        for entry in self.entries.values():
            entry.refresh_slots(self.fallbacks, slots, self.tracer)

    def _refresh_all(self) -> None:
        # Dead entries are refreshed when they are revived (_entry).
        for entry in self.entries.values():
            entry.refresh(self.fallbacks, self.tracer)


DISPATCHER = Dispatcher()
