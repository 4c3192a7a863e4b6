"""The text of the generated calling code (Note [Generated entry functions] in calling.py).

Owns the source of an operator's entry function, its boxed-first twin and its boxing
adapter, built from CallingFacts: the parameter list, the key-set lines, the cache lookup,
the argument checks and the forwarding of exactly the arguments given. Must not exec
anything or read tables (calling.py compiles these texts into the operator's namespace).
"""

from __future__ import annotations

from collections.abc import Callable

from tensordispatch.dispatch.calling_facts import NO_DEFAULT, CallingFacts
from tensordispatch.dispatch.tls import local_state

__all__ = ["boxer_source", "entry_parameters", "entry_source", "required_lines"]


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


def entry_source(facts: CallingFacts, fname: str, boxed_first: bool = False) -> str:
    """The source of the entry function ``fname`` (its boxed-first twin with
    ``boxed_first``; Notes [Generated entry functions], [Boxed-first entries] in calling.py).

    >>> from tensordispatch.schema import parse_schema
    >>> facts = CallingFacts.of(parse_schema("f(Tensor self, float from=0) -> Tensor"))
    >>> print(entry_source(facts, "f").splitlines()[0])
    def f(self, _td_arg1=_NO, **_td_more):
    """
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


def boxer_source(facts: CallingFacts, fname: str) -> str:
    """The source of the boxing adapter ``fname`` (Note [Boxing adapters] in calling.py).

    >>> from tensordispatch.schema import parse_schema
    >>> facts = CallingFacts.of(parse_schema("f(Tensor x, int n=2) -> Tensor"))
    >>> print(boxer_source(facts, "f"), end="")
    def f(x, n=_NO):
        return _td_fn(_td_op, _td_ks, [x, (_td_d1 if n is _NO else n)])
    """
    params, _, _ = entry_parameters(facts)
    lines = [f"def {fname}({params}):"]
    if params.endswith("**_td_more"):
        lines += required_lines(facts, fname)
    lines.append(f"    return _td_fn(_td_op, _td_ks, {_stack_items(facts)})")
    return "\n".join(lines) + "\n"
