"""Device guards and device checks around a backend's kernels (issue 10 part 3, seed 000).

torch's generated kernel wrappers do two things before calling a backend kernel:

* **device check** (``device_check: ExactSame``, the default of a native_functions.yaml entry):
  every tensor argument (out= arguments first, then the positional ones) must be on one
  device, else torch's "Expected all tensors to be on the same device" error naming the
  argument and the wrapper; ``device_check: NoCheck`` entries (TensorIterator ops, which
  allow CPU scalars) skip it;
* **device guard** (``device_guard: True``, the default): the device of the first tensor
  argument (``self``, then out=, then the positional ones), or a factory's ``device=``
  argument, is made the current device for the duration of the kernel and the previous
  one restored afterwards (``OptionalDeviceGuard``).

The guard is generic, as torch's ``DeviceGuardImplInterface`` registry: any device type that
registers a current-device getter and setter (``register_device_guard``) gets it; device types
without one (cpu, meta) are not guarded. Which kernels get the wrapper is decided by the code
generator from the yaml (backend yaml ``device_guard: true`` and each entry's flags); this
module is the runtime the generated modules call.

>>> current = [0]
>>> h = register_device_guard("xla", lambda: current[0], lambda i: current.__setitem__(0, i))
>>> with device_guard(Device("xla", 1)):
...     inside = current[0]
>>> inside, current[0]
(1, 0)
>>> h.remove()
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from tensordispatch.dispatch.dispatcher import RegistrationHandle
from tensordispatch.tensor.device import device as Device

__all__ = [
    "DeviceGuardImpl",
    "device_guard",
    "device_guard_impl",
    "guarded_kernel",
    "register_device_guard",
]


@dataclass(frozen=True, slots=True)
class DeviceGuardImpl:
    """A device type's notion of a current device: ``get_device() -> index`` and
    ``set_device(index)`` (torch's DeviceGuardImplInterface, reduced to what guards use)."""

    device_type: str
    get_device: Callable[[], int]
    set_device: Callable[[int], Any]


_IMPLS: dict[str, DeviceGuardImpl] = {}
_LOCK = threading.Lock()


def register_device_guard(
    device_type: str, get_device: Callable[[], int], set_device: Callable[[int], Any]
) -> RegistrationHandle:
    """Give ``device_type`` a current device: generated kernel wrappers then switch to the
    arguments' device around each guarded kernel. Returns a handle undoing exactly this."""
    impl = DeviceGuardImpl(device_type, get_device, set_device)
    with _LOCK:
        if device_type in _IMPLS:
            raise ValueError(
                f"register_device_guard({device_type!r}): device type {device_type} already "
                "has a device guard implementation; remove that registration first"
            )
        _IMPLS[device_type] = impl

    def undo() -> None:
        with _LOCK:
            if _IMPLS.get(device_type) is impl:
                del _IMPLS[device_type]

    return RegistrationHandle(undo, f"device guard for {device_type}")


def device_guard_impl(device_type: str) -> DeviceGuardImpl | None:
    """The registered guard implementation of a device type, or None (no current device).

    >>> device_guard_impl("cpu") is None
    True
    """
    return _IMPLS.get(device_type)


@contextmanager
def device_guard(dev: Device | None) -> Iterator[None]:
    """Make ``dev`` the current device of its type within the block (torch's
    OptionalDeviceGuard): nothing happens for None, a device without an index, or a device
    type without a registered guard.

    >>> with device_guard(None):
    ...     pass
    """
    index = None if dev is None else dev.index
    impl = None if dev is None or index is None else _IMPLS.get(dev.type)
    if impl is None or index is None:
        yield
        return
    previous = impl.get_device()
    if previous == index:
        yield
        return
    impl.set_device(index)
    try:
        yield
    finally:
        impl.set_device(previous)


#: (argument name, positional index or -1 for keyword-only, whether it is a tensor list)
ArgRef = tuple[str, int, bool]


def _value(ref: ArgRef, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    name, pos, _ = ref
    if 0 <= pos < len(args):
        return args[pos]
    return kwargs.get(name)


def _check(
    method: str, checks: tuple[ArgRef, ...], args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    """Torch's check_and_update_common_device over the checked arguments; the common device."""
    common = None
    for ref in checks:
        v = _value(ref, args, kw)
        for t in v if ref[2] and v is not None else (v,):
            if t is None or not hasattr(t, "device"):
                continue
            d = t.device
            if common is None:
                common = d
            elif d != common:
                raise RuntimeError(
                    f"Expected all tensors to be on the same device, but got {ref[0]} is on "
                    f"{d}, different from other tensors on {common} (when checking argument "
                    f"in method {method})"
                )
    return common


def guarded_kernel(
    fn: Callable[..., Any],
    method: str,
    checks: tuple[ArgRef, ...],
    guard: ArgRef | None,
    options: bool = False,
) -> Callable[..., Any]:
    """``fn`` wrapped with the device check over ``checks`` and a device guard on the device
    of argument ``guard`` (or of the ``device=`` argument when ``options``: a factory).
    ``method`` names the wrapper in the check's error, as torch's ``wrapper_<key>_...``.

    >>> k = guarded_kernel(
    ...     lambda a, b: "ran", "wrapper_doc", (("a", 0, False), ("b", 1, False)), None)
    >>> import tensordispatch as td
    >>> k(td.tensor(1.0), td.tensor(2.0))
    'ran'
    """

    def kernel(*args: Any, **kwargs: Any) -> Any:
        if checks:
            _check(method, checks, args, kwargs)
        if options:
            dev = kwargs.get("device")
            dev = None if dev is None else Device(dev)
        elif guard is not None:
            t = _value(guard, args, kwargs)
            if guard[2] and t:
                t = next((x for x in t if x is not None), None)
            dev = getattr(t, "device", None)
        else:
            dev = None
        index = None if dev is None else dev.index
        impl = None if dev is None or index is None else _IMPLS.get(dev.type)
        if impl is None or index is None:
            return fn(*args, **kwargs)
        previous = impl.get_device()
        if previous == index:
            return fn(*args, **kwargs)
        impl.set_device(index)
        try:
            return fn(*args, **kwargs)
        finally:
            impl.set_device(previous)

    kernel.__name__ = method
    kernel.__wrapped__ = fn  # type: ignore[attr-defined]
    return kernel
