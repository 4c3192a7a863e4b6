"""torchdev's runtime: the device type, the tensor class, transfers and the fallback hooks.

Storage: every torchdev tensor's payload is a torch.Tensor on torch's CPU device. A root
tensor owns a fresh torch tensor (storage offset 0); a view's payload is a torch view of the
root's payload (``torch.as_strided``), so writes through views are seen by the root, exactly
as on a real device. Transfers to and from tensordispatch's CPU backend (NumPy) always copy.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

import tensordispatch as td
from tensordispatch.dispatch.keys import BackendComponent
from tensordispatch.tensor import Tensor
from tensordispatch.tensor.device import DeviceTypeHandle, device_types, register_device_type

DEVICE_TYPE = "torchdev"


def register_device() -> DeviceTypeHandle | None:
    """Register the device type on PrivateUse1 (None if it already is)."""
    if DEVICE_TYPE in device_types():
        return None
    return register_device_type(DEVICE_TYPE, BackendComponent.PrivateUse1Bit)


_DEVICE_HANDLE = [register_device()]
DEVICE = td.device(DEVICE_TYPE, 0)


class _Current(threading.local):
    """torchdev's current device index, per thread (what device guards switch)."""

    def __init__(self) -> None:
        self.index = 0


_CURRENT = _Current()
_DEVICES: dict[int, Any] = {}


def get_device_index() -> int:
    """The current torchdev device index (torch.cuda.current_device's counterpart)."""
    return _CURRENT.index


def set_device_index(index: int) -> None:
    """Make torchdev:<index> the current device of this thread."""
    _CURRENT.index = index


def current_device() -> Any:
    """The current torchdev device: where kernels put their results."""
    index = _CURRENT.index
    dev = _DEVICES.get(index)
    if dev is None:
        dev = _DEVICES[index] = td.device(DEVICE_TYPE, index)
    return dev


def take_device_handle() -> DeviceTypeHandle | None:
    """The handle of the import-time registration, once (then None)."""
    handle = _DEVICE_HANDLE[0]
    _DEVICE_HANDLE[0] = None
    return handle


#: Transfer statistics (the tests count to_cpu calls per fallback).
STATS: dict[str, int] = {"to_cpu_calls": 0, "to_cpu_tensors": 0, "from_cpu_calls": 0}

_TO_TORCH: dict[Any, torch.dtype] = {}
_TO_TD: dict[torch.dtype, Any] = {}


def to_torch_dtype(dtype: Any) -> torch.dtype:
    """The torch dtype of a tensordispatch dtype (same names)."""
    pt = _TO_TORCH.get(dtype)
    if pt is None:
        pt = _TO_TORCH[dtype] = getattr(torch, dtype.name)
    return pt


def to_td_dtype(dtype: torch.dtype) -> Any:
    """The tensordispatch dtype of a torch dtype (same names)."""
    d = _TO_TD.get(dtype)
    if d is None:
        d = _TO_TD[dtype] = getattr(td, str(dtype).split(".")[1])
    return d


class TorchDevTensor(Tensor):
    """A tensordispatch Tensor whose payload is a torch.Tensor (see the module docstring)."""

    # (payload, a NumPy array sharing its memory), set when first needed: what to_cpu copies
    # from (torch's Tensor.numpy() costs more than the copy of a small tensor). Checked
    # against ``_data`` by identity, so a new payload (resize_to) gets a new alias; torchdev
    # changes payloads' values in place but never their shape or strides.
    __slots__ = ("_host",)

    def _view_array(
        self, shape: tuple[int, ...], strides: tuple[int, ...], offset: int, dtype: Any
    ) -> torch.Tensor:
        # Called on the root by the device-generic view kernels (transpose, select, slice,
        # expand, ...): a torch view of the root's storage.
        if dtype != self.dtype:
            raise NotImplementedError("torchdev: views that change the dtype are not supported")
        return torch.as_strided(self._data, shape, strides, offset)

    def _values_for_print(self) -> np.ndarray[Any, Any] | None:
        return self._data.numpy()


def from_payload(pt: torch.Tensor, device: Any = DEVICE) -> TorchDevTensor:
    """A new root torchdev tensor owning the torch tensor ``pt`` (copied if it is a view)."""
    if pt.storage_offset() != 0 or pt._base is not None:
        pt = pt.clone()
    return TorchDevTensor._make(
        pt, tuple(pt.shape), tuple(pt.stride()), 0, to_td_dtype(pt.dtype), device
    )


def as_torch(t: Tensor) -> torch.Tensor:
    """A torch tensor sharing the values of a tensordispatch CPU tensor (no copy)."""
    array = t._data
    if not array.flags.writeable:
        array = array.copy()
    return (
        torch.from_numpy(array)
        if array.ndim
        else torch.tensor(array.item(), dtype=to_torch_dtype(t.dtype))
    )


