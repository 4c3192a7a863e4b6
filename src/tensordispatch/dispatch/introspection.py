"""Introspection: the text dumps and queries of spec 7, by operator name.

Owns the name-based entry points (``dump``, ``dump_table``, ``check_invariants`` and the
``has_*`` helpers of spec 7.4). The formats themselves live on OperatorEntry. Reads the
registry without the lock: every value read is a published immutable snapshot.
"""

from __future__ import annotations

from typing import Any

from tensordispatch.dispatch.dispatcher import DISPATCHER
from tensordispatch.dispatch.keys import (
    DispatchKey,
    is_alias_key,
    is_included_in_alias,
    key_name,
    key_of_slot,
    parse_dispatch_key,
    slot_of,
)
from tensordispatch.dispatch.keyset import DispatchKeySet, backends_of, keyset_raw, table_index
from tensordispatch.dispatch.operator import OperatorEntry

__all__ = [
    "check_invariants",
    "dump",
    "dump_table",
    "explain",
    "find_dangling_impls",
    "has_backend_fallback",
    "has_computed_kernel_for_dispatch_key",
    "has_kernel",
    "has_kernel_for_dispatch_key",
    "kernel_for_dispatch_key_is_fallthrough",
]


def _split(op: str) -> tuple[str, str]:
    qualified, _, overload = op.partition(".")
    return qualified, overload


def _find(op: str) -> OperatorEntry | None:
    return DISPATCHER.find(*_split(op))


def _key(key: str | DispatchKey) -> DispatchKey:
    return key if isinstance(key, DispatchKey) else parse_dispatch_key(key)


def dump(op: str) -> str:
    """torch's ``_dispatch_dump``: schema, debug, alias kind and every kernel; "" if none.

    >>> from tensordispatch.library import Library
    >>> lib = Library("doc_dump", "DEF"); _ = lib.define("f(Tensor x) -> Tensor")
    >>> print(dump("doc_dump::f"), end="")  # doctest: +ELLIPSIS
    name: doc_dump::f
    schema: doc_dump::f(Tensor x) -> Tensor
    debug: registered at ...
    alias analysis kind: FROM_SCHEMA
    >>> lib._destroy(); dump("doc_dump::f")
    ''
    """
    entry = _find(op)
    return "" if entry is None else entry.dump()


def dump_table(op: str) -> str:
    """torch's ``_dispatch_dump_table``: one ``Key: debug [provenance]`` line per filled slot.

    >>> from tensordispatch.library import Library
    >>> lib = Library("doc_table", "DEF"); _ = lib.define("f(Tensor x) -> Tensor")
    >>> len(dump_table("doc_table::f").splitlines())  # the 38 global fallbacks
    38
    >>> lib._destroy()
    """
    entry = _find(op)
    return "" if entry is None else entry.dump_table()


def check_invariants(op: str) -> None:
    """Spec 7.3 (silently nothing for an unknown name, as torch); RuntimeError if broken.

    >>> check_invariants("no_such::op")
    """
    entry = _find(op)
    if entry is not None:
        entry.check_invariants(DISPATCHER.fallbacks)


def has_kernel(op: str) -> bool:
    """Whether an operator entry exists (torch's ``_dispatch_has_kernel``)."""
    return _find(op) is not None


def has_kernel_for_dispatch_key(op: str, key: str | DispatchKey) -> bool:
    """Whether a kernel is registered directly under ``key`` (alias keys count as keys)."""
    entry = _find(op)
    return entry is not None and _key(key) in entry.kernels


def has_computed_kernel_for_dispatch_key(op: str, key: str | DispatchKey) -> bool:
    """Whether the table slot of runtime key ``key`` is filled (fallbacks included)."""
    entry = _find(op)
    return entry is not None and entry.table[slot_of(_key(key))] is not None


def kernel_for_dispatch_key_is_fallthrough(op: str, key: str | DispatchKey) -> bool:
    """Whether the table slot of ``key`` holds a fallthrough kernel."""
    entry = _find(op)
    if entry is None:
        return False
    slot = entry.table[slot_of(_key(key))]
    return slot is not None and slot[0].is_fallthrough


def has_backend_fallback(key: str | DispatchKey) -> bool:
    """Whether a global fallback fills ``key``'s slot.

    >>> has_backend_fallback("AutogradCPU"), has_backend_fallback(DispatchKey.AutogradHIP)
    (True, False)
    """
    return DISPATCHER.fallbacks[slot_of(_key(key))] is not None


def find_dangling_impls() -> list[str]:
    """Dumps of live operators that have kernels but no schema (impls without a def)."""
    return [e.dump() for e in DISPATCHER.live_entries() if e.schema is None]


def runtime_keys_with_kernels(op: str) -> list[DispatchKey]:
    """The runtime keys whose slot is filled, in table order (Undefined excluded)."""
    entry = _find(op)
    if entry is None:
        return []
    return [key_of_slot(i) for i in range(1, len(entry.table)) if entry.table[i] is not None]


_RULES = (
    DispatchKey.CompositeExplicitAutogradNonFunctional,
    DispatchKey.CompositeExplicitAutograd,
    DispatchKey.CompositeImplicitAutogradNestedTensor,
    DispatchKey.CompositeImplicitAutograd,
    DispatchKey.Autograd,
    DispatchKey.FuncTorchBatchedDecomposition,
)
_OUTRANKING = ("kernel", "default backend kernel", "nested kernel")


