"""The lazy backend's eager fallback: operators without a lowering run on CPU (spec 3.6).

Owns the lazy device's `FallbackBackend` hooks for the library's boxed CPU fallback
(``tensordispatch.backends.cpu_fallback``) and the LTC-named counters it moves: one
``<ns>::<op>[.<overload>]`` per fallback call, ``lazy::_to_copy`` per tensor moved either way,
``lazy::_copy_from_and_resize`` per written argument copied back. Must not trace.

Moving the inputs to CPU is one batched call (Note [One to_cpu call per fallback]): every
input still carrying IR is materialised by ONE graph before the copies are made.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensordispatch.backends.boxed_fallback import (
    CPUFallbackRegistration,
    FallbackBackend,
    cpu_fallback,
    register_cpu_fallback,
)
from tensordispatch.dispatch.keys import BackendComponent
from tensordispatch.lazy import metrics
from tensordispatch.lazy.executor import sync_tensors
from tensordispatch.lazy.ir import BackendData, Shape
from tensordispatch.lazy.kernels import to_cpu_tensor
from tensordispatch.lazy.tensor import LazyTensor, from_array
from tensordispatch.tensor.device import device as Device
from tensordispatch.tensor.geometry import contiguous_strides
from tensordispatch.tensor.tensor import Tensor

__all__ = ["LAZY_BACKEND", "lazy_fallback", "register_lazy_fallback"]


def _to_cpu(tensors: list[Tensor]) -> list[Tensor]:
    lazies = [t for t in tensors if isinstance(t, LazyTensor)]
    sync_tensors(lazies)
    metrics.bump("lazy::_to_copy", len(tensors))
    return [to_cpu_tensor(t) for t in tensors]  # type: ignore[arg-type]


def _from_cpu(tensors: list[Tensor], device: Device) -> list[Tensor]:
    metrics.bump("lazy::_to_copy", len(tensors))
    return [from_array(np.array(t._data, copy=True), t.dtype, device) for t in tensors]


def _copy_from_cpu(src: Tensor, dst: Tensor) -> None:
    metrics.bump("lazy::_copy_from_and_resize")
    if not isinstance(dst, LazyTensor):
        raise TypeError("lazy fallback: a written argument is not a lazy tensor")
    array = np.array(src._data, dtype=dst.dtype._numpy, copy=True)
    if tuple(array.shape) != dst._shape:
        if dst._base is not None:
            raise RuntimeError("lazy fallback: cannot resize a view of a lazy tensor")
        dst._shape = tuple(array.shape)
        dst._strides = contiguous_strides(dst._shape)
    dst.set_handle(BackendData(array, Shape.of(dst.dtype, dst._shape)))
    dst._bump_version()


def _log(op: Any, tensors: list[Tensor]) -> None:
    metrics.bump(op.name())


LAZY_BACKEND = FallbackBackend(
    name="lazy",
    component=BackendComponent.LazyBit,
    to_cpu=_to_cpu,
    from_cpu=_from_cpu,
    copy_from_cpu=_copy_from_cpu,
    log=_log,
)


def lazy_fallback(op: Any, keyset: Any, stack: list[Any]) -> Any:
    """The Lazy key's boxed fallback: the library's CPU fallback with the lazy hooks."""
    return cpu_fallback(op, keyset, stack)


def register_lazy_fallback() -> CPUFallbackRegistration:
    """Register the fallback for the Lazy key (its ``remove()`` undoes it)."""
    return register_cpu_fallback(LAZY_BACKEND, "Lazy", fallback_fn=lazy_fallback)
