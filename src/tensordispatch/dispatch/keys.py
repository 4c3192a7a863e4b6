"""Dispatch keys: torch 2.13's DispatchKey and BackendComponent model, as data.

Owns the key enums, their printed and parseable names, and the per-key facts the dispatcher
needs (functionality, backend component, table slot, alias expansion). Everything is
precomputed at import into tuples indexed by the key's int value, so a lookup is one index.
Must not hold mutable state or import anything above ``dispatch``.

Note [Key model]
A key set is one 64-bit word: bits 0-15 are backend components (CPU is bit 0, Meta bit 15),
bits 16-61 are functionalities (functionality value ``v`` owns bit ``v + 15``). Six
functionalities are *per-backend* (Dense, Quantized, Sparse, SparseCsr, NestedTensor,
AutogradFunctionality): their runtime keys (``CPU``, ``QuantizedCPU``, ``AutogradMeta``, ...)
are the product of the functionality bit and one backend bit, so one enum block of 17 values
(a placeholder followed by one key per component) maps onto one bit plus sixteen backends.
Priority is the enum value; between backends, Meta is highest and CPU lowest.
"""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover - import cycle: keyset builds on this module
    from tensordispatch.dispatch.keyset import DispatchKeySet

__all__ = [
    "ALIAS_KEYS",
    "NUM_BACKENDS",
    "NUM_FUNCTIONALITY_KEYS",
    "NUM_RUNTIME_ENTRIES",
    "PER_BACKEND_FUNCTIONALITIES",
    "RUNTIME_KEYS",
    "BackendComponent",
    "DispatchKey",
    "DispatchKeyError",
    "alias_runtime_keys",
    "autograd_key_of",
    "backends_of",
    "component_of",
    "error_key_name",
    "functionality_of",
    "functionality_to_backend_keys",
    "is_alias_key",
    "is_backend_key",
    "is_included_in_alias",
    "is_per_backend_functionality",
    "is_runtime_key",
    "key_name",
    "key_of_slot",
    "parse_dispatch_key",
    "runtime_key",
    "slot_of",
]


class DispatchKeyError(RuntimeError):
    """A dispatch key name or key combination that torch's key model does not allow."""


class BackendComponent(IntEnum):
    """The 16 backends, one key-set bit each (component ``c`` owns bit ``c - 1``).

    >>> BackendComponent.MetaBit, str(BackendComponent.CPUBit)
    (<BackendComponent.MetaBit: 16>, 'CPUBit')
    """

    InvalidBit = 0
    CPUBit = 1
    CUDABit = 2
    HIPBit = 3
    XLABit = 4
    MPSBit = 5
    IPUBit = 6
    XPUBit = 7
    HPUBit = 8
    VEBit = 9
    LazyBit = 10
    MTIABit = 11
    MAIABit = 12
    PrivateUse1Bit = 13
    PrivateUse2Bit = 14
    PrivateUse3Bit = 15
    MetaBit = 16

    def __str__(self) -> str:
        return self.name

    def __format__(self, spec: str) -> str:
        return format(self.name, spec)


