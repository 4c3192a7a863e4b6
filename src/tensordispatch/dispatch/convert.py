"""Checking and converting the non-tensor arguments of a call, as torch's Python binding does.

Owns the argument checks of ``int``/``SymInt``, ``float``, ``bool``, ``str``, ``Scalar``,
``ScalarType``, ``Layout``, ``MemoryFormat``, ``Device``, their lists (``int[]``,
``int[N]``, ``float[]``, ``bool[]``, ``int?[]``) and optionals,
and torch's error text for a value that cannot be taken. Must not know about dispatch:
calling.py weaves the checks into the generated entries, op_overload.py uses them to
resolve packets.

Note [Argument conversion]
torch 2.13, calling an OpOverload from Python (measured, scalars shown; the tensor layer's
types and one-element tensors: Note [Value types] in value_types.py):

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
inline test: their items must be looked at, so the converter always runs. Generator,
Stream, Storage, Dimname and the like are not checked.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import TYPE_CHECKING, Any

from tensordispatch.dispatch.errors import (
    ArgumentMismatch,
    ArgumentTypeError,
    BindingArgumentError,
)
from tensordispatch.dispatch.value_types import (
    Reject,
    UnknownCode,
    registered_class,
    value_converter,
    value_type_name,
)

if TYPE_CHECKING:
    # `import tensordispatch` loads no schema module (issue 4): types are named in
    # annotations here, and the functions testing them import them (first def).
    from tensordispatch.schema.model import Argument
    from tensordispatch.schema.types import Type

__all__ = [
    "VALUE_KINDS",
    "ArgumentCheck",
    "argument_check",
    "python_type_name",
    "register_binding_modules",
    "value_type_globals",
]


_Reject = Reject

# Note [Bindings take enums only as themselves]
# An OpOverload takes a dtype, layout or memory format for an int or a Scalar (as its code)
# and an int for one of them (Note [Value types]); torch's Python arg parser takes neither:
# ``t.pow(torch.float32)``, ``t.unsqueeze(torch.strided)``, ``torch.ones(2, dtype=6)`` are
# TypeErrors; the other way round, the binding takes a 0-dim tensor that does not require
# grad for a Scalar (``t.add(u, alpha=torch.tensor(2))``), the OpOverload does not. Our
# bindings run the entry's checks (no check of their own on the success path), so these
# converters, on their slow path only, look at who called the entry: a module registered as
# Python bindings (``register_binding_modules``) gets torch's binding behaviour (a rejection
# it words as torch's TypeError, the tensor's item); everybody else the OpOverload's.
# Frames walked: at most ``_CHECK_DEPTH`` from the converter up to the entry (its code is
# compiled under a ``<tensordispatch ...>`` name, calling.py, mode_entry.py), then past relay
# modules (lazy entry generation, deferred globals) to the caller.
_BINDINGS: set[str] = set()
_RELAYS: set[str] = {"tensordispatch.dispatch.operator"}
_CHECK_DEPTH = 5


def register_binding_modules(bindings: tuple[str, ...], relays: tuple[str, ...] = ()) -> None:
    """Declare the modules whose functions are Python bindings, and the modules that only
    relay a binding's call to an entry (Note [Bindings take enums only as themselves]).

    >>> register_binding_modules(("my_bindings",))
    >>> "my_bindings" in _BINDINGS
    True
    """
    _BINDINGS.update(bindings)
    _RELAYS.update(relays)


def _called_by_binding() -> bool:
    """Whether the entry whose check calls this was called by a Python binding."""
    frame: FrameType | None = sys._getframe(2)
    for _ in range(_CHECK_DEPTH):
        if frame is None or frame.f_code.co_filename.startswith("<tensordispatch "):
            break
        frame = frame.f_back
    else:
        return False
    frame = frame.f_back if frame is not None else None
    while frame is not None and frame.f_globals.get("__name__") in _RELAYS:
        frame = frame.f_back
    return frame is not None and frame.f_globals.get("__name__") in _BINDINGS


def _plain_zero_dim(v: Any) -> bool:
    """A 0-dim tensor that does not require grad: what torch's binding takes for a Scalar
    (as its ``item()``); its OpOverload takes no tensor for one."""
    if not isinstance(getattr(v, "_key_set", None), int):
        return False
    try:
        return bool(v.dim() == 0 and not v.requires_grad)
    except (AttributeError, TypeError, RuntimeError):  # a stand-in with a key set only
        return False


def _enum_classes() -> frozenset[type]:
    """The registered dtype, layout and memory format classes (read when a check is made, as
    ``value_type_globals``)."""
    found = (registered_class(k) for k in ("ScalarType", "Layout", "MemoryFormat"))
    return frozenset(c for c in found if c is not None)


def _no_enum(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``convert`` (a list's int items), refusing an enum object when a binding calls."""
    enums = _enum_classes()

    def number(v: Any) -> Any:
        if type(v) in enums and _called_by_binding():
            raise _Reject
        return convert(v)

    return number


