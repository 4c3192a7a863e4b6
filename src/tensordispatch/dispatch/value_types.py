"""The tensor layer's argument values as a direct call checks them: ScalarType, Layout,
MemoryFormat, Device, Scalar, and one-element tensors passed for int/float/bool.

Owns the registry through which the tensor layer declares its dtype, layout, memory-format
and device objects (the dispatcher cannot import them: layers import downward), torch's
integer codes for them, and the value converters convert.py turns into argument checks.
Must not know about schemas or dispatch.

Note [Value types]
torch 2.13 binds these arguments of an OpOverload call like its TorchScript values
(measured with a Python kernel on a scratch operator):

=============  ==========================================  ============================
type           takes                                       error names the type as
=============  ==========================================  ============================
ScalarType     a dtype; an int-like (int, bool, ``__index__``,  'int' ('Optional[int]')
               one-element real tensor) as torch's code
Layout         a layout; an int-like as its code           'int'
MemoryFormat   a memory format; an int-like as its code    'int'
Device         a device; a str, parsed                     'Device'
Scalar         int, float, bool, complex and subclasses    'number'
               of float; a dtype or a layout as its code
int            also a dtype, layout or memory format (its  'int'
               code) and a one-element real tensor
float          also a one-element real tensor              'float'
bool           also a one-element tensor                   'bool'
=============  ==========================================  ============================

Until the tensor layer registers its objects (``register_value_types``) ScalarType,
Layout, MemoryFormat and Device values pass unchecked. A tensor is recognized as the
dispatcher recognizes it (an int ``_key_set``) and read through ``numel()`` / ``item()``.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

__all__ = [
    "LAYOUT_CODES",
    "MEMORY_FORMAT_CODES",
    "SCALAR_TYPE_CODES",
    "Reject",
    "UnknownCode",
    "register_value_types",
    "registered_class",
    "tensor_item",
    "value_converter",
    "value_type_name",
]

# torch's enum values (c10::ScalarType, c10::Layout, c10::MemoryFormat), by object name.
SCALAR_TYPE_CODES = {
    "uint8": 0, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "float16": 5, "float32": 6,
    "float64": 7, "complex32": 8, "complex64": 9, "complex128": 10, "bool": 11, "qint8": 12,
    "quint8": 13, "qint32": 14, "bfloat16": 15, "uint16": 27, "uint32": 28, "uint64": 29,
}  # fmt: skip
LAYOUT_CODES = {
    "strided": 0, "sparse_coo": 1, "sparse_csr": 2, "_mkldnn": 3, "sparse_csc": 4,
    "sparse_bsr": 5, "sparse_bsc": 6, "jagged": 7,
}  # fmt: skip
MEMORY_FORMAT_CODES = {
    "contiguous_format": 0, "preserve_format": 1, "channels_last": 2, "channels_last_3d": 3,
}  # fmt: skip
_CODES = {
    "ScalarType": SCALAR_TYPE_CODES,
    "Layout": LAYOUT_CODES,
    "MemoryFormat": MEMORY_FORMAT_CODES,
}


class Reject(Exception):
    """Internal: the value cannot be taken for the type (convert.py words the error)."""


class UnknownCode(Exception):
    """Internal: an int names a torch enum value tensordispatch has no object for."""

    def __init__(self, kind: str, code: int) -> None:
        names = [n for n, c in _CODES[kind].items() if c == code]
        super().__init__(kind, code, names[0] if names else None)
        self.kind, self.code, self.torch_name = kind, code, names[0] if names else None


class _Registry:
    """What the tensor layer registered: per kind, its class, code -> object, class ->
    kind. Replaced as a whole on registration (readers take no lock)."""

    __slots__ = ("by_code", "classes", "device")

    def __init__(self) -> None:
        self.by_code: dict[str, dict[int, Any]] = {}
        self.classes: dict[type, str] = {}
        self.device: type | None = None


_REGISTRY = _Registry()


def register_value_types(
    *,
    dtypes: Iterable[Any] = (),
    layouts: Iterable[Any] = (),
    memory_formats: Iterable[Any] = (),
    device: type | None = None,
) -> None:
    """Declare the tensor layer's value objects (each with torch's ``name``) and its device
    class (constructible from a str), so direct calls check and convert them like torch.

    >>> class Layout:
    ...     def __init__(self, name): self.name = name
    >>> saved = _swap_registry(None)  # start empty; put the real one back below
    >>> register_value_types(layouts=[Layout("strided")])
    >>> value_converter("Layout")(0).name
    'strided'
    >>> _ = _swap_registry(saved)
    """
    global _REGISTRY
    fresh = _Registry()
    fresh.by_code = {k: dict(v) for k, v in _REGISTRY.by_code.items()}
    fresh.classes = dict(_REGISTRY.classes)
    fresh.device = device or _REGISTRY.device
    kinds = (("ScalarType", dtypes), ("Layout", layouts), ("MemoryFormat", memory_formats))
    for kind, objects in kinds:
        for obj in objects:
            code = _CODES[kind].get(obj.name)
            if code is None:
                raise ValueError(
                    f"register_value_types: {obj!r} is named {obj.name!r}, which is not one of "
                    f"torch's {kind} names {sorted(_CODES[kind])}; name it as torch does"
                )
            fresh.by_code.setdefault(kind, {})[code] = obj
            fresh.classes[type(obj)] = kind
    _REGISTRY = fresh


def _swap_registry(registry: _Registry | None) -> _Registry:
    """Install ``registry`` (None: an empty one) and return the previous one (tests)."""
    global _REGISTRY
    previous, _REGISTRY = _REGISTRY, registry if registry is not None else _Registry()
    return previous


def registered_class(kind: str) -> type | None:
    """The class registered for ``kind`` (ScalarType, Layout, MemoryFormat, Device), or None.

    >>> registered_class("Device") is None or isinstance(registered_class("Device"), type)
    True
    """
    if kind == "Device":
        return _REGISTRY.device
    for cls, k in _REGISTRY.classes.items():
        if k == kind:
            return cls
    return None


_TORCH_TYPE_NAMES = {
    "ScalarType": "dtype",
    "Layout": "layout",
    "MemoryFormat": "memory_format",
    "Device": "device",
}


def value_type_name(v: Any) -> str:
    """The type name torch's argument errors print for ``v`` (``layout`` for a layout).

    >>> value_type_name(2.5)
    'float'
    """
    cls = type(v)
    kind = "Device" if cls is _REGISTRY.device else _REGISTRY.classes.get(cls)
    return _TORCH_TYPE_NAMES[kind] if kind is not None else cls.__name__


def _is_tensor(v: Any) -> bool:
    return isinstance(getattr(v, "_key_set", None), int)


def tensor_item(v: Any) -> Any:
    """The Python scalar of a one-element tensor; ``Reject`` for anything else.

    >>> tensor_item(3)
    Traceback (most recent call last):
    ...
    tensordispatch.dispatch.value_types.Reject
    """
    if not _is_tensor(v):
        raise Reject
    try:
        if v.numel() != 1:
            raise Reject
        return v.item()
    except (AttributeError, TypeError, RuntimeError) as e:
        raise Reject from e


def _code_of(v: Any, kinds: tuple[str, ...]) -> int | None:
    kind = _REGISTRY.classes.get(type(v))
    if kind is None or kind not in kinds:
        return None
    return _CODES[kind][v.name]


def _int_like(v: Any) -> int:
    """An int from an int, a bool, an ``__index__`` object or a one-element real tensor."""
    if type(v) is int:
        return v
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if _is_tensor(v):
        item = tensor_item(v)
        if isinstance(item, complex):
            raise Reject
        return int(item)
    if isinstance(v, (float, complex, str)) or getattr(type(v), "__index__", None) is None:
        raise Reject
    try:
        return int(v.__index__())
    except (TypeError, ValueError) as e:
        raise Reject from e


def _int(v: Any) -> int:
    code = _code_of(v, ("ScalarType", "Layout", "MemoryFormat"))
    return _int_like(v) if code is None else code


def _float(v: Any) -> float:
    if _is_tensor(v):
        item = tensor_item(v)
        if isinstance(item, complex):
            raise Reject
        return float(item)
    if isinstance(v, numbers.Real):  # int, bool, float and NumPy's reals
        return float(v)
    if isinstance(v, (str, complex)) or getattr(type(v), "__float__", None) is None:
        raise Reject
    try:
        return float(v)
    except (TypeError, ValueError) as e:
        raise Reject from e


def _bool(v: Any) -> bool:
    if v is None:
        return False
    if _is_tensor(v):
        return bool(tensor_item(v))
    if isinstance(v, numbers.Number):
        return bool(v)
    cls = type(v)
    if isinstance(v, (str, list, tuple, dict)) or (
        getattr(cls, "__index__", None) is None and getattr(cls, "__float__", None) is None
    ):
        raise Reject
    try:
        return bool(v)
    except (TypeError, ValueError, RuntimeError) as e:
        raise Reject from e


def _scalar(v: Any) -> Any:
    if isinstance(v, bool):
        return bool(v)
    if isinstance(v, float):
        return float(v)
    if isinstance(v, int):
        return int(v)
    if isinstance(v, complex):
        return complex(v)
    code = _code_of(v, ("ScalarType", "Layout"))
    if code is None:
        raise Reject
    return code


def _enum(kind: str) -> Callable[[Any], Any]:
    def convert(v: Any) -> Any:
        table = _REGISTRY.by_code.get(kind)
        if table is None or _REGISTRY.classes.get(type(v)) == kind:
            return v  # unregistered: taken as it comes
        if _REGISTRY.classes.get(type(v)) is not None:
            raise Reject  # another kind's object (a layout for a dtype)
        code = _int_like(v)
        try:
            return table[code]
        except KeyError:
            raise UnknownCode(kind, code) from None

    return convert


def _device(v: Any) -> Any:
    cls = _REGISTRY.device
    if cls is None or isinstance(v, cls):
        return v
    if isinstance(v, str):
        return cls(v)
    raise Reject


def _str(v: Any) -> str:
    if isinstance(v, str):
        return v
    raise Reject


_CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "int": _int,
    "SymInt": _int,
    "float": _float,
    "bool": _bool,
    "str": _str,
    "Scalar": _scalar,
    "ScalarType": _enum("ScalarType"),
    "Layout": _enum("Layout"),
    "MemoryFormat": _enum("MemoryFormat"),
    "Device": _device,
}


def value_converter(type_name: str) -> Callable[[Any], Any]:
    """The converter of one schema base type: returns the value to pass on, raises
    ``Reject`` (or ``UnknownCode``) when torch would refuse it.

    >>> value_converter("int")(True), value_converter("Scalar")(2.5), value_converter("float")(3)
    (1, 2.5, 3.0)
    """
    return _CONVERTERS[type_name]
