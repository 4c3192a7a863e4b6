"""Per-operator calling code generated from the schema, once per def (never per call).

Owns: the generated entry function with the operator's exact Python signature (key-set
extraction without any schema walking), its boxed-first twin, the generated boxing adapter
(unboxed call -> boxed kernel) and the generic entry for operators whose names are not
identifiers; the schema facts they are built from are calling_facts.py's and the source
text calling_source.py's (both re-exported here). Must not know about tables or registrations: it reads the published dispatch caches
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
equal to their default, which we forward. The published cache (operator.py, Note
[Published dispatch state]) has one level per pair of thread-local words: the default pair
(``_td_c0``), a mode handler's and an outer call's under one mode (``_td_c1``, ``_td_cm``,
Note [Canonical mode words] in modes.py), all recognised by identity and keyed by the
arguments' word alone; any other pair goes through ``_td_c`` (excluded word -> arguments |
included -> entry). ``_td_m`` is the miss handler (it returns None for a key-set word that
is not an int, and the entry then reports the bad argument). Plain dicts with
``try``/``except KeyError`` are the fastest lookup CPython has; a dict subclass with
``__missing__`` is not specialized by the interpreter. An argument named by a Python
keyword (``from``) gets a renamed parameter (Note [Keyword-named arguments]); only an
operator whose own name is not an identifier gets the generic ``*args, **kwargs`` entry,
which binds by name per call.

A positional argument given after left-out ones (``f(x, b=5)`` for ``f(Tensor x, int a=1,
int b=2)``) is forwarded positionally with the left-out defaults in front (a slice of
``_td_pd``; ``_td_pad`` copies a list default), as torch's kernels receive it; a keyword-only
one is forwarded by name.

Note [Explicit None defaults]
``t.uniform_(generator=None)`` (what the bindings and composites write for "no generator")
would take the entry's slow path and carry ``generator=None`` through every layer below,
each repacking ``**kwargs`` (~1 us a call on uniform_). torch's kernels never see it: its
binding drops an argument equal to its default. After the all-defaults test fails, the
entry turns each None given for an argument whose default is None into "not given" and
tests again, so such a call is the all-defaults call; the kernel sees what torch's sees.

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
from tensordispatch.dispatch.calling_source import (
    boxer_source,
    entry_parameters,
    entry_source,
    required_lines,
)
from tensordispatch.dispatch.convert import value_type_globals
from tensordispatch.dispatch.keyset import DEFAULT_EXCLUDED_RAW, DEFAULT_INCLUDED_RAW
from tensordispatch.dispatch.modes import HANDLER_EXCLUDED_RAW, INCLUDED_WITH_MODES_RAW

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
    code = entry_source(facts, fname)
    # Generated code is the design here (Note [Generated entry functions]); the source is
    # built from a parsed schema's identifiers only.
    exec(compile(code, f"<tensordispatch entry {facts.declaration}>", "exec"), ns)  # noqa: S102
    base = {k: v for k, v in ns.items() if k in ("_NO", "_td_rn") or k.startswith("_td_d")}
    base["__builtins__"] = ns["__builtins__"]
    scratch = dict(base)
    code = boxer_source(facts, fname)
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
    >>> from tensordispatch.dispatch.tls import local_state
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
    code = entry_source(facts, fname, boxed_first=True)
    where = f"<tensordispatch boxed-first entry {facts.declaration}>"
    # Generated code by design (Note [Generated entry functions]).
    exec(compile(code, where, "exec"), scratch)  # noqa: S102
    proto = scratch[fname]
    fn = FunctionType(proto.__code__, ns, fname, proto.__defaults__)
    fn.__kwdefaults__ = proto.__kwdefaults__
    return fn