_SCALARS: dict[str, tuple[str, Callable[[Any], Any], str]] = {
    # schema type -> (inline fast test on ``{v}``, converter, torch's Python type name);
    # ``_td_vt_<kind>`` is the class the tensor layer registered (Note [Value types])
    "int": ("type({v}) is int", value_converter("int"), "int"),
    "SymInt": ("type({v}) is int", value_converter("SymInt"), "int"),
    "float": ("type({v}) is float", value_converter("float"), "float"),
    "bool": ("type({v}) is bool", value_converter("bool"), "bool"),
    "str": ("type({v}) is str", value_converter("str"), "str"),
    "Scalar": ("type({v}) is float or type({v}) is int", value_converter("Scalar"), "number"),
    "ScalarType": ("type({v}) is _td_vt_ScalarType", value_converter("ScalarType"), "int"),
    "Layout": ("type({v}) is _td_vt_Layout", value_converter("Layout"), "int"),
    "MemoryFormat": ("type({v}) is _td_vt_MemoryFormat", value_converter("MemoryFormat"), "int"),
    "Device": ("type({v}) is _td_vt_Device", value_converter("Device"), "Device"),
}
# what a binding refuses of a (non-list) value of each type (Note [Bindings take enums only
# as themselves]): an enum object for a number, anything converted for an enum
_BINDING_RULES = {"int": "number", "SymInt": "number", "Scalar": "number",
                  "ScalarType": "enum", "Layout": "enum", "MemoryFormat": "enum"}  # fmt: skip
VALUE_KINDS = ("ScalarType", "Layout", "MemoryFormat", "Device")


class _NeverPassed:
    """Stands for a value class nobody registered: the inline test fails, the converter
    decides (Note [Value types])."""


def value_type_globals() -> dict[str, type]:
    """The ``_td_vt_<kind>`` globals the generated entries' inline tests read.

    >>> sorted(value_type_globals())
    ['_td_vt_Device', '_td_vt_Layout', '_td_vt_MemoryFormat', '_td_vt_ScalarType']
    """
    return {f"_td_vt_{k}": registered_class(k) or _NeverPassed for k in VALUE_KINDS}


def python_type_name(t: Type) -> str:
    """The Python-style name torch's argument errors use for a schema type.

    >>> from tensordispatch.schema.model import Argument
    >>> [python_type_name(Argument.parse(s).type) for s in ("SymInt[2] a", "float[]? b")]
    ['List[int]', 'Optional[List[float]]']
    """
    from tensordispatch.schema.types import ListType, OptionalType  # issue 4: lazy

    if isinstance(t, OptionalType):
        return f"Optional[{python_type_name(t.elem)}]"
    if isinstance(t, ListType):
        return f"List[{python_type_name(t.elem)}]"
    name = str(t)
    entry = _SCALARS.get(name)
    return entry[2] if entry else name


def _element(t: Type) -> Callable[[Any], Any] | None:
    from tensordispatch.schema.types import BaseType, ListType, OptionalType  # issue 4: lazy

    if isinstance(t, OptionalType):
        inner = _element(t.elem)
        if inner is None or isinstance(t.elem, ListType):
            return None
        return lambda v: None if v is None else inner(v)
    if isinstance(t, BaseType) and str(t) in _SCALARS:
        item = _SCALARS[str(t)][1]
        return _no_enum(item) if _BINDING_RULES.get(str(t)) == "number" else item
    return None


