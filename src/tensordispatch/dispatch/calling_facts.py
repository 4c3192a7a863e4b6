"""The schema facts a call needs, computed once per def: CallingFacts and the not-given marker.

Owns which arguments are dispatch arguments (``dispatch_form``), the per-schema facts the
generated calling code is built from (names, positional count, defaults, dispatch
arguments, argument checks) and the generic binding / boxing / unboxing of a call by name
for schemas whose names are not Python identifiers. Must not generate code or know about
tables (calling.py generates the entries from these facts; Note [Generated entry functions]
there).
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tensordispatch.dispatch.convert import ArgumentCheck, argument_check
from tensordispatch.dispatch.errors import ArgumentMismatch, ArgumentTypeError

if TYPE_CHECKING:
    # `import tensordispatch` loads no schema module (issue 4): types are named in
    # annotations here, and the functions testing them import them (first def).
    from tensordispatch.schema.model import Argument, FunctionSchema

__all__ = ["NOT_GIVEN", "NO_DEFAULT", "CallingFacts", "dispatch_form"]


class _NotGiven:
    """Default of every optional parameter of a generated entry: "the caller left it out"."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<not given>"


NOT_GIVEN = _NotGiven()
NO_DEFAULT = object()  # "the schema has no default" in CallingFacts.defaults
_SIMPLE = (int, float, bool, str, type(None), list, tuple)


def _parameter_ok(name: str) -> bool:
    """Whether a schema name can be a generated entry's parameter as it is: an identifier,
    not a keyword, not one of the generated code's own names."""
    return (
        name.isidentifier()
        and not keyword.iskeyword(name)
        and not name.startswith("_td_")
        and name != "_NO"
    )


def dispatch_form(arg: Argument) -> str | None:
    """How an argument contributes to the call's key set, or None if it does not.

    ``"t"`` Tensor, ``"t?"`` Tensor?, ``"l"`` Tensor[], ``"l?"`` Tensor?[] (spec 4.1).

    >>> from tensordispatch.schema.model import Argument
    >>> [dispatch_form(Argument.parse(s)) for s in ("Tensor a", "Tensor?[] b", "int c")]
    ['t', 'l?', None]
    """
    from tensordispatch.schema.types import ListType, OptionalType  # issue 4: lazy

    t = arg.type
    if not t.is_tensor_like():
        return None
    if isinstance(t, OptionalType):
        return "t?" if not isinstance(t.elem, (ListType, OptionalType)) else None
    if isinstance(t, ListType):
        return "l?" if isinstance(t.elem, OptionalType) else "l"
    return "t"


