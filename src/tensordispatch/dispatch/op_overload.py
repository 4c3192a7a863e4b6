"""OpOverload, OpOverloadPacket and the ``ops.<ns>`` namespaces: operators as Python objects.

Owns the user-facing handles of operators (torch.ops's shapes and names) and overload
resolution of packets. Must not hold dispatch state: an OpOverload reads its entry's
published caches (operator.py); registering goes through Library.

Note [One class per operator]
CPython looks ``__call__`` up on the type, so a per-instance entry function is impossible
and a generic ``__call__(self, *args, **kwargs)`` costs an argument tuple and dict per call.
Each operator therefore gets its own tiny subclass of OpOverload whose ``__call__`` is a
staticmethod: the generated entry with the schema's exact signature (calling.py). The
class attribute is replaced when the schema is def'd or dropped. ``isinstance(x,
OpOverload)`` holds for all of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from tensordispatch.dispatch.convert import python_type_name
from tensordispatch.dispatch.errors import ArgumentTypeError, NoMatchingOverloadError
from tensordispatch.dispatch.keyset import DispatchKeySet

if TYPE_CHECKING:
    from tensordispatch.dispatch.dispatcher import Dispatcher
    from tensordispatch.dispatch.operator import OperatorEntry

    # `import tensordispatch` loads no schema module (issue 4): types are named in
    # annotations here, and the functions testing them import them (first def).
    from tensordispatch.schema.model import FunctionSchema
    from tensordispatch.schema.types import Type

__all__ = [
    "OpNamespace",
    "OpOverload",
    "OpOverloadPacket",
    "make_overload_class",
    "make_packet",
    "redispatch",
    "refresh_packet",
]


class OpOverload:
    """One overload of an operator: callable, redispatchable, introspectable.

    >>> from tensordispatch.library import Library
    >>> lib = Library("doc_opov", "DEF")
    >>> lib.define("f(Tensor x) -> Tensor")
    'f'
    >>> op = ops_namespace("doc_opov").f.default
    >>> op, op.name(), str(op._schema)
    (<OpOverload(op='doc_opov.f', overload='default')>, 'doc_opov::f', 'doc_opov::f(Tensor x) -> Tensor')
    >>> lib._destroy()
    """

    __slots__ = ("_entry",)

    def __init__(self, entry: OperatorEntry) -> None:
        self._entry = entry

    @property
    def _schema(self) -> FunctionSchema:
        schema = self._entry.schema
        if schema is None:
            from tensordispatch.dispatch.errors import SchemaNotFoundError

            raise SchemaNotFoundError(
                f"Could not find schema for {self._entry.qualified_name}.{self._entry.overload}"
            )
        return schema

    @property
    def schema(self) -> FunctionSchema:
        """The operator's FunctionSchema."""
        return self._schema

    def name(self) -> str:
        """``ns::name[.overload]``, as torch's ``OpOverload.name()``."""
        return self._entry.qualified_overload_name

    @property
    def namespace(self) -> str:
        """The operator's namespace."""
        return self._entry.qualified_name.split("::")[0]

    @property
    def _opname(self) -> str:
        return self._entry.qualified_name.split("::")[1]

    @property
    def _overloadname(self) -> str:
        return self._entry.overload or "default"

    @property
    def __name__(self) -> str:
        return f"{self._opname}.{self._overloadname}"

    @property
    def tags(self) -> list[Any]:
        """The tags given to ``define``."""
        return list(self._entry.tags)

    @property
    def overloadpacket(self) -> OpOverloadPacket:
        """The packet holding every overload of this operator name."""
        return _registry().packet(self._entry.qualified_name) or OpOverloadPacket(
            self._entry.qualified_name
        )

    def redispatch(self, keyset: DispatchKeySet | int, *args: Any, **kwargs: Any) -> Any:
        """Run the kernel of ``keyset``'s highest key with ``keyset`` unchanged (spec 10.2):
        no thread-local sets, no fallthrough masks. Callers mask out their own key first
        (``keyset & full_after(MyKey)``)."""
        raw = keyset if type(keyset) is int else keyset.raw  # type: ignore[union-attr]
        state = self._entry.state
        try:
            entry = state.redispatch_cache[raw]
        except KeyError:
            entry = state.redispatch_miss(raw)
        return entry(*args, **kwargs)

    def _call_boxed(self, stack: list[Any]) -> Any:
        """Call with a boxed stack (every argument in schema order, defaults filled in)."""
        facts = self._entry.facts
        if facts is None:
            return self(*stack)
        args, kwargs = facts.unbox(stack)
        return self(*args, **kwargs)

    def _redispatch_boxed(self, keyset: DispatchKeySet | int, stack: list[Any]) -> Any:
        """``redispatch`` with a boxed stack."""
        facts = self._entry.facts
        if facts is None:
            return self.redispatch(keyset, *stack)
        args, kwargs = facts.unbox(stack)
        return self.redispatch(keyset, *args, **kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:  # replaced per class
        return self._entry.entry_function(*args, **kwargs)

    def __repr__(self) -> str:
        return (
            f"<OpOverload(op='{self.namespace}.{self._opname}', overload='{self._overloadname}')>"
        )

    def __str__(self) -> str:
        return f"{self.namespace}.{self._opname}.{self._overloadname}"

    def __hash__(self) -> int:
        return id(self._entry)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OpOverload) and other._entry is self._entry


