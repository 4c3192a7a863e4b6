"""The dispatch table of one operator, computed from its registrations (spec section 5).

Owns the resolution function (direct > CEANF > CEA > CIANT > CIA > Autograd > FTBD >
backend fallback > missing, spec 5.2), the reference implementation the invariant check
compares against, and the fallthrough masks (spec 5.5). Pure functions of the kernel lists
and the global fallbacks: no state, no locking, no publication (operator.py does those;
Note [The table is never stale] there).
"""

from __future__ import annotations

from typing import Any

from tensordispatch.dispatch.kernel import (
    AMBIGUOUS_AUTOGRADOTHER,
    KernelFunction,
    KernelKind,
)
from tensordispatch.dispatch.keys import (
    NUM_BACKENDS,
    NUM_RUNTIME_ENTRIES,
    RUNTIME_KEYS,
    DispatchKey,
    component_of,
    functionality_of,
    is_alias_key,
    is_per_backend_functionality,
    is_runtime_key,
    key_name,
    key_of_slot,
    slot_of,
)
from tensordispatch.dispatch.keyset import (
    AUTOGRADOTHER_BACKENDS_RAW,
    BACKEND_MASK_RAW,
    FULL_RAW,
    alias_runtime_keys,
    backends_of,
    keyset_raw,
)

__all__ = [
    "SLOT_NAMES",
    "Slot",
    "compute_reference_table",
    "compute_slot",
    "compute_table",
    "compute_table_and_fallthroughs",
    "fallthrough_masks",
    "masks_of_fallthroughs",
    "slot_facts",
]

_K = DispatchKey
Slot = tuple[KernelFunction, str]  # (kernel, provenance label of dump_table)


def _slots_of(alias: DispatchKey) -> frozenset[int]:
    return frozenset(slot_of(k) for k in alias_runtime_keys(alias))


_CEANF = _slots_of(_K.CompositeExplicitAutogradNonFunctional) | {0}
_CEA = _slots_of(_K.CompositeExplicitAutograd) | {0}
_CIANT = _slots_of(_K.CompositeImplicitAutogradNestedTensor)
_CIA = _slots_of(_K.CompositeImplicitAutograd) | {0}
_AUTOGRAD = _slots_of(_K.Autograd)
_FTBD = _slots_of(_K.FuncTorchBatchedDecomposition)
_AUTOGRADOTHER_SLOT = slot_of(_K.AutogradOther)
_BACKENDS_OF: tuple[int, ...] = (0,) + tuple(backends_of(k).raw for k in RUNTIME_KEYS)
_ALIASES = (
    _K.CompositeExplicitAutogradNonFunctional,
    _K.CompositeExplicitAutograd,
    _K.CompositeImplicitAutogradNestedTensor,
    _K.CompositeImplicitAutograd,
    _K.Autograd,
    _K.FuncTorchBatchedDecomposition,
)


def _newest(kernels: dict[DispatchKey, list[KernelFunction]], key: DispatchKey) -> Any:
    lst = kernels.get(key)
    return lst[0] if lst else None


def compute_slot(
    slot: int,
    direct: dict[int, KernelFunction],
    alias: tuple[Any, ...],
    backend_words: list[int],
    ambiguous: bool,
    fallbacks: list[KernelFunction | None],
) -> Slot | None:
    """Spec 5.2 ``compute(k)`` for one slot (slot 0 is Undefined)."""
    kernel = direct.get(slot)
    if kernel is not None:
        return (kernel, "kernel")
    ceanf, cea, ciant, cia, autograd, ftbd = alias
    if ceanf is not None and slot in _CEANF:
        return (ceanf, "default backend kernel")
    if cea is not None and slot in _CEA:
        return (cea, "default backend kernel")
    if ciant is not None and slot in _CIANT:
        return (ciant, "nested kernel")
    if cia is not None and slot in _CIA:
        if slot == _AUTOGRADOTHER_SLOT and ambiguous:
            return (AMBIGUOUS_AUTOGRADOTHER, "ambiguous autogradother")
        bo = _BACKENDS_OF[slot]
        if cea is None and not any(bo & w == w for w in backend_words):
            return (cia, "math kernel")
    if autograd is not None and slot in _AUTOGRAD:
        return (autograd, "autograd kernel")
    if ftbd is not None and slot in _FTBD:
        return (ftbd, "batched kernel")
    fallback = fallbacks[slot]
    if fallback is not None:
        return (fallback, "backend fallback")
    return None