@dataclass(frozen=True, slots=True)
class CallingFacts:
    """The schema facts calls need, computed once per def (Note [Generated entry functions]).

    >>> from tensordispatch.schema import parse_schema
    >>> f = CallingFacts.of(parse_schema("f(Tensor x, int a=1, *, Tensor? z=None) -> Tensor"))
    >>> f.names, f.num_positional, f.dispatch
    (('x', 'a', 'z'), 2, ((0, 't'), (2, 't?')))
    """

    names: tuple[str, ...]
    num_positional: int
    defaults: tuple[object, ...]
    dispatch: tuple[tuple[int, str], ...]
    declaration: str
    checks: tuple[ArgumentCheck, ...] = ()

    @staticmethod
    def of(schema: FunctionSchema) -> CallingFacts:
        """Compute the facts of one schema."""
        args = schema.arguments
        defaults = tuple(NO_DEFAULT if a.default is None else a.default_value for a in args)
        dispatch = tuple(
            (i, form) for i, a in enumerate(args) if (form := dispatch_form(a)) is not None
        )
        npos = sum(1 for a in args if not a.kwarg_only)
        checks = tuple(c for i in range(len(args)) if (c := argument_check(schema, i)) is not None)
        names = tuple(a.name for a in args)
        return CallingFacts(names, npos, defaults, dispatch, str(schema), checks)

    @property
    def identifiers_ok(self) -> bool:
        """Whether every name can be a Python parameter of a generated entry as it is."""
        return all(_parameter_ok(n) for n in self.names)

    @property
    def params(self) -> tuple[str, ...]:
        """Each argument's parameter name in generated code: its schema name, or
        ``_td_arg<i>`` for a name that cannot be one (Note [Keyword-named arguments] in
        calling.py).

        >>> from tensordispatch.schema import parse_schema
        >>> CallingFacts.of(parse_schema("f(Tensor self, float from=0) -> Tensor")).params
        ('self', '_td_arg1')
        """
        return tuple(n if _parameter_ok(n) else f"_td_arg{i}" for i, n in enumerate(self.names))

    def keywords_by_name(
        self, fname: str, given: dict[str, Any], values: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        """The renamed parameters' values (``values``, in order) after binding the keyword
        arguments ``given`` that a generated entry's ``**`` parameter caught: each must be
        the schema name of a renamed argument not given already (Note [Keyword-named
        arguments] in calling.py).

        >>> from tensordispatch.schema import parse_schema
        >>> f = CallingFacts.of(parse_schema("f(Tensor self, float from=0) -> Tensor"))
        >>> f.keywords_by_name("f", {"from": 2.0}, (NOT_GIVEN,))
        (2.0,)
        >>> f.keywords_by_name("f", {"from_": 2.0}, (NOT_GIVEN,))
        Traceback (most recent call last):
        TypeError: f() got an unexpected keyword argument 'from_'
        """
        renamed = [n for n, p in zip(self.names, self.params, strict=True) if n != p]
        out = list(values)
        for name, value in given.items():
            if name not in renamed:
                raise TypeError(f"{fname}() got an unexpected keyword argument {name!r}")
            i = renamed.index(name)
            if out[i] is not NOT_GIVEN:
                raise TypeError(f"{fname}() got multiple values for argument {name!r}")
            out[i] = value
        return tuple(out)

    def defaults_between(self, start: int, stop: int) -> list[Any]:
        """The defaults of arguments ``start`` to ``stop - 1`` (list defaults copied): what a
        generated entry puts in front of a positional argument given after left-out ones,
        so the kernel sees positional arguments as torch passes them.

        >>> from tensordispatch.schema import parse_schema
        >>> f = CallingFacts.of(parse_schema("f(Tensor x, int a=1, int[] b=[2]) -> Tensor"))
        >>> f.defaults_between(1, 3)
        [1, [2]]
        """
        return [list(d) if isinstance(d, list) else d for d in self.defaults[start:stop]]

    def unbox(self, stack: list[Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Arguments for an unboxed call from a full stack, trailing defaults left out.

        >>> from tensordispatch.schema import parse_schema
        >>> f = CallingFacts.of(parse_schema("f(Tensor x, int a=1, *, int b=2) -> Tensor"))
        >>> f.unbox(["x", 1, 3])
        (('x',), {'b': 3})
        """
        if len(stack) != len(self.names):
            raise TypeError(
                " ".join(
                    [
                        f"{self.declaration}: a boxed call needs a stack of {len(self.names)}",
                        f"values (one per argument, defaults filled in), got {len(stack)}",
                    ]
                )
            )
        npos = self.num_positional
        end = npos
        while end > 0 and self._is_default(end - 1, stack[end - 1]):
            end -= 1
        kwargs = {
            self.names[i]: stack[i]
            for i in range(npos, len(stack))
            if not self._is_default(i, stack[i])
        }
        return tuple(stack[:end]), kwargs

    def _is_default(self, i: int, value: Any) -> bool:
        d = self.defaults[i]
        if d is NO_DEFAULT or type(value) is not type(d) or not isinstance(value, _SIMPLE):
            return False
        return bool(value == d)

    def bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """Name -> value for a generic call, checking names like Python would."""
        if len(args) > self.num_positional:
            raise TypeError(
                " ".join(
                    [
                        f"{self.declaration}: expected at most {self.num_positional} positional",
                        f"argument(s) but received {len(args)}",
                    ]
                )
            )
        bound = dict(zip(self.names, args))
        for name, value in kwargs.items():
            if name not in self.names or name in bound:
                why = "got multiple values for" if name in bound else "got an unexpected"
                raise TypeError(f"{self.declaration}: {why} argument '{name}'")
            bound[name] = value
        for i, name in enumerate(self.names):
            if name not in bound and self.defaults[i] is NO_DEFAULT:
                raise TypeError(f"{self.declaration}: missing value for argument '{name}'")
        return bound

    def stack_of(self, bound: dict[str, Any]) -> list[Any]:
        """The full stack of a bound call (defaults filled in, list defaults copied)."""
        stack = []
        for i, name in enumerate(self.names):
            value = bound.get(name, NOT_GIVEN)
            if value is NOT_GIVEN:
                d = self.defaults[i]
                value = list(d) if isinstance(d, list) else d
            stack.append(value)
        return stack

    def key_set_of(self, bound: dict[str, Any]) -> int:
        """OR of the dispatch arguments' key sets in a bound call (generic path)."""
        raw = 0
        for i, form in self.dispatch:
            value = bound.get(self.names[i], NOT_GIVEN)
            if value is NOT_GIVEN or value is None:
                continue
            if form in ("l", "l?"):
                for t in value:
                    if t is not None:
                        raw |= t._key_set
            else:
                raw |= value._key_set
        return raw

    def bad_argument(self, values: dict[str, Any]) -> None:
        """Raise the error for a dispatch argument that is not a tensor (or tensor list)."""
        for i, form in self.dispatch:
            name = self.names[i]
            v = values.get(name, NOT_GIVEN)
            items = v if form in ("l", "l?") and isinstance(v, (list, tuple)) else [v]
            wrong = [
                x
                for x in items
                if x is not NOT_GIVEN
                and not (x is None and form in ("t?", "l?"))
                and not isinstance(getattr(x, "_key_set", None), int)
            ]
            if wrong or (form in ("l", "l?") and not isinstance(v, (list, tuple, _NotGiven))):
                shown = wrong[0] if wrong else v
                want = {"t": "Tensor", "t?": "Tensor?", "l": "Tensor[]", "l?": "Tensor?[]"}[form]
                mismatch = ArgumentMismatch(
                    self.declaration.split("(")[0], name, i, want, want,
                    type(shown).__name__, shown, self.declaration,
                )  # fmt: skip
                raise ArgumentTypeError(mismatch)
        raise ArgumentTypeError(f"{self.declaration}: invalid arguments {values!r}")
