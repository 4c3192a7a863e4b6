"""Per-operator calling code generated from the schema, once per def (never per call).

Owns: which arguments are dispatch arguments, the generated entry function with the
operator's exact Python signature (key-set extraction without any schema walking), the
generated boxing adapter (unboxed call -> boxed kernel) and unboxing (boxed stack ->
unboxed call). Must not know about tables or registrations: it reads the published
dispatch cache through one global of the generated namespace, ``_td_c``.

Note [Generated entry functions]
For ``ns::f(Tensor x, Tensor y, int a=1, *, Tensor? z=None) -> Tensor`` we exec::

    def f(x, y, a=_NO, *, z=_NO):
        try:
            _td_k = x._key_set | y._key_set
            if z is not _NO and z is not None: _td_k |= z._key_set
        except (AttributeError, TypeError):
            _td_bad({'x': x, 'y': y, 'z': z})
        _td_s = _td_st.__dict__  # Note [Reading the thread-local state]
        _td_x = _td_s["excluded"]
        try:
            _td_e = (_td_c0 if _td_x is _td_dx else ...)[_td_k | _td_s["included"]]
        except KeyError:
            _td_e = _td_m(_td_x, _td_k | _td_s["included"])
        if a is _NO and z is _NO:
            return _td_e(x, y)
        ... (slow path: forward only the arguments the caller gave)

Arguments the caller did not pass are not forwarded, so a kernel sees what torch's Python
kernels see: trailing defaults left out (torch also drops explicit values equal to the
default; we forward those). ``_td_c`` / ``_td_c0`` / ``_td_m`` are the operator's published
cache (excluded word -> include-adjusted key-set word -> entry callable), its level for the
default excluded word ``_td_dx`` (found by identity: the common case; ``_td_c1`` is a mode
handler's level, Note [Canonical mode words] in modes.py) and its miss handler
(operator.py, Note [Published dispatch state]). Plain dicts with ``try``/``except KeyError``
are the fastest lookup CPython has; a dict subclass with ``__missing__`` is not
specialized by the interpreter. A schema whose argument names are not Python identifiers
(``from``) gets a generic ``*args, **kwargs`` entry instead, which binds by name per call.

Non-tensor arguments are checked and converted as torch's binding does (Note [Argument
conversion] in convert.py): a required one by an inline test of the right type
(``if not (type(n) is int): n = _td_cv1(n)``), the converter called only when it fails;
a list by an inline loop over its items; an optional one only on the branch where the
caller gave some optional argument, before the lookup (torch converts before dispatching;
the lookup is emitted on both branches), so tensor-only and all-defaults calls pay nothing.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable
from dataclasses import dataclass
from types import FunctionType
from typing import Any

from tensordispatch.dispatch.convert import ArgumentCheck, argument_check, value_type_globals
from tensordispatch.dispatch.errors import ArgumentTypeError
from tensordispatch.dispatch.keyset import DEFAULT_EXCLUDED_RAW
from tensordispatch.dispatch.modes import HANDLER_EXCLUDED_RAW
from tensordispatch.dispatch.tls import local_state
from tensordispatch.schema.model import Argument, FunctionSchema
from tensordispatch.schema.types import ListType, OptionalType

__all__ = [
    "NOT_GIVEN",
    "NO_DEFAULT",
    "CallingFacts",
    "dispatch_form",
    "entry_parameters",
    "generate_calling_code",
]


class _NotGiven:
    """Default of every optional parameter of a generated entry: "the caller left it out"."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<not given>"


NOT_GIVEN = _NotGiven()
NO_DEFAULT = object()  # "the schema has no default" in CallingFacts.defaults
_SIMPLE = (int, float, bool, str, type(None), list, tuple)


def dispatch_form(arg: Argument) -> str | None:
    """How an argument contributes to the call's key set, or None if it does not.

    ``"t"`` Tensor, ``"t?"`` Tensor?, ``"l"`` Tensor[], ``"l?"`` Tensor?[] (spec 4.1).

    >>> from tensordispatch.schema.model import Argument
    >>> [dispatch_form(Argument.parse(s)) for s in ("Tensor a", "Tensor?[] b", "int c")]
    ['t', 'l?', None]
    """
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
        """Whether every name can be a Python parameter of a generated entry."""
        return all(
            n.isidentifier()
            and not keyword.iskeyword(n)
            and not n.startswith("_td_")
            and n != "_NO"
            for n in self.names
        )

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
                op_name = self.declaration.split("(")[0]
                found = type(shown).__name__
                raise ArgumentTypeError(
                    "\n".join(
                        [
                            " ".join(
                                [
                                    f"{op_name}() Expected a value of type '{want}' for",
                                    f"argument '{name}' but instead found type '{found}'.",
                                ]
                            ),
                            f"Position: {i}",
                            f"Value: {shown!r}",
                            f"Declaration: {self.declaration}",
                        ]
                    )
                )
        raise ArgumentTypeError(f"{self.declaration}: invalid arguments {values!r}")