class DispatchKey(IntEnum):
    """torch 2.13's dispatch keys with their exact enum values (priority = value).

    ``str(k)`` is torch's printed name (placeholders print ``Undefined``,
    ``QuantizedUndefined``, ...; the sentinel prints ``UnknownUnknown``).

    >>> DispatchKey.AutogradCPU, str(DispatchKey.StartOfQuantizedBackends)
    (<DispatchKey.AutogradCPU: 134>, 'QuantizedUndefined')
    """

    # Functionality keys, lowest priority first (Note [Key model]).
    Undefined = 0
    Dense = 1
    FPGA = 2
    Vulkan = 3
    Metal = 4
    Quantized = 5
    CustomRNGKeyId = 6
    MkldnnCPU = 7
    Sparse = 8
    SparseCsr = 9
    NestedTensor = 10
    BackendSelect = 11
    Fake = 12
    Python = 13
    FuncTorchDynamicLayerBackMode = 14
    Functionalize = 15
    Conjugate = 16
    Negative = 17
    ZeroTensor = 18
    ADInplaceOrView = 19
    AutogradOther = 20
    AutogradFunctionality = 21
    AutogradNestedTensor = 22
    Tracer = 23
    AutocastCPU = 24
    AutocastMTIA = 25
    AutocastMAIA = 26
    AutocastXPU = 27
    AutocastIPU = 28
    AutocastHPU = 29
    AutocastXLA = 30
    AutocastMPS = 31
    AutocastCUDA = 32
    AutocastPrivateUse1 = 33
    FuncTorchBatched = 34
    BatchedNestedTensor = 35
    FuncTorchVmapMode = 36
    Batched = 37
    VmapMode = 38
    FuncTorchGradWrapper = 39
    DeferredInit = 40
    PythonTLSSnapshot = 41
    FuncTorchDynamicLayerFrontMode = 42
    TESTING_ONLY_GenericWrapper = 43
    TESTING_ONLY_GenericMode = 44
    PreDispatch = 45
    PythonDispatcher = 46
    EndOfFunctionalityKeys = 47
    # Dense runtime keys.
    StartOfDenseBackends = 48
    CPU = 49
    CUDA = 50
    HIP = 51
    XLA = 52
    MPS = 53
    IPU = 54
    XPU = 55
    HPU = 56
    VE = 57
    Lazy = 58
    MTIA = 59
    MAIA = 60
    PrivateUse1 = 61
    PrivateUse2 = 62
    PrivateUse3 = 63
    Meta = 64
    # Quantized runtime keys.
    StartOfQuantizedBackends = 65
    QuantizedCPU = 66
    QuantizedCUDA = 67
    QuantizedHIP = 68
    QuantizedXLA = 69
    QuantizedMPS = 70
    QuantizedIPU = 71
    QuantizedXPU = 72
    QuantizedHPU = 73
    QuantizedVE = 74
    QuantizedLazy = 75
    QuantizedMTIA = 76
    QuantizedMAIA = 77
    QuantizedPrivateUse1 = 78
    QuantizedPrivateUse2 = 79
    QuantizedPrivateUse3 = 80
    QuantizedMeta = 81
    # Sparse runtime keys.
    StartOfSparseBackends = 82
    SparseCPU = 83
    SparseCUDA = 84
    SparseHIP = 85
    SparseXLA = 86
    SparseMPS = 87
    SparseIPU = 88
    SparseXPU = 89
    SparseHPU = 90
    SparseVE = 91
    SparseLazy = 92
    SparseMTIA = 93
    SparseMAIA = 94
    SparsePrivateUse1 = 95
    SparsePrivateUse2 = 96
    SparsePrivateUse3 = 97
    SparseMeta = 98
    # SparseCsr runtime keys.
    StartOfSparseCsrBackends = 99
    SparseCsrCPU = 100
    SparseCsrCUDA = 101
    SparseCsrHIP = 102
    SparseCsrXLA = 103
    SparseCsrMPS = 104
    SparseCsrIPU = 105
    SparseCsrXPU = 106
    SparseCsrHPU = 107
    SparseCsrVE = 108
    SparseCsrLazy = 109
    SparseCsrMTIA = 110
    SparseCsrMAIA = 111
    SparseCsrPrivateUse1 = 112
    SparseCsrPrivateUse2 = 113
    SparseCsrPrivateUse3 = 114
    SparseCsrMeta = 115
    # NestedTensor runtime keys.
    StartOfNestedTensorBackends = 116
    NestedTensorCPU = 117
    NestedTensorCUDA = 118
    NestedTensorHIP = 119
    NestedTensorXLA = 120
    NestedTensorMPS = 121
    NestedTensorIPU = 122
    NestedTensorXPU = 123
    NestedTensorHPU = 124
    NestedTensorVE = 125
    NestedTensorLazy = 126
    NestedTensorMTIA = 127
    NestedTensorMAIA = 128
    NestedTensorPrivateUse1 = 129
    NestedTensorPrivateUse2 = 130
    NestedTensorPrivateUse3 = 131
    NestedTensorMeta = 132
    # Autograd runtime keys.
    StartOfAutogradFunctionalityBackends = 133
    AutogradCPU = 134
    AutogradCUDA = 135
    AutogradHIP = 136
    AutogradXLA = 137
    AutogradMPS = 138
    AutogradIPU = 139
    AutogradXPU = 140
    AutogradHPU = 141
    AutogradVE = 142
    AutogradLazy = 143
    AutogradMTIA = 144
    AutogradMAIA = 145
    AutogradPrivateUse1 = 146
    AutogradPrivateUse2 = 147
    AutogradPrivateUse3 = 148
    AutogradMeta = 149
    # Alias keys: registration targets only, never members of a key set.
    Autograd = 150
    CompositeImplicitAutograd = 151
    FuncTorchBatchedDecomposition = 152
    CompositeImplicitAutogradNestedTensor = 153
    CompositeExplicitAutograd = 154
    CompositeExplicitAutogradNonFunctional = 155
    # Enum aliases torch's Python binding also exposes (end of each per-backend block).
    EndOfDenseBackends = 64
    EndOfQuantizedBackends = 81
    EndOfSparseBackends = 98
    EndOfSparseCsrBackends = 115
    EndOfNestedTensorBackends = 132
    EndOfAutogradFunctionalityBackends = 149

    def __str__(self) -> str:
        return _NAMES[self]

    def __format__(self, spec: str) -> str:
        return format(_NAMES[self], spec)