def _converter(t: Type) -> tuple[str, Callable[[Any], Any]] | None:
    """(inline fast test, converter) of a type, or None when it is not checked here."""
    from tensordispatch.schema.types import BaseType, ListType, OptionalType  # issue 4: lazy

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
    declaration = str(schema)
    operator = declaration.split("(")[0]
    want = python_type_name(arg.type)

    def rejected(value: Any, binding: bool = False) -> ArgumentTypeError:
        found = value_type_name(value)
        mismatch = ArgumentMismatch(
            operator, arg.name, index, want, str(arg.type), found, value, declaration
        )
        return BindingArgumentError(mismatch) if binding else ArgumentTypeError(mismatch)

    def unknown(e: UnknownCode) -> ArgumentTypeError:
        return _unknown_code_error(e, operator.split(".")[0], arg.name, index, declaration)

    convert = _checked(conv, arg.type, rejected, unknown)
    items = _list_item_class(arg.type)
    if items is None:
        return ArgumentCheck(index, test, convert)
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

    fails = f"type({{v}}) is not {cls.__name__}"
    if none_ok:
        fails = f"{{v}} is not None and {fails}"
    return ArgumentCheck(index, test, convert_list, fails)


def _checked(
    conv: Callable[[Any], Any],
    t: Type,
    rejected: Callable[[Any, bool], ArgumentTypeError],
    unknown: Callable[[UnknownCode], ArgumentTypeError],
) -> Callable[[Any], Any]:
    """A check's converter: ``conv`` raising ``rejected(value, by_binding_rule)`` (or
    ``unknown(e)``), with
    the binding rule of type ``t`` (Note [Bindings take enums only as themselves]); one
    variant per rule, so that a type without one pays nothing."""
    from tensordispatch.schema.types import OptionalType  # issue 4: lazy

    base = t.elem if isinstance(t, OptionalType) else t
    rule = _BINDING_RULES.get(str(base))
    enums, scalar = _enum_classes(), str(base) == "Scalar"

    def convert(value: Any) -> Any:
        try:
            return conv(value)
        except UnknownCode as e:
            raise unknown(e) from None
        except _Reject:
            raise rejected(value, False) from None

    def convert_number(value: Any) -> Any:
        if type(value) in enums and _called_by_binding():
            raise rejected(value, True)
        try:
            return conv(value)
        except UnknownCode as e:
            raise unknown(e) from None
        except _Reject:
            if scalar and _plain_zero_dim(value) and _called_by_binding():
                return value.item()
            raise rejected(value, False) from None

    def convert_enum(value: Any) -> Any:
        try:
            out = conv(value)
        except UnknownCode as e:
            raise unknown(e) from None
        except _Reject:
            raise rejected(value, False) from None
        if out is not value and _called_by_binding():
            raise rejected(value, True)
        return out

    return convert if rule is None else convert_number if rule == "number" else convert_enum


def _unknown_code_error(
    e: UnknownCode, op_name: str, name: str, index: int, declaration: str
) -> ArgumentTypeError:
    """An int-like naming an enum value of torch's that we do not have (no mismatch: the
    binding passes it on as it is)."""
    return ArgumentTypeError(
        "\n".join(
            [
                " ".join(
                    [
                        f"{op_name}(): {e.code} for argument '{name}' is torch's",
                        f"{e.kind} code of {e.torch_name or 'nothing'}, which",
                        f"tensordispatch does not have; pass one of its {e.kind} values",
                    ]
                ),
                f"Position: {index}",
                f"Declaration: {declaration}",
            ]
        )
    )


def _list_item_class(t: Type) -> tuple[type, bool] | None:
    """(item class, None allowed) of a checked list type (or optional list), else None."""
    from tensordispatch.schema.types import ListType, OptionalType  # issue 4: lazy

    if isinstance(t, OptionalType):
        t = t.elem
    if not isinstance(t, ListType):
        return None
    elem, none_ok = t.elem, False
    if isinstance(elem, OptionalType):
        elem, none_ok = elem.elem, True
    cls = {"int": int, "SymInt": int, "float": float, "bool": bool, "str": str}.get(str(elem))
    return None if cls is None else (cls, none_ok)
