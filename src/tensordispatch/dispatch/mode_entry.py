"""Per-operator generated kernels for the Python key: a call under a DispatchMode in one hop.

Owns the code generated, once per schema, for the slot of the Python key: it normalizes the
call's arguments as torch hands them to ``__torch_dispatch__``, computes ``types``, runs the
innermost mode's handler with the thread-local state swapped, and restores it. Must not
know about tables or registrations: Python's global fallback (fallbacks.py) names
``mode_entry`` as its specializer, and ``make_entry`` (kernel.py) asks it for a callable
when it builds a cache entry. Behaviour is that of ``python_fallback_kernel`` (modes.py,
Note [Modes as dispatch keys]); this is its fast form.

Note [Generated mode entries]
The generic fallback is called as ``fallback(raw, op, *args, **kwargs)`` and must walk the
operator's dispatch arguments in a loop to learn whether any carries the Python key (the
``types`` of the handler); a loop costs a few hundred ns per call in CPython. For
``ns::f(Tensor a, Tensor b, *, int n=1) -> Tensor`` we exec instead::

    def f(a, b, *, n=_NO):
        if n is _NO:
            _td_a = (a, b); _td_kw = {}
            _td_b = a._key_set | b._key_set
        else:
            _td_s = [a, b, (_td_d2 if n is _NO else n)]
            _td_b = _td_bits(_td_s)
            _td_a, _td_kw = _td_unbox(_td_s)
        ... swap the thread-local state, run the handler, restore ...

The handler receives what torch gives it: the positional (not kwarg-only) arguments as a
tuple up to the last one that differs from its default, the kwarg-only ones that differ
from their defaults as a dict, whatever way the caller spelled them (``f(a=x, b=y)`` gives
``args == (x, y)``). The code depends only on the schema, so it is compiled once per schema
text; each (operator, key set) gets a function over that code with its own globals (the
operator and the key set), as the boxing adapters do (calling.py, Note [Boxing adapters]).
"""

from __future__ import annotations

import keyword
from collections.abc import Callable
from types import FunctionType
from typing import Any

from tensordispatch.dispatch.calling import (
    NO_DEFAULT,
    NOT_GIVEN,
    CallingFacts,
    entry_parameters,
    required_lines,
)
from tensordispatch.dispatch.keyset import DEFAULT_EXCLUDED_RAW, DEFAULT_INCLUDED_RAW
from tensordispatch.dispatch.modes import (
    ABOVE_PYTHON_RAW,
    HANDLER_EXCLUDED_RAW,
    INCLUDED_WITH_MODES_RAW,
    NOT_MODE_WORD_RAW,
    PYTHON_AFTER_RAW,
    PYTHON_BIT_RAW,
    not_implemented_message,
    python_types,
)
from tensordispatch.dispatch.tls import local_state

__all__ = ["mode_entry", "mode_entry_source"]

# schema text -> (code of the generated entry, the globals every instance shares)
_COMPILED: dict[str, tuple[Any, dict[str, Any], tuple[Any, ...] | None, dict[str, Any] | None]]
_COMPILED = {}


def _bits_of(facts: CallingFacts) -> Callable[[list[Any]], int]:
    """OR of the key sets of the dispatch arguments in a full stack (the general path)."""
    dispatch = facts.dispatch

    def bits(stack: list[Any]) -> int:
        raw = 0
        for i, form in dispatch:
            x = stack[i]
            if x is None or x is NOT_GIVEN:
                continue
            if form == "t" or form == "t?":
                raw |= x._key_set
            else:
                for y in x:
                    if y is not None:
                        raw |= y._key_set
        return raw

    return bits