def _tls_dict_readable() -> bool:
    """Whether the thread-local state keeps included/excluded in its per-thread ``__dict__``
    (Note [Reading the thread-local state])."""
    st = local_state()
    d = getattr(st, "__dict__", {})
    return d.get("included") is st.included and d.get("excluded") is st.excluded


# Note [Reading the thread-local state]
# The entry reads two words of the thread-local state per call. On a ``threading.local``
# each attribute read looks the per-thread dict up again; reading ``__dict__`` once and
# subscripting it twice is measurably cheaper (~25 ns a call). tls.py stores both words as
# per-thread instance attributes, which is checked at import; if that ever changes the
# generated code falls back to plain attribute reads.
if _tls_dict_readable():
    _STATE_EXPR, _EXCLUDED, _INCLUDED = "_td_st.__dict__", '["excluded"]', '["included"]'
else:  # pragma: no cover - depends on tls.py's representation
    _STATE_EXPR, _EXCLUDED, _INCLUDED = "_td_st", ".excluded", ".included"


# The cache level of the call's excluded word: the default one and a mode handler's one by
# identity (Note [Canonical mode words] in modes.py), any other by a dict lookup.
_LEVEL = "(_td_c0 if _td_x is _td_dx else _td_c1 if _td_x is _td_hx else _td_c[_td_x])"


def entry_parameters(facts: CallingFacts) -> tuple[str, list[str], list[str]]:
    """The generated entry's parameter list, the names that get the ``_NO`` default and,
    among them, the required ones placed after an optional one."""
    parts: list[str] = []
    optional: list[str] = []
    late_required: list[str] = []
    seen_optional = False
    for i, name in enumerate(facts.names):
        has_default = facts.defaults[i] is not NO_DEFAULT
        if i == facts.num_positional:
            parts.append("*")
        if i < facts.num_positional:
            if has_default or seen_optional:
                parts.append(f"{name}=_NO")
                optional.append(name)
                if not has_default:
                    late_required.append(name)
                seen_optional = True
            else:
                parts.append(name)
        elif has_default:
            parts.append(f"{name}=_NO")
            optional.append(name)
        else:
            parts.append(name)
    return ", ".join(parts), optional, late_required


def _extract_lines(facts: CallingFacts) -> list[str]:
    names = facts.names
    plain = [names[i] for i, f in facts.dispatch if f == "t" and facts.defaults[i] is NO_DEFAULT]
    lines = ["    try:", f"        _td_k = {' | '.join(f'{n}._key_set' for n in plain) or '0'}"]
    for i, form in facts.dispatch:
        n = names[i]
        if form == "t" and n in plain:
            continue
        guard = f"{n} is not _NO and " if facts.defaults[i] is not NO_DEFAULT else ""
        if form in ("t", "t?"):
            lines.append(f"        if {guard}{n} is not None: _td_k |= {n}._key_set")
        else:
            inner = "if _td_x is not None: " if form == "l?" else ""
            lines.append(f"        if {guard}True:")
            lines.append(f"            for _td_x in {n}:")
            lines.append(f"                {inner}_td_k |= _td_x._key_set")
    values = ", ".join(f"{names[i]!r}: {names[i]}" for i, _ in facts.dispatch)
    lines += ["    except (AttributeError, TypeError):", f"        _td_bad({{{values}}})"]
    return lines


def _forward_lines(
    facts: CallingFacts, optional: list[str], indent: str, lookup: list[str]
) -> list[str]:
    """Lines finding ``_td_e`` (``lookup``) and calling it with exactly the arguments the
    caller gave. Optional arguments that need checking are checked before the lookup, as
    torch converts before dispatching, but only on the branch where one was given: the
    lookup is emitted on both branches so the all-defaults call pays nothing for them."""
    pos_required = [n for n in facts.names[: facts.num_positional] if n not in optional]
    kw_required = [n for n in facts.names[facts.num_positional :] if n not in optional]
    kw_text = ", ".join(f"{n}={n}" for n in kw_required)
    fast = ", ".join(pos_required + ([kw_text] if kw_text else []))
    if not optional:
        return [*lookup, f"{indent}return _td_e({fast})"]
    all_absent = f"{indent}if {' and '.join(f'{n} is _NO' for n in optional)}:"
    checks = _check_lines(facts, optional, indent, given=True)
    if checks:
        head = [
            all_absent,
            *("    " + line for line in lookup),
            f"{indent}    return _td_e({fast})",
        ]
        head += checks + lookup
    else:
        head = [*lookup, all_absent, f"{indent}    return _td_e({fast})"]
    lines = [
        *head,
        f"{indent}_td_a = [{', '.join(pos_required)}]",
        f"{indent}_td_kw = {{{', '.join(f'{n!r}: {n}' for n in kw_required)}}}",
    ]
    for i, name in enumerate(facts.names):
        if name not in optional:
            continue
        if i < facts.num_positional:
            lines += [
                f"{indent}if {name} is not _NO:",
                f"{indent}    if len(_td_a) == {i}: _td_a.append({name})",
                f"{indent}    else: _td_kw[{name!r}] = {name}",
            ]
        else:
            lines.append(f"{indent}if {name} is not _NO: _td_kw[{name!r}] = {name}")
    lines.append(f"{indent}return _td_e(*_td_a, **_td_kw)")
    return lines