NUM_BACKENDS = 16
NUM_FUNCTIONALITY_KEYS = 47  # functionality values 0..46, Undefined included
_NUM_KEYS = 156
_BLOCK = NUM_BACKENDS + 1  # placeholder + one key per component

# The per-backend functionalities with their enum block start and printed prefix.
_PER_BACKEND: tuple[tuple[DispatchKey, int, str], ...] = (
    (DispatchKey.Dense, 48, ""),
    (DispatchKey.Quantized, 65, "Quantized"),
    (DispatchKey.Sparse, 82, "Sparse"),
    (DispatchKey.SparseCsr, 99, "SparseCsr"),
    (DispatchKey.NestedTensor, 116, "NestedTensor"),
    (DispatchKey.AutogradFunctionality, 133, "Autograd"),
)
PER_BACKEND_FUNCTIONALITIES: tuple[DispatchKey, ...] = tuple(f for f, _, _ in _PER_BACKEND)
ALIAS_KEYS: tuple[DispatchKey, ...] = tuple(DispatchKey(v) for v in range(150, 156))

# Per-backend runtime keys torch's string parser accepts, as component values per block
# (the others exist in the enum and print, but `_parse_dispatch_key` rejects them).
_PARSEABLE_COMPONENTS: dict[DispatchKey, tuple[int, ...]] = {
    DispatchKey.Dense: tuple(range(1, 17)),
    DispatchKey.Quantized: (1, 2, 7, 13),
    DispatchKey.Sparse: (1, 2, 3, 5, 7, 9, 13, 16),
    DispatchKey.SparseCsr: (1, 2, 3, 5, 7, 9, 13, 16),
    DispatchKey.NestedTensor: (1, 2, 7, 8, 13, 16),
    DispatchKey.AutogradFunctionality: (1, 2, 4, 5, 6, 7, 8, 10, 13, 14, 15, 16),
}