def compute_reference_table(
    kernels: dict[DispatchKey, list[KernelFunction]], fallbacks: list[KernelFunction | None]
) -> tuple[Slot | None, ...]:
    """Every slot by spec 5.2's ``compute(k)``, one slot at a time (the reference that
    ``check_invariants`` compares the fast ``compute_table`` against).

    >>> from tensordispatch.dispatch.kernel import KernelFunction, KernelKind
    >>> cpu = KernelFunction(len, KernelKind.UNBOXED, "fn_cpu")
    >>> table = compute_reference_table({DispatchKey.CPU: [cpu]}, [None] * NUM_RUNTIME_ENTRIES)
    >>> [(key_of_slot(i), s[1]) for i, s in enumerate(table) if s]
    [(<DispatchKey.CPU: 49>, 'kernel')]
    """
    direct, backend_words, alias, ambiguous = slot_facts(kernels)
    return tuple(
        compute_slot(slot, direct, alias, backend_words, ambiguous, fallbacks)
        for slot in range(NUM_RUNTIME_ENTRIES)
    )


def slot_facts(
    kernels: dict[DispatchKey, list[KernelFunction]],
) -> tuple[dict[int, KernelFunction], list[int], tuple[Any, ...], bool]:
    """(direct kernels by slot, words of non-alias keys with kernels, newest kernel per
    alias in ``_ALIASES`` order, whether AutogradOther is ambiguous under CIA)."""
    direct = {}
    backend_words = []
    for key, lst in kernels.items():
        if is_alias_key(key):
            continue
        backend_words.append(keyset_raw(key))
        if is_runtime_key(key):
            direct[slot_of(key)] = lst[0]
    alias = tuple(_newest(kernels, a) for a in _ALIASES)
    ambiguous = any(AUTOGRADOTHER_BACKENDS_RAW & w == w for w in backend_words)
    return direct, backend_words, alias, ambiguous


_ORDERED = {
    name: tuple(sorted(slots))
    for name, slots in (
        ("ceanf", _CEANF),
        ("cea", _CEA),
        ("ciant", _CIANT),
        ("cia", _CIA),
        ("autograd", _AUTOGRAD),
        ("ftbd", _FTBD),
    )
}
# CIA slots a backend kernel can block (those with a non-empty backendsOf), with that set.
_CIA_BLOCKABLE = tuple((s, _BACKENDS_OF[s]) for s in _ORDERED["cia"] if _BACKENDS_OF[s])


def compute_table(
    kernels: dict[DispatchKey, list[KernelFunction]], fallbacks: list[KernelFunction | None]
) -> tuple[Slot | None, ...]:
    """Every slot of an operator's table: spec 5.2 evaluated as layers, lowest precedence
    first (fallbacks, FTBD, Autograd, CIA, CIANT, CEA, CEANF, direct), each overwriting
    the slots it covers. Equal to ``compute_reference_table`` (a property test checks).

    >>> from tensordispatch.dispatch.kernel import KernelFunction, KernelKind
    >>> cia = KernelFunction(len, KernelKind.UNBOXED, "fn_math")
    >>> table = compute_table({DispatchKey.CompositeImplicitAutograd: [cia]}, [None] * 137)
    >>> table[0][1], sum(1 for s in table if s)
    ('math kernel', 104)
    """
    return compute_table_and_fallthroughs(kernels, fallbacks)[0]


_BASE_MEMO: dict[tuple[Any, ...], tuple[tuple[Slot | None, ...], tuple[int, ...]]] = {}


def _base(
    fallbacks: list[KernelFunction | None],
) -> tuple[tuple[Slot | None, ...], tuple[int, ...]]:
    """The table of an operator without kernels, and its fallthrough slots (memoized per
    set of global fallbacks, which changes rarely)."""
    key = tuple(fallbacks)
    hit = _BASE_MEMO.get(key)
    if hit is None:
        base = tuple(None if f is None else (f, "backend fallback") for f in fallbacks)
        ft = tuple(i for i, f in enumerate(fallbacks) if f is not None and f.is_fallthrough)
        if len(_BASE_MEMO) > 64:
            _BASE_MEMO.clear()
        hit = _BASE_MEMO[key] = (base, ft)
    return hit