def _check_lines(facts: CallingFacts, names: list[str], indent: str, given: bool) -> list[str]:
    """Argument checks of ``names`` (Note [Argument conversion] in convert.py): the inline
    fast test, the converter only when it fails; ``given`` guards on the caller passing it."""
    lines = []
    for check in facts.checks:
        name = facts.names[check.index]
        if name not in names:
            continue
        if check.item_fails:
            # lists: an inline loop over the items, the converter only on a wrong one
            inner = indent + ("    " if given else "")
            if given:
                lines.append(f"{indent}if {name} is not _NO:")
            lines += [
                f"{inner}for _td_i in ({name} if type({name}) is list else _td_nl):",
                f"{inner}    if {check.item_fails.format(v='_td_i')}:",
                f"{inner}        {name} = _td_cv{check.index}({name})",
                f"{inner}        break",
            ]
            continue
        conds = [f"{name} is not _NO"] if given else []
        if check.test != "False":
            conds.append(f"not ({check.test.format(v=name)})")
        convert = f"{name} = _td_cv{check.index}({name})"
        lines.append(f"{indent}if {' and '.join(conds)}: {convert}" if conds else indent + convert)
    return lines


def _entry_source(facts: CallingFacts, fname: str) -> str:
    params, optional, late_required = entry_parameters(facts)
    lines = [f"def {fname}({params}):"]
    for name in late_required:
        message = repr(f"{fname}() missing required argument: {name!r}")
        lines.append(f"    if {name} is _NO: raise TypeError({message})")
    required = [n for n in facts.names if n not in optional]
    lines += _check_lines(facts, required, "    ", given=False)
    simple = [facts.names[i] for i, f in facts.dispatch if f == "t"]
    if simple and all(f == "t" and facts.defaults[i] is NO_DEFAULT for i, f in facts.dispatch):
        # Only required plain tensors: one expression, one try (Note [Generated entry
        # functions], the common case).
        word = " | ".join(f"{n}._key_set" for n in simple) + f" | _td_s{_INCLUDED}"
        values = ", ".join(f"{n!r}: {n}" for n in simple)
        lookup = [
            f"    _td_s = {_STATE_EXPR}",
            f"    _td_x = _td_s{_EXCLUDED}",
            "    try:",
            f"        _td_e = {_LEVEL}[{word}]",
            "    except KeyError:",
            f"        _td_e = _td_m(_td_x, {word})",
            "    except (AttributeError, TypeError):",
            f"        _td_bad({{{values}}})",
        ]
        return "\n".join(lines + _forward_lines(facts, optional, "    ", lookup)) + "\n"
    lookup = _extract_lines(facts) + [
        f"    _td_s = {_STATE_EXPR}",
        f"    _td_x = _td_s{_EXCLUDED}",
        "    try:",
        f"        _td_e = {_LEVEL}[_td_k | _td_s{_INCLUDED}]",
        "    except KeyError:",
        f"        _td_e = _td_m(_td_x, _td_k | _td_s{_INCLUDED})",
    ]
    lines += _forward_lines(facts, optional, "    ", lookup)
    return "\n".join(lines) + "\n"


def _boxer_source(facts: CallingFacts, fname: str) -> str:
    params, _, _ = entry_parameters(facts)
    items = []
    for i, name in enumerate(facts.names):
        d = facts.defaults[i]
        if d is NO_DEFAULT:
            items.append(name)
        else:
            dv = f"list(_td_d{i})" if isinstance(d, list) else f"_td_d{i}"
            items.append(f"({dv} if {name} is _NO else {name})")
    return f"def {fname}({params}):\n    return _td_fn(_td_op, _td_ks, [{', '.join(items)}])\n"


