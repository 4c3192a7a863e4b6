"""Dispatch keys, key sets, thread-local state, operator entries, the dispatcher and Library.

Modules: keys.py / keyset.py (the key model), tls.py (thread-local include/exclude),
kernel.py (kernel kinds and calling conventions), calling.py (generated per-operator entry
code), operator.py (OperatorEntry: registrations -> published table and caches),
table.py (the table computed from registrations), dispatcher.py (the registry, its lock, handles), library.py (torch.library's API),
fallbacks.py (global fallbacks installed at import), op_overload.py (OpOverload,
OpOverloadPacket, ``ops.<ns>``), introspection.py (dumps, queries, ``explain``), trace.py
(``dispatch_trace``), modes.py (``DispatchMode``, the Python-key fallbacks), errors.py.
Imports only ``tensordispatch.schema`` from other layers.
"""

from __future__ import annotations

from tensordispatch.dispatch import fallbacks as fallbacks  # installs the global fallbacks
from tensordispatch.dispatch.dispatcher import DISPATCHER, RegistrationHandle
from tensordispatch.dispatch.errors import (
    AmbiguousAutogradOtherError,
    ArgumentTypeError,
    DuplicateRegistrationError,
    FallthroughExecutedError,
    KernelSignatureError,
    LibraryError,
    LibraryKindError,
    MetaKernelMissingError,
    MissingKernelError,
    NoMatchingOverloadError,
    NoTensorArgumentsError,
    SchemaNotFoundError,
)
from tensordispatch.dispatch.fallbacks import global_fallback_handle, restore_global_fallback
from tensordispatch.dispatch.kernel import KernelFunction, KernelKind, fallthrough_kernel
from tensordispatch.dispatch.keys import (
    ALIAS_KEYS,
    NUM_RUNTIME_ENTRIES,
    RUNTIME_KEYS,
    BackendComponent,
    DispatchKey,
    DispatchKeyError,
    alias_runtime_keys,
    autograd_key_of,
    backends_of,
    component_of,
    functionality_of,
    is_alias_key,
    is_backend_key,
    is_included_in_alias,
    is_per_backend_functionality,
    is_runtime_key,
    key_name,
    key_of_slot,
    parse_dispatch_key,
    runtime_key,
    slot_of,
)
from tensordispatch.dispatch.keyset import (
    AFTER_AD_INPLACE_OR_VIEW,
    AFTER_AUTOGRAD,
    AFTER_FUNC,
    AUTOCAST_DISPATCH_KEYSET,
    AUTOGRAD_DISPATCH_KEYSET,
    AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW,
    AUTOGRADOTHER_BACKENDS,
    BACKEND_FUNCTIONALITY_KEYS,
    DEFAULT_EXCLUDED,
    DEFAULT_INCLUDED,
    FULL,
    PYTHON_KS,
    DispatchKeySet,
    backend_tensor_keyset,
    full_after,
)
from tensordispatch.dispatch.library import Library
from tensordispatch.dispatch.modes import DispatchMode
from tensordispatch.dispatch.op_overload import (
    OpOverload,
    OpOverloadPacket,
    ops_namespace,
    redispatch,
)
from tensordispatch.dispatch.tls import (
    ExcludeDispatchKeyGuard,
    ForceDispatchKeyGuard,
    IncludeDispatchKeyGuard,
    PreserveDispatchKeyGuard,
    _AutoDispatchBelowADInplaceOrView,
    _AutoDispatchBelowAutograd,
    local_state,
    tls_is_pristine,
    tls_local_exclude_set,
    tls_local_include_set,
)

# Imported on first use (PEP 562): the dumps and queries of introspection.py and the tracer of
# trace.py serve debugging, and `import tensordispatch` should not pay for them (issue 4).
_LAZY_ATTRIBUTES: dict[str, str] = {
    **dict.fromkeys(
        (
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
        ),
        "tensordispatch.dispatch.introspection",
    ),
    **dict.fromkeys(("DispatchTrace", "Hop", "dispatch_trace"), "tensordispatch.dispatch.trace"),
}


def __getattr__(name: str) -> object:
    import importlib

    try:
        module = _LAZY_ATTRIBUTES[name]
    except KeyError:
        raise AttributeError(
            f"module 'tensordispatch.dispatch' has no attribute {name!r}"
        ) from None
    value: object = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "AFTER_AD_INPLACE_OR_VIEW",
    "AFTER_AUTOGRAD",
    "AFTER_FUNC",
    "ALIAS_KEYS",
    "AUTOCAST_DISPATCH_KEYSET",
    "AUTOGRADOTHER_BACKENDS",
    "AUTOGRAD_DISPATCH_KEYSET",
    "AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW",
    "BACKEND_FUNCTIONALITY_KEYS",
    "DEFAULT_EXCLUDED",
    "DEFAULT_INCLUDED",
    "DISPATCHER",
    "FULL",
    "NUM_RUNTIME_ENTRIES",
    "PYTHON_KS",
    "RUNTIME_KEYS",
    "AmbiguousAutogradOtherError",
    "ArgumentTypeError",
    "BackendComponent",
    "DispatchKey",
    "DispatchKeyError",
    "DispatchKeySet",
    "DispatchMode",
    "DispatchTrace",
    "DuplicateRegistrationError",
    "ExcludeDispatchKeyGuard",
    "FallthroughExecutedError",
    "ForceDispatchKeyGuard",
    "Hop",
    "IncludeDispatchKeyGuard",
    "KernelFunction",
    "KernelKind",
    "KernelSignatureError",
    "Library",
    "LibraryError",
    "LibraryKindError",
    "MetaKernelMissingError",
    "MissingKernelError",
    "NoMatchingOverloadError",
    "NoTensorArgumentsError",
    "OpOverload",
    "OpOverloadPacket",
    "PreserveDispatchKeyGuard",
    "RegistrationHandle",
    "SchemaNotFoundError",
    "_AutoDispatchBelowADInplaceOrView",
    "_AutoDispatchBelowAutograd",
    "alias_runtime_keys",
    "autograd_key_of",
    "backend_tensor_keyset",
    "backends_of",
    "check_invariants",
    "component_of",
    "dispatch_trace",
    "dump",
    "dump_table",
    "explain",
    "fallthrough_kernel",
    "find_dangling_impls",
    "full_after",
    "functionality_of",
    "global_fallback_handle",
    "has_backend_fallback",
    "has_computed_kernel_for_dispatch_key",
    "has_kernel",
    "has_kernel_for_dispatch_key",
    "is_alias_key",
    "is_backend_key",
    "is_included_in_alias",
    "is_per_backend_functionality",
    "is_runtime_key",
    "kernel_for_dispatch_key_is_fallthrough",
    "key_name",
    "key_of_slot",
    "local_state",
    "ops_namespace",
    "parse_dispatch_key",
    "redispatch",
    "restore_global_fallback",
    "runtime_key",
    "slot_of",
    "tls_is_pristine",
    "tls_local_exclude_set",
    "tls_local_include_set",
]