def _build_tables() -> tuple[
    tuple[DispatchKey, ...],
    tuple[str, ...],
    tuple[int, ...],
    tuple[int, ...],
    dict[str, DispatchKey],
]:
    """Per enum value: the member, printed name, functionality value, component value."""
    keys = tuple(DispatchKey(v) for v in range(_NUM_KEYS))
    names = [k.name for k in keys]
    functionality = list(range(_NUM_KEYS))
    component = [0] * _NUM_KEYS
    parse = {names[v]: keys[v] for v in range(NUM_FUNCTIONALITY_KEYS)}
    names[DispatchKey.EndOfFunctionalityKeys] = "UnknownUnknown"
    for f, start, prefix in _PER_BACKEND:
        names[start] = prefix + "Undefined" if prefix else "Undefined"
        for c in range(_BLOCK):
            functionality[start + c] = f
            component[start + c] = c
        for c in _PARSEABLE_COMPONENTS[f]:
            parse[names[start + c]] = keys[start + c]
    for k in ALIAS_KEYS:
        functionality[k] = DispatchKey.Undefined  # aliases have no functionality bit
        parse[names[k]] = k
    return keys, tuple(names), tuple(functionality), tuple(component), parse


_KEYS, _NAMES, _FUNCTIONALITY, _COMPONENT, _PARSE = _build_tables()
_BLOCK_START: dict[int, int] = {f: start for f, start, _ in _PER_BACKEND}
_IS_PER_BACKEND: tuple[bool, ...] = tuple(
    v in _BLOCK_START for v in range(NUM_FUNCTIONALITY_KEYS + 1)
)


def _build_slots() -> tuple[tuple[int, ...], tuple[DispatchKey, ...], tuple[int, ...]]:
    """Table offsets per functionality value, keys in slot order, and slot per enum value."""
    offsets = [0] * (NUM_FUNCTIONALITY_KEYS + 1)
    order: list[DispatchKey] = [DispatchKey.Undefined]
    slot = [-1] * _NUM_KEYS
    slot[DispatchKey.Undefined] = 0
    for f in range(1, NUM_FUNCTIONALITY_KEYS):
        offsets[f] = len(order)
        if _IS_PER_BACKEND[f]:
            for c in range(1, _BLOCK):
                slot[_BLOCK_START[f] + c] = len(order)
                order.append(_KEYS[_BLOCK_START[f] + c])
        else:
            slot[f] = len(order)
            order.append(_KEYS[f])
    offsets[NUM_FUNCTIONALITY_KEYS] = len(order)
    return tuple(offsets), tuple(order), tuple(slot)


# _OFFSETS[f]: first table slot of functionality value f (index 47 = table size).
_OFFSETS, _SLOT_KEYS, _SLOT_OF = _build_slots()
NUM_RUNTIME_ENTRIES: int = _OFFSETS[NUM_FUNCTIONALITY_KEYS]
RUNTIME_KEYS: tuple[DispatchKey, ...] = _SLOT_KEYS[1:]


def key_name(k: int) -> str:
    """torch's printed name of a key (``str(k)`` does the same).

    >>> key_name(DispatchKey.StartOfAutogradFunctionalityBackends), key_name(47)
    ('AutogradUndefined', 'UnknownUnknown')
    """
    if 0 <= k < _NUM_KEYS:
        return _NAMES[k]
    return "UnknownUnknown"


_DEFAULT_PRIVATEUSE1_NAME = "privateuseone"


def error_key_name(k: int, privateuse1_name: str = _DEFAULT_PRIVATEUSE1_NAME) -> str:
    """A key's name as error messages show it: once the PrivateUse1 backend is renamed
    (torch's ``rename_privateuse1_backend``), a trailing ``PrivateUse1`` becomes that name.

    >>> error_key_name(DispatchKey.SparsePrivateUse1, "npu"), error_key_name(DispatchKey.CPU, "npu")
    ('Sparsenpu', 'CPU')
    """
    name = key_name(k)
    if privateuse1_name != _DEFAULT_PRIVATEUSE1_NAME and name.endswith("PrivateUse1"):
        return name.removesuffix("PrivateUse1") + privateuse1_name
    return name


