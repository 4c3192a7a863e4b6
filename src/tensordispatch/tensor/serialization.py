"""Rebuilding pickled and deep-copied tensors (the other half of `Tensor.__reduce_ex__`).

Owns `rebuild_tensor`: values copied with their layout (or meta metadata), dtype, device and
requires_grad; like torch, a copy is a new root. Must not be imported by tensor.py at module
level (tensor.py imports it when pickling).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensordispatch.tensor.device import device as Device
from tensordispatch.tensor.dtypes import dtype as DType
from tensordispatch.tensor.geometry import dense_strides_like
from tensordispatch.tensor.tensor import Tensor

__all__ = ["rebuild_tensor"]


def rebuild_tensor(
    values: np.ndarray[Any, Any] | None,
    shape: tuple[int, ...],
    strides: tuple[int, ...],
    dtype: DType,
    device: str,
    requires_grad: bool,
) -> Tensor:
    """The tensor `Tensor.__reduce_ex__` describes (pickle and deepcopy): a new root."""
    if values is not None:
        t = Tensor._wrap_numpy(values, dtype)
    else:
        t = Tensor._make_meta(shape, dense_strides_like(shape, strides), dtype, Device(device))
    if requires_grad:
        t.requires_grad = True
    return t
