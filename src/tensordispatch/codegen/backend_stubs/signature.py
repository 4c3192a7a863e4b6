"""The Python signature a backend kernel must have, derived from its operator's schema.

Owns: kernel names (torch's unambiguous operator name, `add_Tensor`, plus `_symint` for ops in
the yaml's `symint` list), parameter lists (schema order; keyword-only after `*` stays
keyword-only; a schema default means the kernel needs a default too, because the dispatcher
forwards only the arguments the caller gave), their annotations, and the comparison of an
actual parameter list against the expected one. Pure data: used both at generation time
(on parameters read from the backend's source with `ast`) and at registration time (on
`inspect.signature` of the kernel objects), so it must not import the dispatcher.

Note [Kernel signatures are dispatcher-shaped]
torch's external backends implement the dispatcher API (spec 5.4): every argument, out
arguments last, in schema order. Ours are the same with Python parameter kinds: schema
positional -> positional-or-keyword, schema keyword-only -> keyword-only. Names must match
the schema's, since callers may pass any argument by name.
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass

from tensordispatch.schema.model import Argument, FunctionSchema, Return
from tensordispatch.schema.types import BaseTy, BaseType, ListType, OptionalType, Type

__all__ = ["KernelParam", "KernelSignature", "annotation_of", "kernel_name", "parameter_problems"]

# Python names for schema base types in generated annotations (aliases defined in runtime.py).
_BASE_NAMES: dict[BaseTy, str] = {
    BaseTy.Tensor: "Tensor",
    BaseTy.int: "int",
    BaseTy.SymInt: "int",
    BaseTy.float: "float",
    BaseTy.bool: "bool",
    BaseTy.str: "str",
    BaseTy.Scalar: "Scalar",
    BaseTy.ScalarType: "ScalarType",
    BaseTy.Layout: "Layout",
    BaseTy.Device: "Device",
    BaseTy.DeviceIndex: "int",
    BaseTy.MemoryFormat: "MemoryFormat",
    BaseTy.QScheme: "QScheme",
    BaseTy.Generator: "Generator",
    BaseTy.Storage: "Storage",
    BaseTy.Stream: "Stream",
    BaseTy.SymBool: "bool",
    BaseTy.DimVector: "Sequence[int]",
    BaseTy.GraphModule: "Any",
}


def annotation_of(t: Type, *, symint: bool = False) -> str:
    """The Python annotation text for a schema type (SymInt is spelled SymInt for symint kernels).

    >>> from tensordispatch.schema.types import parse_type
    >>> [annotation_of(parse_type(s)) for s in ("Tensor?", "int[]", "Tensor?[]", "Scalar")]
    ['Tensor | None', 'Sequence[int]', 'Sequence[Tensor | None]', 'Scalar']
    >>> annotation_of(parse_type("SymInt[]"), symint=True)
    'Sequence[SymInt]'
    """
    if isinstance(t, OptionalType):
        return f"{annotation_of(t.elem, symint=symint)} | None"
    if isinstance(t, ListType):
        return f"Sequence[{annotation_of(t.elem, symint=symint)}]"
    if isinstance(t, BaseType):
        if symint and t.name is BaseTy.SymInt:
            return "SymInt"
        return _BASE_NAMES.get(t.name, "Any")
    return "Any"


def _return_annotation(returns: tuple[Return, ...]) -> str:
    if not returns:
        return "None"
    if len(returns) == 1:
        return annotation_of(returns[0].type)
    return f"tuple[{', '.join(annotation_of(r.type) for r in returns)}]"


def kernel_name(func: FunctionSchema, *, symint: bool = False) -> str:
    """The Python kernel name of an operator: torch's unambiguous name, `_symint` if asked.

    >>> from tensordispatch.schema import parse_schema
    >>> kernel_name(parse_schema("add_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)"))
    'add__Tensor'
    >>> kernel_name(parse_schema("abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"))
    'abs_out'
    """
    name = func.name.unambiguous_name()
    return f"{name}_symint" if symint else name


@dataclass(frozen=True, slots=True)
class KernelParam:
    """One parameter: its name, whether it is keyword-only, and whether it has a default."""

    name: str
    keyword_only: bool
    has_default: bool
    annotation: str = "Any"

    def text(self) -> str:
        default = " = ..." if self.has_default else ""
        return f"{self.name}: {self.annotation}{default}"


@dataclass(frozen=True, slots=True)
class KernelSignature:
    """The signature of one backend kernel.

    `generic` marks schemas whose argument names are not Python identifiers (`from`): such a
    kernel takes ``*args, **kwargs`` and only its presence is checked.

    >>> from tensordispatch.schema import parse_schema
    >>> s = "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    >>> KernelSignature.from_schema(parse_schema(s)).text()
    'def add_Tensor(self: Tensor, other: Tensor, *, alpha: Scalar = ...) -> Tensor'
    """

    name: str
    params: tuple[KernelParam, ...]
    returns: str
    generic: bool = False

    @staticmethod
    def from_schema(func: FunctionSchema, *, symint: bool = False) -> KernelSignature:
        params = tuple(_param(a, symint) for a in func.arguments)
        generic = any(not p.name.isidentifier() or keyword.iskeyword(p.name) for p in params)
        name = kernel_name(func, symint=symint)
        return KernelSignature(name, params, _return_annotation(func.returns), generic)

    @property
    def positional(self) -> tuple[KernelParam, ...]:
        return tuple(p for p in self.params if not p.keyword_only)

    @property
    def keyword_only(self) -> tuple[KernelParam, ...]:
        return tuple(p for p in self.params if p.keyword_only)

    def parameters_text(self) -> str:
        if self.generic:
            return "*args: Any, **kwargs: Any"
        parts = [p.text() for p in self.positional]
        if self.keyword_only:
            parts += ["*", *(p.text() for p in self.keyword_only)]
        return ", ".join(parts)

    def text(self, name: str | None = None) -> str:
        return f"def {name or self.name}({self.parameters_text()}) -> {self.returns}"

    def spec(self) -> tuple[tuple[str, bool, bool], ...]:
        """(name, keyword_only, has_default) per parameter: what the checks compare."""
        return tuple((p.name, p.keyword_only, p.has_default) for p in self.params)


def _param(arg: Argument, symint: bool) -> KernelParam:
    return KernelParam(
        arg.name, arg.kwarg_only, arg.default is not None, annotation_of(arg.type, symint=symint)
    )


@dataclass(frozen=True, slots=True)
class ActualParams:
    """Parameters a kernel really has (from `ast` or `inspect`), in the same terms."""

    positional: tuple[str, ...]
    keyword_only: tuple[str, ...]
    defaulted: frozenset[str]
    var_positional: bool
    var_keyword: bool


def _names(names: tuple[str, ...] | list[str]) -> str:
    return f"({', '.join(names)})"


def parameter_problems(
    expected: tuple[tuple[str, bool, bool], ...], actual: ActualParams
) -> list[str]:
    """Why a kernel's parameters do not fit the schema; [] when they do.

    A kernel taking both ``*args`` and ``**kwargs`` accepts any call and passes.

    >>> spec = (("self", False, False), ("other", False, False), ("alpha", True, True))
    >>> parameter_problems(spec, ActualParams(("self", "other"), (), frozenset(), False, False))
    ['keyword-only parameters () but the schema has (alpha)']
    """
    if actual.var_positional and actual.var_keyword:
        return []
    problems = []
    want_pos = tuple(name for name, kw, _ in expected if not kw)
    want_kw = tuple(name for name, kw, _ in expected if kw)
    if actual.positional != want_pos and not (
        actual.var_positional and actual.positional == want_pos[: len(actual.positional)]
    ):
        problems.append(
            f"positional parameters {_names(actual.positional)} but the schema has {_names(want_pos)}"
        )
    if sorted(actual.keyword_only) != sorted(want_kw) and not (
        actual.var_keyword and set(actual.keyword_only) <= set(want_kw)
    ):
        problems.append(
            f"keyword-only parameters {_names(actual.keyword_only)} but the schema has {_names(want_kw)}"
        )
    present = set(actual.positional) | set(actual.keyword_only)
    need_default = [n for n, _, d in expected if d and n in present and n not in actual.defaulted]
    if need_default:
        problems.append(
            f"no default for {_names(need_default)}: the schema has one, so callers may leave them out"
        )
    return problems