def _fast_lines(facts: CallingFacts, required: list[str]) -> list[str] | None:
    """The normalization of a call that gave no optional argument, or None when it needs
    the general path (a required argument after an optional one, a tensor-list argument)."""
    npos = facts.num_positional
    names = facts.params
    positional = [n for n in names[:npos] if n in required]
    if positional != [n for n in names[:npos]][: len(positional)]:
        return None  # a required positional argument after an optional one
    if any(f != "t" or names[i] not in required for i, f in facts.dispatch):
        return None
    real = facts.names
    kw = ", ".join(f"{real[i]!r}: {n}" for i, n in enumerate(names) if i >= npos and n in required)
    tup = f"({positional[0]},)" if len(positional) == 1 else f"({', '.join(positional)})"
    tensors = [names[i] for i, _ in facts.dispatch]
    if not tensors:
        return [f"_td_a = {tup}", f"_td_kw = {{{kw}}}", "_td_ty = ()"]
    same = " and ".join(f"{n}._key_set is _td_nk" for n in tensors)
    bits = " | ".join(f"{n}._key_set" for n in tensors)
    # Note [Types by identity]
    return [
        f"_td_a = {tup}",
        f"_td_kw = {{{kw}}}",
        f"if {same}:",
        "    _td_ty = ()",
        "else:",
        f"    _td_ty, _td_nk = _td_tyk(_td_a, _td_kw, {bits}, {tensors[0]}._key_set, _td_nk)",
    ]


# Note [Types by identity]
# ``types`` needs to know whether a tensor argument carries the Python key: two int ORs and
# an AND per call. Tensors of one device share one key-set int object (the tensor layer
# copies its device's), so each generated entry remembers, in its own global ``_td_nk``,
# the last key-set object it saw without the Python key: when every tensor argument has
# exactly that object, ``types`` is ``()`` after a few identity tests. Anything else takes
# the full test (and may update the memo; threads race harmlessly, any value is correct).


def _types_and_memo(
    args: tuple[Any, ...], kwargs: dict[str, Any], bits: int, first: Any, memo: Any
) -> tuple[tuple[type, ...], Any]:
    if bits & PYTHON_BIT_RAW:
        return python_types((*args, *kwargs.values())), memo
    return (), first


def _general_lines(facts: CallingFacts) -> list[str]:
    items = []
    for i, name in enumerate(facts.params):
        d = facts.defaults[i]
        if d is NO_DEFAULT:
            items.append(name)
        else:
            dv = f"list(_td_d{i})" if isinstance(d, list) else f"_td_d{i}"
            items.append(f"({dv} if {name} is _NO else {name})")
    return [
        f"_td_s = [{', '.join(items)}]",
        "_td_b = _td_bits(_td_s)",
        "_td_a, _td_kw = _td_unbox(_td_s)",
        "_td_ty = _td_types((*_td_a, *_td_kw.values())) if _td_b & _td_py else ()",
    ]


_RUN = """\
    _td_d = _td_st.__dict__
    _td_ms = _td_d["modes"]
    if not _td_ms:
        return _td_op.redispatch(_td_raw & _td_pa, *_td_a, **_td_kw)
    _td_i = _td_d["included"]
    _td_x = _td_d["excluded"]
    _td_m = _td_ms.pop()
    if not _td_ms:
        _td_d["included"] = _td_di if _td_i is _td_mi else _td_i & _td_nm
    _td_d["excluded"] = _td_hx if _td_x is _td_dx else _td_x | _td_ap
    try:
        _td_r = _td_m.__torch_dispatch__(_td_op, _td_ty, _td_a, _td_kw)
    finally:
        _td_ms.append(_td_m)
        _td_d["included"] = _td_i
        _td_d["excluded"] = _td_x
    if _td_r is NotImplemented:
        raise TypeError(_td_ni(_td_op, _td_m))
    return _td_r
"""