def compute_table_and_fallthroughs(
    kernels: dict[DispatchKey, list[KernelFunction]], fallbacks: list[KernelFunction | None]
) -> tuple[tuple[Slot | None, ...], tuple[int, ...]]:
    """``compute_table`` plus the slots holding fallthrough kernels (for the masks)."""
    base, base_ft = _base(fallbacks)
    table = list(base)
    direct, backend_words, alias, ambiguous = slot_facts(kernels)
    ceanf, cea, ciant, cia, autograd, ftbd = alias
    for kernel, slots, label in (
        (ftbd, _ORDERED["ftbd"], "batched kernel"),
        (autograd, _ORDERED["autograd"], "autograd kernel"),
    ):
        if kernel is not None:
            entry = (kernel, label)
            for slot in slots:
                table[slot] = entry
    if cia is not None:
        _overlay_cia(table, cia, cea is not None, backend_words, ambiguous)
    for kernel, slots, label in (
        (ciant, _ORDERED["ciant"], "nested kernel"),
        (cea, _ORDERED["cea"], "default backend kernel"),
        (ceanf, _ORDERED["ceanf"], "default backend kernel"),
    ):
        if kernel is not None:
            entry = (kernel, label)
            for slot in slots:
                table[slot] = entry
    for slot, kernel in direct.items():
        table[slot] = (kernel, "kernel")
    if any(k is not None and k.is_fallthrough for k in (*alias, *direct.values())):
        ft = tuple(i for i, e in enumerate(table) if e is not None and e[0].is_fallthrough)
    else:  # only fallthrough fallbacks, where no kernel replaced them
        ft = tuple(i for i in base_ft if table[i] is base[i])
    return tuple(table), ft


def _overlay_cia(
    table: list[Slot | None],
    cia: KernelFunction,
    has_cea: bool,
    backend_words: list[int],
    ambiguous: bool,
) -> None:
    """Rule 6: CIA fills its slots unless a backend kernel (or any CEA kernel) blocks it;
    AutogradOther gets the ambiguity marker instead when a mapped backend has a kernel."""
    if not has_cea:
        entry = (cia, "math kernel")
        blocked = {s for s, bo in _CIA_BLOCKABLE if any(bo & w == w for w in backend_words)}
        for slot in _ORDERED["cia"]:
            if slot not in blocked:
                table[slot] = entry
    if ambiguous:
        table[_AUTOGRADOTHER_SLOT] = (AMBIGUOUS_AUTOGRADOTHER, "ambiguous autogradother")


# Per slot: (functionality bit, backend index or -1 for non-per-backend keys).
_MASK_FACTS: tuple[tuple[int, int], ...] = tuple(
    (
        keyset_raw(functionality_of(k)) & ~BACKEND_MASK_RAW,
        component_of(k) - 1 if is_per_backend_functionality(functionality_of(k)) else -1,
    )
    for k in (key_of_slot(i) for i in range(NUM_RUNTIME_ENTRIES))
)


SLOT_NAMES = tuple(key_name(key_of_slot(i)) for i in range(NUM_RUNTIME_ENTRIES))
_MASKS_MEMO: dict[tuple[int, ...], tuple[int, tuple[int, ...], bool]] = {}


def fallthrough_masks(table: tuple[Slot | None, ...]) -> tuple[int, tuple[int, ...], bool]:
    """(global mask, 16 per-backend masks, per-backend mode) of spec 5.5, from a table.

    >>> fallthrough_masks((None,) * NUM_RUNTIME_ENTRIES)[2]
    False
    """
    ft = tuple(
        i for i, e in enumerate(table) if e is not None and e[0].kind is KernelKind.FALLTHROUGH
    )
    return masks_of_fallthroughs(ft)


def masks_of_fallthroughs(ft: tuple[int, ...]) -> tuple[int, tuple[int, ...], bool]:
    """``fallthrough_masks`` from the fallthrough slots (memoized)."""
    masks = _MASKS_MEMO.get(ft)
    if masks is None:
        masks = _masks_of(ft)
        if len(_MASKS_MEMO) < 4096:
            _MASKS_MEMO[ft] = masks
    return masks


def _masks_of(ft_slots: tuple[int, ...]) -> tuple[int, tuple[int, ...], bool]:
    shared = FULL_RAW
    per = [FULL_RAW] * NUM_BACKENDS
    for slot in ft_slots:
        bit, backend = _MASK_FACTS[slot]
        if backend >= 0:
            per[backend] &= ~bit
        else:
            shared &= ~bit
            for b in range(NUM_BACKENDS):
                per[b] &= ~bit
    mode = any(per[b] != per[b + 1] for b in range(NUM_BACKENDS - 1))
    return (shared if mode else per[0]), tuple(per), mode
