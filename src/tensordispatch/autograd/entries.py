"""Generated per-operator autograd entries: the no-grad path in one hop.

Owns the code generated, once per (schema, differentiable positions), for the Autograd slot
of an operator whose autograd kernel is the fast-path kernel of kernels.py. Must not record
graphs itself: the recording branch calls the kernel's ``record`` unchanged.

Note [The no-grad path]
The autograd kernel sits on every call on a CPU tensor (as torch's VariableType does); its
no-grad branch must cost a couple of attribute checks. Called through the generic RAW_KEYSET
convention, ``kernel(raw, op, *args, **kwargs)`` pays a ``partial``, packing and unpacking
``*args``/``**kwargs`` (~0.15 us in CPython 3.11) and the redispatch lookup per call. The
dispatcher instead asks the kernel's specializer (``KernelFunction.specializer``) for the
entry of one (operator, final key set), and caches it in the operator's published state; we
return a function with the operator's exact Python signature and the backend entry below
autograd bound in. For ``aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1)``::

    def add(self, other, *, alpha=_NO):
        try:
            _m0 = self._autograd_meta
            _m1 = other._autograd_meta
        except AttributeError:      # a backend's box carrying a key set
            _m0 = getattr(self, "_autograd_meta", None)
            _m1 = getattr(other, "_autograd_meta", None)
        if ((_m0 is None or not _m0.requires_grad) and (...)) or not _td_st.grad_enabled:
            if alpha is _NO:
                _td_r = _td_below(self, other)
            else:
                ... forward exactly the given arguments ...
            ... version 0 for a fresh output (Note [Fresh outputs at version 0]) ...
            return _td_r
        ... the given arguments as (args, kwargs) ...
        return _td_record(_td_raw, _td_op, _td_a, _td_kw)

The backend entry is the operator's redispatch entry for ``raw & AFTER_AUTOGRAD`` in the
same published state, so it is exactly what the generic kernel would look up; a
registration republishes the state, and the entries are rebuilt (operator.py, Note
[Published dispatch state]). Like the dispatcher's boxing adapters and mode entries, the
code depends only on the schema and is compiled once; each (operator, key set) gets a
function over it with its own globals.
"""

from __future__ import annotations

from collections.abc import Callable
from types import FunctionType
from typing import Any

from tensordispatch.dispatch.calling import NO_DEFAULT, NOT_GIVEN, CallingFacts, entry_parameters
from tensordispatch.dispatch.keyset import AFTER_AUTOGRAD_RAW
from tensordispatch.dispatch.tls import local_state

__all__ = ["autograd_entry", "autograd_entry_source"]

_Compiled = tuple[Any, tuple[Any, ...] | None, dict[str, Any] | None]
_COMPILED: dict[tuple[str, tuple[int, ...], bool], _Compiled] = {}
_ST = local_state()


def _build_lines(facts: CallingFacts, optional: list[str], indent: str) -> list[str]:
    """Lines building ``_td_a`` (list) and ``_td_kw`` from exactly the given arguments, as
    the dispatcher's entry forwards them (trailing positionals left out)."""
    npos = facts.num_positional
    pos_required = [n for n in facts.names[:npos] if n not in optional]
    kw_required = [n for n in facts.names[npos:] if n not in optional]
    lines = [
        f"{indent}_td_a = [{', '.join(pos_required)}]",
        f"{indent}_td_kw = {{{', '.join(f'{n!r}: {n}' for n in kw_required)}}}",
    ]
    for i, name in enumerate(facts.names):
        if name not in optional:
            continue
        if i < npos:
            lines += [
                f"{indent}if {name} is not _NO:",
                f"{indent}    if len(_td_a) == {i}: _td_a.append({name})",
                f"{indent}    else: _td_kw[{name!r}] = {name}",
            ]
        else:
            lines.append(f"{indent}if {name} is not _NO: _td_kw[{name!r}] = {name}")
    return lines


