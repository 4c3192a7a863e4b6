"""The Tensor class: metadata, storage sharing, version counters, and scalar access.

A Tensor is metadata (shape, strides and storage offset in elements, dtype, device, key
set) plus one payload, `_data`, whose meaning belongs to the backend: for CPU a NumPy array
that is a view of the tensor's storage buffer, for Meta nothing, for later layers an IR
value (lazy) or an inner tensor (wrapper tensors). This module computes nothing: operators
come from the operator library, which builds results with `_make`, `_make_view` and
`_make_meta`. The dispatcher reads one attribute, `_key_set` (a raw key-set int).

Note [CPU storage and views]
A CPU storage is a flat uint8 NumPy buffer. A tensor's `_data` is a NumPy array over that
buffer with the tensor's shape, byte strides and byte offset, so a write through any alias
(a view, `numpy()`, the array given to `from_numpy`) is seen through all of them. A freshly
made tensor whose array starts at its storage's first byte leaves `_storage` as None and
the flat buffer is derived from `_data` the first time a view needs it; with the lazy
version counter and autograd fields below, wrapping a kernel's result array allocates
only the Tensor object.

Note [Views share the root]
A view's `_base` is the root tensor (never a view), and the view shares the root's
storage and version counter; an in-place op on any of them bumps the one counter, which
autograd uses to detect saved tensors modified in place. torch behaves the same. Two
aliases are roots over the same storage bytes instead, as torch's have no `_base`: views of
inference tensors (Note [Inference tensors] in inference.py) and `detach()` of a CPU view.

Note [Lazy version counter]
A fresh tensor's `_vc` is None (version 0); the counter object is created when the first
view of it is made or it is first written in place, and from then on shared with every
view. In-place kernels therefore call `_bump_version()` rather than touching `_vc`.
Inference tensors carry a shared marker instead of a counter (Note [Inference tensors] in
inference.py). The counter also lists the root's views, weakly, so that a change of the
root's requires_grad reaches them (Note [Views follow their root's requires_grad] in
autograd/view_follow.py).
"""

from __future__ import annotations

import weakref
from typing import Any, SupportsIndex

import numpy as np
from numpy.lib.stride_tricks import as_strided

from tensordispatch.tensor import inference as _inference
from tensordispatch.tensor.device import CPU, META
from tensordispatch.tensor.device import device as Device
from tensordispatch.tensor.dtypes import dtype as DType
from tensordispatch.tensor.geometry import (
    Size,
    contiguous_of,
    contiguous_strides,
    dense_strides_like,
    extent,
    is_non_overlapping_and_dense,
)
from tensordispatch.tensor.inference import (
    INFERENCE_VC,
    VERSION_MESSAGE,
    inference_bump,
    mark_inference,
    mark_inference_view,
    strip_autograd_keys,
    watch_inference_count,
)
from tensordispatch.tensor.metadata import TensorMetadata
from tensordispatch.tensor.values import _MATH_BITS_RAW, TensorValues, resolved_values

__all__ = [
    "AutogradMeta",
    "Size",
    "Tensor",
    "VersionCounter",
    "contiguous_strides",
    "dense_strides_like",
    "is_non_overlapping_and_dense",
    "new_cpu_tensor",
]

_ndarray = np.ndarray
_weakref = weakref.ref
# Autograd's function run when a root with views, or a view, changes its own requires_grad
# (Note [Views follow their root's requires_grad]); set by set_requires_grad_hook.
_REQUIRES_GRAD_HOOK: list[Any] = []


def set_requires_grad_hook(hook: Any) -> None:
    """The function ``hook(t, value)`` called after ``t.requires_grad = value`` when ``t`` has
    a version counter (it is a view, or a root that may have views)."""
    _REQUIRES_GRAD_HOOK[:] = [hook]


class VersionCounter:
    """A mutable int shared by a tensor and all its views; bumped by in-place ops. It also
    lists the views made of its root(s), weakly, with the version at each view's making
    (Note [Views follow their root's requires_grad])."""

    __slots__ = ("limit", "version", "views")

    def __init__(self, version: int = 0) -> None:
        self.version = version
        self.views: list[tuple[weakref.ref[Tensor], int]] = []
        self.limit = 16  # prune dead entries when ``views`` grows past this

    def prune(self) -> list[tuple[weakref.ref[Tensor], int]]:
        """Drop the entries of views that died; the next prune waits for twice as many."""
        live = self.views = [e for e in self.views if e[0]() is not None]
        self.limit = max(16, 2 * len(live))
        return live

    def __repr__(self) -> str:
        return f"VersionCounter({self.version})"


