"""The schema data model: AliasInfo, Argument, Return, operator names and FunctionSchema.

Everything is an immutable value that prints back to the text it was parsed from. Arguments
are kept flat in declaration order with a ``kwarg_only`` flag each (as torch's own
FunctionSchema does); torchgen's partitions (self, out, TensorOptions, ...) are derived views.

Note [Precomputed schema facts]
A FunctionSchema computes, once, in ``__post_init__``, where its partitions start and its
SchemaKind, and checks the invariants of spec 1.9 there. So a schema object that exists is
valid, and ``kind()``, ``out``, ``self_arg`` cost a slice or an attribute read. The printed
text, the boxing facts and the default ``signature()`` are filled in lazily into private
slots that take no part in equality or hashing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tensordispatch.schema.defaults import default_value
from tensordispatch.schema.errors import SchemaError
from tensordispatch.schema.invariants import Layout, SchemaKind, analyse, is_written
from tensordispatch.schema.types import Type

if TYPE_CHECKING:
    from tensordispatch.schema.boxing import BoxingInfo

_ALIAS_LETTER = re.compile(r"[a-z]")


@dataclass(frozen=True, slots=True)
class AliasInfo:
    """An alias annotation such as ``a``, ``a!``, ``a|b``, ``a -> *`` or ``a! -> a|b``.

    ``after_set`` is empty when no ``->`` is written (torch then reports the before set).

    >>> info = AliasInfo.parse("a! -> a|b")
    >>> info.before_set, info.after_set, info.is_write, str(info)
    (('a',), ('a', 'b'), True, 'a! -> a|b')
    """

    before_set: tuple[str, ...]
    after_set: tuple[str, ...] = ()
    is_write: bool = False

    def __post_init__(self) -> None:
        ok = bool(self.before_set) and all(
            _ALIAS_LETTER.fullmatch(x) is not None for x in self.before_set
        )
        ok = ok and (
            self.after_set == ("*",)
            or all(_ALIAS_LETTER.fullmatch(x) is not None for x in self.after_set)
        )
        if not ok:
            raise SchemaError(
                "alias sets are single lowercase letters, and the after set may be ('*',)",
                repr((self.before_set, self.after_set)),
                what="alias annotation",
            )
        if self.is_write and len(self.before_set) > 1:
            raise SchemaError(
                f"alias set larger than 1 is not mutable, got {self} instead.",
                str(self),
                what="alias annotation",
            )
        if len(self.before_set) > 1 and len(self.after_set) > 1:
            raise SchemaError(
                f"before alias set and after alias set cannot be larger than 1 at the same time, got {self} instead.",
                str(self),
                what="alias annotation",
            )

    @staticmethod
    def parse(text: str) -> AliasInfo:
        """Parse the text between the parentheses of ``Tensor(...)``."""
        from tensordispatch.schema.parse import parse_alias_info

        return parse_alias_info(text)

    @property
    def alias_set(self) -> tuple[str, ...]:
        """torchgen's name for ``before_set``."""
        return self.before_set

    @property
    def alias_set_after(self) -> tuple[str, ...]:
        """torchgen's name for ``after_set``."""
        return self.after_set

    @property
    def is_wildcard_after(self) -> bool:
        """True for ``(a -> *)``: the input's aliases escape into the wildcard set."""
        return "*" in self.after_set

    def __str__(self) -> str:
        text = "|".join(self.before_set)
        if self.is_write:
            text += "!"
        if self.after_set:
            text += " -> " + "|".join(self.after_set)
        return text


def _annotated_type(t: Type, alias_info: AliasInfo | None) -> str:
    text = str(t)
    if alias_info is None:
        return text
    return f"Tensor({alias_info}){text[6:]}"


def _check_annotated(t: Type, alias_info: AliasInfo | None, subject: str) -> None:
    if alias_info is not None and str(t) not in ("Tensor", "Tensor?", "Tensor[]"):
        raise SchemaError(
            f"alias annotation ({alias_info}) on non-Tensor type {t} of {subject}; annotations attach only to Tensor, Tensor? and Tensor[]",
            f"{t}({alias_info})",
            what="type",
        )