def parse_dispatch_key(name: str) -> DispatchKey:
    """The key named ``name``, accepting exactly the names torch's parser accepts.

    >>> parse_dispatch_key("AutogradCPU")
    <DispatchKey.AutogradCPU: 134>
    >>> parse_dispatch_key("NotAKey")
    Traceback (most recent call last):
    ...
    tensordispatch.dispatch.keys.DispatchKeyError: could not parse dispatch key: NotAKey
    """
    key = _PARSE.get(name)
    if key is None:
        raise DispatchKeyError(f"could not parse dispatch key: {name}")
    return key


def functionality_of(k: int) -> DispatchKey:
    """The functionality key of ``k`` (itself for functionality keys, Undefined for aliases).

    >>> functionality_of(DispatchKey.AutogradMeta)
    <DispatchKey.AutogradFunctionality: 21>
    """
    return _KEYS[_FUNCTIONALITY[k]]


def component_of(k: int) -> BackendComponent:
    """The backend component of a per-backend runtime key; InvalidBit for every other key.

    >>> component_of(DispatchKey.SparseCUDA), component_of(DispatchKey.FPGA)
    (<BackendComponent.CUDABit: 2>, <BackendComponent.InvalidBit: 0>)
    """
    return BackendComponent(_COMPONENT[k])


def is_per_backend_functionality(k: int) -> bool:
    """Whether ``k`` is one of the six per-backend functionality keys (Note [Key model]).

    >>> is_per_backend_functionality(DispatchKey.Dense)
    True
    >>> is_per_backend_functionality(DispatchKey.CPU)
    False
    """
    return 0 <= k <= NUM_FUNCTIONALITY_KEYS and _IS_PER_BACKEND[k]


def runtime_key(functionality: int, component: int) -> DispatchKey:
    """The runtime key of a per-backend functionality on one backend.

    >>> runtime_key(DispatchKey.NestedTensor, BackendComponent.MetaBit)
    <DispatchKey.NestedTensorMeta: 132>
    """
    start = _BLOCK_START.get(functionality)
    if start is None:
        raise DispatchKeyError(
            " ".join(
                [
                    f"runtime_key({key_name(functionality)}, {BackendComponent(component)}): only",
                    "the per-backend functionalities",
                    f"({', '.join(map(str, PER_BACKEND_FUNCTIONALITIES))})",
                    "have one runtime key per backend; use the functionality key itself",
                ]
            )
        )
    return _KEYS[start + BackendComponent(component)]


def functionality_to_backend_keys(k: int) -> list[DispatchKey]:
    """The runtime keys of a per-backend functionality, one per backend; ``[k]`` otherwise.

    >>> functionality_to_backend_keys(DispatchKey.Sparse)[:2], functionality_to_backend_keys(13)
    ([<DispatchKey.SparseCPU: 83>, <DispatchKey.SparseCUDA: 84>], [<DispatchKey.Python: 13>])
    """
    start = _BLOCK_START.get(k)
    if start is None:
        return [_KEYS[k]]
    return list(_KEYS[start + 1 : start + _BLOCK])


def is_alias_key(k: int) -> bool:
    """Whether ``k`` is an alias key (a registration target that expands to runtime keys).

    >>> is_alias_key(DispatchKey.CompositeExplicitAutograd), is_alias_key(DispatchKey.AutogradCPU)
    (True, False)
    """
    return DispatchKey.Autograd <= k <= DispatchKey.CompositeExplicitAutogradNonFunctional


def is_runtime_key(k: int) -> bool:
    """Whether ``k`` owns a dispatch-table slot other than Undefined's (one of RUNTIME_KEYS).

    >>> is_runtime_key(DispatchKey.CPU), is_runtime_key(DispatchKey.Dense)
    (True, False)
    """
    return 0 < k < _NUM_KEYS and _SLOT_OF[k] > 0