class AutogradMeta:
    """Autograd's per-tensor fields, allocated only for tensors that use them.

    Like torch's AutogradMeta: a tensor that never requires grad, has no grad and no
    grad_fn carries None instead, which keeps making a kernel's result cheap. The autograd
    layer may subclass it to add fields.
    """

    __slots__ = ("grad", "grad_fn", "requires_grad")

    def __init__(self) -> None:
        self.requires_grad = False
        self.grad: Tensor | None = None
        self.grad_fn: Any = None


# (byte strides, itemsize) -> element strides, for the results of kernels: few distinct keys.
_ELEMENT_STRIDES: dict[tuple[tuple[int, ...], int], tuple[int, ...]] = {}


def _element_strides(key: tuple[tuple[int, ...], int]) -> tuple[int, ...]:
    byte_strides, itemsize = key
    strides = tuple([s // itemsize for s in byte_strides])
    if len(_ELEMENT_STRIDES) > 4096:
        _ELEMENT_STRIDES.clear()
    _ELEMENT_STRIDES[key] = strides
    return strides


_CPU_KEY_SET: int = CPU._key_set
_INFERENCE_ACTIVE = 0  # open inference_mode blocks, any thread (Note [Inference tensors])
watch_inference_count(globals())


class Tensor(TensorMetadata, TensorValues):
    """A multi-dimensional array with torch's metadata model.

    Build tensors with `tensordispatch.tensor(...)`, `from_numpy` or `from_dlpack`;
    operators come from the operator library.

    >>> import numpy as np
    >>> from tensordispatch.tensor import from_numpy
    >>> t = from_numpy(np.arange(6.0).reshape(2, 3))
    >>> t.shape, t.stride(), t.dtype, t.device, t.is_contiguous()
    (tensordispatch.Size([2, 3]), (3, 1), tensordispatch.float64, device(type='cpu'), True)
    >>> t
    tensor([[0., 1., 2.],
            [3., 4., 5.]], dtype=tensordispatch.float64)
    """

    __slots__ = (
        "__weakref__",
        "_autograd_meta",
        "_base",
        "_data",
        "_key_set",
        "_offset",
        "_shape",
        "_storage",
        "_strides",
        "_vc",
        "_wrapped_number",
        "device",
        "dtype",
    )

    _key_set: int
    _shape: tuple[int, ...]
    _strides: tuple[int, ...]
    _offset: int
    dtype: DType
    device: Device
    _data: Any
    _storage: np.ndarray[Any, Any] | None
    _vc: Any  # VersionCounter | None | InferenceVersion (Note [Inference tensors])
    _base: Tensor | None
    _wrapped_number: bool
    _autograd_meta: AutogradMeta | None

    def __init__(self, *args: object, **kwargs: object) -> None:
        raise TypeError(
            "Tensor(...): tensors are not built by calling the class; use "
            "tensordispatch.tensor(data), from_numpy(array) or from_dlpack(obj)"
        )

    # -- internal constructors (Note [CPU storage and views]) ---------------------------------

    @classmethod
    def _make(
        cls,
        data: Any,
        shape: tuple[int, ...],
        strides: tuple[int, ...],
        offset: int,
        dtype: DType,
        device: Device,
        storage: np.ndarray[Any, Any] | None = None,
        version_counter: VersionCounter | None = None,
    ) -> Tensor:
        """A new root tensor over `data` (the backend payload, e.g. a NumPy array).

        `storage` is the flat uint8 buffer `data` views (None: `data` starts at the first
        byte of its own storage, which is then derived on demand). `version_counter` None
        means a fresh one, created when first needed (Note [Lazy version counter]).
        """
        t = _new_object(cls)
        t._key_set = device._key_set
        t._shape = shape
        t._strides = strides
        t._offset = offset
        t.dtype = dtype
        t.device = device
        t._data = data
        t._storage = storage
        t._vc = version_counter
        t._base = None
        t._wrapped_number = False
        t._autograd_meta = None
        if version_counter is None:
            if _INFERENCE_ACTIVE:  # Note [Inference tensors] in inference.py
                mark_inference(t)
        elif version_counter is INFERENCE_VC:  # an alias of an inference tensor
            t._key_set = strip_autograd_keys(t._key_set)
        return t

    @classmethod
    def _wrap_numpy(cls, array: np.ndarray[Any, Any], dtype: DType) -> Tensor:
        """A new CPU root tensor owning a fresh NumPy array (a kernel's result).

        The array must start at the first byte of its memory and have non-negative strides
        that are multiples of its item size, as every freshly allocated array does.
        """
        t = _new_object(cls)
        t._key_set = _CPU_KEY_SET
        t._shape = array.shape
        key = (array.strides, dtype.itemsize)
        strides = _ELEMENT_STRIDES.get(key)
        if strides is None:
            strides = _element_strides(key)
        t._strides = strides
        t._offset = 0
        t.dtype = dtype
        t.device = CPU
        t._data = array
        t._storage = None
        t._vc = None
        t._base = None
        t._wrapped_number = False
        t._autograd_meta = None
        if _INFERENCE_ACTIVE:  # Note [Inference tensors] in inference.py
            mark_inference(t)
        return t

    @classmethod
    def _make_meta(
        cls,
        shape: tuple[int, ...],
        strides: tuple[int, ...] | None,
        dtype: DType,
        device: Device = META,
    ) -> Tensor:
        """A new tensor without data (Meta): metadata only. Strides default to contiguous."""
        if strides is None:
            strides = contiguous_of(shape) if type(shape) is tuple else contiguous_strides(shape)
        return cls._make(None, shape, strides, 0, dtype, device)

    def _make_view(
        self,
        shape: tuple[int, ...],
        strides: tuple[int, ...],
        offset: int,
        data: Any = None,
        dtype: DType | None = None,
    ) -> Tensor:
        """A view of this tensor's storage (Note [Views share the root]).

        `shape`, `strides` and `offset` are in elements of the view's dtype (default: this
        tensor's), the offset absolute in the storage as in `as_strided`. For CPU, `data`
        may pass the NumPy view if the caller already has it; otherwise it is built over the
        storage buffer, after a bounds check. Like torch, meta views are not bounds-checked.
        """
        root = self if self._base is None else self._base
        if dtype is None:
            dtype = self.dtype
        if data is None and self._data is not None:
            data = root._view_array(shape, strides, offset, dtype)
        vc = root._vc
        if vc is None:
            vc = root._vc = VersionCounter()
        cls = self.__class__
        t = _new_object(cls)
        t._key_set = self._key_set
        t._shape = shape
        t._strides = strides
        t._offset = offset
        t.dtype = dtype
        t.device = self.device
        t._data = data
        t._storage = root._storage
        t._vc = vc
        t._base = root
        t._wrapped_number = False
        t._autograd_meta = None
        if vc is INFERENCE_VC:  # Note [Inference tensors] in inference.py
            t._base = None  # torch's views of inference tensors are no views: a second root
            if t._storage is None and t._data is not None:
                t._storage = root._storage_bytes()
            return t
        if dtype.is_floating_point or dtype.is_complex:  # the dtypes that can require grad
            views = vc.views  # Note [Views follow their root's requires_grad]
            views.append((_weakref(t), vc.version))
            if len(views) > vc.limit:
                vc.prune()
        if _INFERENCE_ACTIVE:
            mark_inference_view(t)
        return t

    def _storage_bytes(self) -> np.ndarray[Any, Any]:
        """The flat uint8 buffer of this CPU tensor's storage (derived once, then cached)."""
        root = self if self._base is None else self._base
        storage = root._storage
        if storage is None:
            array = root._data
            if root._offset:  # only a tensor made with an explicit storage has an offset
                raise RuntimeError("Tensor._storage_bytes: an offset root needs its storage")
            span = extent(root._shape, root._strides)
            itemsize = root.dtype.itemsize
            if array.ndim == 0:
                flat = array.reshape(1)
            elif span == array.size and array.flags.c_contiguous:
                flat = array.reshape(-1)  # a view: ~1 us where as_strided costs ~7 us
            else:
                flat = as_strided(array, (span,), (itemsize,))
            storage = flat.view(np.uint8)
            root._storage = storage
        return storage

    def _storage_nbytes(self) -> int:
        root = self if self._base is None else self._base
        if root._data is not None:
            return int(root._storage_bytes().shape[0])
        if root._storage is not None:
            return int(root._storage.shape[0])
        return (extent(root._shape, root._strides) + root._offset) * root.dtype.itemsize

    def _view_array(
        self, shape: tuple[int, ...], strides: tuple[int, ...], offset: int, dtype: DType
    ) -> np.ndarray[Any, Any]:
        """A NumPy view of the storage bytes with the given geometry, bounds-checked."""
        itemsize = dtype.itemsize
        root = self if self._base is None else self._base
        buffer = root._storage
        if buffer is None:
            buffer = root._storage_bytes()
        available = buffer.shape[0]
        # Spelled out for 1 and 2 dims: a zip loop or a comprehension costs ~250 ns in
        # CPython 3.11, as much as the NumPy view itself.
        n = len(shape)
        if n != len(strides):
            raise ValueError(f"_view_array: {n} sizes but {len(strides)} strides")
        byte_strides: tuple[int, ...]
        if n == 1:
            size, stride = shape[0], strides[0]
            span = -1 if stride < 0 else (1 + (size - 1) * stride if size else 0)
            byte_strides = (stride * itemsize,)
        elif n == 2:
            s0, s1 = shape
            t0, t1 = strides
            if t0 < 0 or t1 < 0:
                span = -1
            else:
                span = 1 + (s0 - 1) * t0 + (s1 - 1) * t1 if s0 and s1 else 0
            byte_strides = (t0 * itemsize, t1 * itemsize)
        elif n == 0:
            span, byte_strides = 1, ()
        else:
            if min(strides) < 0:
                span = -1
            elif 0 in shape:
                span = 0
            else:
                span = 1
                for size, stride in zip(shape, strides):
                    span += (size - 1) * stride
            byte_strides = tuple([stride * itemsize for stride in strides])
        needed = (span + offset) * itemsize if span > 0 else 0
        if span < 0 or offset < 0 or needed > available:
            raise RuntimeError(
                f"as_strided: sizes {list(shape)}, strides {list(strides)}, storage offset "
                f"{offset} and itemsize {itemsize} need {needed} bytes of storage, "
                f"but the storage has {available} (strides and offset must be >= 0); "
                "pick a view that fits in the storage"
            )
        byte_offset = offset * itemsize if span else 0  # an empty view may start past the end
        view: np.ndarray[Any, Any] = _ndarray(
            shape, dtype._numpy, buffer, byte_offset, byte_strides
        )
        return view

    @property
    def _version(self) -> int:
        vc = self._vc
        if vc is None:
            return 0
        if vc is INFERENCE_VC:
            raise RuntimeError(VERSION_MESSAGE)
        return vc.version  # type: ignore[no-any-return]

    def _bump_version(self) -> None:
        """Record an in-place write (seen by every view of the storage)."""
        root = self if self._base is None else self._base
        vc = root._vc
        if vc is None:
            vc = root._vc = self._vc = VersionCounter()
        elif vc is INFERENCE_VC:  # Note [Inference tensors] in inference.py
            inference_bump()
            return
        vc.version += 1

    def is_inference(self) -> bool:
        """Whether this tensor was made in inference mode (or is a view of one that was).

        >>> import tensordispatch as td
        >>> with td.inference_mode():
        ...     t = td.zeros(2)
        >>> t.is_inference(), t[:1].is_inference(), (t + 1).is_inference()
        (True, True, False)
        """
        return self._vc is INFERENCE_VC

    def _is_view(self) -> bool:
        return self._base is not None

    def _is_alias_of(self, other: Tensor) -> bool:
        """Whether both tensors use the same storage (torch's `_is_alias_of`): views of one
        root, or roots made over one storage buffer (`_make(..., storage=...)`)."""
        a = self if self._base is None else self._base
        b = other if other._base is None else other._base
        if a is b:
            return True
        if isinstance(a._data, np.ndarray) and isinstance(b._data, np.ndarray):
            return a._storage_bytes() is b._storage_bytes()
        return a._storage is not None and a._storage is b._storage

    @property
    def requires_grad(self) -> bool:
        meta = self._autograd_meta
        return meta is not None and meta.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if value and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError(
                f"requires_grad: only Tensors of floating point and complex dtype can require "
                f"gradients (given dtype {self.dtype!r}); convert to a floating dtype first"
            )
        if value and self._vc is INFERENCE_VC and not _inference.is_inference_mode_on():
            raise RuntimeError(
                "Setting requires_grad=True on inference tensor outside InferenceMode is not "
                "allowed."
            )
        self._get_autograd_meta().requires_grad = bool(value)
        if self._vc is not None and _REQUIRES_GRAD_HOOK:  # a root with views, or a view
            _REQUIRES_GRAD_HOOK[0](self, bool(value))

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set requires_grad in place and return self."""
        self.requires_grad = requires_grad
        return self

    @property
    def grad(self) -> Tensor | None:
        meta = self._autograd_meta
        return None if meta is None else meta.grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        self._get_autograd_meta().grad = value

    @property
    def grad_fn(self) -> Any:
        meta = self._autograd_meta
        return None if meta is None else meta.grad_fn

    @grad_fn.setter
    def grad_fn(self, value: Any) -> None:
        self._get_autograd_meta().grad_fn = value

    def _get_autograd_meta(self) -> AutogradMeta:
        meta = self._autograd_meta
        if meta is None:
            meta = self._autograd_meta = AutogradMeta()
        return meta

    def data_ptr(self) -> int:
        """Address of the first element (0 for tensors without data or storage bytes)."""
        if self._data is None or self._storage_nbytes() == 0:
            return 0
        return int(self._data.__array_interface__["data"][0])

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __hash__(self) -> int:
        return id(self)

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[Any, ...]:
        """Pickle: values (copied, same layout), metadata, requires_grad and, as torch's, the
        conjugate / negative bits. Like torch, a copy is a new root: views are not kept."""
        from tensordispatch.tensor.serialization import reduce_tensor

        return reduce_tensor(self, resolve=False)

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        """A deep copy: as pickled, but with the math bits resolved, as torch's."""
        from tensordispatch.tensor.serialization import reduce_tensor

        rebuild, args = reduce_tensor(self, resolve=True)
        memo[id(self)] = copied = rebuild(*args)
        return copied  # type: ignore[no-any-return]

    # -- printing -------------------------------------------------------------------------------

    def _values_for_print(self) -> np.ndarray[Any, Any] | None:
        """The values printing shows (None: print `...`). Backends without NumPy data that
        can produce values (lazy, wrapper tensors) override this."""
        data = self._data
        if not isinstance(data, np.ndarray):
            return None
        return resolved_values(data, self._key_set) if self._key_set & _MATH_BITS_RAW else data

    def __repr__(self) -> str:
        from tensordispatch.tensor.printing import tensor_repr

        return tensor_repr(self)

    __str__ = __repr__

    def __format__(self, format_spec: str) -> str:
        """A 0-dim tensor formats as its item (even with an empty spec); any other tensor only
        with an empty spec (its str), as torch: ``f"{t:.2f}"`` on a tensor with dims is a
        TypeError.

        >>> from tensordispatch.tensor import tensor
        >>> f"{tensor(3.5)}", f"{tensor(3.5):.2f}", f"{tensor([1.0, 2.0])}"
        ('3.5', '3.50', 'tensor([1., 2.])')
        """
        if not self._shape and self.device.type != "meta" and type(self) is Tensor:
            return str(self.item().__format__(format_spec))
        return object.__format__(self, format_spec)


_new_object = object.__new__  # Tensor defines no __new__ (the class call itself is refused)


def new_cpu_tensor(
    data: np.ndarray[Any, Any], shape: tuple[int, ...], strides: tuple[int, ...], dtype: DType
) -> Tensor:
    """``Tensor._make(data, shape, strides, 0, dtype, CPU)`` without the classmethod's cost.

    For the allocation of fresh kernel outputs: `data` starts at the first byte of its own
    storage, the tensor gets a fresh (lazy) version counter and no autograd metadata.

    >>> import numpy as np
    >>> from tensordispatch.tensor import float32
    >>> t = new_cpu_tensor(np.zeros((2, 3), np.float32), (2, 3), (3, 1), float32)
    >>> t.shape, t.stride(), t.device
    (tensordispatch.Size([2, 3]), (3, 1), device(type='cpu'))
    """
    t = _new_object(Tensor)
    t._key_set = _CPU_KEY_SET
    t._shape = shape
    t._strides = strides
    t._offset = 0
    t.dtype = dtype
    t.device = CPU
    t._data = data
    t._storage = None
    t._vc = None
    t._base = None
    t._wrapped_number = False
    t._autograd_meta = None
    if _INFERENCE_ACTIVE:  # Note [Inference tensors] in inference.py
        mark_inference(t)
    return t