@dataclass(frozen=True, slots=True)
class Argument:
    """One schema argument: ``TYPE[(ALIAS)] NAME[=DEFAULT]``, keyword-only or not.

    ``default`` is the source text of the default; ``default_value`` its Python value.

    >>> arg = Argument.parse("int[2] stride=1")
    >>> arg.name, str(arg.type), arg.default, arg.default_value
    ('stride', 'int[2]', '1', [1, 1])
    """

    name: str
    type: Type
    default: str | None = None
    kwarg_only: bool = False
    alias_info: AliasInfo | None = None

    def __post_init__(self) -> None:
        if self.alias_info is not None:
            _check_annotated(self.type, self.alias_info, f"argument '{self.name}'")

    @staticmethod
    def parse(text: str, kwarg_only: bool = False) -> Argument:
        """Parse one argument (the keyword-only flag comes from the ``*`` in a schema)."""
        from tensordispatch.schema.parse import parse_argument

        return parse_argument(text, kwarg_only)

    @property
    def annotation(self) -> AliasInfo | None:
        """torchgen's name for ``alias_info``."""
        return self.alias_info

    @property
    def is_write(self) -> bool:
        """True if the argument is written to (``Tensor(a!)``)."""
        return self.alias_info is not None and self.alias_info.is_write

    @property
    def default_value(self) -> object:
        """The default as the Python value torch's schema parser reports (None if absent)."""
        return default_value(self.default, self.type)

    def __str__(self) -> str:
        text = f"{_annotated_type(self.type, self.alias_info)} {self.name}"
        return text if self.default is None else f"{text}={self.default}"


@dataclass(frozen=True, slots=True)
class Return:
    """One return: ``TYPE[(ALIAS)] [NAME]``.

    >>> r = Return.parse("Tensor(a!) values")
    >>> r.name, str(r.type), str(r.alias_info)
    ('values', 'Tensor', 'a!')
    """

    name: str | None
    type: Type
    alias_info: AliasInfo | None = None

    def __post_init__(self) -> None:
        if self.alias_info is not None:
            _check_annotated(self.type, self.alias_info, f"return '{self.name}'")
            if self.name is None and self.alias_info.after_set:
                raise SchemaError(
                    f"an unnamed return cannot have an alias after-set (Tensor({self.alias_info})); name the return or drop the '->' part",
                    str(self),
                    what="return",
                )

    @staticmethod
    def parse(text: str) -> Return:
        """Parse one return declaration."""
        from tensordispatch.schema.parse import parse_return

        return parse_return(text)

    @property
    def annotation(self) -> AliasInfo | None:
        """torchgen's name for ``alias_info``."""
        return self.alias_info

    @property
    def is_write(self) -> bool:
        """True if the return is a written alias of an input (``Tensor(a!)``)."""
        return self.alias_info is not None and self.alias_info.is_write

    def __str__(self) -> str:
        text = _annotated_type(self.type, self.alias_info)
        return text if self.name is None else f"{text} {self.name}"


@dataclass(frozen=True, slots=True)
class BaseOperatorName:
    """An operator name without overload: ``add``, ``add_`` (inplace), ``__iand__``, ``ns::op``.

    >>> n = BaseOperatorName.parse("__iand__")
    >>> n.base, n.inplace, n.dunder_method, str(n)
    ('and', True, True, '__iand__')
    """

    base: str
    inplace: bool
    dunder_method: bool
    functional_overload: bool = False
    namespace: str | None = None

    @staticmethod
    def parse(text: str) -> BaseOperatorName:
        """Parse a base name (optionally ``ns::``-qualified)."""
        from tensordispatch.schema.parse import parse_operator_name

        name = parse_operator_name(text)
        if name.overload_name:
            raise SchemaError(
                "a base operator name has no overload name",
                text,
                text.find(".") + 1,
                "operator name",
            )
        return name.name

    def __str__(self) -> str:
        prefix = f"{self.namespace}::" if self.namespace else ""
        if self.dunder_method:
            return f"{prefix}__{'i' if self.inplace else ''}{self.base}__"
        suffix = "_" if self.inplace else "_functional" if self.functional_overload else ""
        return f"{prefix}{self.base}{suffix}"