def _boxer_factory(
    proto: Callable[..., Any], base: dict[str, Any]
) -> Callable[..., Callable[..., Any]]:
    """``boxer(fn, op, ks)``: a boxing adapter for one boxed kernel (Note [Boxing adapters])."""
    code = proto.__code__
    name = proto.__name__
    defaults = proto.__defaults__
    kwdefaults = proto.__kwdefaults__

    def boxer(fn: Callable[..., Any], op: Any, ks: Any) -> Callable[..., Any]:
        scope = dict(base)
        scope["_td_fn"], scope["_td_op"], scope["_td_ks"] = fn, op, ks
        adapter = FunctionType(code, scope, name, defaults)
        adapter.__kwdefaults__ = kwdefaults
        return adapter

    return boxer


# Note [Boxing adapters]
# An unboxed call of a boxed kernel goes through an adapter with the operator's signature
# that builds the stack in one list display (no loop) and calls ``fn(op, keyset, stack)``.
# The adapter's code is compiled once per operator; each (kernel, key set) gets a function
# over that code with its own globals holding fn, op and keyset: global loads of a small
# dict are cheaper than closure cells in CPython 3.11 (~13 ns a call measured), which keeps
# the boxed path within 1.15x of the unboxed one (benchmarks/bench_dispatch.py).


def _converted(
    facts: CallingFacts, bound: dict[str, Any], npos: int
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """A bound generic call with its checked arguments converted, split back into the
    positional and keyword arguments the caller used."""
    for check in facts.checks:
        name = facts.names[check.index]
        if name in bound:
            bound[name] = check.convert(bound[name])
    args = tuple(bound[n] for n in facts.names[:npos])
    return args, {n: v for n, v in bound.items() if n not in facts.names[:npos]}


def _generic(
    facts: CallingFacts, ns: dict[str, Any]
) -> tuple[Callable[..., Any], Callable[..., Callable[..., Any]]]:
    """Entry and boxer for schemas whose names are not Python identifiers."""
    st = ns["_td_st"]

    def entry(*args: Any, **kwargs: Any) -> Any:
        bound = facts.bind(args, kwargs)
        if facts.checks:
            args, kwargs = _converted(facts, bound, len(args))
        try:
            k = facts.key_set_of(bound)
        except (AttributeError, TypeError):
            facts.bad_argument(bound)
        x = st.excluded
        pre = k | st.included
        try:
            e = ns["_td_c"][x][pre]
        except KeyError:
            e = ns["_td_m"](x, pre)
        return e(*args, **kwargs)

    def boxer(fn: Callable[..., Any], op: Any, ks: Any) -> Callable[..., Any]:
        def boxed(*args: Any, **kwargs: Any) -> Any:
            return fn(op, ks, facts.stack_of(facts.bind(args, kwargs)))

        return boxed

    return entry, boxer


def generate_calling_code(
    facts: CallingFacts, fname: str, ns: dict[str, Any]
) -> tuple[Callable[..., Any], Callable[..., Callable[..., Any]]]:
    """Exec the entry function and the boxer factory of one schema into ``ns``.

    ``ns`` must hold the published cache (``_td_c``, ``_td_c0``, ``_td_m``) and ``_td_st``
    (the thread-local state, Note [Thread-local state] in tls.py); the rest is added here.
    Returns ``(entry, boxer)``.
    """
    ns["_NO"] = NOT_GIVEN
    ns["_td_dx"] = DEFAULT_EXCLUDED_RAW
    ns["_td_hx"] = HANDLER_EXCLUDED_RAW
    ns["_td_bad"] = facts.bad_argument
    ns["_td_nl"] = (NOT_GIVEN,)  # iterated instead of a non-list: its item is never right
    for check in facts.checks:
        ns[f"_td_cv{check.index}"] = check.convert
    ns.update(value_type_globals())
    if not facts.identifiers_ok or not fname.isidentifier() or keyword.iskeyword(fname):
        return _generic(facts, ns)
    for i, d in enumerate(facts.defaults):
        if d is not NO_DEFAULT:
            ns[f"_td_d{i}"] = d
    code = _entry_source(facts, fname)
    # Generated code is the design here (Note [Generated entry functions]); the source is
    # built from a parsed schema's identifiers only.
    exec(compile(code, f"<tensordispatch entry {facts.declaration}>", "exec"), ns)  # noqa: S102
    base = {k: v for k, v in ns.items() if k == "_NO" or k.startswith("_td_d")}
    base["__builtins__"] = ns["__builtins__"]
    scratch = dict(base)
    code = _boxer_source(facts, fname)
    where = f"<tensordispatch boxer {facts.declaration}>"
    exec(compile(code, where, "exec"), scratch)  # noqa: S102
    return ns[fname], _boxer_factory(scratch[fname], base)
