"""Introspection: the text dumps and queries of spec 7, by operator name.

Owns the name-based entry points (``dump``, ``dump_table``, ``check_invariants`` and the
``has_*`` helpers of spec 7.4). The formats themselves live on OperatorEntry. Reads the
registry without the lock: every value read is a published immutable snapshot.
"""

from __future__ import annotations

from tensordispatch.dispatch.dispatcher import DISPATCHER
from tensordispatch.dispatch.keys import DispatchKey, key_of_slot, parse_dispatch_key, slot_of
from tensordispatch.dispatch.operator import OperatorEntry

__all__ = [
    "check_invariants",
    "dump",
    "dump_table",
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
