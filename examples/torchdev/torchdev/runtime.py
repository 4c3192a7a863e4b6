"""torchdev's runtime: the device type, the tensor class, transfers and the fallback hooks.

Storage: every torchdev tensor's payload is a torch.Tensor on torch's CPU device. A root
tensor owns a fresh torch tensor (storage offset 0); a view's payload is a torch view of the
root's payload (``torch.as_strided``), so writes through views are seen by the root, exactly
as on a real device. Transfers to and from tensordispatch's CPU backend (NumPy) always copy.
"""

from __future__ import annotations

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

    __slots__ = ()

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
    """Copy a tensordispatch CPU tensor to torchdev."""
    return from_payload(torch.from_numpy(np.array(t._data, copy=True, order="K")), device)


def to_cpu_tensor(t: TorchDevTensor) -> Tensor:
    """Copy a torchdev tensor to tensordispatch's CPU backend."""
    return td.from_numpy(np.array(t._data.numpy(), copy=True, order="K"))


# -- CPU fallback hooks ------------------------------------------------------------------------


def batched_to_cpu(tensors: list[Tensor]) -> list[Tensor]:
    """The fallback's to_cpu hook: every device tensor of one call, in one batch."""
    STATS["to_cpu_calls"] += 1
    STATS["to_cpu_tensors"] += len(tensors)
    return [to_cpu_tensor(t) for t in tensors]  # type: ignore[arg-type]


def batched_from_cpu(tensors: list[Tensor], device: Any) -> list[Tensor]:
    """The fallback's from_cpu hook: the CPU outputs of one call, in one batch."""
    STATS["from_cpu_calls"] += 1
    return [to_device(t, device) for t in tensors]


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
