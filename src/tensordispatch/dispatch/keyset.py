"""DispatchKeySet: torch's 64-bit key-set word, its algebra and its O(1) hot-path queries.

Owns the int representation of key sets (Note [Key model] in keys.py), the raw-int functions
the dispatcher calls once per operator call (``table_index``, ``highest_priority_key_raw``),
the named constant sets, alias expansion and the key sets tensors carry. Must not hold
mutable state: thread-local include/exclude lives in tls.py.

Note [Raw ints on the hot path]
Tensors carry their key set as a plain int and the dispatcher computes on ints; the
``DispatchKeySet`` wrapper is for users, printing and registration-time code. Every per-call
query is a couple of ``int.bit_length`` calls plus tuple indexing, no loops:
``(raw >> 16).bit_length()`` *is* the highest functionality value (bit ``v + 15`` holds
value ``v``), and ``((raw & 0xFFFF) | 1).bit_length() - 1`` is the highest backend index,
with "no backend bit" folding onto CPU's index 0 exactly as torch's table index does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from tensordispatch.dispatch.keys import (
    _BLOCK_START,
    _COMPONENT,
    _FUNCTIONALITY,
    _IS_PER_BACKEND,
    _KEYS,
    _NUM_KEYS,
    _OFFSETS,
    ALIAS_KEYS,
    NUM_BACKENDS,
    NUM_FUNCTIONALITY_KEYS,
    BackendComponent,
    DispatchKey,
    DispatchKeyError,
    autograd_key_of,
    is_alias_key,
    key_name,
    runtime_key,
)

__all__ = [
    "AFTER_AD_INPLACE_OR_VIEW",
    "AFTER_AD_INPLACE_OR_VIEW_RAW",
    "AFTER_AUTOGRAD",
    "AFTER_AUTOGRAD_RAW",
    "AFTER_FUNC",
    "AFTER_FUNC_RAW",
    "AUTOCAST_DISPATCH_KEYSET",
    "AUTOCAST_DISPATCH_KEYSET_RAW",
    "AUTOGRADOTHER_BACKENDS",
    "AUTOGRADOTHER_BACKENDS_RAW",
    "AUTOGRAD_DISPATCH_KEYSET",
    "AUTOGRAD_DISPATCH_KEYSET_RAW",
    "AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW",
    "AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW",
    "BACKEND_FUNCTIONALITY_KEYS",
    "BACKEND_FUNCTIONALITY_KEYS_RAW",
    "BACKEND_MASK_RAW",
    "DEFAULT_EXCLUDED",
    "DEFAULT_EXCLUDED_RAW",
    "DEFAULT_INCLUDED",
    "DEFAULT_INCLUDED_RAW",
    "FULL",
    "FULL_RAW",
    "PYTHON_KS",
    "PYTHON_KS_RAW",
    "DispatchKeySet",
    "alias_runtime_keys",
    "backend_tensor_keyset",
    "backends_of",
    "full_after",
    "full_after_raw",
    "highest_priority_key_raw",
    "is_included_in_alias",
    "keyset_raw",
    "table_index",
]

BACKEND_MASK_RAW: Final = (1 << NUM_BACKENDS) - 1
FULL_RAW: Final = (1 << (NUM_BACKENDS + NUM_FUNCTIONALITY_KEYS - 1)) - 1  # bits 0-61


def _build_keyset_raw() -> tuple[int, ...]:
    """The word of ``DispatchKeySet(k)`` for every enum value (aliases: empty)."""
    words = [0] * _NUM_KEYS
    for v in range(1, _NUM_KEYS):
        if is_alias_key(v):
            continue
        c = _COMPONENT[v]
        words[v] = (1 << (_FUNCTIONALITY[v] + NUM_BACKENDS - 1)) | ((1 << (c - 1)) if c else 0)
    return tuple(words)


_KEYSET_RAW: Final = _build_keyset_raw()
# Mask applied to the component for each functionality value: all ones for per-backend
# functionalities, 0 otherwise, so the key lookup needs no branch. Bit 62 (the
# EndOfFunctionalityKeys sentinel, never set in a valid word) has no table index (its offset
# is past the table); as in torch, its highest-priority key is the sentinel itself.
_KEY_MASK: Final = tuple(31 if pb else 0 for pb in _IS_PER_BACKEND)
_KEY_BASE: Final = tuple(_BLOCK_START.get(f, f) for f in range(NUM_FUNCTIONALITY_KEYS + 1))
_BACKEND_BITS: Final = tuple(BackendComponent(c) for c in range(NUM_BACKENDS + 1))


def keyset_raw(k: int) -> int:
    """The raw word of the key set holding just ``k`` (0 for Undefined and aliases).

    >>> hex(keyset_raw(DispatchKey.CPU)), hex(keyset_raw(DispatchKey.AutogradCPU))
    ('0x10001', '0x1000000001')
    """
    return _KEYSET_RAW[k]


def table_index(raw: int) -> int:
    """Dispatch-table index of a key-set word: O(1), see Note [Raw ints on the hot path].

    >>> table_index(0x10001), table_index(0x1000018001), table_index(0)
    (1, 111, 0)
    """
    f = (raw >> 16).bit_length()
    if _IS_PER_BACKEND[f]:
        return _OFFSETS[f] + ((raw & 0xFFFF) | 1).bit_length() - 1
    return _OFFSETS[f]


def highest_priority_key_raw(raw: int) -> DispatchKey:
    """torch's ``highestPriorityTypeId`` of a key-set word.

    A per-backend functionality without any backend bit gives its placeholder (printed
    ``Undefined``, ``QuantizedUndefined``, ...).

    >>> highest_priority_key_raw(0x1000018001), highest_priority_key_raw(0x10000)
    (<DispatchKey.AutogradMeta: 149>, <DispatchKey.StartOfDenseBackends: 48>)
    """
    f = (raw >> 16).bit_length()
    return _KEYS[_KEY_BASE[f] + ((raw & 0xFFFF).bit_length() & _KEY_MASK[f])]


def full_after_raw(k: int) -> int:
    """Word of every key strictly below ``k``'s functionality, plus every backend bit and
    PythonDispatcher (torch's ``DispatchKeySet(FULL_AFTER, k)``).

    >>> hex(full_after_raw(DispatchKey.AutogradOther))
    '0x20000007ffffffff'
    """
    bits = NUM_BACKENDS + _FUNCTIONALITY[k] - 1
    return ((1 << bits) - 1) | _KEYSET_RAW[DispatchKey.PythonDispatcher]


class DispatchKeySet:
    """An immutable set of dispatch keys stored as torch's 64-bit word (``.raw``).

    Built from keys (aliases contribute nothing) and backend components. Union,
    intersection and xor are bitwise; difference clears functionality bits only, so backend
    bits always survive. Because functionality and backend bits are independent, a set is
    the product of its functionalities and its backends.

    >>> ks = DispatchKeySet(DispatchKey.CPU) | DispatchKeySet(DispatchKey.AutogradCUDA)
    >>> ks
    DispatchKeySet(CPU, CUDA, AutogradCPU, AutogradCUDA)
    >>> ks.has(DispatchKey.AutogradCPU), ks.highest_priority_type_id()
    (True, <DispatchKey.AutogradCUDA: 135>)
    >>> ks - DispatchKeySet(DispatchKey.CPU)
    DispatchKeySet(AutogradCPU, AutogradCUDA)
    """

    __slots__ = ("raw",)
    raw: int

    def __init__(self, *keys: DispatchKey | BackendComponent) -> None:
        raw = 0
        for k in keys:
            if isinstance(k, BackendComponent):
                raw |= (1 << (k - 1)) if k else 0
            else:
                raw |= _KEYSET_RAW[k]
        object.__setattr__(self, "raw", raw)

    @classmethod
    def from_raw(cls, raw: int) -> DispatchKeySet:
        """The key set of a raw word.

        >>> DispatchKeySet.from_raw(0x404000000)
        DispatchKeySet(BackendSelect, ADInplaceOrView)
        """
        self = object.__new__(cls)
        object.__setattr__(self, "raw", raw)
        return self

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"DispatchKeySet is immutable; cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"DispatchKeySet is immutable; cannot delete {name!r}")

    def __reduce__(self) -> tuple[object, tuple[int]]:
        return (DispatchKeySet.from_raw, (self.raw,))

    # Set algebra (plain bitwise except difference, see the class docstring).
    def __or__(self, other: DispatchKeySet) -> DispatchKeySet:
        return DispatchKeySet.from_raw(self.raw | other.raw)

    def __and__(self, other: DispatchKeySet) -> DispatchKeySet:
        return DispatchKeySet.from_raw(self.raw & other.raw)

    def __xor__(self, other: DispatchKeySet) -> DispatchKeySet:
        return DispatchKeySet.from_raw(self.raw ^ other.raw)

    def __sub__(self, other: DispatchKeySet) -> DispatchKeySet:
        return DispatchKeySet.from_raw(self.raw & (BACKEND_MASK_RAW | ~other.raw))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DispatchKeySet):
            return self.raw == other.raw
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.raw)

    def __bool__(self) -> bool:
        return self.raw != 0

    def __contains__(self, k: DispatchKey) -> bool:
        return self.has(k)

    def add(self, k: DispatchKey) -> DispatchKeySet:
        """This set plus ``k`` (a new set).

        >>> DispatchKeySet(DispatchKey.CPU).add(DispatchKey.AutogradFunctionality)
        DispatchKeySet(CPU, AutogradCPU)
        """
        return DispatchKeySet.from_raw(self.raw | _KEYSET_RAW[k])

    def remove(self, k: DispatchKey) -> DispatchKeySet:
        """This set minus ``k``'s functionality bit; its backend bit stays.

        >>> DispatchKeySet(DispatchKey.AutogradCPU).remove(DispatchKey.AutogradCPU).raw
        1
        """
        return self - DispatchKeySet.from_raw(_KEYSET_RAW[k])

    def remove_backend(self, c: BackendComponent) -> DispatchKeySet:
        """This set without backend ``c`` (for every functionality).

        >>> ks = DispatchKeySet(DispatchKey.CPU, DispatchKey.Meta)
        >>> ks.remove_backend(BackendComponent.MetaBit)
        DispatchKeySet(CPU)
        """
        return DispatchKeySet.from_raw(self.raw & ~((1 << (c - 1)) if c else 0))

    def has(self, k: DispatchKey) -> bool:
        """Whether every bit of ``k`` is present (aliases and Undefined: always true).

        >>> DispatchKeySet(DispatchKey.CPU).has(DispatchKey.Meta)
        False
        """
        word = _KEYSET_RAW[k]
        return self.raw & word == word

    def has_any(self, ks: DispatchKeySet) -> bool:
        """Whether the two sets share any bit.

        >>> DispatchKeySet(DispatchKey.CPU).has_any(DispatchKeySet(DispatchKey.AutogradCPU))
        True
        """
        return self.raw & ks.raw != 0

    def has_all(self, ks: DispatchKeySet) -> bool:
        """Whether this set is a superset of ``ks`` (torch's ``isSupersetOf``).

        >>> DispatchKeySet(DispatchKey.CPU).has_all(DispatchKeySet(DispatchKey.AutogradCPU))
        False
        """
        return self.raw & ks.raw == ks.raw

    def empty(self) -> bool:
        """Whether the word is 0 (a word with only backend bits prints empty but is not).

        >>> DispatchKeySet.from_raw(1), DispatchKeySet.from_raw(1).empty()
        (DispatchKeySet(), False)
        """
        return self.raw == 0

    def raw_repr(self) -> int:
        """The raw word (torch's spelling of ``.raw``).

        >>> hex(DispatchKeySet(DispatchKey.Meta).raw_repr())
        '0x18000'
        """
        return self.raw

    def __iter__(self) -> Iterator[DispatchKey]:
        """Runtime keys in priority order, lowest first (per-backend bits without any backend
        bit yield nothing; backend bits alone yield nothing)."""
        raw = self.raw
        backends = [c for c in range(1, NUM_BACKENDS + 1) if raw >> (c - 1) & 1]
        functionalities = raw >> NUM_BACKENDS
        for f in range(1, NUM_FUNCTIONALITY_KEYS):
            if not functionalities >> (f - 1) & 1:
                continue
            if _IS_PER_BACKEND[f]:
                start = _BLOCK_START[f]
                for c in backends:
                    yield _KEYS[start + c]
            else:
                yield _KEYS[f]

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"DispatchKeySet({', '.join(key_name(k) for k in self)})"

    def highest_priority_type_id(self) -> DispatchKey:
        """The key this set dispatches to (torch's ``highestPriorityTypeId``).

        >>> DispatchKeySet(DispatchKey.CPU, DispatchKey.Python).highest_priority_type_id()
        <DispatchKey.Python: 13>
        """
        return highest_priority_key_raw(self.raw)

    def highest_functionality_key(self) -> DispatchKey:
        """The highest functionality present (Undefined if none).

        >>> DispatchKeySet(DispatchKey.AutogradMeta).highest_functionality_key()
        <DispatchKey.AutogradFunctionality: 21>
        """
        return _KEYS[(self.raw >> NUM_BACKENDS).bit_length()]

    def highest_backend_key(self) -> BackendComponent:
        """The highest backend present (InvalidBit if none).

        >>> DispatchKeySet(DispatchKey.CPU, DispatchKey.Meta).highest_backend_key()
        <BackendComponent.MetaBit: 16>
        """
        return _BACKEND_BITS[(self.raw & BACKEND_MASK_RAW).bit_length()]

    def table_index(self) -> int:
        """This set's dispatch-table index (see the module function ``table_index``).

        >>> DispatchKeySet(DispatchKey.AutogradOther).table_index()
        95
        """
        return table_index(self.raw)


def _raw_of(*keys: DispatchKey) -> int:
    raw = 0
    for k in keys:
        raw |= _KEYSET_RAW[k]
    return raw


_K = DispatchKey
_AUTOCAST_KEYS = tuple(DispatchKey(v) for v in range(_K.AutocastCPU, _K.AutocastPrivateUse1 + 1))

# Named constant sets (raw words and DispatchKeySet forms).
FULL = DispatchKeySet.from_raw(FULL_RAW)
AFTER_AUTOGRAD_RAW: Final = full_after_raw(_K.AutogradOther)
AFTER_AD_INPLACE_OR_VIEW_RAW: Final = full_after_raw(_K.ADInplaceOrView)
AFTER_FUNC_RAW: Final = full_after_raw(_K.Functionalize) & ~_KEYSET_RAW[_K.ADInplaceOrView]
AUTOGRAD_DISPATCH_KEYSET_RAW: Final = _raw_of(
    _K.AutogradFunctionality, _K.AutogradOther, _K.AutogradNestedTensor
)
AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW: Final = (
    AUTOGRAD_DISPATCH_KEYSET_RAW | _KEYSET_RAW[_K.ADInplaceOrView]
)
AUTOCAST_DISPATCH_KEYSET_RAW: Final = _raw_of(*_AUTOCAST_KEYS)
DEFAULT_INCLUDED_RAW: Final = _raw_of(_K.BackendSelect, _K.ADInplaceOrView)
DEFAULT_EXCLUDED_RAW: Final = AUTOCAST_DISPATCH_KEYSET_RAW
PYTHON_KS_RAW: Final = _raw_of(_K.Python, _K.PythonTLSSnapshot)
AUTOGRADOTHER_BACKENDS_RAW: Final = BACKEND_MASK_RAW | _raw_of(
    _K.FPGA, _K.Vulkan, _K.Metal, _K.CustomRNGKeyId, _K.MkldnnCPU,
    _K.Sparse, _K.SparseCsr, _K.Quantized,
)  # fmt: skip
BACKEND_FUNCTIONALITY_KEYS_RAW: Final = BACKEND_MASK_RAW | _raw_of(
    _K.Dense, _K.Quantized, _K.Sparse, _K.SparseCsr
)

AFTER_AUTOGRAD = DispatchKeySet.from_raw(AFTER_AUTOGRAD_RAW)
AFTER_AD_INPLACE_OR_VIEW = DispatchKeySet.from_raw(AFTER_AD_INPLACE_OR_VIEW_RAW)
AFTER_FUNC = DispatchKeySet.from_raw(AFTER_FUNC_RAW)
AUTOGRAD_DISPATCH_KEYSET = DispatchKeySet.from_raw(AUTOGRAD_DISPATCH_KEYSET_RAW)
AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW = DispatchKeySet.from_raw(
    AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW
)
AUTOCAST_DISPATCH_KEYSET = DispatchKeySet.from_raw(AUTOCAST_DISPATCH_KEYSET_RAW)
DEFAULT_INCLUDED = DispatchKeySet.from_raw(DEFAULT_INCLUDED_RAW)
DEFAULT_EXCLUDED = DispatchKeySet.from_raw(DEFAULT_EXCLUDED_RAW)
PYTHON_KS = DispatchKeySet.from_raw(PYTHON_KS_RAW)
AUTOGRADOTHER_BACKENDS = DispatchKeySet.from_raw(AUTOGRADOTHER_BACKENDS_RAW)
BACKEND_FUNCTIONALITY_KEYS = DispatchKeySet.from_raw(BACKEND_FUNCTIONALITY_KEYS_RAW)


def full_after(k: DispatchKey) -> DispatchKeySet:
    """``full_after_raw(k)`` as a key set.

    >>> full_after(DispatchKey.ADInplaceOrView).raw == AFTER_AD_INPLACE_OR_VIEW_RAW
    True
    """
    return DispatchKeySet.from_raw(full_after_raw(k))


# Alias expansion (runtime key sets of alias keys). Every one is a product of functionality
# bits and backend bits, so each is a single word.
_CEA_RAW = AUTOGRADOTHER_BACKENDS_RAW | _KEYSET_RAW[_K.Dense]
_CEANF_RAW = (
    _CEA_RAW
    & ~_KEYSET_RAW[_K.Sparse]
    & ~(1 << (BackendComponent.XLABit - 1))
    & ~(1 << (BackendComponent.LazyBit - 1))
)
_AUTOGRAD_ALIAS_RAW = AUTOGRAD_DISPATCH_KEYSET_RAW | BACKEND_MASK_RAW
_NESTED_RAW = _raw_of(_K.NestedTensor, _K.AutogradNestedTensor) | BACKEND_MASK_RAW
_ALIAS_RAW: dict[int, int] = {
    _K.Autograd: _AUTOGRAD_ALIAS_RAW,
    _K.CompositeImplicitAutograd: _CEA_RAW | _AUTOGRAD_ALIAS_RAW | _NESTED_RAW,
    _K.FuncTorchBatchedDecomposition: _KEYSET_RAW[_K.FuncTorchBatched],
    _K.CompositeImplicitAutogradNestedTensor: _NESTED_RAW,
    _K.CompositeExplicitAutograd: _CEA_RAW,
    _K.CompositeExplicitAutogradNonFunctional: _CEANF_RAW,
}
if set(_ALIAS_RAW) != set(ALIAS_KEYS):  # pragma: no cover - guards the table above
    raise ImportError("alias expansion table out of sync with ALIAS_KEYS")


def alias_runtime_keys(alias: int) -> DispatchKeySet:
    """The runtime keys an alias key expands to (a non-alias key expands to itself).

    >>> len(list(alias_runtime_keys(DispatchKey.Autograd)))
    18
    """
    if alias == DispatchKey.Undefined:
        raise DispatchKeyError(
            " ".join(
                [
                    "alias_runtime_keys(Undefined): Undefined is neither an alias nor a runtime",
                    "key; pass an alias key such as CompositeImplicitAutograd",
                ]
            )
        )
    return DispatchKeySet.from_raw(_ALIAS_RAW.get(alias, _KEYSET_RAW[alias]))


def is_included_in_alias(k: int, alias: int) -> bool:
    """Whether a registration under ``alias`` covers runtime key ``k``. As in torch, a
    non-alias ``alias`` covers only itself and an alias ``k`` is covered by every alias.

    >>> is_included_in_alias(DispatchKey.AutogradCPU, DispatchKey.CompositeImplicitAutograd)
    True
    >>> is_included_in_alias(DispatchKey.XLA, DispatchKey.CompositeExplicitAutogradNonFunctional)
    False
    """
    if k == DispatchKey.Undefined:
        return False
    expansion = _ALIAS_RAW.get(alias)
    if expansion is None:  # a non-alias key covers exactly itself
        alias_runtime_keys(alias)  # rejects Undefined
        return k == alias
    word = _KEYSET_RAW[k]
    return expansion & word == word


_NESTED_BACKENDS_RAW = _KEYSET_RAW[_K.NestedTensor] | BACKEND_MASK_RAW
# Autograd keys whose backend kernels never count (torch maps them to the empty set).
_NO_BACKENDS = frozenset((_K.AutogradHIP, _K.AutogradVE, _K.AutogradMTIA))


def backends_of(autograd_key: int) -> DispatchKeySet:
    """The backend keys whose kernels an autograd key stands for (torch's backendsOf).

    >>> backends_of(DispatchKey.AutogradXLA), backends_of(DispatchKey.CPU)
    (DispatchKeySet(XLA), DispatchKeySet())
    """
    if autograd_key == _K.AutogradOther:
        return AUTOGRADOTHER_BACKENDS
    if autograd_key == _K.AutogradNestedTensor:
        return DispatchKeySet.from_raw(_NESTED_BACKENDS_RAW)
    if (
        _FUNCTIONALITY[autograd_key] == _K.AutogradFunctionality
        and _COMPONENT[autograd_key]
        and autograd_key not in _NO_BACKENDS
    ):
        return DispatchKeySet(runtime_key(_K.Dense, _COMPONENT[autograd_key]))
    return DispatchKeySet()


# Autocast key of each backend that has one (torch's autocast-related key set).
_AUTOCAST_OF: dict[int, DispatchKey] = {
    BackendComponent.CPUBit: _K.AutocastCPU,
    BackendComponent.CUDABit: _K.AutocastCUDA,
    BackendComponent.XPUBit: _K.AutocastXPU,
    BackendComponent.IPUBit: _K.AutocastIPU,
    BackendComponent.HPUBit: _K.AutocastHPU,
    BackendComponent.XLABit: _K.AutocastXLA,
    BackendComponent.PrivateUse1Bit: _K.AutocastPrivateUse1,
    BackendComponent.MPSBit: _K.AutocastMPS,
    BackendComponent.MTIABit: _K.AutocastMTIA,
    BackendComponent.MAIABit: _K.AutocastMAIA,
}
_TENSOR_FUNCTIONALITIES = (_K.Dense, _K.Quantized, _K.Sparse, _K.SparseCsr, _K.NestedTensor)


def backend_tensor_keyset(
    component: BackendComponent, functionality: DispatchKey = DispatchKey.Dense
) -> DispatchKeySet:
    """The key set of a plain tensor of one backend and layout functionality: its runtime
    key, ADInplaceOrView, its autograd key(s) and its backend's autocast key if any.

    >>> backend_tensor_keyset(BackendComponent.CPUBit)
    DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)
    >>> backend_tensor_keyset(BackendComponent.MetaBit)
    DispatchKeySet(Meta, ADInplaceOrView, AutogradMeta)
    """
    if functionality not in _TENSOR_FUNCTIONALITIES or not component:
        raise DispatchKeyError(
            " ".join(
                [
                    f"backend_tensor_keyset({BackendComponent(component)},",
                    f"{key_name(functionality)}): a tensor's layout functionality must be one of",
                    f"{', '.join(map(key_name, _TENSOR_FUNCTIONALITIES))} on a real backend",
                    "(not InvalidBit)",
                ]
            )
        )
    raw = _KEYSET_RAW[runtime_key(functionality, component)]
    raw |= _KEYSET_RAW[_K.ADInplaceOrView] | _KEYSET_RAW[autograd_key_of(component)]
    if functionality == _K.NestedTensor:
        raw |= _KEYSET_RAW[_K.AutogradNestedTensor]
    autocast = _AUTOCAST_OF.get(component)
    if autocast is not None:
        raw |= _KEYSET_RAW[autocast]
    return DispatchKeySet.from_raw(raw)
