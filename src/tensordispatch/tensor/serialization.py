"""Rebuilding pickled and deep-copied tensors (the other half of `Tensor.__reduce_ex__`).

Owns `reduce_tensor` and `rebuild_tensor`: values copied with their layout (or meta metadata),
dtype, device and requires_grad; like torch, a copy is a new root. A pickled tensor keeps its
conjugate / negative bits (its stored values and the bits, as torch's); a deep copy resolves
them (torch's deepcopy clones through the math-bit fallback). Must not be imported by tensor.py at module
level (tensor.py imports it when pickling).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensordispatch.tensor.device import device as Device
from tensordispatch.tensor.dtypes import dtype as DType
from tensordispatch.tensor.geometry import dense_strides_like
from tensordispatch.tensor.tensor import Tensor
from tensordispatch.tensor.values import _CONJ_RAW, _MATH_BITS_RAW, _NEG_RAW, resolved_values

__all__ = ["rebuild_tensor", "reduce_tensor"]

_DEEPCOPY_NON_LEAF = (
    "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at "
    "the moment.  If you were attempting to deepcopy a module, this may be because of a "
    "torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001"
)


def reduce_tensor(t: Tensor, resolve: bool) -> tuple[Any, ...]:
    """``t.__reduce_ex__``'s answer: ``rebuild_tensor`` and its arguments, the math bits
    resolved into the values when ``resolve`` (deepcopy), else kept (pickle).

    >>> import pickle, copy, tensordispatch as td
    >>> c = td.tensor([1 + 2j]).conj()
    >>> pickle.loads(pickle.dumps(c)).is_conj(), copy.deepcopy(c).is_conj(), copy.deepcopy(c)
    (True, False, tensor([1.-2.j]))
    """
    if resolve and not t.is_leaf:
        raise RuntimeError(_DEEPCOPY_NON_LEAF)
    data = t._data
    if data is not None and not isinstance(data, np.ndarray):
        data = t._values_for_print()  # wrappers and lazy tensors: their values, synced
    bits = t._key_set & _MATH_BITS_RAW
    if bits and resolve:
        bits = 0
        if data is not None:
            data = resolved_values(data, t._key_set)
    values = None if data is None else np.array(data, order="K", copy=True)
    kept = (bool(bits & _CONJ_RAW), bool(bits & _NEG_RAW))
    args = (values, t._shape, t._strides, t.dtype, str(t.device), t.requires_grad, kept)
    return (rebuild_tensor, args)


def rebuild_tensor(
    values: np.ndarray[Any, Any] | None,
    shape: tuple[int, ...],
    strides: tuple[int, ...],
    dtype: DType,
    device: str,
    requires_grad: bool,
    bits: tuple[bool, bool] = (False, False),
) -> Tensor:
    """The tensor `Tensor.__reduce_ex__` describes (pickle and deepcopy): a new root, with
    the conjugate and negative ``bits`` it had."""
    if values is not None:
        t = Tensor._wrap_numpy(values, dtype)
    else:
        t = Tensor._make_meta(shape, dense_strides_like(shape, strides), dtype, Device(device))
    if values is not None and device.startswith("lazy"):  # as torch's deepcopy: lazy again
        t = t.to(device)  # type: ignore[attr-defined]
    if bits[0]:
        t._key_set |= _CONJ_RAW
    if bits[1]:
        t._key_set |= _NEG_RAW
    if requires_grad:
        t.requires_grad = True
    return t
