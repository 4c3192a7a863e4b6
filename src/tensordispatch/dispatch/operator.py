"""OperatorEntry: one operator's registrations, its dispatch table and its published caches.

Owns an operator's kernel lists, the publication of its table (computed by table.py: the
resolution function of spec section 5, direct > CEANF > CEA > CIANT > CIA > Autograd > FTBD
> backend fallback > missing, and the fallthrough masks), the text dumps of section 7 and
the invariant check. Must not take the registration lock or validate registrations
(dispatcher.py does both and calls ``refresh`` under the lock).

Note [The table is never stale]
torch refreshes a few slots per registration and goes stale in the corners of spec 5.6.
We recompute the whole table of the affected operator on every registration and
deregistration (137 cheap evaluations; a global fallback change recomputes its own slots
in every operator, the only slots whose compute() reads it),
so the stored table always equals ``compute()`` and ``dump_table``, calls and
``has_computed_kernel_for_dispatch_key`` all agree. ``check_invariants`` therefore checks
the rest of torch's invariants and that the published caches belong to the current table.

Note [Published dispatch state]
A refresh builds a new immutable ``_TableState`` (table, masks) and its caches, then
publishes them with single reference assignments: the call caches into the generated
entry's namespace (``_td_c0``, ``_td_c1``, ``_td_cm``, ``_td_c``, ``_td_b0``), the
redispatch cache on the entry. A concurrent call holds either the old state or the new
one (a call that read one cache of the old state and one of the new runs a kernel of one
of the two tables, as any call racing a registration may); calls take no lock. The call
caches are dicts keyed by the arguments' word, one per canonical pair of thread-local words
(Note [Generated entry functions] in calling.py), plus excluded word -> (included |
arguments' word) -> entry for any other pair, because dict lookups are cheaper in CPython
than the big-int operations of the functionality-only difference. A miss (``lookup``)
computes spec 4.5 in full (difference, fallthrough mask, table index, Note [Kernel calling
conventions]) and memoizes the result.

Note [Lazy entry generation]
Generating and compiling an operator's entry function costs ~0.2 ms, too much to pay at
import for thousands of operators most programs never call. A def stores the schema and
its CallingFacts and installs a lazy entry (and boxer) that generates the real code on
first use and installs it, so later calls go straight to it. Installing takes the
registration lock without waiting: if someone holds it (a registration in progress, maybe
in this very thread), this call uses the fresh code once and a later call installs it.

Note [Collapsing transparent fallbacks]
Some global fallbacks do nothing but redispatch with ``keyset & mask`` (the autograd
fallback for tensors without autograd metadata, ADInplaceOrView-like keys we do not
implement yet). A redispatch is a pure function of the key set (stored slot of the highest
key, no TLS, no masks, spec 10.2), so when a cache miss lands on such a kernel we follow
the redispatch at miss time and memoize the kernel it reaches, with the key set it would
have received. The observable behaviour is the same (the skipped fallback had no effect);
a plain CPU-tensor call costs one hop instead of two.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

from tensordispatch.dispatch.calling import (
    CallingFacts,
    generate_boxed_first_entry,
    generate_calling_code,
)
from tensordispatch.dispatch.errors import (
    MissingKernelError,
    NoTensorArgumentsError,
    SchemaNotFoundError,
    missing_kernel_message,
    no_tensor_arguments_message,
)
from tensordispatch.dispatch.kernel import (
    KernelFunction,
    KernelKind,
    make_entry,
)
from tensordispatch.dispatch.keys import (
    NUM_RUNTIME_ENTRIES,
    DispatchKey,
    is_alias_key,
    key_name,
    key_of_slot,
)
from tensordispatch.dispatch.keyset import (
    BACKEND_MASK_RAW,
    DEFAULT_EXCLUDED_RAW,
    DEFAULT_INCLUDED_RAW,
    DispatchKeySet,
    highest_priority_key_raw,
    table_index,
)
from tensordispatch.dispatch.modes import HANDLER_EXCLUDED_RAW, INCLUDED_WITH_MODES_RAW
from tensordispatch.dispatch.op_overload import make_overload_class
from tensordispatch.dispatch.table import (
    SLOT_NAMES,
    Slot,
    compute_reference_table,
    compute_slot,
    compute_table,
    compute_table_and_fallthroughs,
    fallthrough_masks,
    masks_of_fallthroughs,
    slot_facts,
)
from tensordispatch.dispatch.tls import local_state

if TYPE_CHECKING:
    # annotations only: the schema model loads with the first operator def (issue 4)
    from tensordispatch.schema.model import FunctionSchema

__all__ = ["OperatorEntry", "Slot", "compute_reference_table", "compute_table"]

_K = DispatchKey


class _TableState:
    """One immutable version of an operator's table and masks, with its memo caches
    (Note [Published dispatch state]). The caches only grow, and only with entries that
    are pure functions of this table."""

    __slots__ = (
        "boxed_cache",
        "boxer",
        "by_excluded",
        "default_cache",
        "entry",
        "handler_cache",
        "mask",
        "mode_cache",
        "op",
        "per_backend",
        "per_backend_mode",
        "redispatch_cache",
        "table",
        "tracer",
    )

    def __init__(
        self,
        entry: OperatorEntry,
        table: tuple[Slot | None, ...],
        ft: tuple[int, ...],
        tracer: Any = None,
    ) -> None:
        self.entry = entry
        self.table = table
        self.tracer = tracer
        self.mask, self.per_backend, self.per_backend_mode = masks_of_fallthroughs(ft)
        self.op = entry.overload_object
        self.boxer = entry.boxer
        # arguments' word -> entry, for the canonical thread-local words (default, inside
        # a mode's handler, under one mode); by_excluded: excluded -> (arguments | included)
        # -> entry for any other words (Note [Published dispatch state]).
        self.default_cache: dict[int, Callable[..., Any]] = {}
        self.handler_cache: dict[int, Callable[..., Any]] = {}
        self.mode_cache: dict[int, Callable[..., Any]] = {}
        self.by_excluded: dict[int, dict[int, Callable[..., Any]]] = {}
        self.redispatch_cache: dict[int, Callable[..., Any]] = {}
        # Note [Boxed-first entries]: arguments' word -> (boxed kernel, key set), or
        # (entry, None) for any other kernel, for the default words.
        self.boxed_cache: dict[int, tuple[Callable[..., Any], DispatchKeySet | None]] = {}

    def resolve(self, raw: int) -> tuple[KernelFunction, int]:
        """The kernel of the stored slot of ``raw`` and the key set it receives, after
        collapsing transparent fallbacks (Note [Collapsing transparent fallbacks]; none
        under a tracer); raises the missing-kernel errors."""
        table = self.table
        while True:
            slot = table[table_index(raw)]
            if slot is None:
                self.entry.raise_missing(raw, table)
            kernel = slot[0]
            if self.tracer is not None or kernel.redispatch_mask is None:
                return kernel, raw
            raw &= kernel.redispatch_mask

    def entry_for(self, raw: int) -> Callable[..., Any]:
        """The callable for the stored slot of ``raw``, collapsing transparent fallbacks
        (Note [Collapsing transparent fallbacks]); raises the missing-kernel errors."""
        kernel, raw = self.resolve(raw)
        fn = make_entry(kernel, self.op, raw, self.boxer)
        if self.tracer is not None:  # every hop visible
            slot = self.table[table_index(raw)]
            name = self.entry.qualified_overload_name
            return self.tracer.wrap(name, raw, slot, fn)  # type: ignore[no-any-return]
        return fn

    def final_keyset(self, excluded: int, pre: int) -> int:
        """Spec 4.5 from (arguments | included) and excluded: difference, then masks."""
        raw = pre & (BACKEND_MASK_RAW | ~excluded)
        if self.per_backend_mode:
            return raw & self.per_backend[((raw & BACKEND_MASK_RAW) | 1).bit_length() - 1]
        return raw & self.mask

    def call_miss(self, excluded: int, pre: int) -> Callable[..., Any]:
        """Compute and memoize the entry of a call with thread-local words that have no
        canonical cache (``pre`` = arguments | included)."""
        entry = self.entry_for(self.final_keyset(excluded, pre))
        cache = self.by_excluded.get(excluded)
        if cache is None and len(self.by_excluded) < _CACHE_LIMIT:
            cache = self.by_excluded.setdefault(excluded, {})
        if cache is not None and len(cache) < _CACHE_LIMIT:
            cache[pre] = entry
        return entry

    def lookup(self, excluded: int, included: int, raw: int) -> Callable[..., Any] | None:
        """The entry of a call: arguments' word ``raw`` under the thread-local words, from
        the caches or computed and memoized (the generated entry's ``_td_m``, called on a
        miss); None if ``raw`` is not a key-set word (the entry then reports the bad
        argument)."""
        if not isinstance(raw, int):
            return None
        if included is DEFAULT_INCLUDED_RAW:
            cache = (
                self.default_cache
                if excluded is DEFAULT_EXCLUDED_RAW
                else self.handler_cache
                if excluded is HANDLER_EXCLUDED_RAW
                else None
            )
        elif included is INCLUDED_WITH_MODES_RAW and excluded is DEFAULT_EXCLUDED_RAW:
            cache = self.mode_cache
        else:
            cache = None
        if cache is None:
            pre = raw | included
            found = self.by_excluded.get(excluded, _EMPTY).get(pre)
            return found if found is not None else self.call_miss(excluded, pre)
        found = cache.get(raw)
        if found is None:
            final = self.final_keyset(excluded, raw | included)
            found = self.entry_for(final)
            if len(cache) < _CACHE_LIMIT:
                cache[raw] = found
                if cache is self.default_cache and self.tracer is None:
                    self._note_default(raw, final, found)
        return found

    def _note_default(self, raw: int, final: int, found: Callable[..., Any]) -> None:
        """Mirror a default-words cache entry into the boxed-first probe and install the
        boxed-first entry once a boxed kernel is reached (Note [Boxed-first entries])."""
        kernel, at = self.resolve(final)
        if len(self.boxed_cache) >= _CACHE_LIMIT:
            return
        if kernel.kind is KernelKind.BOXED and kernel.specializer is None:
            self.boxed_cache[raw] = (kernel.fn, DispatchKeySet.from_raw(at))
            self.entry.choose_entry(self)
        else:
            self.boxed_cache[raw] = (found, None)

    def redispatch_miss(self, raw: int) -> Callable[..., Any]:
        """Compute and memoize the entry of a redispatch (no TLS, no masks: spec 10.2)."""
        entry = self.entry_for(raw)
        if len(self.redispatch_cache) < _CACHE_LIMIT:
            self.redispatch_cache[raw] = entry
        return entry


_CACHE_LIMIT = 1024
_EMPTY: dict[int, Callable[..., Any]] = {}


def _no_schema_entry(name: str) -> Callable[..., Any]:
    def call(*args: object, **kwargs: object) -> Any:
        raise SchemaNotFoundError(
            " ".join(
                [
                    f"Could not find schema for {name} but we found an implementation; did you",
                    "forget to def() the operator?",
                ]
            )
        )

    return call


class OperatorEntry:
    """One operator (name + overload): schema, kernels per key, and the computed table.

    Created on the first def or impl naming the operator and never discarded: an entry
    with neither schema nor kernels is *dead* (``dump`` is empty, like a deleted entry in
    torch) and comes back to life on the next registration, so OpOverload objects handed
    out earlier stay valid.
    """

    def __init__(self, qualified_name: str, overload: str) -> None:
        self.qualified_name = qualified_name  # "ns::name"
        self.overload = overload
        self.schema: FunctionSchema | None = None
        self.schema_debug = ""
        self.alias_analysis = ""
        self.tags: tuple[Any, ...] = ()
        # key -> kernels registered under it, newest first (spec 5.1).
        self.kernels: dict[DispatchKey, list[KernelFunction]] = {}
        self.facts: CallingFacts | None = None
        self._generated: tuple[CallingFacts, Callable[..., Any], Any] | None = None
        # the boxed-first twin of the generated entry, made on first need, and whether it
        # is the installed one (Note [Boxed-first entries])
        self._boxed_first: tuple[CallingFacts, Callable[..., Any] | None] | None = None
        self._boxed_first_on = False
        self.table: tuple[Slot | None, ...] = (None,) * NUM_RUNTIME_ENTRIES
        self.ns: dict[str, Any] = {"_td_c": None, "_td_st": local_state()}
        self.op_class = make_overload_class(self)
        self.overload_object = self.op_class(self)
        self.ns["_td_bo"] = self.overload_object
        self.boxer: Callable[..., Callable[..., Any]] = _no_schema_boxer(self)
        self._install_entry(_no_schema_entry(f"{self.qualified_name}.{self.overload}"))
        self.refresh([None] * NUM_RUNTIME_ENTRIES)  # the dispatcher refreshes with fallbacks

    @property
    def qualified_overload_name(self) -> str:
        """``ns::name`` or ``ns::name.overload`` (the spelling of messages and dumps)."""
        if self.overload:
            return f"{self.qualified_name}.{self.overload}"
        return self.qualified_name

    @property
    def is_live(self) -> bool:
        """Whether a def or an impl keeps this entry (spec 6.7)."""
        return self.schema is not None or bool(self.kernels)

    def _install_entry(self, fn: Callable[..., Any]) -> None:
        self.entry_function = fn
        self.op_class.__call__ = staticmethod(fn)  # type: ignore[method-assign]

    def set_schema(
        self, schema: FunctionSchema, debug: str, alias_analysis: str, tags: tuple[Any, ...]
    ) -> None:
        """Store a def's schema (under the dispatcher lock); the calling code is generated
        on first use (Note [Lazy entry generation])."""
        facts = CallingFacts.of(schema)
        self.schema, self.schema_debug = schema, debug
        self.alias_analysis, self.tags, self.facts = alias_analysis, tags, facts
        self.boxer = self._lazy_boxer
        self._boxed_first_on = False
        self._install_entry(self._lazy_entry)

    def _generate(self) -> tuple[Callable[..., Any], Callable[..., Callable[..., Any]]]:
        """Generate the calling code of the current schema and install it if it is still
        current and the registration lock is free (Note [Lazy entry generation])."""
        facts = self.facts
        if facts is None:  # the def went away meanwhile
            return self.entry_function, self.boxer
        done = self._generated
        if done is not None and done[0] is facts:
            return done[1], done[2]
        fname = self.qualified_name.split("::")[-1]
        entry, boxer = generate_calling_code(facts, fname, self.ns)
        from tensordispatch.dispatch.dispatcher import DISPATCHER

        if DISPATCHER.lock.try_enter():
            try:
                if self.facts is facts:
                    self._generated = (facts, entry, boxer)
                    self.boxer = boxer
                    self._install_entry(entry)
                    DISPATCHER.refresh_packet(self.qualified_name)
            finally:
                DISPATCHER.lock.release()
        return entry, boxer

    def choose_entry(self, state: _TableState) -> None:
        """Install the boxed-first twin of the generated entry if ``state`` is still the
        published one and the registration lock is free (Note [Boxed-first entries]); both
        entries are correct at all times, so skipping is only slower."""
        done = self._generated
        if self._boxed_first_on or done is None or done[0] is not self.facts:
            return
        if self.state is not state:
            return
        made = self._boxed_first
        if made is None or made[0] is not done[0]:
            fname = self.qualified_name.split("::")[-1]
            twin = generate_boxed_first_entry(done[0], fname, self.ns)
            made = self._boxed_first = (done[0], twin)
        if made[1] is None:
            return
        from tensordispatch.dispatch.dispatcher import DISPATCHER

        if DISPATCHER.lock.try_enter():
            try:
                if self._generated is done and self.state is state:
                    self._install_entry(made[1])
                    self._boxed_first_on = True
                    DISPATCHER.refresh_packet(self.qualified_name)
            finally:
                DISPATCHER.lock.release()

    def _lazy_entry(self, *args: Any, **kwargs: Any) -> Any:
        return self._generate()[0](*args, **kwargs)

    def _lazy_boxer(self, fn: Callable[..., Any], op: Any, ks: Any) -> Callable[..., Any]:
        return self._generate()[1](fn, op, ks)

    def clear_schema(self) -> None:
        """Drop the def (its handle was removed): schema, tags and calling code go."""
        self.schema, self.schema_debug, self.alias_analysis, self.tags = None, "", "", ()
        self.facts = None
        self._generated = None
        self._boxed_first_on = False
        self.boxer = _no_schema_boxer(self)
        self._install_entry(_no_schema_entry(f"{self.qualified_name}.{self.overload}"))

    def refresh(self, fallbacks: list[KernelFunction | None], tracer: Any = None) -> None:
        """Recompute the whole table and publish new caches (Notes [The table is never
        stale], [Published dispatch state]); with a tracer, entries record their hops."""
        self.table, ft = compute_table_and_fallthroughs(self.kernels, fallbacks)
        self._publish(_TableState(self, self.table, ft, tracer))

    def refresh_slots(
        self, fallbacks: list[KernelFunction | None], slots: list[int], tracer: Any = None
    ) -> None:
        """After a global fallback change: recompute just those slots (rule 9 reads only
        its own slot's fallback) and republish only if one of them changed."""
        direct, backend_words, alias, ambiguous = slot_facts(self.kernels)
        table = list(self.table)
        changed = False
        for slot in slots:
            fresh = compute_slot(slot, direct, alias, backend_words, ambiguous, fallbacks)
            if fresh != table[slot]:
                table[slot] = fresh
                changed = True
        if changed:
            self.table = tuple(table)
            ft = tuple(i for i, e in enumerate(table) if e is not None and e[0].is_fallthrough)
            self._publish(_TableState(self, self.table, ft, tracer))

    def _publish(self, state: _TableState) -> None:
        ns = self.ns
        ns["_td_m"] = state.lookup
        ns["_td_c"] = state.by_excluded
        ns["_td_c0"] = state.default_cache
        ns["_td_c1"] = state.handler_cache
        ns["_td_cm"] = state.mode_cache
        ns["_td_b0"] = state.boxed_cache
        self.state = state
        if self._boxed_first_on and self._generated is not None:
            # a new table starts on the plain entry (under the registration lock)
            from tensordispatch.dispatch.dispatcher import DISPATCHER

            self._install_entry(self._generated[1])
            self._boxed_first_on = False
            DISPATCHER.refresh_packet(self.qualified_name)

    # ----- errors --------------------------------------------------------------------------

    def available_keys(self, table: tuple[Slot | None, ...]) -> tuple[list[str], list[str]]:
        """(every key with a filled slot, those filled by this operator's own kernels)."""
        available, own = [], []
        for slot in range(1, NUM_RUNTIME_ENTRIES):
            entry = table[slot]
            if entry is not None:
                available.append(key_name(key_of_slot(slot)))
                if entry[1] != "backend fallback":
                    own.append(key_name(key_of_slot(slot)))
        return available, own

    def raise_missing(self, raw: int, table: tuple[Slot | None, ...]) -> NoReturn:
        """Raise spec 9.1 (or 9.2 for the Undefined slot) for final key set ``raw``."""
        available, own = self.available_keys(table)
        name = self.qualified_overload_name
        if table_index(raw) == 0:
            raise NoTensorArgumentsError(
                no_tensor_arguments_message(name, available, self.dump_table())
            )
        key = key_name(highest_priority_key_raw(raw))
        raise MissingKernelError(
            missing_kernel_message(name, key, available, own, self.dump_table())
        )

    # ----- introspection (spec 7) -----------------------------------------------------------

    def dump(self) -> str:
        """torch's ``_dispatch_dump`` text: the canonical (registered) state."""
        if not self.is_live:
            return ""
        lines = [f"name: {self.qualified_overload_name}"]
        if self.schema is None:
            lines.append("schema: (none)")
        else:
            lines += [
                f"schema: {self.schema}",
                f"debug: {self.schema_debug}",
                f"alias analysis kind: {self.alias_analysis}",
            ]
        for key in sorted(self.kernels):
            suffix = "[alias]" if is_alias_key(key) else ""
            for i, k in enumerate(self.kernels[key]):
                inactive = " (inactive)" if i else ""
                lines.append(f"{key_name(key)}{suffix}{inactive}: {k.debug} :: (none) [ {k.flags}]")
        return "\n".join(lines) + "\n"

    def dump_table(self) -> str:
        """torch's ``_dispatch_dump_table`` text: one line per filled slot."""
        if not self.is_live:
            return ""
        lines = []
        for slot, entry in enumerate(self.table):
            if entry is None:
                continue
            kernel, label = entry
            ft = "fallthrough " if kernel.kind is KernelKind.FALLTHROUGH else ""
            lines.append(f"{SLOT_NAMES[slot]}: {ft}{kernel.debug} [{label}]")
        return "\n".join(lines) + "\n"

    def check_invariants(self, fallbacks: list[KernelFunction | None]) -> None:
        """Spec 7.3 adapted (Note [The table is never stale]); raises RuntimeError."""
        problems = []
        if self.schema is not None:
            if self.schema.qualified_name != self.qualified_name:
                problems.append(f"schema names {self.schema.qualified_name}")
            if self.facts != CallingFacts.of(self.schema):
                problems.append("stored calling facts differ from the schema's")
        if _K.Undefined in self.kernels:
            problems.append("kernels are stored under Undefined")
        if any(not lst for lst in self.kernels.values()):
            problems.append("an empty kernel list is stored")
        fresh = compute_reference_table(self.kernels, fallbacks)
        for slot in range(NUM_RUNTIME_ENTRIES):
            if fresh[slot] != self.table[slot]:
                problems.append(f"stored slot {key_name(key_of_slot(slot))} != compute()")
        state = self.state
        published = (self.ns["_td_c"], self.ns["_td_c0"], self.ns["_td_b0"])
        current = (state.by_excluded, state.default_cache, state.boxed_cache)
        if state.table is not self.table or any(a is not b for a, b in zip(published, current)):
            problems.append("the published call cache belongs to an older table")
        if any(k not in state.default_cache for k in state.boxed_cache):
            problems.append("the boxed-first probe holds a key set the call cache lacks")
        masks = (state.mask, state.per_backend, state.per_backend_mode)
        if masks != fallthrough_masks(self.table):
            problems.append("the fallthrough masks differ from the table's fallthrough slots")
        if problems:
            broken = "; ".join(problems)
            raise RuntimeError(
                "\n".join(
                    [
                        f"{self.qualified_overload_name}: dispatcher invariants broken: {broken}",
                        "Canonical state",
                        "~~~~~~~~~~~",
                        self.dump(),
                        "",
                        "Computed table:",
                        "~~~~~~~~~~~",
                        self.dump_table(),
                    ]
                )
            )


def _no_schema_boxer(entry: OperatorEntry) -> Callable[..., Callable[..., Any]]:
    def boxer(fn: Callable[..., Any], op: Any, ks: Any) -> Callable[..., Any]:
        return _no_schema_entry(f"{entry.qualified_name}.{entry.overload}")

    return boxer
