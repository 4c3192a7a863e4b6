"""Tensor methods that convert to a dtype named by the method: ``float()``, ``double()``,
``half()``, ``long()``, ``int()``, ``short()``, ``char()``, ``byte()``, ``bool()``,
``cfloat()``, ``cdouble()``, ``type()``, and ``new_tensor()`` (a copy of data with this
tensor's dtype and device by default) (installed by generated/methods.py from
codegen/model.py's PYTHON_METHODS).

Torch binds these by hand in C++ over ``self.to(dtype, non_blocking=False, copy=False,
memory_format=...)``, so they are aten::to.dtype calls here too (returning ``self`` when the
dtype already matches, a ToCopyBackward0 node otherwise). ``type()`` names a tensor type the
old way: ``'torch.FloatTensor'`` (``'torch.meta.FloatTensor'`` off the CPU), the strings torch
prints, so programs comparing them run unchanged. Differences from torch: there is no
``bfloat16()`` (we have no bfloat16 dtype) and ``type()`` takes no legacy tensor-type classes
(``torch.FloatTensor``), only dtypes and type strings.
"""

from __future__ import annotations

import warnings
from typing import Any

from tensordispatch.backends.aten import op
from tensordispatch.backends.common import MemoryFormat, preserve_format
from tensordispatch.tensor.dtypes import dtype as DType
from tensordispatch.tensor.tensor import Tensor

__all__ = [
    "bool_", "byte", "cdouble", "cfloat", "char", "double", "float_", "half", "int_", "long",
    "new_tensor", "short", "type_",
]  # fmt: skip

# dtype name -> the scalar type name in torch's legacy tensor type names ('torch.<X>Tensor').
TYPE_NAMES: dict[str, str] = {
    "float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
    "int8": "Char", "uint8": "Byte", "int16": "Short", "int32": "Int", "int64": "Long",
    "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
    "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64",
}  # fmt: skip


def _dtype_named(name: str) -> DType:
    from tensordispatch.tensor import dtypes

    return getattr(dtypes, name)  # type: ignore[no-any-return]


def _positional_count_error(name: str, most: int, given: int) -> TypeError:
    takes = f"from 0 to {most} positional arguments" if most else "0 positional arguments"
    verb = "was" if given == 1 else "were"
    return TypeError(f"{name}() takes {takes} but {given} {verb} given")


def _check_memory_format(name: str, memory_format: Any) -> None:
    if not isinstance(memory_format, MemoryFormat):
        raise TypeError(
            f"{name}(): argument 'memory_format' must be torch.memory_format, not "
            f"{type(memory_format).__name__}"
        )


def _shortcut(name: str, dtype_name: str) -> Any:
    def convert(self: Tensor, *args: Any, memory_format: Any = preserve_format) -> Tensor:
        if args:
            raise _positional_count_error(name, 0, len(args))
        _check_memory_format(name, memory_format)
        dtype = _dtype_named(dtype_name)
        return op("to.dtype")(self, dtype, memory_format=memory_format)  # type: ignore[no-any-return]

    convert.__name__ = convert.__qualname__ = name
    convert.__doc__ = (
        f"``x.{name}(memory_format=torch.preserve_format)``: ``x.to(torch.{dtype_name}, "
        "memory_format=memory_format)`` (``x`` itself when it has that dtype)."
    )
    return convert


float_ = _shortcut("float", "float32")
double = _shortcut("double", "float64")
half = _shortcut("half", "float16")
long = _shortcut("long", "int64")
int_ = _shortcut("int", "int32")
short = _shortcut("short", "int16")
char = _shortcut("char", "int8")
byte = _shortcut("byte", "uint8")
bool_ = _shortcut("bool", "bool")
cfloat = _shortcut("cfloat", "complex64")
cdouble = _shortcut("cdouble", "complex128")


def type_name(tensor: Tensor) -> str:
    """torch's legacy type string of ``tensor``: ``'torch.FloatTensor'``, with the device type
    after ``torch.`` off the CPU.

    >>> import tensordispatch as td
    >>> type_name(td.ones(2)), type_name(td.ones(2, dtype=td.int8, device="meta"))
    ('torch.FloatTensor', 'torch.meta.CharTensor')
    """
    scalar = TYPE_NAMES.get(tensor.dtype.name, tensor.dtype.name)
    place = "" if tensor.device.type == "cpu" else f"{tensor.device.type}."
    return f"torch.{place}{scalar}Tensor"