def mode_entry_source(facts: CallingFacts, fname: str) -> str:
    """The source of the generated Python-key entry of one schema (Note [Generated mode
    entries]).

    >>> from tensordispatch.schema import parse_schema
    >>> facts = CallingFacts.of(parse_schema("f(Tensor a, Tensor b) -> Tensor"))
    >>> print("\\n".join(mode_entry_source(facts, "f").splitlines()[:6]))
    def f(a, b):
        global _td_nk
        _td_a = (a, b)
        _td_kw = {}
        if a._key_set is _td_nk and b._key_set is _td_nk:
            _td_ty = ()
    """
    params, optional, late_required = entry_parameters(facts)
    truly_optional = [n for n in optional if n not in late_required]
    required = [n for n in facts.params if n not in truly_optional]
    fast = _fast_lines(facts, required) if not late_required else None
    lines = [f"def {fname}({params}):", *required_lines(facts, fname)]
    if fast is not None:
        lines.append("    global _td_nk")
    if fast is not None and not truly_optional:
        lines += [f"    {line}" for line in fast]
    elif fast is not None:
        lines.append(f"    if {' and '.join(f'{n} is _NO' for n in truly_optional)}:")
        lines += [f"        {line}" for line in fast]
        lines.append("    else:")
        lines += [f"        {line}" for line in _general_lines(facts)]
    else:
        lines += [f"    {line}" for line in _general_lines(facts)]
    return "\n".join(lines) + "\n" + _RUN


def _compile(facts: CallingFacts, fname: str) -> tuple[Any, dict[str, Any], Any, Any]:
    shared: dict[str, Any] = {
        "_NO": NOT_GIVEN,
        "_td_bits": _bits_of(facts),
        "_td_unbox": facts.unbox,
        "_td_types": python_types,
        "_td_tyk": _types_and_memo,
        "_td_nk": None,
        "_td_st": local_state(),
        "_td_py": PYTHON_BIT_RAW,
        "_td_pa": PYTHON_AFTER_RAW,
        "_td_nm": NOT_MODE_WORD_RAW,
        "_td_ap": ABOVE_PYTHON_RAW,
        # Note [Canonical mode words] in modes.py
        "_td_di": DEFAULT_INCLUDED_RAW,
        "_td_mi": INCLUDED_WITH_MODES_RAW,
        "_td_dx": DEFAULT_EXCLUDED_RAW,
        "_td_hx": HANDLER_EXCLUDED_RAW,
        "_td_ni": not_implemented_message,
        "_td_op": None,
        "_td_raw": 0,
        "_td_rn": facts.keywords_by_name,
    }
    for i, d in enumerate(facts.defaults):
        if d is not NO_DEFAULT:
            shared[f"_td_d{i}"] = d
    scratch = dict(shared)
    where = f"<tensordispatch mode entry {facts.declaration}>"
    # Generated code by design (Note [Generated mode entries]); built from a parsed
    # schema's identifiers only.
    exec(compile(mode_entry_source(facts, fname), where, "exec"), scratch)  # noqa: S102
    proto = scratch[fname]
    shared["__builtins__"] = scratch["__builtins__"]
    return proto.__code__, shared, proto.__defaults__, proto.__kwdefaults__


def mode_entry(op: Any, raw: int) -> Callable[..., Any] | None:
    """The generated Python-key entry of ``op`` for final key set ``raw`` (the specializer
    of Python's global fallback), or None when the operator needs the generic fallback (no
    schema, or an operator name that is not a Python identifier). Argument names that
    cannot be parameters (``from``) are renamed (Note [Keyword-named arguments] in
    calling.py).

    >>> from tensordispatch.library import Library
    >>> import tensordispatch.ops as ops
    >>> lib = Library("doc_mode_entry", "DEF"); _ = lib.define("f(Tensor x) -> Tensor")
    >>> mode_entry(ops.doc_mode_entry.f.default, 0).__name__
    'f'
    >>> lib._destroy()
    """
    entry = op._entry
    facts = entry.facts
    fname = entry.qualified_name.split("::")[-1]
    if facts is None:
        return None
    if not fname.isidentifier() or keyword.iskeyword(fname):
        return None
    compiled = _COMPILED.get(facts.declaration)
    if compiled is None:
        compiled = _COMPILED[facts.declaration] = _compile(facts, fname)
    code, shared, defaults, kwdefaults = compiled
    scope = dict(shared)
    scope["_td_op"], scope["_td_raw"] = op, raw
    fn = FunctionType(code, scope, fname, defaults)
    fn.__kwdefaults__ = kwdefaults
    return fn
