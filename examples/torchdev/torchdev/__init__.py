"""torchdev: an example out-of-tree tensordispatch backend whose storage lives in torch.

Importing it (once per process):

1. registers the device type ``torchdev`` on the PrivateUse1 backend component
   (runtime.py; torch's ``rename_privateuse1_backend``);
2. registers the native kernels listed in backend.yaml through the module that
   ``tensordispatch gen-backend-stubs`` generated from it (generated/), which checks every
   kernel's presence and signature first and adds the synthesized out=/inplace kernels;
3. registers tensordispatch's boxed CPU fallback for PrivateUse1 with torchdev's batched
   transfer hooks, so every other operator runs on CPU;
4. registers torchdev's current device (a per-thread index) with the device-guard runtime,
   so the generated kernel wrappers run each kernel with its arguments' device current.

``uninstall()`` undoes all four exactly; ``install()`` does them again.

>>> import tensordispatch as td, torchdev
>>> torchdev.install()  # done on import; again after an uninstall() (a no-op otherwise)
>>> x = torchdev.to_device(td.tensor([1.0, 2.0]))
>>> (x + x).device, torchdev.to_cpu_tensor(x.sin()).tolist() == td.tensor([1.0, 2.0]).sin().tolist()
(device(type='torchdev', index=0), True)
"""

from __future__ import annotations

from collections import deque
from typing import Any

from tensordispatch.backends.boxed_fallback import (
    CPUFallbackRegistration,
    FallbackBackend,
    cpu_fallback,
    register_cpu_fallback,
)
from tensordispatch.backends.device_guard import register_device_guard
from tensordispatch.dispatch.keys import BackendComponent
from torchdev import kernels, runtime
from torchdev.generated import privateuse1_native_functions as _generated
from torchdev.runtime import (
    DEVICE,
    DEVICE_TYPE,
    STATS,
    TorchDevTensor,
    batched_from_cpu,
    batched_to_cpu,
    copy_from_cpu,
    reset_stats,
    to_cpu_tensor,
    to_device,
)

#: The last operators that fell back, in order (the per-backend logging hook appends to it;
#: bounded, so a long program does not grow it without end).
FALLBACK_LOG: deque[str] = deque(maxlen=1000)


def _log(op: Any, tensors: list[Any]) -> None:
    FALLBACK_LOG.append(op.name())


BACKEND = FallbackBackend(
    name=DEVICE_TYPE,
    component=BackendComponent.PrivateUse1Bit,
    to_cpu=batched_to_cpu,
    from_cpu=batched_from_cpu,
    copy_from_cpu=copy_from_cpu,
    log=_log,
)


def torchdev_fallback(op: Any, keyset: Any, stack: list[Any]) -> Any:
    """torchdev's boxed fallback (the CPU fallback; logging is in BACKEND.log). Kernels call
    it for the cases they do not handle via ``call_fallback``."""
    return cpu_fallback(op, keyset, stack)


# [device handle or None, kernel registration, fallback registration, device guard handle]
_INSTALLED: list[Any] = []


def install() -> None:
    """Register the device type, the kernels and the CPU fallback (done on import; a no-op
    when already installed)."""
    if _INSTALLED:
        return
    # The first install owns the registration runtime made at import (DEVICE needs it).
    device_handle = runtime.take_device_handle() or runtime.register_device()
    kernel_registration = _generated.register(kernels.TorchDevNativeFunctions)
    # No fallback_fn: the default registration is the unboxed fast path (logging goes
    # through BACKEND.log); torchdev_fallback stays available for call_fallback.
    fallback: CPUFallbackRegistration = register_cpu_fallback(BACKEND, _generated.BACKEND_KEY)
    # torchdev has a current device: the generated kernel wrappers guard it (backend.yaml
    # device_guard: true; tensordispatch.backends.device_guard).
    guard = register_device_guard(DEVICE_TYPE, runtime.get_device_index, runtime.set_device_index)
    _INSTALLED.extend([device_handle, kernel_registration, fallback, guard])


def uninstall() -> None:
    """Undo ``install()`` exactly (tests use it to leave the dispatcher as they found it)."""
    if not _INSTALLED:
        return
    device_handle, kernel_registration, fallback, guard = _INSTALLED
    guard.remove()
    fallback.remove()
    kernel_registration.remove()
    if device_handle is not None:
        device_handle.remove()
    _INSTALLED.clear()


install()

__all__ = [
    "BACKEND",
    "DEVICE",
    "DEVICE_TYPE",
    "FALLBACK_LOG",
    "STATS",
    "TorchDevTensor",
    "install",
    "reset_stats",
    "to_cpu_tensor",
    "to_device",
    "torchdev_fallback",
    "uninstall",
]