def redispatch(op: OpOverload, keyset: DispatchKeySet | int, *args: Any, **kwargs: Any) -> Any:
    """``op.redispatch(keyset, *args, **kwargs)`` as a function (spec 10.2): run the stored
    kernel of ``keyset``'s highest key with ``keyset`` unchanged. To continue strictly
    below your own key ``K``, pass ``keyset & full_after(K)``."""
    return op.redispatch(keyset, *args, **kwargs)


def make_overload_class(entry: OperatorEntry) -> type[OpOverload]:
    """A fresh OpOverload subclass for one operator (Note [One class per operator])."""
    return type("OpOverload", (OpOverload,), {"__slots__": (), "__module__": __name__})


def make_packet(qualified: str) -> OpOverloadPacket:
    """The packet of one operator name, with its own class (Note [One class per operator])."""
    cls: type[OpOverloadPacket] = type(
        "OpOverloadPacket", (OpOverloadPacket,), {"__slots__": (), "__module__": __name__}
    )
    return cls(qualified)


def refresh_packet(packet: OpOverloadPacket, entries: list[OperatorEntry]) -> None:
    """Point the packet's ``__call__`` at its only overload's entry (no resolution cost), or
    at overload resolution when there are several."""
    cls = type(packet)
    if len(entries) == 1:
        cls.__call__ = staticmethod(entries[0].entry_function)  # type: ignore[method-assign]
    else:
        cls.__call__ = OpOverloadPacket._resolve_and_call  # type: ignore[method-assign]


def _registry() -> Dispatcher:
    from tensordispatch.dispatch import dispatcher

    return dispatcher.DISPATCHER


# schema/types.py, bound at the first overload resolution (not imported here at module level:
# `import tensordispatch` loads no schema module, issue 4; an import statement inside
# _tensor_ok would cost ~1 us a call on the packet's call path).
_types: Any = None


def _schema_types() -> Any:
    global _types
    from tensordispatch.schema import types

    _types = types
    return types


def _tensor_ok(t: Type, value: Any) -> bool:
    """Whether ``value`` can be passed for a tensor-bearing type or ``Scalar`` (the types
    convert.py leaves to the tensor layer are taken as they come)."""
    types = _types or _schema_types()
    if isinstance(t, types.OptionalType):
        return value is None or _tensor_ok(t.elem, value)
    if isinstance(t, types.ListType):
        if not t.is_tensor_like():
            return True
        return isinstance(value, (list, tuple)) and all(_tensor_ok(t.elem, v) for v in value)
    name = str(t) if isinstance(t, types.BaseType) else ""
    if name == "Tensor":
        return isinstance(getattr(value, "_key_set", None), int)
    if name == "Scalar":
        return isinstance(value, (int, float, complex))
    return True