def _parse_type_string(text: str) -> DType:
    by_string = {f"torch.{v}Tensor": k for k, v in TYPE_NAMES.items()}
    name = by_string.get(text.replace("tensordispatch.", "torch.", 1))
    if name is None:
        raise ValueError(f"invalid type: {text!r}")
    try:
        return _dtype_named(name)
    except AttributeError:
        raise ValueError(f"invalid type: {text!r}") from None


def type_(self: Tensor, *args: Any, memory_format: Any = None, **kwargs: Any) -> str | Tensor:
    """``x.type(dtype=None, non_blocking=False, *, memory_format=None)``: with no dtype,
    torch's type string of ``x``; with a dtype or a type string (``'torch.DoubleTensor'``),
    ``x`` converted to it (a type string also moves ``x`` to the CPU), ``x`` itself when
    nothing changes.

    >>> import tensordispatch as td
    >>> x = td.ones(2)
    >>> x.type(), x.type(td.int64).dtype, x.type("torch.DoubleTensor").dtype, x.type(td.float32) is x
    ('torch.FloatTensor', tensordispatch.int64, tensordispatch.float64, True)
    """
    if len(args) > 2:
        raise _positional_count_error("type", 2, len(args))
    given = dict(zip(("dtype", "non_blocking"), args, strict=False))
    non_blocking = given.get("non_blocking", kwargs.get("non_blocking", False))
    if type(non_blocking) is not bool:
        raise TypeError(
            "type(): argument 'non_blocking' (position 2) must be bool, not "
            f"{type(non_blocking).__name__}"
        )
    for key, value in kwargs.items():
        if key not in ("dtype", "non_blocking") or key in given:
            raise TypeError(f"type() got an unexpected keyword argument '{key}'")
        given[key] = value
    options: dict[str, Any] = {"non_blocking": non_blocking}
    if memory_format is not None:
        _check_memory_format("type", memory_format)
        options["memory_format"] = memory_format
    target = given.get("dtype")
    if target is None:
        return type_name(self)
    if isinstance(target, str):
        dtype = _parse_type_string(target)
        if self.dtype is dtype and self.device.type == "cpu":
            return self
        return op("to.dtype_layout")(self, dtype=dtype, device="cpu", **options)  # type: ignore[no-any-return]
    if not isinstance(target, DType):
        raise TypeError("dtype must be a type, str, or dtype object")
    return op("to.dtype")(self, target, **options)  # type: ignore[no-any-return]


type_.__name__ = type_.__qualname__ = "type"


def new_tensor(
    self: Tensor, *args: Any, dtype: Any = None, device: Any = None,
    requires_grad: bool = False, layout: Any = None, pin_memory: bool = False,
) -> Tensor:  # fmt: skip
    """``x.new_tensor(data, *, dtype=None, device=None, requires_grad=False)``: a new tensor
    holding a copy of ``data``, with ``x``'s dtype and device unless given. A tensor ``data``
    is copied without its history, with torch's warning.

    >>> import tensordispatch as td
    >>> td.ones(1, dtype=td.int32).new_tensor([1.7, 2.0])
    tensor([1, 2], dtype=tensordispatch.int32)
    """
    if not args:
        raise TypeError('new_tensor() missing 1 required positional arguments: "data"')
    if len(args) > 1:
        raise TypeError(f"new_tensor() takes 1 positional argument but {len(args)} were given")
    data = args[0]
    dtype = self.dtype if dtype is None else dtype
    device = self.device if device is None else device
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use "
            "sourceTensor.detach().clone() or sourceTensor.detach().clone().requires_grad_(True), "
            "rather than tensor.new_tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
        result = op("_to_copy")(op("detach")(data), dtype=dtype, device=device)
    else:
        from tensordispatch.tensor import tensor

        result = tensor(data, dtype=dtype, device=device)
    if requires_grad:
        result.requires_grad_(True)
    return result  # type: ignore[no-any-return]
