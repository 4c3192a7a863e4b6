"""Per-operator calling code generated from the schema, once per def (never per call).

Owns: the generated entry function with the operator's exact Python signature (key-set
extraction without any schema walking), its boxed-first twin, the generated boxing adapter
(unboxed call -> boxed kernel) and the generic entry for operators whose names are not
identifiers; the schema facts they are built from are calling_facts.py's (re-exported
here). Must not know about tables or registrations: it reads the published dispatch caches
through globals of the generated namespace (``_td_c0``, ``_td_c``, ...).

Note [Generated entry functions]
For ``ns::f(Tensor x, Tensor y, int a=1, *, Tensor? z=None) -> Tensor`` we exec::

    def f(x, y, a=_NO, *, z=_NO):
        _td_s = _td_st.__dict__  # Note [Reading the thread-local state]
        _td_x = _td_s["excluded"]
        try:
            _td_k = x._key_set  # Note [Key sets by identity]
            if y._key_set is not _td_k: _td_k = _td_k | y._key_set
            if z is not _NO and z is not None and ...: _td_k = _td_k | z._key_set
            if _td_x is _td_dx and _td_s["included"] is _td_di: _td_e = _td_c0[_td_k]
            elif ... a mode handler's level (_td_c1), an outer call's under one mode
                (_td_cm), any other words (_td_c) ...
        except KeyError:
            _td_e = _td_m(_td_x, _td_s["included"], _td_k)
        except (AttributeError, TypeError):
            _td_bad({'x': x, 'y': y, 'z': z})
        if a is _NO and z is _NO:
            return _td_e(x, y)
        ... (slow path: forward only the arguments the caller gave)

Arguments the caller did not pass are not forwarded, so a kernel sees what torch's Python
kernels see: trailing defaults left out, and an explicit None given for an argument whose
default is None (Note [Explicit None defaults]); torch also drops other explicit values
equal to their default, which we forward. The published cache (operator.py, Note [Published dispatch
state]) has one level per pair of thread-local words: the default pair (``_td_c0``), a
mode handler's and an outer call's under one mode (``_td_c1``, ``_td_cm``, Note
[Canonical mode words] in modes.py), all recognised by identity and keyed by the
arguments' word alone; any other pair goes through ``_td_c`` (excluded word -> arguments |
included -> entry). ``_td_m`` is the miss handler (it returns None for a key-set word that
is not an int, and the entry then reports the bad argument). Plain dicts with
``try``/``except KeyError`` are the fastest lookup CPython has; a dict subclass with
``__missing__`` is not specialized by the interpreter. An argument named by a Python
keyword (``from``) gets a renamed parameter (Note [Explicit None defaults]
``t.uniform_(generator=None)`` (what the bindings and composites write for "no generator")
would take the entry's slow path and carry ``generator=None`` through every layer below,
each repacking ``**kwargs`` (~1 us a call on uniform_). torch's kernels never see it: its
binding drops an argument equal to its default. After the all-defaults test fails, the
entry turns each None given for an argument whose default is None into "not given" and
tests again, so such a call is the all-defaults call; the kernel sees what torch's sees.

Note [Keyword-named arguments]); only an
operator whose own name is not an identifier gets the generic ``*args, **kwargs`` entry,
which binds by name per call.

A positional argument given after left-out ones (``f(x, b=5)`` for ``f(Tensor x, int a=1,
int b=2)``) is forwarded positionally with the left-out defaults in front (a slice of
``_td_pd``; ``_td_pad`` copies a list default), as torch's kernels receive it; a keyword-only
one is forwarded by name.

Note [Keyword-named arguments]
``uniform_(Tensor(a!) self, float from=0, float to=1, *, Generator? generator=None)`` cannot
have a parameter named ``from``, yet torch binds ``uniform_(t, **{"from": 0.5})`` and a
generic ``*args, **kwargs`` entry costs ~5 us a call (``td.rand`` was 8.8x torch). Such an
argument (a keyword, or a name the generated code uses itself: ``_td_*``, ``_NO``) becomes
the parameter ``_td_arg<i>`` (``CallingFacts.params``) with the ``_NO`` default, and the
entry takes ``**_td_more``, where the real name arrives; when that dict is not empty,
``_td_rn`` (``CallingFacts.keywords_by_name``) moves its values into the renamed parameters
or raises Python's error for an unknown or repeated keyword, and a required renamed argument
is tested in the body like a required one after an optional one (entry_parameters). The
empty ``**`` dict costs ~20 ns a call. Everything downstream uses the real names: the kwargs
forwarded (``_td_kw['from']``), the boxed stack (by position), the messages and the boxing
adapter and mode entry (mode_entry.py), which take ``**_td_more`` too, since a redispatch
passes the caller's keywords on. The one difference from torch: ``_td_arg1=`` itself is
accepted by name (the ``_td_`` prefix is the generated code's own).

Note [Key sets by identity]
Key-set words are ints above 2**30, so every ``|`` allocates a new int (~12 ns). Tensors of
one device share one key-set int object (the tensor layer copies its device's), and the
default thread-local words are single objects too, so the entry ORs a tensor's word in
only when it is not the very object already collected, and the default level is keyed by
the arguments' word alone: a call on tensors of one device does no int arithmetic.

Note [Boxed-first entries]
A boxed kernel reached through the plain entry costs a second frame (the boxing adapter,
Note [Boxing adapters]), ~45 ns where the kernel's own convention (a list, three
arguments) costs ~27. Once a call of an operator under the default thread-local words
reaches a boxed kernel, operator.py installs the operator's boxed-first twin: the same
entry with, in front of the lookup, a probe of ``_td_b0``, which mirrors the default-words
cache as (boxed kernel, key set) or (entry, None) pairs. A boxed kernel found there is
called with the stack built in place, one frame in all; an unboxed entry found there is
called as usual (~10 ns dearer than the plain entry: the pair); anything not found falls
through to the ordinary lookup. Both entries are therefore correct for every call, and
installing the twin (done without waiting for the registration lock) is only a matter of
speed; every new table starts on the plain entry, so operators that never reach a boxed
kernel never pay for the probe.

Note [Tuples of the right items]
A list argument given as a tuple (``x.view((2, 3))``, ``empty_strided((4, 4), (4, 1))``) is
what the converter turns into a list of the same items; when every item already has the
right type the entry does that itself (``list(x)``) after the same inline item test, without
calling the converter (~0.45 us a tuple). Lists keep the loop they had: a tuple is only
looked at once the list loop has declined it.

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
from types import FunctionType
from typing import Any

from tensordispatch.dispatch.calling_facts import (
    NO_DEFAULT,
    NOT_GIVEN,
    CallingFacts,
    dispatch_form,
)
from tensordispatch.dispatch.convert import value_type_globals
from tensordispatch.dispatch.keyset import DEFAULT_EXCLUDED_RAW, DEFAULT_INCLUDED_RAW
from tensordispatch.dispatch.modes import HANDLER_EXCLUDED_RAW, INCLUDED_WITH_MODES_RAW
from tensordispatch.dispatch.tls import local_state

__all__ = [
    "NOT_GIVEN",
    "NO_DEFAULT",
    "CallingFacts",
    "dispatch_form",
    "entry_parameters",
    "generate_boxed_first_entry",
    "generate_calling_code",
    "required_lines",
]


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


def entry_parameters(facts: CallingFacts) -> tuple[str, list[str], list[str]]:
    """The generated entry's parameter list, the parameter names that get the ``_NO``
    default and, among them, the required ones: those placed after an optional one and
    those renamed (Note [Keyword-named arguments]), checked in the body. A schema with a
    renamed argument also gets a ``**_td_more`` parameter, where its real name arrives."""
    params = facts.params
    parts: list[str] = []
    optional: list[str] = []
    late_required: list[str] = []
    seen_optional = False
    for i, name in enumerate(params):
        has_default = facts.defaults[i] is not NO_DEFAULT
        positional = i < facts.num_positional
        late = not has_default and (name != facts.names[i] or (seen_optional and positional))
        if i == facts.num_positional:
            parts.append("*")
        if has_default or late:
            parts.append(f"{name}=_NO")
            optional.append(name)
            if late:
                late_required.append(name)
            seen_optional = seen_optional or positional
        else:
            parts.append(name)
    if params != facts.names:
        parts.append("**_td_more")
    return ", ".join(parts), optional, late_required


def _rename_lines(facts: CallingFacts, fname: str, indent: str) -> list[str]:
    """Lines binding the real names caught by ``**_td_more`` to the renamed parameters
    (Note [Keyword-named arguments]); none for a schema without renamed arguments."""
    renamed = [p for p, n in zip(facts.params, facts.names, strict=True) if p != n]
    if not renamed:
        return []
    targets = ", ".join(renamed) + ("," if len(renamed) == 1 else "")
    return [
        f"{indent}if _td_more:",
        f"{indent}    {targets} = _td_rn({fname!r}, _td_more, ({targets}))",
    ]


def _key_lines(facts: CallingFacts, indent: str) -> list[str]:
    """Lines computing ``_td_k``, the OR of the dispatch arguments' key sets. Tensors of
    one device share one key-set object (Note [Key sets by identity]), so a required
    tensor whose key set is the very object already collected adds nothing to OR."""
    names = facts.params
    plain = [names[i] for i, f in facts.dispatch if f == "t" and facts.defaults[i] is NO_DEFAULT]
    if not plain:
        lines = [f"{indent}_td_k = 0"]
    else:
        lines = [f"{indent}_td_k = {plain[0]}._key_set"]
        for n in plain[1:]:
            lines.append(f"{indent}if {n}._key_set is not _td_k: _td_k = _td_k | {n}._key_set")
    for i, form in facts.dispatch:
        n = names[i]
        if form == "t" and n in plain:
            continue
        guard = f"{n} is not _NO and " if facts.defaults[i] is not NO_DEFAULT else ""
        if form in ("t", "t?"):
            test = f"{guard}{n} is not None and {n}._key_set is not _td_k"
            lines.append(f"{indent}if {test}: _td_k = _td_k | {n}._key_set")
        else:
            inner = "_td_y is not None and " if form == "l?" else ""
            lines.append(f"{indent}if {guard}True:")
            lines.append(f"{indent}    for _td_y in {n}:")
            lines.append(
                f"{indent}        if {inner}_td_y._key_set is not _td_k: _td_k = _td_k | _td_y._key_set"
            )
    return lines


def _bad_call(facts: CallingFacts) -> str:
    values = ", ".join(f"{facts.names[i]!r}: {facts.params[i]}" for i, _ in facts.dispatch)
    return f"_td_bad({{{values}}})"


def _lookup_lines(facts: CallingFacts, indent: str) -> list[str]:
    """Lines binding ``_td_e``, the callable of this call (Note [Generated entry
    functions]): the key set, then the cache level of the thread-local words (the default
    words first, then a mode handler's, then an outer call's under one mode, keyed by the
    arguments' word alone; any other words by a dict lookup), the miss handler on a miss."""
    inner = indent + "    "
    bad = _bad_call(facts)
    return [
        f"{indent}_td_s = {_STATE_EXPR}",
        f"{indent}_td_x = _td_s{_EXCLUDED}",
        f"{indent}try:",
        *_key_lines(facts, inner),
        f"{inner}if _td_x is _td_dx and _td_s{_INCLUDED} is _td_di: _td_e = _td_c0[_td_k]",
        f"{inner}elif _td_x is _td_hx and _td_s{_INCLUDED} is _td_di: _td_e = _td_c1[_td_k]",
        f"{inner}else:",
        f"{inner}    _td_i = _td_s{_INCLUDED}",
        f"{inner}    if _td_i is _td_mi and _td_x is _td_dx: _td_e = _td_cm[_td_k]",
        f"{inner}    else: _td_e = _td_c[_td_x][_td_k | _td_i]",
        f"{indent}except KeyError:",
        f"{inner}_td_e = _td_m(_td_x, _td_s{_INCLUDED}, _td_k)",
        f"{inner}if _td_e is None: {bad}",
        f"{indent}except (AttributeError, TypeError):",
        f"{inner}{bad}",
    ]


def _boxed_first_lines(facts: CallingFacts, indent: str, direct: str | None) -> list[str]:
    """Lines of the boxed-first entry: probe ``_td_b0`` (under the default thread-local
    words) and call a boxed kernel found there with the stack built right here, or the
    unboxed callable found there with ``direct`` (or bind it to ``_td_e`` when ``direct`` is
    None); the ordinary lookup runs only when the probe finds nothing (Note [Boxed-first
    entries])."""
    found = (
        [f"{indent}        return _td_f({direct})"]
        if direct is not None
        else [f"{indent}        _td_e = _td_f"]
    )
    lines = [] if direct is not None else [f"{indent}_td_e = None"]
    lines += [
        f"{indent}_td_s = {_STATE_EXPR}",
        f"{indent}if _td_s{_EXCLUDED} is _td_dx and _td_s{_INCLUDED} is _td_di:",
        f"{indent}    try:",
        *_key_lines(facts, indent + "        "),
        f"{indent}        _td_f, _td_ks = _td_b0[_td_k]",
        f"{indent}    except (KeyError, AttributeError, TypeError):",
        f"{indent}        pass",
        f"{indent}    else:",
        f"{indent}        if _td_ks is not None:",
        f"{indent}            return _td_f(_td_bo, _td_ks, {_stack_items(facts)})",
        *found,
    ]
    if direct is not None:
        return lines + _lookup_lines(facts, indent)
    return [*lines, f"{indent}if _td_e is None:", *_lookup_lines(facts, indent + "    ")]


def _forward_lines(
    facts: CallingFacts,
    optional: list[str],
    indent: str,
    lookup_for: Callable[[str | None], list[str]],
    split: bool = False,
) -> list[str]:
    """Lines finding ``_td_e`` (``lookup_for(call)``, where ``call`` is the argument text of
    a call that gave no optional argument, or None) and calling it with exactly the
    arguments the caller gave. Optional arguments that need checking are checked before
    the lookup, as torch converts before dispatching, but only on the branch where one was
    given: the lookup is emitted on both branches (always with ``split``) so the
    all-defaults call pays nothing for them."""
    params, names, npos = facts.params, facts.names, facts.num_positional
    pos_required = [n for n in params[:npos] if n not in optional]
    kw_required = [i for i in range(npos, len(params)) if params[i] not in optional]
    # a renamed argument is never required here (entry_parameters), so names[i] is params[i]
    kw_text = ", ".join(f"{names[i]}={params[i]}" for i in kw_required)
    fast = ", ".join(pos_required + ([kw_text] if kw_text else []))
    if not optional:
        return [*lookup_for(fast), f"{indent}return _td_e({fast})"]
    all_absent = f"{indent}if {' and '.join(f'{n} is _NO' for n in optional)}:"
    call_fast = f"{indent}    return _td_e({fast})"
    checks = _check_lines(facts, optional, indent, given=True)
    # Note [Explicit None defaults]
    nones = [n for i, n in enumerate(params) if n in optional and facts.defaults[i] is None]
    drop = [f"{indent}if {n} is None: {n} = _NO" for n in nones]
    if checks or split:
        fast_branch = [all_absent, *("    " + line for line in lookup_for(fast)), call_fast]
        head = fast_branch + (drop + fast_branch if drop else []) + checks + lookup_for(None)
    else:
        head = [*lookup_for(None), all_absent, call_fast]
        head += drop + [all_absent, call_fast] if drop else []
    lines = [
        *head,
        f"{indent}_td_a = [{', '.join(pos_required)}]",
        f"{indent}_td_kw = {{{', '.join(f'{names[i]!r}: {params[i]}' for i in kw_required)}}}",
    ]
    for i, name in enumerate(params):
        if name not in optional:
            continue
        if i < npos:
            # left-out defaults in front: a slice of _td_pd, or copies when one is a list
            copies = any(isinstance(d, list) for d in facts.defaults[len(pos_required) : i])
            pad = f"_td_pad(len(_td_a), {i})" if copies else f"_td_pd[len(_td_a) : {i}]"
            lines += [
                f"{indent}if {name} is not _NO:",
                f"{indent}    if len(_td_a) != {i}: _td_a += {pad}",
                f"{indent}    _td_a.append({name})",
            ]
        else:
            lines.append(f"{indent}if {name} is not _NO: _td_kw[{names[i]!r}] = {name}")
    lines.append(f"{indent}return _td_e(*_td_a, **_td_kw)")
    return lines


def _check_lines(facts: CallingFacts, names: list[str], indent: str, given: bool) -> list[str]:
    """Argument checks of ``names`` (Note [Argument conversion] in convert.py): the inline
    fast test, the converter only when it fails; ``given`` guards on the caller passing it."""
    lines = []
    for check in facts.checks:
        name = facts.params[check.index]
        if name not in names:
            continue
        if check.item_fails:
            # lists: an inline loop over the items, the converter only on a wrong one
            inner = indent + ("    " if given else "")
            if given:
                lines.append(f"{indent}if {name} is not _NO:")
            fails = check.item_fails.format(v="_td_j")
            convert = f"{name} = _td_cv{check.index}({name})"
            lines += [
                f"{inner}for _td_j in ({name} if type({name}) is list else _td_nl):",
                f"{inner}    if {fails}:",
                f"{inner}        if type({name}) is tuple:  # Note [Tuples of the right items]",
                f"{inner}            for _td_j in {name}:",
                f"{inner}                if {fails}:",
                f"{inner}                    {convert}",
                f"{inner}                    break",
                f"{inner}            else:",
                f"{inner}                {name} = list({name})",
                f"{inner}        else:",
                f"{inner}            {convert}",
                f"{inner}        break",
            ]
            continue
        conds = [f"{name} is not _NO"] if given else []
        if check.test != "False":
            conds.append(f"not ({check.test.format(v=name)})")
        convert = f"{name} = _td_cv{check.index}({name})"
        lines.append(f"{indent}if {' and '.join(conds)}: {convert}" if conds else indent + convert)
    return lines


def _stack_items(facts: CallingFacts) -> str:
    """The list display of a boxed call's stack: every argument, defaults filled in."""
    items = []
    for i, name in enumerate(facts.params):
        d = facts.defaults[i]
        if d is NO_DEFAULT:
            items.append(name)
        else:
            dv = f"list(_td_d{i})" if isinstance(d, list) else f"_td_d{i}"
            items.append(f"({dv} if {name} is _NO else {name})")
    return f"[{', '.join(items)}]"


def required_lines(facts: CallingFacts, fname: str) -> list[str]:
    """Body lines of a generated function with ``entry_parameters(facts)``: the real names
    caught by ``**_td_more`` bound to the renamed parameters, then the test of each
    required argument that has the ``_NO`` default.

    >>> from tensordispatch.schema import parse_schema
    >>> facts = CallingFacts.of(parse_schema("f(Tensor self, int from) -> Tensor"))
    >>> entry_parameters(facts)[0]
    'self, _td_arg1=_NO, **_td_more'
    >>> print("\\n".join(required_lines(facts, "f")))
        if _td_more:
            _td_arg1, = _td_rn('f', _td_more, (_td_arg1,))
        if _td_arg1 is _NO: raise TypeError("f() missing required argument: 'from'")
    """
    _, _, late_required = entry_parameters(facts)
    lines = _rename_lines(facts, fname, "    ")
    for name in late_required:
        real = facts.names[facts.params.index(name)]
        message = repr(f"{fname}() missing required argument: {real!r}")
        lines.append(f"    if {name} is _NO: raise TypeError({message})")
    return lines


def _may_be_absent(facts: CallingFacts) -> list[str]:
    """The ``_NO``-default parameters a call can leave out once ``required_lines`` ran:
    entry_parameters' optional ones without the required ones tested there, except a
    keyword-only one or one after a truly optional positional one (the forwarding places
    those). ``random_.from``'s ``from`` and ``to`` are then forwarded as plain arguments."""
    _, optional, late_required = entry_parameters(facts)
    out = []
    seen_optional = False
    for i, name in enumerate(facts.params):
        if name not in optional:
            continue
        if name not in late_required:
            seen_optional = seen_optional or i < facts.num_positional
            out.append(name)
        elif seen_optional or i >= facts.num_positional:
            out.append(name)
    return out


def _entry_source(facts: CallingFacts, fname: str, boxed_first: bool = False) -> str:
    params, _, _ = entry_parameters(facts)
    optional = _may_be_absent(facts)
    lines = [f"def {fname}({params}):", *required_lines(facts, fname)]
    required = [n for n in facts.params if n not in optional]
    lines += _check_lines(facts, required, "    ", given=False)
    if boxed_first:
        lines += _forward_lines(
            facts, optional, "    ", lambda d: _boxed_first_lines(facts, "    ", d), split=True
        )
    else:
        lookup = _lookup_lines(facts, "    ")
        lines += _forward_lines(facts, optional, "    ", lambda d: lookup)
    return "\n".join(lines) + "\n"


def _boxer_source(facts: CallingFacts, fname: str) -> str:
    params, _, _ = entry_parameters(facts)
    lines = [f"def {fname}({params}):"]
    if params.endswith("**_td_more"):
        lines += required_lines(facts, fname)
    lines.append(f"    return _td_fn(_td_op, _td_ks, {_stack_items(facts)})")
    return "\n".join(lines) + "\n"


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
# dict are cheaper than closure cells in CPython 3.11 (~13 ns a call measured). Operators
# whose default-words calls all reach boxed kernels skip the adapter (Note [Boxed-first
# entries]); the adapter serves redispatches and every other mix.


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
        e = ns["_td_m"](st.excluded, st.included, k)
        if e is None:
            facts.bad_argument(bound)
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
    ns["_td_di"] = DEFAULT_INCLUDED_RAW
    ns["_td_mi"] = INCLUDED_WITH_MODES_RAW
    ns["_td_bad"] = facts.bad_argument
    ns["_td_nl"] = (NOT_GIVEN,)  # iterated instead of a non-list: its item is never right
    for check in facts.checks:
        ns[f"_td_cv{check.index}"] = check.convert
    ns.update(value_type_globals())
    ns["_td_rn"] = facts.keywords_by_name
    ns["_td_pad"] = facts.defaults_between
    ns["_td_pd"] = facts.defaults[: facts.num_positional]
    if not fname.isidentifier() or keyword.iskeyword(fname):
        return _generic(facts, ns)
    for i, d in enumerate(facts.defaults):
        if d is not NO_DEFAULT:
            ns[f"_td_d{i}"] = d
    code = _entry_source(facts, fname)
    # Generated code is the design here (Note [Generated entry functions]); the source is
    # built from a parsed schema's identifiers only.
    exec(compile(code, f"<tensordispatch entry {facts.declaration}>", "exec"), ns)  # noqa: S102
    base = {k: v for k, v in ns.items() if k in ("_NO", "_td_rn") or k.startswith("_td_d")}
    base["__builtins__"] = ns["__builtins__"]
    scratch = dict(base)
    code = _boxer_source(facts, fname)
    where = f"<tensordispatch boxer {facts.declaration}>"
    exec(compile(code, where, "exec"), scratch)  # noqa: S102
    return ns[fname], _boxer_factory(scratch[fname], base)


def generate_boxed_first_entry(
    facts: CallingFacts, fname: str, ns: dict[str, Any]
) -> Callable[..., Any] | None:
    """The boxed-first twin of an entry made by ``generate_calling_code`` over the same
    ``ns`` (Note [Boxed-first entries]), or None for a schema that got the generic entry.
    ``ns`` must also hold ``_td_b0`` (arguments' word -> (boxed kernel, key set) or
    (entry, None)) and ``_td_bo`` (the OpOverload).

    >>> from tensordispatch.schema import parse_schema
    >>> facts = CallingFacts.of(parse_schema("f(Tensor x, int n=2) -> Tensor"))
    >>> class T: _key_set = 1
    >>> ns = {"_td_c": None, "_td_st": local_state(), "_td_bo": "op"}
    >>> _ = generate_calling_code(facts, "f", ns)
    >>> ns["_td_b0"] = {1: (lambda op, ks, stack: (op, ks, stack[1:]), "ks")}
    >>> generate_boxed_first_entry(facts, "f", ns)(T())
    ('op', 'ks', [2])
    """
    if not fname.isidentifier() or keyword.iskeyword(fname):
        return None
    scratch = dict(ns)
    code = _entry_source(facts, fname, boxed_first=True)
    where = f"<tensordispatch boxed-first entry {facts.declaration}>"
    # Generated code by design (Note [Generated entry functions]).
    exec(compile(code, where, "exec"), scratch)  # noqa: S102
    proto = scratch[fname]
    fn = FunctionType(proto.__code__, ns, fname, proto.__defaults__)
    fn.__kwdefaults__ = proto.__kwdefaults__
    return fn
