"""Devices, and the registry that maps a device type to its backend's dispatch keys.

A tensor's device decides its key set: `device('cpu')` tensors carry CPU, ADInplaceOrView,
AutogradCPU and AutocastCPU; meta tensors Meta, ADInplaceOrView and AutogradMeta; and so on
(see `dispatch.keyset.backend_tensor_keyset`). The registry below holds every device type
torch knows that has a backend component (cpu, cuda, ..., lazy, xla, meta, privateuseone),
so lazy tensors and external backends need no change here; a backend that wants its own
device name (torch's `rename_privateuse1_backend`) adds it with `register_device_type`.

This module decides nothing about kernels and imports only dispatch/keys and keyset.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tensordispatch.dispatch.keys import BackendComponent
from tensordispatch.dispatch.keyset import backend_tensor_keyset

__all__ = [
    "DeviceTypeHandle",
    "backend_component_of",
    "device",
    "device_types",
    "register_device_type",
]

_B = BackendComponent

# Insertion order is the order error messages list the types in.
_DEVICE_TYPES: dict[str, BackendComponent] = {
    "cpu": _B.CPUBit,
    "cuda": _B.CUDABit,
    "ipu": _B.IPUBit,
    "xpu": _B.XPUBit,
    "hip": _B.HIPBit,
    "ve": _B.VEBit,
    "maia": _B.MAIABit,
    "xla": _B.XLABit,
    "lazy": _B.LazyBit,
    "mps": _B.MPSBit,
    "meta": _B.MetaBit,
    "hpu": _B.HPUBit,
    "mtia": _B.MTIABit,
    "privateuseone": _B.PrivateUse1Bit,
}

_DEVICE_STRING = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)(?::([0-9]+))?")
_DEVICE_TYPE = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


@dataclass(frozen=True, slots=True, init=False, repr=False)
class device:
    """Where a tensor's data lives: a device type and an optional index.

    Construct from a string (``"cpu"``, ``"meta"``, ``"lazy:0"``), from a type and an
    index, or from another device. Equal devices have equal type and index, as in torch
    (``device('cpu') != device('cpu:0')``).

    >>> device("cpu"), str(device("lazy", 0)), device("meta").type
    (device(type='cpu'), 'lazy:0', 'meta')
    >>> device("cpu") == device(device("cpu")), device("cpu") == device("cpu:0")
    (True, False)
    """

    type: str
    index: int | None
    _component: BackendComponent = field(compare=False)
    _key_set: int = field(compare=False)

    def __new__(cls, type: str | device, index: int | None = None) -> device:  # noqa: PYI034
        key = (type, index)
        try:
            return _CACHE[key]  # type: ignore[index]
        except (KeyError, TypeError):
            pass
        dev = _parse(cls, type, index)
        if _hashable(type):
            _CACHE[key] = dev  # type: ignore[index]
        return dev

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type={self.type!r})"
        return f"device(type={self.type!r}, index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (device, (self.type, self.index))


_CACHE: dict[tuple[str, int | None], device] = {}


def _hashable(value: object) -> bool:
    return isinstance(value, str)


def _parse(cls: type[device], spec: str | device, index: int | None) -> device:
    if isinstance(spec, device):
        if index is not None:
            raise TypeError(
                f"device({spec!r}, {index!r}): an index may only accompany a device type "
                "string, not a device; pass device(type, index)"
            )
        return spec
    if not isinstance(spec, str):
        raise TypeError(
            f"device(): expected a device type string such as 'cpu' or a device "
            f"(given {type(spec).__name__}); pass device('cpu')"
        )
    if index is not None and (not isinstance(index, int) or isinstance(index, bool)):
        raise TypeError(
            f"device({spec!r}, {index!r}): the index must be an int "
            f"(given {type(index).__name__}); pass an int or None"
        )
    match = _DEVICE_STRING.fullmatch(spec)
    if match is None:
        raise RuntimeError(
            f"device({spec!r}): invalid device string; expected 'type' or 'type:index' "
            "with a non-negative integer index, such as 'cpu' or 'lazy:0'"
        )
    type_name, index_str = match.groups()
    if index_str is not None:
        if index is not None:
            raise RuntimeError(
                f"device({spec!r}, {index}): the index is given twice (in the string and "
                "as an argument); pass it once"
            )
        index = int(index_str)
    if index is not None and index < 0:
        raise RuntimeError(
            f"device({spec!r}, {index}): a device index must not be negative; "
            "pass an index >= 0 or None"
        )
    component = _DEVICE_TYPES.get(type_name)
    if component is None:
        raise RuntimeError(
            f"device({spec!r}): unknown device type {type_name!r}; expected one of "
            f"{', '.join(_DEVICE_TYPES)}, or register it with register_device_type"
        )
    dev = object.__new__(cls)
    object.__setattr__(dev, "type", type_name)
    object.__setattr__(dev, "index", index)
    object.__setattr__(dev, "_component", component)
    object.__setattr__(dev, "_key_set", backend_tensor_keyset(component).raw)
    return dev


@dataclass(frozen=True, slots=True)
class DeviceTypeHandle:
    """Undoes one `register_device_type`."""

    type: str

    def remove(self) -> None:
        """Unregister the device type (existing devices of that type stay usable)."""
        _DEVICE_TYPES.pop(self.type, None)
        for key in [k for k, dev in _CACHE.items() if dev.type == self.type]:
            del _CACHE[key]


def register_device_type(type_name: str, component: BackendComponent) -> DeviceTypeHandle:
    """Add a device type served by a backend component; returns a handle that removes it.

    This is how an out-of-tree backend gets its own device name on PrivateUse1 (torch's
    ``torch.utils.rename_privateuse1_backend``).

    >>> from tensordispatch.dispatch.keys import BackendComponent
    >>> handle = register_device_type("npu", BackendComponent.PrivateUse1Bit)
    >>> device("npu:1"), backend_component_of(device("npu"))
    (device(type='npu', index=1), <BackendComponent.PrivateUse1Bit: 13>)
    >>> handle.remove()
    """
    if not isinstance(type_name, str) or _DEVICE_TYPE.fullmatch(type_name) is None:
        raise ValueError(
            f"register_device_type({type_name!r}): a device type must be an identifier "
            "without an index; pass a name such as 'npu'"
        )
    if type_name in _DEVICE_TYPES:
        raise ValueError(
            f"register_device_type({type_name!r}): the device type is already registered "
            f"for {_DEVICE_TYPES[type_name]}; remove the earlier registration first"
        )
    if not isinstance(component, BackendComponent) or component == BackendComponent.InvalidBit:
        raise ValueError(
            f"register_device_type({type_name!r}, {component!r}): the component must be a "
            "BackendComponent other than InvalidBit; pass e.g. BackendComponent.PrivateUse1Bit"
        )
    _DEVICE_TYPES[type_name] = component
    return DeviceTypeHandle(type_name)


def device_types() -> dict[str, BackendComponent]:
    """A copy of the registry: device type -> backend component.

    >>> device_types()["lazy"]
    <BackendComponent.LazyBit: 10>
    """
    return dict(_DEVICE_TYPES)


def backend_component_of(dev: device) -> BackendComponent:
    """The backend component whose keys tensors on `dev` carry.

    >>> backend_component_of(device("meta"))
    <BackendComponent.MetaBit: 16>
    """
    return dev._component


CPU: device = device("cpu")
META: device = device("meta")