def resize_to(t: TorchDevTensor, shape: tuple[int, ...]) -> None:
    """Give a root torchdev tensor new, uninitialized storage of ``shape`` (out= resizing)."""
    if t._base is not None:
        raise RuntimeError("torchdev: cannot resize a view")
    pt = torch.empty(shape, dtype=to_torch_dtype(t.dtype))
    t._data = pt
    t._shape = tuple(pt.shape)
    t._strides = tuple(pt.stride())
    t._storage = None


def to_device(t: Tensor, device: Any = DEVICE) -> TorchDevTensor:
    """Copy a tensordispatch CPU tensor to torchdev.

    >>> to_device(td.tensor([1.0, 2.0]))._data
    tensor([1., 2.])
    """
    # A fresh copy: torch's tensor over it starts at offset 0 and is nobody's view, so it is
    # wrapped as is (from_payload's checks and torch's shape/dtype reads are not needed).
    array = np.array(t._data, copy=True, order="K")
    pt = torch.from_numpy(array)
    moved: Any = TorchDevTensor._make(pt, tuple(t._shape), pt.stride(), 0, t.dtype, device)
    moved._host = (pt, array)
    return moved  # type: ignore[no-any-return]


def to_cpu_tensor(t: TorchDevTensor) -> Tensor:
    """Copy a torchdev tensor to tensordispatch's CPU backend.

    >>> to_cpu_tensor(to_device(td.tensor([1.0, 2.0])))
    tensor([1., 2.])
    """
    # A fresh NumPy copy (offset 0, non-negative strides): the CPU backend's own wrapper
    # for kernel results takes it as is, with the tensor's dtype (the payload's).
    return Tensor._wrap_numpy(np.array(host_array(t), copy=True, order="K"), t.dtype)


def host_array(t: Any) -> np.ndarray[Any, Any]:
    """A NumPy array sharing the memory of a torchdev tensor's payload (made once per
    payload; see ``TorchDevTensor._host``).

    >>> x = to_device(td.tensor([1.0, 2.0])); host_array(x) is host_array(x)
    True
    """
    try:
        pt, array = t._host
        if pt is t._data:
            return array  # type: ignore[no-any-return]
    except AttributeError:  # not computed yet (or not a TorchDevTensor)
        pass
    pt = t._data
    array = pt.numpy()
    with contextlib.suppress(AttributeError):
        t._host = (pt, array)
    return array


# -- CPU fallback hooks ------------------------------------------------------------------------


def batched_to_cpu(tensors: list[Tensor]) -> list[Tensor]:
    """The fallback's to_cpu hook: every device tensor of one call, in one batch."""
    STATS["to_cpu_calls"] += 1
    STATS["to_cpu_tensors"] += len(tensors)
    out = []
    for t in tensors:  # to_cpu_tensor, inline
        try:
            pt, array = t._host  # type: ignore[attr-defined]
            if pt is not t._data:
                array = host_array(t)
        except AttributeError:
            array = host_array(t)
        out.append(Tensor._wrap_numpy(np.array(array, copy=True, order="K"), t.dtype))
    return out


def batched_from_cpu(tensors: list[Tensor], device: Any) -> list[Tensor]:
    """The fallback's from_cpu hook: the CPU outputs of one call, in one batch."""
    STATS["from_cpu_calls"] += 1
    out = []
    make = TorchDevTensor._make
    for t in tensors:  # to_device, inline
        array = np.array(t._data, copy=True, order="K")
        pt = torch.from_numpy(array)
        moved: Any = make(pt, tuple(t._shape), pt.stride(), 0, t.dtype, device)
        moved._host = (pt, array)
        out.append(moved)
    return out


def copy_from_cpu(src: Tensor, dst: Any) -> None:
    """The fallback's write-back hook: copy CPU ``src`` into torchdev ``dst`` in place."""
    if tuple(dst._shape) != tuple(src._shape):
        resize_to(dst, tuple(src._shape))
    dst._data.copy_(as_torch(src))
    dst._bump_version()


def reset_stats() -> None:
    """Zero STATS."""
    for k in STATS:
        STATS[k] = 0


__all__ = [
    "DEVICE",
    "DEVICE_TYPE",
    "STATS",
    "TorchDevTensor",
    "as_torch",
    "batched_from_cpu",
    "batched_to_cpu",
    "copy_from_cpu",
    "current_device",
    "from_payload",
    "get_device_index",
    "host_array",
    "register_device",
    "reset_stats",
    "resize_to",
    "set_device_index",
    "take_device_handle",
    "to_cpu_tensor",
    "to_device",
    "to_td_dtype",
    "to_torch_dtype",
]
_ = Sequence