@dataclass(frozen=True, slots=True)
class OperatorName:
    """A base operator name plus an overload name (empty for the default overload).

    >>> str(OperatorName.parse("myns::add_.Tensor"))
    'myns::add_.Tensor'
    >>> OperatorName.parse("add.out").unambiguous_name()
    'add_out'
    """

    name: BaseOperatorName
    overload_name: str = ""

    @staticmethod
    def parse(text: str) -> OperatorName:
        """Parse ``[ns::]name[.overload]``."""
        from tensordispatch.schema.parse import parse_operator_name

        return parse_operator_name(text)

    def __str__(self) -> str:
        return f"{self.name}.{self.overload_name}" if self.overload_name else str(self.name)

    def unambiguous_name(self) -> str:
        """``name_overload`` (or ``name``): unique per overload, used for kernel names."""
        return f"{self.name}_{self.overload_name}" if self.overload_name else str(self.name)

    def remove_inplace(self) -> OperatorName:
        """The same name without the inplace marker (namespace and functional flag dropped)."""
        base = BaseOperatorName(self.name.base, False, self.name.dunder_method)
        return OperatorName(base, self.overload_name)

    def with_overload(self, overload: str) -> OperatorName:
        """The non-inplace name with another overload name (as torchgen does)."""
        return OperatorName(
            BaseOperatorName(self.name.base, False, self.name.dunder_method), overload
        )