def _rule_line(
    entry: OperatorEntry, alias: DispatchKey, slot: int, held: tuple[Any, str] | None
) -> str:
    """One alias rule of ``explain``: does it cover the slot, what is registered, verdict."""
    key, name = key_of_slot(slot), key_name(alias)
    undefined_ok = alias in _RULES[:2] or alias == DispatchKey.CompositeImplicitAutograd
    covers = (undefined_ok and slot == 0) or (slot != 0 and is_included_in_alias(key, alias))
    if not covers:
        return f"{name}: does not cover {key_name(key)}"
    kernels = entry.kernels.get(alias)
    if not kernels:
        return f"{name}: none registered"
    found = _debugs(entry, alias)
    if held is not None and held[0] is kernels[0]:
        return f"{name}: {found} -- chosen"
    if held is not None and held[1] == "ambiguous autogradother":
        return f"{name}: {found} -- replaced by the ambiguity marker"
    if alias == DispatchKey.CompositeImplicitAutograd and (
        held is None or held[1] not in _OUTRANKING
    ):
        return f"{name}: {found} -- declined: {_why_cia_declined(entry, slot)}"
    return f"{name}: {found} -- outranked"


def _debugs(entry: OperatorEntry, key: DispatchKey) -> str:
    kernels = entry.kernels.get(key, [])
    if not kernels:
        return "none registered"
    shown = kernels[0].debug
    if len(kernels) > 1:
        shown += f" (and {len(kernels) - 1} inactive: {', '.join(k.debug for k in kernels[1:])})"
    return shown


def _why_cia_declined(entry: OperatorEntry, slot: int) -> str:
    if DispatchKey.CompositeExplicitAutograd in entry.kernels:
        return "a CompositeExplicitAutograd kernel exists, which blocks it everywhere"
    bo = backends_of(key_of_slot(slot)).raw
    blockers = [
        key_name(k)
        for k in entry.kernels
        if not is_alias_key(k) and bo & keyset_raw(k) == keyset_raw(k)
    ]
    return (
        f"a kernel for {', '.join(blockers)} (a backend of {key_name(key_of_slot(slot))}) blocks it"
    )


def explain(op: str, keyset: DispatchKeySet | DispatchKey | int) -> str:
    """Which kernel the table holds for ``keyset``'s highest key, and why: every rule of the
    precedence (spec 5.2), in order, with what it found and why it declined.

    >>> from tensordispatch.library import Library
    >>> lib = Library("doc_explain", "DEF"); _ = lib.define("f(Tensor x) -> Tensor")
    >>> _ = lib.impl("f", lambda x: x, "CPU", debug="fn_cpu")
    >>> _ = lib.impl("f", lambda x: x, "CompositeImplicitAutograd", debug="fn_math")
    >>> print(explain("doc_explain::f", DispatchKey.AutogradCPU))  # doctest: +ELLIPSIS
    doc_explain::f at AutogradCPU (slot 96): registered at ...fallbacks.py:... [backend fallback]
      1. kernel for AutogradCPU: none registered
      2. CompositeExplicitAutogradNonFunctional: does not cover AutogradCPU
      3. CompositeExplicitAutograd: does not cover AutogradCPU
      5. CompositeImplicitAutogradNestedTensor: does not cover AutogradCPU
      6. CompositeImplicitAutograd: fn_math -- declined: a kernel for CPU (a backend of AutogradCPU) blocks it
      7. Autograd: none registered
      8. FuncTorchBatchedDecomposition: does not cover AutogradCPU
      9. backend fallback: registered at ...fallbacks.py:... -- chosen
    >>> lib._destroy()
    """
    entry = _find(op)
    if entry is None:
        return f"{op}: no such operator (no def and no impl registered)"
    if isinstance(keyset, DispatchKey):
        raw = keyset_raw(keyset)
    else:
        raw = keyset if isinstance(keyset, int) else keyset.raw
    slot = table_index(raw)
    key = key_of_slot(slot)
    held = entry.table[slot]
    head = "missing" if held is None else f"{held[0].debug} [{held[1]}]"
    lines = [f"{entry.qualified_overload_name} at {key_name(key)} (slot {slot}): {head}"]
    chosen = held[0] if held is not None else None
    direct = entry.kernels.get(key) if slot else None
    verdict = " -- chosen" if direct and chosen is direct[0] else ""
    lines.append(
        f"  1. kernel for {key_name(key)}: {_debugs(entry, key) if slot else 'none possible'}{verdict}"
    )
    for number, alias in zip((2, 3, 5, 6, 7, 8), _RULES, strict=True):
        lines.append(f"  {number}. {_rule_line(entry, alias, slot, held)}")
    fallback = DISPATCHER.fallbacks[slot]
    if fallback is None:
        lines.append("  9. backend fallback: none registered")
    else:
        verdict = " -- chosen" if chosen is fallback else " -- outranked"
        lines.append(f"  9. backend fallback: {fallback.debug}{verdict}")
    return "\n".join(lines)
