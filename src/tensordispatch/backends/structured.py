"""Runtime support of the generated structured wrappers (torch's set_output variants).

The codegen turns each structured group into functional / inplace / out kernels per backend
(spec 3.2). They share these steps: allocate a fresh output from a meta spec (functional),
check an inplace call against self (``Bad in-place call``), and prepare an out= tensor
(dtype and device check, ``resize_output`` with torch's deprecation warning, restride only
if a resize happened). Allocation per backend goes through ``ALLOCATORS`` keyed by device
type, so a new backend adds one entry.

Note [No proxy outputs]
torch's wrappers may write into a contiguous proxy and copy it back when an out tensor's
strides differ from the advised ones, because some C++ kernels need a particular layout.
Our kernels write through NumPy, which accepts any strides, so the advised strides of an
out= tensor that was not resized are ignored (torch does the same for TensorIterator ops)
and no proxy is ever made. A backend whose impl needs exact strides can ask for one by
allocating in ``prepare_out``'s place; none does today.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from tensordispatch.backends.common import shape_text, type_meta_name
from tensordispatch.tensor.device import CPU
from tensordispatch.tensor.geometry import contiguous_of
from tensordispatch.tensor.tensor import Tensor, contiguous_strides, new_cpu_tensor

__all__ = [
    "ALLOCATORS",
    "alloc_cpu",
    "alloc_meta",
    "check_inplace",
    "prepare_out",
    "resize_output",
    "set_sizes_strides",
]


_CONTIGUOUS: dict[tuple[int, ...], tuple[int, ...]] = {}


def _contiguous(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides = _CONTIGUOUS.get(shape)
    if strides is None:
        strides = contiguous_strides(shape)
        if len(_CONTIGUOUS) < 4096:
            _CONTIGUOUS[shape] = strides
    return strides


def alloc_cpu(spec: Any) -> Tensor:
    """A fresh CPU tensor for a meta spec ``(shape, strides or None, dtype)``.

    >>> from tensordispatch.tensor import float32
    >>> alloc_cpu(((2, 3), (1, 2), float32)).stride()
    (1, 2)
    """
    shape, strides, dt = spec
    if strides is None:
        strides = _CONTIGUOUS.get(shape) or _contiguous(shape)  # () (0-dim) takes the call
        return new_cpu_tensor(np.empty(shape, dt._numpy), shape, strides, dt)
    return empty_strided_cpu_array(shape, strides, dt)


def empty_strided_cpu_array(shape: tuple[int, ...], strides: tuple[int, ...], dt: Any) -> Tensor:
    """A fresh CPU tensor with exactly ``strides`` (elements) over a new buffer."""
    if type(shape) is tuple and strides == contiguous_of(shape):  # NumPy's C order: the same
        return new_cpu_tensor(np.empty(shape, dt._numpy), shape, strides, dt)
    span = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, strides))
    buffer = np.empty(max(span, 0) * dt.itemsize, np.uint8)
    array: np.ndarray[Any, Any] = np.ndarray(
        shape, dt._numpy, buffer, 0, tuple([s * dt.itemsize for s in strides])
    )
    return Tensor._make(array, tuple(shape), tuple(strides), 0, dt, CPU, storage=buffer)


def alloc_meta(spec: Any, device: Any = None) -> Tensor:
    """A fresh meta tensor for a meta spec."""
    shape, strides, dt = spec
    if device is None:
        return Tensor._make_meta(shape, strides, dt)
    return Tensor._make_meta(shape, strides, dt, device)


ALLOCATORS: dict[str, Callable[[Any], Tensor]] = {"cpu": alloc_cpu, "meta": alloc_meta}


def check_inplace(self: Tensor, spec: Any) -> None:
    """torch's check_inplace: an inplace variant's output must be self as it is.

    >>> from tensordispatch.tensor import tensor, float32
    >>> check_inplace(tensor([1.0]), ((2,), None, float32))
    Traceback (most recent call last):
    ...
    RuntimeError: Bad in-place call: input tensor size [1] and output tensor size [2] should match
    """
    shape, _, dt = spec
    if dt is not self.dtype:
        raise RuntimeError(
            "Bad in-place call: input tensor dtype "
            f"{type_meta_name(self.dtype)} and output tensor dtype {type_meta_name(dt)} "
            "should match"
        )
    if shape != self._shape:
        raise RuntimeError(
            f"Bad in-place call: input tensor size {shape_text(self._shape)} and output "
            f"tensor size {shape_text(shape)} should match"
        )


def prepare_out(out: Tensor, spec: Any) -> None:
    """torch's resize_out: check dtype, resize (warning if non-empty), restride if resized.

    >>> from tensordispatch.tensor import tensor, float32
    >>> out = tensor([], dtype=float32); prepare_out(out, ((2, 3), (1, 2), float32))
    >>> out.shape, out.stride()
    (tensordispatch.Size([2, 3]), (1, 2))
    """
    shape, strides, dt = spec
    if dt is not out.dtype:
        raise RuntimeError(
            f"Expected out tensor to have dtype {type_meta_name(dt)}, but got "
            f"{type_meta_name(out.dtype)} instead"
        )
    if out._shape != shape:
        resize_output(out, shape)
        if strides is not None:
            set_sizes_strides(out, shape, strides)


def resize_output(out: Tensor, shape: tuple[int, ...]) -> bool:
    """Resize ``out`` to ``shape`` (contiguous), warning when it had elements; returns
    whether a resize happened (torch's at::native::resize_output).

    >>> from tensordispatch.tensor import tensor
    >>> out = tensor([]); resize_output(out, (2,)), resize_output(out, (2,))
    (True, False)
    """
    if out._shape == shape:
        return False
    if out.numel() != 0:
        warnings.warn(
            f"An output with one or more elements was resized since it had shape "
            f"{shape_text(out._shape)}, which does not match the required output shape "
            f"{shape_text(shape)}. This behavior is deprecated, and in a future PyTorch "
            "release outputs will not be resized unless they have zero elements. You can "
            "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
            "t.resize_(0).",
            UserWarning,
            stacklevel=2,
        )
    set_sizes_strides(out, tuple(shape), contiguous_strides(tuple(shape)))
    return True


def set_sizes_strides(t: Tensor, shape: tuple[int, ...], strides: tuple[int, ...]) -> None:
    """Give ``t`` new sizes and strides in place, growing its storage if needed (torch's
    resize_/as_strided_ on the TensorImpl). Old bytes are kept, as a storage realloc does.

    >>> from tensordispatch.tensor import tensor
    >>> t = tensor([1.0, 2.0]); set_sizes_strides(t, (3,), (1,)); t.tolist()[:2]
    [1.0, 2.0]
    """
    shape, strides = tuple(shape), tuple(strides)
    if t._data is not None:
        itemsize = t.dtype.itemsize
        span = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, strides))
        need = (span + t._offset) * itemsize
        root = t if t._base is None else t._base
        storage = root._storage_bytes()
        if need > storage.shape[0]:
            grown = np.zeros(need, np.uint8)
            grown[: storage.shape[0]] = storage
            storage = grown
            root._storage = grown
            if root is not t:
                t._storage = grown
        t._data = np.ndarray(
            shape,
            t.dtype._numpy,
            storage,
            t._offset * itemsize,
            tuple([s * itemsize for s in strides]),
        )
        t._storage = storage
    t._shape = shape
    t._strides = strides
