"""fbdev, the minimal backend of the CPU fallback tests ("fbdev" on PrivateUse2, payloads
copied NumPy arrays): its recording transfer hooks and the fixtures that register it."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

import tensordispatch as td
from tensordispatch.dispatch.keys import BackendComponent
from tensordispatch.tensor import Tensor
from tensordispatch.tensor.tensor import contiguous_strides

KEY = "PrivateUse2"

# The module by path: tensordispatch.backends may re-export the function under its name.
cf = importlib.import_module("tensordispatch.backends.boxed_fallback")


class Hooks:
    """fbdev's transfer hooks, recording every call."""

    def __init__(self) -> None:
        self.to_cpu_calls: list[list[Tensor]] = []
        self.from_cpu_calls: list[list[Tensor]] = []
        self.logged: list[tuple[str, int]] = []

    def to_cpu(self, tensors: list[Tensor]) -> list[Tensor]:
        self.to_cpu_calls.append(list(tensors))
        return [Tensor._wrap_numpy(np.array(t._data, copy=True), t.dtype) for t in tensors]

    def from_cpu(self, tensors: list[Tensor], device: Any) -> list[Tensor]:
        self.from_cpu_calls.append(list(tensors))
        return [_on_device(t._data, t.dtype, device) for t in tensors]

    def copy_from_cpu(self, src: Tensor, dst: Tensor) -> None:
        if dst._shape != src._shape:
            fresh = _on_device(np.zeros(src._shape, src._data.dtype), dst.dtype, dst.device)
            dst._data, dst._shape, dst._strides = fresh._data, fresh._shape, fresh._strides
        np.copyto(dst._data, src._data)

    def log(self, op: Any, tensors: list[Tensor]) -> None:
        self.logged.append((op.name(), len(tensors)))


def _on_device(array: Any, dtype: Any, device: Any) -> Tensor:
    data = np.array(array, copy=True, order="C")
    return Tensor._make(data, data.shape, contiguous_strides(data.shape), 0, dtype, device)


def _backend(h: Hooks, **kw: Any) -> cf.FallbackBackend:
    return cf.FallbackBackend(
        "fbdev",
        BackendComponent.PrivateUse2Bit,
        h.to_cpu,
        h.from_cpu,
        h.copy_from_cpu,
        log=h.log,
        **kw,
    )


def dev(values: Any, fbdev: Any) -> Tensor:
    cpu = td.tensor(values)
    return _on_device(cpu._data, cpu.dtype, fbdev)
