"""Checking and converting the non-tensor arguments of a call, as torch's Python binding does.

Owns the per-type acceptance rules for ``int``/``SymInt``, ``float``, ``bool``, ``str``,
their lists (``int[]``, ``int[N]``, ``float[]``, ``bool[]``, ``int?[]``) and optionals,
and torch's error text for a value that cannot be taken. Must not know about dispatch:
calling.py weaves the checks into the generated entries, op_overload.py uses them to
resolve packets.

Note [Argument conversion]
torch 2.13, calling an OpOverload from Python (measured, scalars shown; one-element
tensors also convert, which needs the tensor layer and is not modelled here):

=========  ==============================================  ===============================
type       converts                                        rejects (RuntimeError)
=========  ==============================================  ===============================
int        bool -> int, integer-likes (``__index__``)      float, str, None, list, complex
float      int/bool -> float, reals (numpy)                str, None, list, complex
bool       int/float/complex/None -> bool (None -> False)  str, list, tuple
str        -                                               everything but str
int[]      tuple -> list, bool items -> int                a scalar, float items, None
int[N]     as int[], and one int -> [v] * N                float
float[]    int/bool items -> float                         a scalar, str items
=========  ==============================================  ===============================

Each checked argument gets a *fast test* (``type(v) is int``: the common, already-correct
case, a few ns inline in the generated entry) and a *converter* called only when the fast
test fails, which converts or raises ``ArgumentTypeError`` with torch's text. Lists have no
inline test: their items must be looked at, so the converter always runs. Types whose
values belong to the tensor layer (Scalar, ScalarType, Device, Layout, MemoryFormat,
Generator, ...) are not checked here.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tensordispatch.dispatch.errors import ArgumentTypeError
from tensordispatch.schema.model import Argument
from tensordispatch.schema.types import BaseType, ListType, OptionalType, Type

__all__ = ["ArgumentCheck", "argument_check", "python_type_name"]


class _Reject(Exception):
    """Internal: the value cannot be converted."""


def _int(v: Any) -> int:
    if type(v) is int:
        return v
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (float, complex, str)) or getattr(type(v), "__index__", None) is None:
        raise _Reject
    try:
        return int(v.__index__())
    except (TypeError, ValueError) as e:
        raise _Reject from e


def _float(v: Any) -> float:
    if type(v) is float:
        return v
    if isinstance(v, numbers.Real):
        return float(v)
    if isinstance(v, (str, complex)) or getattr(type(v), "__float__", None) is None:
        raise _Reject
    try:
        return float(v)
    except (TypeError, ValueError) as e:
        raise _Reject from e


def _bool(v: Any) -> bool:
    if v is None:
        return False
    if isinstance(v, numbers.Number):
        return bool(v)
    cls = type(v)
    if isinstance(v, (str, list, tuple, dict)) or (
        getattr(cls, "__index__", None) is None and getattr(cls, "__float__", None) is None
    ):
        raise _Reject
    try:
        return bool(v)
    except (TypeError, ValueError, RuntimeError) as e:
        raise _Reject from e


def _str(v: Any) -> str:
    if isinstance(v, str):
        return v
    raise _Reject


_SCALARS: dict[str, tuple[str, Callable[[Any], Any], str]] = {
    # schema type -> (inline fast test on ``{v}``, converter, torch's Python type name)
    "int": ("type({v}) is int", _int, "int"),
    "SymInt": ("type({v}) is int", _int, "int"),
    "float": ("type({v}) is float", _float, "float"),
    "bool": ("type({v}) is bool", _bool, "bool"),
    "str": ("type({v}) is str", _str, "str"),
}


def python_type_name(t: Type) -> str:
    """The Python-style name torch's argument errors use for a schema type.

    >>> from tensordispatch.schema.model import Argument
    >>> [python_type_name(Argument.parse(s).type) for s in ("SymInt[2] a", "float[]? b")]
    ['List[int]', 'Optional[List[float]]']
    """
    if isinstance(t, OptionalType):
        return f"Optional[{python_type_name(t.elem)}]"
    if isinstance(t, ListType):
        return f"List[{python_type_name(t.elem)}]"
    name = str(t)
    entry = _SCALARS.get(name)
    return entry[2] if entry else name


def _element(t: Type) -> Callable[[Any], Any] | None:
    if isinstance(t, OptionalType):
        inner = _element(t.elem)
        if inner is None or isinstance(t.elem, ListType):
            return None
        return lambda v: None if v is None else inner(v)
    if isinstance(t, BaseType) and str(t) in _SCALARS:
        return _SCALARS[str(t)][1]
    return None


def _converter(t: Type) -> tuple[str, Callable[[Any], Any]] | None:
    """(inline fast test, converter) of a type, or None when it is not checked here."""
    if isinstance(t, OptionalType):
        inner = _converter(t.elem)
        if inner is None:
            return None
        test, conv = inner
        return f"{{v}} is None or {test}", lambda v: None if v is None else conv(v)
    if isinstance(t, ListType):
        item = _element(t.elem)
        if item is None:
            return None
        size = t.size
        broadcast = size is not None and str(t.elem) in ("int", "SymInt")

        def convert_list(v: Any) -> list[Any]:
            if isinstance(v, (list, tuple)):
                return [item(x) for x in v]
            if broadcast and not isinstance(v, (float, str)):
                return [item(v)] * int(size or 0)
            raise _Reject

        return "False", convert_list
    if isinstance(t, BaseType) and str(t) in _SCALARS:
        test, conv, _ = _SCALARS[str(t)]
        return test, conv
    return None


@dataclass(frozen=True, slots=True)
class ArgumentCheck:
    """How one non-tensor argument is checked: its position, the inline fast test (a format
    string over ``{v}``) and the converter, which converts or raises ``ArgumentTypeError``.

    >>> from tensordispatch.schema import parse_schema
    >>> s = parse_schema("ns::f(Tensor x, int n) -> Tensor")
    >>> c = argument_check(s, 1)
    >>> c.test.format(v="n"), c.convert(True)
    ('type(n) is int', 1)
    """

    index: int
    test: str
    # a fresh closure per computation: facts computed twice from one schema stay equal
    convert: Callable[[Any], Any] = field(compare=False)
    item_fails: str = ""  # lists: when an item (``{v}``) is not already of the right type


def argument_check(schema: Any, index: int) -> ArgumentCheck | None:
    """The check of argument ``index`` of ``schema`` (None when its type is not checked)."""
    arg: Argument = schema.arguments[index]
    found = _converter(arg.type)
    if found is None:
        return None
    test, conv = found
    op_name = str(schema).split("(")[0].split(".")[0]
    declaration = str(schema)
    want = python_type_name(arg.type)
    items = _list_item_class(arg.type)
    if items is not None:
        cls, none_ok = items

        def convert_list(value: Any) -> Any:
            # the common case, a list already of the right items, is passed on as it is
            if type(value) is list:
                for x in value:
                    if type(x) is not cls and not (none_ok and x is None):
                        break
                else:
                    return value
            return convert(value)

    def convert(value: Any) -> Any:
        try:
            return conv(value)
        except _Reject:
            raise ArgumentTypeError(
                "\n".join(
                    [
                        " ".join(
                            [
                                f"{op_name}() Expected a value of type '{want}' for argument",
                                f"'{arg.name}' but instead found type",
                                f"'{type(value).__name__}'.",
                            ]
                        ),
                        f"Position: {index}",
                        f"Value: {value!r}",
                        f"Declaration: {declaration}",
                    ]
                )
            ) from None

    if items is None:
        return ArgumentCheck(index, test, convert)
    fails = f"type({{v}}) is not {items[0].__name__}"
    if items[1]:
        fails = f"{{v}} is not None and {fails}"
    return ArgumentCheck(index, test, convert_list, fails)


def _list_item_class(t: Type) -> tuple[type, bool] | None:
    """(item class, None allowed) of a checked list type (or optional list), else None."""
    if isinstance(t, OptionalType):
        t = t.elem
    if not isinstance(t, ListType):
        return None
    elem, none_ok = t.elem, False
    if isinstance(elem, OptionalType):
        elem, none_ok = elem.elem, True
    cls = {"int": int, "SymInt": int, "float": float, "bool": bool, "str": str}.get(str(elem))
    return None if cls is None else (cls, none_ok)