@dataclass(frozen=True, slots=True)
class FunctionSchema:
    """An operator schema: ``[ns::]name[.overload](ARGS) -> RETURNS``.

    ``arguments`` is flat, in declaration order; each Argument says whether it is
    keyword-only. torchgen's partitions are derived properties.

    >>> s = FunctionSchema.parse(
    ...     "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)")
    >>> s.kind().name, [a.name for a in s.out], s.qualified_name, s.overload_name
    ('out', ['out'], 'aten::add', 'out')
    >>> str(s.signature())
    'add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor'
    """

    name: OperatorName
    arguments: tuple[Argument, ...]
    returns: tuple[Return, ...]
    _layout: Layout = field(init=False, repr=False, compare=False)
    _text: str | None = field(default=None, init=False, repr=False, compare=False)
    _boxing: BoxingInfo | None = field(default=None, init=False, repr=False, compare=False)
    _signature: FunctionSchema | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if type(self.arguments) is not tuple:
            object.__setattr__(self, "arguments", tuple(self.arguments))
        if type(self.returns) is not tuple:
            object.__setattr__(self, "returns", tuple(self.returns))
        object.__setattr__(self, "_layout", analyse(self))

    @staticmethod
    def parse(text: str) -> FunctionSchema:
        """Parse a schema; same as :func:`parse_schema`."""
        from tensordispatch.schema.parse import parse_schema

        return parse_schema(text)

    def __str__(self) -> str:
        text = self._text
        if text is None:
            parts: list[str] = []
            star = False
            for a in self.arguments:  # not self._layout: __post_init__ prints its errors
                if a.kwarg_only and not star:
                    parts.append("*")
                    star = True
                parts.append(str(a))
            if len(self.returns) == 1:
                rets = str(self.returns[0])
            else:
                rets = f"({', '.join(str(r) for r in self.returns)})"
            text = f"{self.name}({', '.join(parts)}) -> {rets}"
            object.__setattr__(self, "_text", text)
        return text

    # ----- names ---------------------------------------------------------------------------

    @property
    def qualified_name(self) -> str:
        """``ns::name`` with the namespace defaulting to ``aten`` (no overload)."""
        base = self.name.name
        return f"{base.namespace or 'aten'}::{_bare(base)}"

    @property
    def overload_name(self) -> str:
        """The overload name ('' for the default overload)."""
        return self.name.overload_name

    def with_name(self, name: OperatorName) -> FunctionSchema:
        """The same schema under another name (checked again)."""
        return FunctionSchema(name, self.arguments, self.returns)

    # ----- torchgen's argument partitions ---------------------------------------------------

    @property
    def positional(self) -> tuple[Argument, ...]:
        """Arguments before the ``*``."""
        return self.arguments[: self._layout.first_kwarg]

    flat_positional = positional

    @property
    def pre_self_positional(self) -> tuple[Argument, ...]:
        """Positional arguments before ``self`` (empty if there is no ``self``)."""
        return self.arguments[: max(self._layout.self_index, 0)]

    @property
    def self_arg(self) -> Argument | None:
        """The first positional argument named ``self``, if any."""
        i = self._layout.self_index
        return self.arguments[i] if i >= 0 else None

    @property
    def post_self_positional(self) -> tuple[Argument, ...]:
        """Positional arguments after ``self`` (all positionals if there is no ``self``)."""
        return self.arguments[self._layout.self_index + 1 : self._layout.first_kwarg]

    @property
    def kwarg_only(self) -> tuple[Argument, ...]:
        """Keyword-only arguments that are not out arguments (TensorOptions included)."""
        return self.arguments[self._layout.first_kwarg : self._layout.first_out]

    flat_kwarg_only = kwarg_only

    @property
    def tensor_options(self) -> tuple[Argument, ...] | None:
        """The dtype, layout, device, pin_memory quadruple, if the schema has one."""
        i = self._layout.tensor_options
        return self.arguments[i : i + 4] if i >= 0 else None

    @property
    def pre_tensor_options_kwarg_only(self) -> tuple[Argument, ...]:
        """Keyword-only non-out arguments before the TensorOptions (all of them if none)."""
        lay = self._layout
        end = lay.tensor_options if lay.tensor_options >= 0 else lay.first_out
        return self.arguments[lay.first_kwarg : end]

    @property
    def post_tensor_options_kwarg_only(self) -> tuple[Argument, ...]:
        """Keyword-only non-out arguments after the TensorOptions."""
        lay = self._layout
        if lay.tensor_options < 0:
            return ()
        return self.arguments[lay.tensor_options + 4 : lay.first_out]

    @property
    def out(self) -> tuple[Argument, ...]:
        """The out arguments: keyword-only, write-annotated, at the end."""
        return self.arguments[self._layout.first_out :]

    @property
    def non_out(self) -> tuple[Argument, ...]:
        """Every argument except the out arguments."""
        return self.arguments[: self._layout.first_out]

    flat_non_out = non_out

    @property
    def flat_all(self) -> tuple[Argument, ...]:
        """Every argument in schema order (the declaration order)."""
        return self.arguments

    def schema_order_arguments(self) -> Iterator[Argument]:
        """Iterate positional, keyword-only, then out arguments (the declaration order)."""
        return iter(self.arguments)

    # ----- classification --------------------------------------------------------------------

    def kind(self) -> SchemaKind:
        """functional, inplace, out, mutable or scratch, by torchgen's rules and order.

        >>> FunctionSchema.parse("__iand__.Scalar(Tensor(a!) self, Scalar b) -> Tensor(a!)").kind()
        <SchemaKind.inplace: 2>
        >>> FunctionSchema.parse("set_data(Tensor(a!) self, Tensor new_data) -> ()").kind()
        <SchemaKind.functional: 1>
        """
        return self._layout.kind

    def is_out_fn(self) -> bool:
        """True if some keyword-only argument is written to (an out= variant)."""
        return self._layout.first_out < len(self.arguments)

    def is_functional_fn(self) -> bool:
        """True if the overload name contains ``functional``."""
        return "functional" in self.name.overload_name

    @property
    def is_mutable(self) -> bool:
        """True if any argument is written to (torch's FunctionSchema.is_mutable)."""
        return any(is_written(a) for a in self.arguments)

    def modifies_arguments(self) -> bool:
        """True for inplace, out and mutable schemas."""
        return self._layout.kind in (SchemaKind.inplace, SchemaKind.out, SchemaKind.mutable)

    @property
    def is_view(self) -> bool:
        """True if a return aliases an input without writing it, or an input's aliases
        escape into the wildcard set (``Tensor(a -> *)``): torchgen's view-op test minus
        the ``inplace_view`` tag, which lives on the yaml entry, not the schema.

        >>> FunctionSchema.parse("t(Tensor(a) self) -> Tensor(a)").is_view
        True
        >>> FunctionSchema.parse("t_(Tensor(a!) self) -> Tensor(a!)").is_view
        False
        """
        for r in self.returns:
            if r.alias_info is not None and not r.alias_info.is_write:
                return True
        return any(
            a.alias_info is not None and "*" in a.alias_info.after_set for a in self.arguments
        )

    def mutated_arguments(self) -> tuple[Argument, ...]:
        """The write-annotated arguments, in order."""
        return tuple(a for a in self.arguments if is_written(a))

    def mutable_arg_names(self) -> list[str]:
        """Names of the write-annotated arguments, in order."""
        return [a.name for a in self.arguments if is_written(a)]

    def has_symint(self) -> bool:
        """True if a non-out argument is SymInt-like."""
        return any(a.type.is_symint_like() for a in self.non_out)

    def has_tensor_arg(self) -> bool:
        """True if a non-out argument is Tensor-like."""
        return any(a.type.is_tensor_like() for a in self.non_out)

    def has_generator_arg(self) -> bool:
        """True if a non-out argument is Generator-like."""
        return any(a.type.is_generator_like() for a in self.non_out)

    def returns_are_aliased(self) -> bool:
        """True if the returns are written aliases of inputs."""
        return any(is_written(r) for r in self.returns)

    def aliased_return_names(self) -> list[str | None]:
        """Per return, the name of the one argument with the same alias annotation, or None.

        >>> FunctionSchema.parse(
        ...     "f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)").aliased_return_names()
        ['out']
        """
        names: list[str | None] = []
        for r in self.returns:
            hits = [
                a.name
                for a in self.arguments
                if a.alias_info is not None and a.alias_info == r.alias_info
            ]
            if len(hits) > 1:
                raise SchemaError(
                    f"Found a return ({r.name})that aliases multiple inputs ({', '.join(hits)})",
                    str(self),
                )
            names.append(hits[0] if hits else None)
        return names

    def signature(
        self,
        *,
        strip_default: bool = False,
        strip_view: bool = False,
        strip_view_copy_name: bool = False,
        keep_return_names: bool = False,
    ) -> FunctionSchema:
        """The grouping key shared by the functional, inplace, out and mutable variants
        (torchgen's FunctionSchema.signature; ``strip_view`` is ``strip_view_copy_name``).

        >>> inplace = FunctionSchema.parse("add_.Scalar(Tensor(a!) self, Scalar b) -> Tensor(a!)")
        >>> str(inplace.signature())
        'add(Tensor self, Scalar b) -> Tensor'
        >>> copy = FunctionSchema.parse("t_copy.int(Tensor self) -> Tensor")
        >>> str(copy.signature(strip_view=True))
        't(Tensor self) -> Tensor'
        """
        from tensordispatch.schema.signature import signature

        strip_view = strip_view or strip_view_copy_name
        if strip_default or strip_view or keep_return_names:
            return signature(self, strip_default, strip_view, keep_return_names)
        sig = self._signature  # the grouping key is asked for often: keep it
        if sig is None:
            sig = signature(self, False, False, False)
            object.__setattr__(self, "_signature", sig)
        return sig

    def view_signature(self) -> FunctionSchema:
        """``signature(strip_view=True)``: pairs a view with its ``_copy`` variant."""
        return self.signature(strip_view=True)

    @property
    def boxing_info(self) -> BoxingInfo:
        """What a boxed kernel needs from this schema, computed once (see boxing.py)."""
        info = self._boxing
        if info is None:
            from tensordispatch.schema.boxing import compute_boxing_info

            info = compute_boxing_info(self)
            object.__setattr__(self, "_boxing", info)
        return info


def _bare(name: BaseOperatorName) -> str:
    text = str(name)
    return text[len(name.namespace) + 2 :] if name.namespace else text


def trusted_schema(
    name: OperatorName,
    arguments: tuple[Argument, ...],
    returns: tuple[Return, ...],
    layout: Layout,
) -> FunctionSchema:
    """Build a schema whose layout the caller already knows and whose invariants hold by
    construction (used by signature(), whose results carry no annotations). Internal."""
    schema: FunctionSchema = object.__new__(FunctionSchema)
    setattr_ = object.__setattr__
    setattr_(schema, "name", name)
    setattr_(schema, "arguments", arguments)
    setattr_(schema, "returns", returns)
    setattr_(schema, "_layout", layout)
    setattr_(schema, "_text", None)
    setattr_(schema, "_boxing", None)
    setattr_(schema, "_signature", None)
    return schema