def _arity(entry: OperatorEntry, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """Why the call's argument count or names cannot bind the schema (torch's wording)."""
    schema = entry.schema
    assert schema is not None  # packets list def'd overloads only
    arguments = schema.arguments
    npos = sum(1 for a in arguments if not a.kwarg_only)
    given = len(args) + len(kwargs)
    if given > len(arguments):
        return f"expected at most {len(arguments)} argument(s) but received {given} argument(s)"
    if len(args) > npos:
        return f"takes {npos} positional argument(s) but {len(args)} was/were given"
    names = [a.name for a in arguments]
    for k in kwargs:
        if k not in names:
            return f"got an unexpected keyword argument '{k}'"
        if names.index(k) < len(args):
            return f"got multiple values for argument '{k}'"
    for i, a in enumerate(arguments):
        if i >= len(args) and a.name not in kwargs and a.default is None:
            return f"is missing value for argument '{a.name}'"
    return None


def _mismatch(entry: OperatorEntry, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """Why a call cannot bind ``entry``'s schema, in torch's words (None if it can)."""
    schema = entry.schema
    assert schema is not None  # packets list def'd overloads only
    op_name = str(schema).split("(")[0].split(".")[0]
    why = _arity(entry, args, kwargs)
    if why:
        return f"{op_name}() {why}. Declaration: {schema}"
    checks = {c.index: c for c in entry.facts.checks} if entry.facts else {}
    for i, a in enumerate(schema.arguments):
        if i < len(args):
            value = args[i]
        elif a.name in kwargs:
            value = kwargs[a.name]
        else:
            continue
        check = checks.get(i)
        if check is not None:
            try:
                check.convert(value)
            except ArgumentTypeError as e:
                return str(e)
        elif not _tensor_ok(a.type, value):
            return "\n".join(
                [
                    " ".join(
                        [
                            f"{op_name}() Expected a value of type '{python_type_name(a.type)}'",
                            f"for argument '{a.name}' but instead found type",
                            f"'{type(value).__name__}'.",
                        ]
                    ),
                    f"Position: {i}",
                    f"Value: {value!r}",
                    f"Declaration: {schema}",
                ]
            )
    return None


class OpOverloadPacket:
    """Every overload of one operator name; calling it picks the first overload, in
    definition order, whose schema accepts the arguments.

    >>> from tensordispatch.library import Library
    >>> lib = Library("doc_packet", "DEF")
    >>> lib.define("f(Tensor x) -> Tensor"), lib.define("f.int(int n) -> int")
    ('f', 'f')
    >>> ops_namespace("doc_packet").f.overloads()
    ['default', 'int']
    >>> lib._destroy()
    """

    __slots__ = ("_qualified_op_name",)

    def __init__(self, qualified_name: str) -> None:
        self._qualified_op_name = qualified_name

    @property
    def __name__(self) -> str:
        return self._qualified_op_name.split("::")[1]

    def _entries(self) -> list[OperatorEntry]:
        return _registry().overloads_of(self._qualified_op_name)

    def overloads(self) -> list[str]:
        """The overload names ('default' for the empty one), in definition order."""
        return [e.overload or "default" for e in self._entries()]

    def __getattr__(self, name: str) -> OpOverload:
        if name.startswith("__"):
            raise AttributeError(name)
        for e in self._entries():
            if (e.overload or "default") == name:
                return e.overload_object
        raise AttributeError(
            " ".join(
                [
                    f"The underlying op of '{self._qualified_op_name.replace('::', '.')}' has no",
                    f"overload name '{name}'",
                ]
            )
        )

    def __iter__(self) -> Iterator[str]:
        return iter(self.overloads())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:  # replaced per packet
        return self._resolve_and_call(*args, **kwargs)

    def _resolve_and_call(self, *args: Any, **kwargs: Any) -> Any:
        """Run the first overload, in definition order, that accepts the arguments (torch's
        rule: arguments convert as for a direct call, so a bool passes for an int)."""
        tried = []
        entries = self._entries()
        for e in entries:
            why = _mismatch(e, args, kwargs)
            if why is None:
                return e.overload_object(*args, **kwargs)
            tried.append(why)
        ns, name = self._qualified_op_name.split("::")
        example = entries[0].overload or "default" if entries else "default"
        raise NoMatchingOverloadError(
            "\n\n".join(
                [
                    " ".join(
                        [
                            f"{self._qualified_op_name}: no overload accepts the given",
                            f"arguments; tried {len(tried)}, in definition order:",
                        ]
                    ),
                    *tried,
                    " ".join(
                        [
                            "Pass arguments matching one schema, or call an overload directly",
                            f"(e.g. ops.{ns}.{name}.{example}).",
                        ]
                    ),
                ]
            )
        )

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{self._qualified_op_name.replace('::', '.')}')>"

    def __str__(self) -> str:
        return self._qualified_op_name.replace("::", ".")

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, OpOverloadPacket)
            and other._qualified_op_name == self._qualified_op_name
        )

    def __hash__(self) -> int:
        return hash(self._qualified_op_name)


class OpNamespace:
    """``ops.<ns>``: attribute access yields the namespace's operator packets."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __getattr__(self, op: str) -> OpOverloadPacket:
        if op == "name":  # the slot is unset (a half-built copy): never recurse
            raise AttributeError(op)
        registry = _registry()
        qualified = f"{self.name}::{op}"
        if op.startswith("__") and not registry.defines(qualified):
            # protocol probes (copy, pickle, ...) fail fast; dunder operators such as
            # aten::__lshift__ resolve as in torch
            raise AttributeError(op)
        packet = registry.packet(qualified)
        if packet is None:
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{op}'")
        return packet

    def __repr__(self) -> str:
        return f"<OpNamespace '{self.name}'>"


def ops_namespace(name: str) -> OpNamespace:
    """``ops.<name>`` (what ``tensordispatch.ops.<name>`` returns)."""
    return OpNamespace(name)
