"""The global backend fallbacks installed at import: the same slots as torch 2.13, our kernels.

Owns the process-wide fallbacks every operator inherits, so that an operator without
kernels dumps the same 38 rows as in torch (spec 1.2, "2.13 global fallback" column). Each
is an ordinary registration on a Library for namespace ``_`` with a handle
(``global_fallback_handle(key)``), so later layers replace one by removing its handle and
registering their own, or override it per operator with ordinary impls (a direct kernel
always beats a fallback).

Note [Global fallbacks]
Fallthroughs, exactly as torch: BackendSelect, ADInplaceOrView, AutocastCPU, AutocastMTIA,
AutocastMAIA, AutocastXPU, AutocastMPS, AutocastCUDA, FuncTorchVmapMode, VmapMode. They
are masked out of the key set (spec 5.5) and never run.

Real fallbacks, each doing the minimal correct thing we can do before the layers that own
the key exist:

* AutogradOther and Autograd{CPU, CUDA, XLA, MPS, XPU, HPU, Lazy, MTIA, MAIA, PrivateUse1,
  Meta} (not HIP, IPU, VE, PrivateUse2/3, AutogradNestedTensor, as in torch): redispatch
  with ``keyset & AFTER_AUTOGRAD``. This is torch's autograd fallback for inputs that do
  not require grad; torch's also warns or errors when an input does require grad, which
  needs the autograd layer (it will register real kernels or replace this fallback).
* Meta: raises spec 9.4's error (NotImplementedError) naming the operator.
* Python and PythonTLSSnapshot: ``python_fallback_kernel`` / ``python_tls_snapshot_fallback``
  are the DispatchMode hook points (modes.py, Note [Modes as dispatch keys]): the snapshot
  redispatches (transparent); Python runs the innermost mode's handler, or redispatches
  below Python when no mode is active.
* FuncTorchDynamicLayerBackMode, Functionalize, Conjugate, Negative, ZeroTensor, Tracer,
  FuncTorchBatched, BatchedNestedTensor, Batched, FuncTorchGradWrapper,
  FuncTorchDynamicLayerFrontMode, PreDispatch, PythonDispatcher: redispatch below their
  own key. torch's versions do real work (functionalization, conj materialization,
  tracing, vmap); until our layers exist no tensor carries these keys, so passing through
  is the only behaviour anyone can observe.

Except for Python's, these redispatching fallbacks are marked transparent (Note
[Collapsing transparent fallbacks] in operator.py), so an ordinary CPU-tensor call costs
one hop. Debug
strings point at the kernel's source: ``registered at
tensordispatch/dispatch/fallbacks.py:<line of the kernel>`` (modes.py for the Python hooks).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from tensordispatch.dispatch.dispatcher import RegistrationHandle
from tensordispatch.dispatch.errors import MetaKernelMissingError
from tensordispatch.dispatch.kernel import KernelFunction, KernelKind, fallthrough_kernel
from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import AFTER_AUTOGRAD_RAW, full_after_raw
from tensordispatch.dispatch.library import Library
from tensordispatch.dispatch.mode_entry import mode_entry
from tensordispatch.dispatch.modes import python_fallback_kernel, python_tls_snapshot_fallback

__all__ = [
    "global_fallback_handle",
    "python_fallback_kernel",
    "python_tls_snapshot_fallback",
    "restore_global_fallback",
]

_K = DispatchKey
FALLTHROUGH_KEYS = (
    _K.BackendSelect,
    _K.ADInplaceOrView,
    _K.AutocastCPU,
    _K.AutocastMTIA,
    _K.AutocastMAIA,
    _K.AutocastXPU,
    _K.AutocastMPS,
    _K.AutocastCUDA,
    _K.FuncTorchVmapMode,
    _K.VmapMode,
)
AUTOGRAD_KEYS = (
    _K.AutogradOther,
    _K.AutogradCPU,
    _K.AutogradCUDA,
    _K.AutogradXLA,
    _K.AutogradMPS,
    _K.AutogradXPU,
    _K.AutogradHPU,
    _K.AutogradLazy,
    _K.AutogradMTIA,
    _K.AutogradMAIA,
    _K.AutogradPrivateUse1,
    _K.AutogradMeta,
)
REDISPATCH_KEYS = (
    _K.FuncTorchDynamicLayerBackMode,
    _K.Functionalize,
    _K.Conjugate,
    _K.Negative,
    _K.ZeroTensor,
    _K.Tracer,
    _K.FuncTorchBatched,
    _K.BatchedNestedTensor,
    _K.Batched,
    _K.FuncTorchGradWrapper,
    _K.FuncTorchDynamicLayerFrontMode,
    _K.PreDispatch,
    _K.PythonDispatcher,
)


def _autograd_fallback(raw: int, op: Any, *args: Any, **kwargs: Any) -> Any:
    return op.redispatch(raw & AFTER_AUTOGRAD_RAW, *args, **kwargs)


def _meta_fallback(op: Any, *args: Any, **kwargs: Any) -> Any:
    raise MetaKernelMissingError(op.name())


def _redispatch_below(key: DispatchKey) -> Callable[..., Any]:
    mask = full_after_raw(key)

    def fallback(raw: int, op: Any, *args: Any, **kwargs: Any) -> Any:
        return op.redispatch(raw & mask, *args, **kwargs)

    fallback.__qualname__ = f"redispatch_below_{key.name}"
    return fallback


def _debug(fn: Callable[..., Any]) -> str:
    module = os.path.basename(fn.__code__.co_filename)
    return f"registered at tensordispatch/dispatch/{module}:{fn.__code__.co_firstlineno}"


_LIBRARY = Library("_", "IMPL")
_HANDLES: dict[DispatchKey, RegistrationHandle] = {}
_KERNELS: dict[DispatchKey, KernelFunction] = {}


def _install(key: DispatchKey, kernel: KernelFunction) -> None:
    _LIBRARY._register_internal_fallback(key, kernel)
    _HANDLES[key] = _LIBRARY.handles[-1]
    _KERNELS[key] = kernel


def _install_all() -> None:
    for key in FALLTHROUGH_KEYS:
        _install(
            key,
            KernelFunction(fallthrough_kernel, KernelKind.FALLTHROUGH, _debug(_install_all)),
        )
    for key in AUTOGRAD_KEYS:
        fn = _autograd_fallback
        _install(key, KernelFunction(fn, KernelKind.RAW_KEYSET, _debug(fn), AFTER_AUTOGRAD_RAW))
    _install(_K.Meta, KernelFunction(_meta_fallback, KernelKind.FALLBACK, _debug(_meta_fallback)))
    fn = python_fallback_kernel
    _install(_K.Python, KernelFunction(fn, KernelKind.RAW_KEYSET, _debug(fn), None, mode_entry))
    fn = python_tls_snapshot_fallback
    mask = full_after_raw(_K.PythonTLSSnapshot)
    _install(_K.PythonTLSSnapshot, KernelFunction(fn, KernelKind.RAW_KEYSET, _debug(fn), mask))
    for key in REDISPATCH_KEYS:
        fn = _redispatch_below(key)
        kernel = KernelFunction(fn, KernelKind.RAW_KEYSET, _debug(fn), full_after_raw(key))
        _install(key, kernel)


def global_fallback_handle(key: DispatchKey) -> RegistrationHandle:
    """The handle of the global fallback installed at import for ``key`` (to replace it).

    >>> global_fallback_handle(DispatchKey.AutogradCPU)
    <RegistrationHandle fallback AutogradCPU (live)>
    """
    return _HANDLES[key]


def restore_global_fallback(key: DispatchKey) -> RegistrationHandle:
    """Re-install the import-time global fallback of ``key`` after its handle was removed
    (the slot must be free again); returns the new handle.

    >>> restore_global_fallback(DispatchKey.AutogradCPU)  # still installed: nothing to do
    <RegistrationHandle fallback AutogradCPU (live)>
    """
    if not _HANDLES[key].removed:
        return _HANDLES[key]
    _install(key, _KERNELS[key])
    return _HANDLES[key]


_install_all()