def slot_of(k: int) -> int:
    """The dispatch-table index of a runtime key, or 0 for Undefined.

    >>> slot_of(DispatchKey.CPU), slot_of(DispatchKey.AutogradCPU)
    (1, 96)
    """
    slot = _SLOT_OF[k] if 0 <= k < _NUM_KEYS else -1
    if slot < 0:
        raise DispatchKeyError(
            " ".join(
                [
                    f"slot_of({key_name(k)}): only runtime keys and Undefined have a",
                    "dispatch-table slot; expand an alias with alias_runtime_keys() first",
                ]
            )
        )
    return slot


def key_of_slot(i: int) -> DispatchKey:
    """The key whose dispatch-table entry is at index ``i`` (0 is Undefined).

    >>> key_of_slot(95), key_of_slot(136)
    (<DispatchKey.AutogradOther: 20>, <DispatchKey.PythonDispatcher: 46>)
    """
    return _SLOT_KEYS[i]


def is_backend_key(k: int) -> bool:
    """Whether ``k`` is a backend key: Dense/Quantized/Sparse/SparseCsr keys and the
    backend-like functionalities FPGA, Vulkan, Metal, CustomRNGKeyId and MkldnnCPU.

    >>> is_backend_key(DispatchKey.QuantizedCPU), is_backend_key(DispatchKey.NestedTensorCPU)
    (True, False)
    """
    return 0 < k < DispatchKey.Autograd and _FUNCTIONALITY[k] in _BACKEND_FUNCTIONALITIES


_BACKEND_FUNCTIONALITIES = frozenset(
    (
        DispatchKey.Dense,
        DispatchKey.FPGA,
        DispatchKey.Vulkan,
        DispatchKey.Metal,
        DispatchKey.Quantized,
        DispatchKey.CustomRNGKeyId,
        DispatchKey.MkldnnCPU,
        DispatchKey.Sparse,
        DispatchKey.SparseCsr,
    )
)

# Components whose autograd key is AutogradOther rather than Autograd<component>.
_AUTOGRAD_OTHER_COMPONENTS = frozenset((0, BackendComponent.HIPBit, BackendComponent.VEBit))


def autograd_key_of(component: int) -> DispatchKey:
    """The autograd key tensors of a backend carry (AutogradOther for HIP, VE and none).

    >>> autograd_key_of(BackendComponent.LazyBit), autograd_key_of(BackendComponent.HIPBit)
    (<DispatchKey.AutogradLazy: 143>, <DispatchKey.AutogradOther: 20>)
    """
    c = BackendComponent(component)
    if c in _AUTOGRAD_OTHER_COMPONENTS:
        return DispatchKey.AutogradOther
    return _KEYS[_BLOCK_START[DispatchKey.AutogradFunctionality] + c]


# The key-set-valued queries live in keyset.py, which builds on this module; these wrappers
# import it on first use so that `keys` stays importable on its own.


def backends_of(autograd_key: int) -> DispatchKeySet:
    """The backend keys whose kernels an autograd key stands for (torch's backendsOf).

    >>> backends_of(DispatchKey.AutogradCPU), backends_of(DispatchKey.AutogradMTIA)
    (DispatchKeySet(CPU), DispatchKeySet())
    """
    from tensordispatch.dispatch import keyset

    return keyset.backends_of(autograd_key)


def alias_runtime_keys(alias: int) -> DispatchKeySet:
    """The runtime keys an alias key expands to (a non-alias key expands to itself).

    >>> alias_runtime_keys(DispatchKey.CompositeImplicitAutogradNestedTensor)  # doctest: +ELLIPSIS
    DispatchKeySet(NestedTensorCPU, ..., NestedTensorMeta, AutogradNestedTensor)
    """
    from tensordispatch.dispatch import keyset

    return keyset.alias_runtime_keys(alias)


def is_included_in_alias(k: int, alias: int) -> bool:
    """Whether a registration under ``alias`` covers runtime key ``k``.

    >>> is_included_in_alias(DispatchKey.AutogradOther, DispatchKey.Autograd)
    True
    """
    from tensordispatch.dispatch import keyset

    return keyset.is_included_in_alias(k, alias)