def autograd_entry_source(
    facts: CallingFacts, fname: str, positions: tuple[int, ...], fresh: bool
) -> str:
    """The source of the generated entry (Note [The no-grad path]).

    >>> from tensordispatch.schema import parse_schema
    >>> f = CallingFacts.of(parse_schema("neg(Tensor self) -> Tensor"))
    >>> print(autograd_entry_source(f, "neg", (0,), False), end="")
    def neg(self):
        try:
            _m0 = self._autograd_meta
        except AttributeError:
            _m0 = getattr(self, "_autograd_meta", None)
        if ((_m0 is None or not _m0.requires_grad)) or not _td_st.grad_enabled:
            return _td_below(self)
        return _td_record(_td_raw, _td_op, (self,), {})
    """
    params, optional, _ = entry_parameters(facts)
    names = facts.names
    npos = facts.num_positional
    diff = [names[i] for i in positions]
    lines = [f"def {fname}({params}):", "    try:"]
    lines += [f"        _m{k} = {n}._autograd_meta" for k, n in enumerate(diff)]
    lines.append("    except AttributeError:")
    lines += [f'        _m{k} = getattr({n}, "_autograd_meta", None)' for k, n in enumerate(diff)]
    quiet = " and ".join(f"(_m{k} is None or not _m{k}.requires_grad)" for k in range(len(diff)))
    lines.append(f"    if ({quiet}) or not _td_st.grad_enabled:")
    pos_required = [n for n in names[:npos] if n not in optional]
    kw_required = [n for n in names[npos:] if n not in optional]
    fast = ", ".join(pos_required + [f"{n}={n}" for n in kw_required])
    build = _build_lines(facts, optional, "        ")
    if not fresh:
        if optional:
            lines += [
                f"        if {' and '.join(f'{n} is _NO' for n in optional)}:",
                f"            return _td_below({fast})",
                *build,
                "        return _td_below(*_td_a, **_td_kw)",
            ]
        else:
            lines.append(f"        return _td_below({fast})")
    else:
        if optional:
            lines += [
                f"        if {' and '.join(f'{n} is _NO' for n in optional)}:",
                f"            _td_r = _td_below({fast})",
                "        else:",
                *("    " + line for line in build),
                "            _td_r = _td_below(*_td_a, **_td_kw)",
            ]
        else:
            lines.append(f"        _td_r = _td_below({fast})")
        every = ", ".join(n for n in names if n not in optional)
        given = "".join(f", {n}" for n in optional)
        lines += [
            "        try:",
            "            if _td_r._vc is not None:",
            f"                _td_fresh(_td_r, ({every}{given},))",
            "        except AttributeError:  # a backend's box",
            "            pass",
            "        return _td_r",
        ]
    if optional:
        lines += _build_lines(facts, optional, "    ")
        lines.append("    return _td_record(_td_raw, _td_op, tuple(_td_a), _td_kw)")
    else:
        args = ", ".join(pos_required) + ("," if len(pos_required) == 1 else "")
        kws = ", ".join(f"{n!r}: {n}" for n in kw_required)
        lines.append(f"    return _td_record(_td_raw, _td_op, ({args}), {{{kws}}})")
    return "\n".join(lines) + "\n"


def _compile(facts: CallingFacts, fname: str, positions: tuple[int, ...], fresh: bool) -> _Compiled:
    scratch: dict[str, Any] = {"_NO": NOT_GIVEN}
    where = f"<tensordispatch autograd entry {facts.declaration}>"
    source = autograd_entry_source(facts, fname, positions, fresh)
    # Generated code by design (Note [The no-grad path]); built from a parsed schema's
    # identifiers only.
    exec(compile(source, where, "exec"), scratch)  # noqa: S102
    proto = scratch[fname]
    return proto.__code__, proto.__defaults__, proto.__kwdefaults__


def _eligible(facts: CallingFacts | None, fname: str, positions: tuple[int, ...]) -> bool:
    """Whether the generated form applies: identifier names, and every differentiable
    input a required plain Tensor (the generic kernel handles the rest)."""
    if facts is None or not facts.identifiers_ok or not fname.isidentifier():
        return False
    forms = dict(facts.dispatch)
    return all(
        i < facts.num_positional and facts.defaults[i] is NO_DEFAULT and forms.get(i) == "t"
        for i in positions
    )


def autograd_entry(
    op: Any,
    raw: int,
    positions: tuple[int, ...],
    record: Callable[..., Any],
    fresh_version: Callable[..., Any] | None,
) -> Callable[..., Any] | None:
    """The autograd entry of ``op`` for final key set ``raw`` (a kernel's specializer), or
    None when the generic kernel must run (Note [The no-grad path]).

    ``record(raw, op, args, kwargs)`` is the recording branch; ``fresh_version(result,
    args)``, when given, resets a fresh output's version (Note [Fresh outputs at version 0]).
    """
    entry = op._entry
    facts = entry.facts
    fname = entry.qualified_name.split("::")[-1]
    if not _eligible(facts, fname, positions):
        return None
    assert facts is not None
    try:
        below = entry.state.redispatch_miss(raw & AFTER_AUTOGRAD_RAW)
    except Exception:  # noqa: BLE001 - the generic kernel raises it at the call, in order
        return None
    key = (facts.declaration, positions, fresh_version is not None)
    compiled = _COMPILED.get(key)
    if compiled is None:
        compiled = _COMPILED[key] = _compile(facts, fname, positions, key[2])
    code, defaults, kwdefaults = compiled
    scope = {
        "_NO": NOT_GIVEN,
        "_td_st": _ST,
        "_td_below": below,
        "_td_record": record,
        "_td_raw": raw,
        "_td_op": op,
        "_td_fresh": fresh_version,
    }
    fn = FunctionType(code, scope, fname, defaults)
    fn.__kwdefaults__ = kwdefaults
    return fn
