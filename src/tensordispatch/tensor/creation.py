"""Making tensors from Python data, NumPy arrays and DLPack exporters.

`tensor(...)` copies; `from_numpy` and `from_dlpack` share memory. `tensor` builds the
result directly for now; the operator library re-routes construction through the
dispatcher later (BackendSelect), keeping this dtype inference.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import keyset_raw
from tensordispatch.dispatch.tls import local_state
from tensordispatch.tensor import dtypes
from tensordispatch.tensor.device import CPU, device
from tensordispatch.tensor.dtypes import dtype, from_numpy_dtype, promote_types
from tensordispatch.tensor.tensor import Tensor, contiguous_strides, dense_strides_like

__all__ = ["from_dlpack", "from_numpy", "tensor"]

_make_device = device  # the name `device` is tensor()'s parameter there

_SUPPORTED = ", ".join(d.name for d in reversed(dtypes.ALL_DTYPES))


def _dtype_of_array(where: str, npd: np.dtype[Any]) -> dtype:
    found = from_numpy_dtype(npd)
    if found is not None:
        return found
    if not npd.isnative and from_numpy_dtype(npd.newbyteorder("=")) is not None:
        raise ValueError(
            f"{where}: the numpy array's byte order ({npd.str}) differs from the native "
            "byte order, and conversion between byte orders is not supported; "
            "convert it first with array.astype(array.dtype.newbyteorder('='))"
        )
    raise TypeError(
        f"{where}: can't convert np.ndarray of type {npd.type.__module__}.{npd.type.__name__}; "
        f"the supported types are: {_SUPPORTED}"
    )


def _share_array(where: str, array: np.ndarray[Any, Any]) -> Tensor:
    """A CPU tensor over `array`'s memory (the checks torch.from_numpy makes)."""
    dt = _dtype_of_array(where, array.dtype)
    itemsize = dt.itemsize
    if any(s < 0 for s in array.strides):
        raise ValueError(
            f"{where}: at least one stride of the numpy array is negative "
            f"(strides {array.strides}), and tensors with negative strides are not "
            "supported; make a copy first with array.copy()"
        )
    if any(s % itemsize for s in array.strides):
        raise ValueError(
            f"{where}: the numpy array's strides {array.strides} are not a multiple of the "
            f"element size ({itemsize} bytes); make a copy first with array.copy()"
        )
    return Tensor._make(
        array.view(),
        array.shape,
        tuple([s // itemsize for s in array.strides]),
        0,
        dt,
        CPU,
    )


def from_numpy(ndarray: np.ndarray[Any, Any]) -> Tensor:
    """A CPU tensor sharing memory with `ndarray` (no copy), like ``torch.from_numpy``.

    Writes through either are seen by the other. A read-only array gives a tensor that
    shares its memory with a UserWarning, as in torch; unlike torch, writing into that
    tensor raises NumPy's ValueError instead of writing anyway.

    >>> import numpy as np
    >>> a = np.zeros(3, dtype=np.float32); t = from_numpy(a); a[0] = 5
    >>> t
    tensor([5., 0., 0.])
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(
            f"from_numpy: expected np.ndarray (got {type(ndarray).__name__}); "
            "use tensordispatch.tensor(data) to copy other data"
        )
    if not ndarray.flags.writeable:
        warnings.warn(
            "from_numpy: the given NumPy array is not writable; the tensor shares its "
            "memory, and writing to the tensor will fail. Copy the array or make it "
            "writable first to avoid this.",
            UserWarning,
            stacklevel=2,
        )
    return _share_array("from_numpy", ndarray)


def from_dlpack(ext_tensor: Any) -> Tensor:
    """A CPU tensor sharing memory with any object that implements ``__dlpack__``.

    Works with NumPy arrays, torch tensors and other tensordispatch tensors (through
    NumPy's DLPack importer). Legacy DLPack capsules are not accepted.

    >>> import numpy as np
    >>> a = np.arange(4); t = from_dlpack(a); a[1] = 7
    >>> t
    tensor([0, 7, 2, 3])
    """
    if not hasattr(ext_tensor, "__dlpack__"):
        raise TypeError(
            f"from_dlpack: expected an object implementing __dlpack__ "
            f"(given {type(ext_tensor).__name__}); pass an array or tensor, not a capsule"
        )
    return _share_array("from_dlpack", np.from_dlpack(ext_tensor))


# ---------------------------------------------------------------------------------------------
# tensor(data)


class _Scan:
    """What a walk over nested sequences found: the shape, a dtype, whether tensors occur."""

    __slots__ = ("dtype", "has_tensor", "ndim", "shape")

    def __init__(self) -> None:
        self.shape: list[int] = []
        self.ndim: int | None = None
        self.dtype: dtype | None = None
        self.has_tensor = False

    def add(self, found: dtype) -> None:
        self.dtype = found if self.dtype is None else promote_types(self.dtype, found)


def _scalar_dtype(value: object) -> dtype | None:
    if isinstance(value, np.generic):
        return _dtype_of_array("tensor()", value.dtype)
    if isinstance(value, bool):
        return dtypes.bool
    if isinstance(value, int):
        return dtypes.int64
    if isinstance(value, float):
        return dtypes.get_default_dtype()
    if isinstance(value, complex):
        return dtypes.get_default_complex_dtype()
    return None


def _scan(obj: object, dim: int, scan: _Scan) -> None:
    if isinstance(obj, np.ndarray) and obj.ndim == 0:
        obj = obj[()]
    if isinstance(obj, (list, tuple, range, np.ndarray)):
        if scan.ndim is not None and dim >= scan.ndim:
            raise TypeError(
                f"tensor(): expected a number at dim {dim} (got a sequence); "
                "nested lists must be rectangular"
            )
        if dim == len(scan.shape):
            scan.shape.append(len(obj))
        elif len(obj) != scan.shape[dim]:
            raise ValueError(
                f"tensor(): expected sequence of length {scan.shape[dim]} at dim {dim} "
                f"(got {len(obj)}); nested lists must be rectangular"
            )
        if isinstance(obj, np.ndarray):
            scan.add(_dtype_of_array("tensor()", obj.dtype))
            for k, size in enumerate(obj.shape[1:], start=dim + 1):
                _scan_dim(k, size, scan)
            if scan.ndim is None and obj.size:
                scan.ndim = dim + obj.ndim
            return
        for item in obj:
            _scan(item, dim + 1, scan)
        return
    found = _scalar_dtype(obj)
    if found is None and isinstance(obj, Tensor):
        if obj.numel() != 1:
            raise ValueError(
                f"tensor(): only one-element tensors can be converted to Python scalars "
                f"(given a tensor with {obj.numel()} elements inside a sequence)"
            )
        found = obj.dtype
        scan.has_tensor = True
    if found is None:
        raise TypeError(
            f"tensor(): invalid data type '{type(obj).__name__}'; data must be numbers "
            "(bool, int, float, complex), nested sequences of them, or arrays"
        )
    if scan.ndim is None:
        scan.ndim = dim
    elif dim != scan.ndim:
        raise TypeError(
            f"tensor(): expected a sequence at dim {dim} (got {type(obj).__name__}); "
            "nested lists must be rectangular"
        )
    scan.add(found)


def _scan_dim(dim: int, size: int, scan: _Scan) -> None:
    if dim == len(scan.shape):
        scan.shape.append(size)
    elif scan.shape[dim] != size:
        raise ValueError(
            f"tensor(): expected sequence of length {scan.shape[dim]} at dim {dim} "
            f"(got {size}); nested lists must be rectangular"
        )


def _items(obj: Any) -> Any:
    if isinstance(obj, Tensor):
        return obj.item()
    if isinstance(obj, (list, tuple, range)):
        return [_items(x) for x in obj]
    return obj


def _values(data: Any) -> tuple[Any, tuple[int, ...], dtype]:
    """(data for np.array, shape, inferred dtype) of tensor()'s `data`."""
    if isinstance(data, Tensor):
        warnings.warn(
            "tensor(): to copy construct from a tensor, use sourceTensor.detach().clone() "
            "(or .requires_grad_(True) after it) rather than tensordispatch.tensor(source)",
            UserWarning,
            stacklevel=3,
        )
        if data._data is None:
            raise NotImplementedError(
                f"tensor(): cannot copy the values of a tensor on device '{data.device}', "
                "which has no data; compute on device='cpu' for values"
            )
        return data._data, data._shape, data.dtype
    if isinstance(data, np.ndarray):
        return data, data.shape, _dtype_of_array("tensor()", data.dtype)
    scan = _Scan()
    _scan(data, 0, scan)
    inferred = dtypes.get_default_dtype() if scan.dtype is None else scan.dtype
    return (_items(data) if scan.has_tensor else data), tuple(scan.shape), inferred


def _from_python(values: Any, dt: dtype) -> np.ndarray[Any, Any]:
    """Python numbers converted with torch's checks: ints must fit in int64, values must
    fit in an integral target (unsigned targets wrap negatives down to -max, as in torch),
    complex values need a complex target; floats overflow to inf silently."""
    if dt is dtypes.uint64:
        return _uint64_from_python(values)
    try:
        natural = np.array(values)
    except OverflowError:
        natural = np.array(values, dtype=object)
    if natural.dtype.kind == "O" or natural.dtype == np.uint64:
        raise ValueError(
            "tensor(): overflow when unpacking a Python int: it does not fit in int64; "
            "pass values between -2**63 and 2**63 - 1"
        )
    if natural.dtype.kind == "c" and not dt.is_complex:
        raise TypeError(
            f"tensor(): a complex value cannot be converted to {dt!r} (must be a real "
            "number); pass dtype=tensordispatch.complex64 or drop the imaginary parts"
        )
    integral_target = not (dt.is_floating_point or dt.is_complex or dt is dtypes.bool)
    if integral_target and natural.size and natural.dtype.kind in "iuf":
        info = np.iinfo(dt.numpy_dtype)
        low = -int(info.max) if info.min == 0 else int(info.min)
        smallest, largest = natural.min(), natural.max()
        if not (low <= smallest and largest <= info.max):  # also catches nan
            bad = smallest if not low <= smallest else largest
            raise RuntimeError(
                f"tensor(): value {bad.item()!r} cannot be converted to {dt!r} without "
                "overflow; use a wider dtype"
            )
    with np.errstate(all="ignore"):  # float overflow gives inf, as in torch
        return natural.astype(dt.numpy_dtype, order="C")


def _uint64_from_python(values: Any) -> np.ndarray[Any, Any]:
    """uint64 data as torch reads it: only Python ints (bools too), each in [0, 2**64), so
    values above int64's range are accepted (Note [Limited unsigned dtypes])."""
    items = np.array(values, dtype=object)
    for item in items.flat:
        if not isinstance(item, int):
            raise TypeError(
                f"tensor(): uint64 data must be Python ints (given {type(item).__name__} "
                f"{item!r}); convert the values with int() first"
            )
        if not 0 <= item < 2**64:
            raise OverflowError(
                f"tensor(): {item} does not fit in uint64 (it can't convert negative ints "
                "and ints of 2**64 or more); pass values between 0 and 2**64 - 1"
            )
    return items.astype(np.uint64, order="C")


def _copy_of(values: Any, dt: dtype) -> np.ndarray[Any, Any]:
    """A fresh array of `values`; an array's copy keeps its memory order, as torch's copy
    does (preserve_format), anything else is row-major."""
    if not isinstance(values, np.ndarray):
        return _from_python(values, dt)
    if values.ndim < 2:
        return np.array(values, dtype=dt.numpy_dtype, order="C", copy=True)
    itemsize = values.dtype.itemsize
    strides = tuple([s // itemsize for s in values.strides])
    if values.flags.c_contiguous and strides == contiguous_strides(values.shape):
        return np.array(values, dtype=dt.numpy_dtype, order="C", copy=True)
    target = dense_strides_like(values.shape, strides)
    buffer = np.empty(values.size * dt.itemsize, np.uint8)
    out: np.ndarray[Any, Any] = np.ndarray(
        values.shape, dt.numpy_dtype, buffer, 0, tuple([s * dt.itemsize for s in target])
    )
    out[...] = values
    return out


_FUNCTIONALIZE_RAW: int = keyset_raw(DispatchKey.Functionalize)


def tensor(
    data: Any,
    dtype: dtype | None = None,
    device: str | device | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """A new tensor holding a copy of `data` (numbers, nested sequences, arrays, tensors).

    The dtype is inferred like torch's: bool, then int64, then the default dtype for floats,
    then its complex twin for complex numbers; NumPy arrays and scalars keep their dtype.

    >>> tensor([1, 2]), tensor([1, 2.5]), tensor(True), tensor([1j])
    (tensor([1, 2]), tensor([1.0000, 2.5000]), tensor(True), tensor([0.+1.j]))
    >>> tensor([[1, 2]], device="meta")
    tensor(..., device='meta', size=(1, 2), dtype=tensordispatch.int64)
    """
    if dtype is None and device is None and type(data) in _FLAT:
        flat = _flat_numbers(data)  # Note [Flat lists of Python numbers]
        if flat is not None:
            result = Tensor._wrap_numpy(flat, _NUMPY_DTYPES[flat.dtype])
            if local_state().included & _FUNCTIONALIZE_RAW:
                result = _lift_fresh(result)
            if requires_grad:
                result.requires_grad = True
            return result
    dev = CPU if device is None else _make_device(device)
    values, shape, inferred = _values(data)
    dt = inferred if dtype is None else dtype
    if dev.type == "meta":
        result = Tensor._make_meta(shape, None, dt, dev)
    elif dev.type == "cpu":
        array = _copy_of(values, dt)
        result = Tensor._wrap_numpy(array, dt)
    else:  # as torch: built on the CPU, then moved by the device's own kernels
        result = Tensor._wrap_numpy(_copy_of(values, dt), dt).to(dev)  # type: ignore[attr-defined]
    if local_state().included & _FUNCTIONALIZE_RAW:
        # As torch's torch.tensor: inside a functionalized region (Functionalize TLS-included)
        # the fresh tensor is lifted, so its Functionalize kernel makes it a functional wrapper.
        result = _lift_fresh(result)
    if requires_grad:
        result.requires_grad = True
    return result


# Note [Flat lists of Python numbers]
# ``tensor([1., 2, 3])``: a flat list or tuple whose items are all exactly float, int or bool
# (not subclasses such as NumPy scalars) needs none of the general walk (_scan, promotion,
# _from_python's checks) beyond what NumPy's own conversion tells: it is the array
# ``np.array(data)`` makes (float64, int64 or bool, the same array _from_python starts from),
# cast to the default dtype when a float occurs. The cast to float32 is done only when every
# value is within float32's range (Python's min/max of the items), so it cannot overflow and
# needs no quiet FP state; anything else (huge values, ints beyond int64, nested or empty
# data, a dtype or device given) takes the general path, so values and errors are the same.
_FLAT = (list, tuple)
_NUMBER_TYPES = frozenset((float, int, bool))
_FLOATS = {float}
_FLOAT32_SAFE = 3.4e38  # below float32's largest finite value (3.4028235e38)


def _flat_numbers(data: Any) -> np.ndarray[Any, Any] | None:
    """The fresh array of a flat sequence of Python numbers, or None (Note [Flat lists of
    Python numbers]).

    >>> _flat_numbers([1.0, 2, 3]), _flat_numbers([True, 2]), _flat_numbers([[1]])
    (array([1., 2., 3.], dtype=float32), array([1, 2]), None)
    """
    kinds = set(map(type, data))
    if kinds == _FLOATS:  # each double rounds once to float32, as natural.astype would
        default = dtypes.get_default_dtype()
        if default is dtypes.float32 and -_FLOAT32_SAFE <= min(data) and max(data) <= _FLOAT32_SAFE:
            return np.array(data, np.float32)
    elif not kinds or not kinds <= _NUMBER_TYPES:
        return None
    natural = np.array(data)
    kind = natural.dtype.kind
    if kind == "f":
        default = dtypes.get_default_dtype()
        if default is dtypes.float64:
            return natural
        if default is dtypes.float32 and -_FLOAT32_SAFE <= min(data) and max(data) <= _FLOAT32_SAFE:
            return natural.astype(np.float32)
        return None
    return natural if natural.dtype in _NUMPY_DTYPES else None  # int64 or bool


_NUMPY_DTYPES = {
    np.dtype(np.float32): dtypes.float32,
    np.dtype(np.float64): dtypes.float64,
    np.dtype(np.int64): dtypes.int64,
    np.dtype(np.bool_): dtypes.bool,
}


def _lift_fresh(t: Tensor) -> Tensor:
    from tensordispatch.dispatch.dispatcher import DISPATCHER

    entry = DISPATCHER.find("aten::lift_fresh")
    if entry is None or entry.schema is None:  # a registry without the operator library
        return t
    lifted: Tensor = entry.overload_object(t)
    return lifted
