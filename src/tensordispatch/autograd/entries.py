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

Note [Inline recording]
For a one-output functional operator whose differentiable inputs are required plain
tensors, the recording branch is generated into the same function (torch's VariableType
does the same in C++): the arguments are locals, so what the formulas of the inputs that
require grad read is saved by direct expressions (``_td_s['other'] = _td_ST(other,
False)``, ``self.dtype`` for ``self.scalar_type()``) instead of a loop of getters over an
argument tuple; the node is built, the backend entry called under torch's
AutoDispatchBelowADInplaceOrView (the autograd keys and ADInplaceOrView excluded for
nested calls) and the output linked, in the order kernels.py's ``record`` does it.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from types import FunctionType
from typing import Any

from tensordispatch.autograd.graph import (
    NO_ACCUMULATOR,
    NODE_SEQUENCE,
    AccumulateGrad,
    SavedTensor,
    TensorMeta,
    gradient_edge,
    meta_of,
)
from tensordispatch.dispatch.calling import NO_DEFAULT, NOT_GIVEN, CallingFacts, entry_parameters
from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import (
    AFTER_AUTOGRAD_RAW,
    AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW,
    keyset_raw,
)
from tensordispatch.dispatch.tls import local_state
from tensordispatch.tensor import Tensor

__all__ = ["InlineRecord", "autograd_entry", "autograd_entry_source"]

# Below a functional operator's autograd kernel, ADInplaceOrView is skipped: only the
# result-version kernels of inference_versions.py sit there (Note [Versions of results made
# from inference tensors]), and a normal call must not reach them (torch's guard).
_AFTER_FN = AFTER_AUTOGRAD_RAW & ~keyset_raw(DispatchKey.ADInplaceOrView)


@dataclass(frozen=True, slots=True)
class InlineRecord:
    """What the recording branch of a one-output functional operator does, for generating it
    inline (Note [Inline recording]): the node class, and per saved value its name, the
    argument it is read from, the attribute read (``sym_sizes``, ``scalar_type``, ... or
    None for the value itself) and the formulas (by index) that read it."""

    node_class: type
    saves: tuple[tuple[str, str, str | None, tuple[int, ...]], ...]
    uses_result: bool
    attributes: dict[str, Callable[[Any], Any]]


_Compiled = tuple[Any, tuple[Any, ...] | None, dict[str, Any] | None]
_CompileKey = tuple[str, tuple[int, ...], bool, Any, bool, bool]
_COMPILED: dict[_CompileKey, _Compiled] = {}
_ST = local_state()
_BELOW_ADIOV = AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW
# attributes read inline from a required plain Tensor argument
_NOT_VIEW = "_m{}.view_version is None"
_INLINE_ATTRS = {"sym_sizes": "._shape", "scalar_type": ".dtype", "sym_strides": "._strides"}


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


def _forward_lines(facts: CallingFacts, optional: list[str], indent: str, target: str) -> list[str]:
    """Lines calling the backend entry with exactly the given arguments; ``target`` is
    ``return`` or an assignment (``_td_r =``)."""
    npos = facts.num_positional
    pos_required = [n for n in facts.names[:npos] if n not in optional]
    kw_required = [n for n in facts.names[npos:] if n not in optional]
    fast = ", ".join(pos_required + [f"{n}={n}" for n in kw_required])
    if not optional:
        return [f"{indent}{target} _td_below({fast})"]
    return [
        f"{indent}if {' and '.join(f'{n} is _NO' for n in optional)}:",
        f"{indent}    {target} _td_below({fast})",
        f"{indent}else:",
        *_build_lines(facts, optional, indent + "    "),
        f"{indent}    {target} _td_below(*_td_a, **_td_kw)",
    ]


def _plain(facts: CallingFacts, i: int) -> bool:
    """Whether argument ``i`` is a required plain Tensor."""
    return facts.defaults[i] is NO_DEFAULT and dict(facts.dispatch).get(i) == "t"


def _save_expression(facts: CallingFacts, optional: list[str], arg: str, attr: str | None) -> str:
    i = facts.names.index(arg)
    value = f"(_td_d{i} if {arg} is _NO else {arg})" if arg in optional else arg
    if _plain(facts, i):
        if attr is None:
            return f"_td_ST({arg}, False)"
        if attr in _INLINE_ATTRS:
            return f"{arg}{_INLINE_ATTRS[attr]}"
    if attr is None:  # numbers (Scalar, int, float) are stored as they are
        return f"({value} if type({value}) in _td_numbers else _td_save({value}))"
    return f"_td_readattr(_td_A_{attr}, {value})"


def _record_lines(
    facts: CallingFacts,
    positions: tuple[int, ...],
    optional: list[str],
    inline: InlineRecord,
    view: bool = False,
) -> list[str]:
    """The recording branch (Note [Inline recording])."""
    names = facts.names
    diff = [names[i] for i in positions]
    lines = [f"    _n{k} = _m{k} is not None and _m{k}.requires_grad" for k in range(len(diff))]
    for k, n in enumerate(diff):  # gradient_edge, inlined for a non-leaf that is no view
        lines += [  # and for a leaf that requires grad (its AccumulateGrad, kept or new)
            f"    if _m{k} is None:",
            f"        _e{k} = _td_noedge",
            f"    elif type(_m{k}) is not _td_TM:",
            f"        _e{k} = _td_edge({n})",
            f"    elif _m{k}.grad_fn is not None:",
            (
                f"        _e{k} = (_m{k}.grad_fn, _m{k}.output_nr) if {_NOT_VIEW.format(k)} "
                f"else _td_edge({n})"
            ),
            f"    elif _m{k}.requires_grad:",
            f"        _td_g = _m{k}.grad_accumulator",
            "        _td_g = None if _td_g is None else _td_g()",
            "        if _td_g is None:",
            f"            _td_g = _td_AG({n})",
            f"            _m{k}.grad_accumulator = _td_weak(_td_g)",
            f"        _e{k} = _td_noedge if _td_g is _td_noacc else (_td_g, 0)",
            "    else:",
            f"        _e{k} = _td_noedge",
        ]
    lines += [  # Node.__init__'s fields, set directly (tests/autograd/test_entries.py)
        "    _td_node = _td_new(_td_cls)",
        "    _td_node._sequence_nr = _td_seq()",
        "    _td_node._released = False",
        "    _td_node._pre_hooks = ()",
        "    _td_node._post_hooks = ()",
        f"    _td_node.next_functions = ({''.join(f'_e{k}, ' for k in range(len(diff)))})",
        f"    _td_node._input_meta = ({''.join(f'({n}._shape, {n}.dtype), ' for n in diff)})",
        f"    _td_node._needed = ({''.join(f'_n{k}, ' for k in range(len(diff)))})",
        "    _td_s = {}",
    ]
    for name, arg, attr, formulas in inline.saves:
        cond = " or ".join(f"_n{k}" for k in formulas)
        i = facts.names.index(arg)
        if attr is None and _plain(facts, i):  # SavedTensor(arg, False), inlined
            lines += [
                f"    if {cond}:",
                "        _td_v = _td_new(_td_ST)",
                f"        _td_vc = {arg}._vc",
                "        _td_v._version = 0 if _td_vc is None else _td_vc.version",
                "        _td_v._is_output = False",
                "        _td_v._requires_grad = False",
                "        _td_v._output_nr = 0",
                f"        _td_v._data = {arg}",
                f"        _td_s[{name!r}] = _td_v",
            ]
            continue
        expr = _save_expression(facts, optional, arg, attr)
        lines.append(f"    if {cond}: _td_s[{name!r}] = {expr}")
    lines += [
        "    _td_node._saved = _td_s",
        "    _td_x = _td_st.excluded",
        "    _td_st.excluded = _td_x | _td_BELOW",
        "    try:",
        *_forward_lines(facts, optional, "        ", "_td_r ="),
        "    finally:",
        "        _td_st.excluded = _td_x",
        "    _td_m = _td_r._autograd_meta",
        "    if _td_m is None:",
        "        _td_m = _td_r._autograd_meta = _td_TM()",
        "    elif type(_td_m) is not _td_TM:",
        "        _td_m = _td_meta_of(_td_r)",
        "    _td_m.requires_grad = True",
        "    _td_m.grad_fn = _td_node",
        "    _td_m.output_nr = 0",
        "    if _td_r._base is not None:",
        "        _td_m.view_version = _td_r._version",
    ]
    if inline.uses_result:
        lines.append("    _td_s['result'] = _td_ST(_td_r, True)")
    if view:  # a view of a marked view inherits its creation meta (views.py)
        lines.append(f"    _td_view(_td_r, {diff[0]})")
    lines.append("    return _td_r")
    return lines


def autograd_entry_source(
    facts: CallingFacts,
    fname: str,
    positions: tuple[int, ...],
    fresh: bool,
    inline: InlineRecord | None = None,
    many: bool = False,
    view: bool = False,
) -> str:
    """The source of the generated entry (Notes [The no-grad path], [Inline recording]);
    ``view``: a view op, whose unrecorded outputs get their creation meta (views.py, Note
    [View creation meta]).

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
    if all(n in optional for n in names[facts.num_positional :]):
        # Keyword-only parameters keep a call from CPython 3.11's specialized calls of
        # Python functions (~20 ns of the no-grad path); the dispatcher passes them by
        # keyword, so without the ``*`` they bind the same.
        params = params.replace("*, ", "").removesuffix(", *")
    diff = [names[i] for i in positions]
    plain = [(k, n) for k, n in enumerate(diff) if n not in optional]
    lines = [f"def {fname}({params}):"]
    if plain:
        lines.append("    try:")
        lines += [f"        _m{k} = {n}._autograd_meta" for k, n in plain]
        lines.append("    except AttributeError:")
        lines += [f'        _m{k} = getattr({n}, "_autograd_meta", None)' for k, n in plain]
    # an optional tensor (None, or not given) has no metadata
    lines += [
        f'    _m{k} = getattr({n}, "_autograd_meta", None)'
        for k, n in enumerate(diff)
        if n in optional
    ]
    quiet = " and ".join(f"(_m{k} is None or not _m{k}.requires_grad)" for k in range(len(diff)))
    lines.append(f"    if ({quiet}) or not _td_st.grad_enabled:")
    if view:
        lines += _forward_lines(facts, optional, "        ", "_td_r =")
        if many:
            lines.append(f"        _td_view(_td_r, {diff[0]})")
        else:
            lines.append("        if not _td_st.grad_enabled:")
            lines.append(f"            _td_view(_td_r, {diff[0]})")
        lines.append("        return _td_r")
    elif not fresh:
        lines += _forward_lines(facts, optional, "        ", "return")
    elif many:  # several outputs: the reset walks them (kernels_general.py)
        every = ", ".join(n for n in names if n not in optional)
        given = "".join(f", {n}" for n in optional)
        lines += [
            *_forward_lines(facts, optional, "        ", "_td_r ="),
            f"        _td_fresh(_td_r, ({every}{given},))",
            "        return _td_r",
        ]
    else:
        every = ", ".join(n for n in names if n not in optional)
        given = "".join(f", {n}" for n in optional)
        lines += [
            *_forward_lines(facts, optional, "        ", "_td_r ="),
            "        try:",
            "            if _td_r._vc is not None:",
            f"                _td_fresh(_td_r, ({every}{given},))",
            "        except AttributeError:  # a backend's box",
            "            pass",
            "        return _td_r",
        ]
    if inline is not None:
        lines += _record_lines(facts, positions, optional, inline, view)
    elif optional:
        lines += _build_lines(facts, optional, "    ")
        lines.append("    return _td_record(_td_raw, _td_op, tuple(_td_a), _td_kw)")
    else:
        npos = facts.num_positional
        pos_required = [n for n in names[:npos] if n not in optional]
        kw_required = [n for n in names[npos:] if n not in optional]
        args = ", ".join(pos_required) + ("," if len(pos_required) == 1 else "")
        kws = ", ".join(f"{n!r}: {n}" for n in kw_required)
        lines.append(f"    return _td_record(_td_raw, _td_op, ({args}), {{{kws}}})")
    return "\n".join(lines) + "\n"


# Note [Kernels that build their result directly]
# The no-grad branch resets a fresh output's version (Note [Fresh outputs at version 0] in
# kernels.py) because a composite kernel below may build its result with in-place calls that
# go through ADInplaceOrView. Our CPU kernels do not: the codegen's CPU wrappers allocate the
# result and run the impl on its NumPy array, and the fused kernels of backends/cpu/fresh.py
# wrap NumPy's fresh array (neither dispatches an in-place call on the result), so the
# entries over them skip the reset (~10 ns of every no-grad call). Any other kernel (a
# composite, another backend, a kernel registered by a user) keeps it.
_DIRECT_MODULES = ("tensordispatch.backends.cpu.fresh",)


def _builds_fresh_directly(below: Any) -> bool:
    module = getattr(below, "__module__", None)
    if module in _DIRECT_MODULES:
        return True
    name = getattr(below, "__name__", "")
    return module == "tensordispatch.generated.registrations" and name.startswith("wrapper_CPU_")


def _save_any(v: Any) -> Any:
    """A saved value of an argument whose type is not a plain Tensor (kernels.py's rule)."""
    if isinstance(v, Tensor):
        return SavedTensor(v, False)
    if type(v) in (list, tuple) and v and all(isinstance(t, Tensor) for t in v):
        return [SavedTensor(t, False) for t in v]
    return v


def _read_attribute(fn: Callable[[Any], Any], v: Any) -> Any:
    return None if v is None else fn(v)


def _compile(
    facts: CallingFacts,
    fname: str,
    positions: tuple[int, ...],
    fresh: bool,
    inline: InlineRecord | None,
    many: bool,
    view: bool,
) -> _Compiled:
    scratch: dict[str, Any] = {"_NO": NOT_GIVEN}
    where = f"<tensordispatch autograd entry {facts.declaration}>"
    source = autograd_entry_source(facts, fname, positions, fresh, inline, many, view)
    # Generated code by design (Note [The no-grad path]); built from a parsed schema's
    # identifiers only.
    exec(compile(source, where, "exec"), scratch)  # noqa: S102
    proto = scratch[fname]
    return proto.__code__, proto.__defaults__, proto.__kwdefaults__


def _eligible(
    facts: CallingFacts | None, fname: str, positions: tuple[int, ...], inline: bool
) -> bool:
    """Whether the generated form applies: identifier names, every differentiable input a
    Tensor or Tensor? (no lists: the generic kernel handles those), and with ``inline`` each
    a required plain Tensor."""
    if facts is None or not facts.identifiers_ok or not fname.isidentifier():
        return False
    forms = dict(facts.dispatch)
    if inline:
        return all(
            i < facts.num_positional and facts.defaults[i] is NO_DEFAULT and forms.get(i) == "t"
            for i in positions
        )
    return all(forms.get(i) in ("t", "t?") for i in positions)


def autograd_entry(
    op: Any,
    raw: int,
    positions: tuple[int, ...],
    record: Callable[..., Any],
    fresh_version: Callable[..., Any] | None,
    inline: InlineRecord | None = None,
    many: bool = False,
    view: Callable[..., Any] | None = None,
) -> Callable[..., Any] | None:
    """The autograd entry of ``op`` for final key set ``raw`` (a kernel's specializer), or
    None when the generic kernel must run (Note [The no-grad path]).

    ``record(raw, op, args, kwargs)`` is the recording branch; ``fresh_version(result,
    args)``, when given, resets a fresh output's version (Note [Fresh outputs at version 0]);
    ``inline``, when given, replaces ``record`` by generated code (Note [Inline recording]);
    ``many``: the operator may return several tensors (``fresh_version`` walks them);
    ``view``, for a view op: ``mark_view`` of views.py (Note [View creation meta]).
    """
    entry = op._entry
    facts = entry.facts
    fname = entry.qualified_name.split("::")[-1]
    if not _eligible(facts, fname, positions, inline is not None):
        return None
    assert facts is not None
    try:
        written = any(a.is_write for a in op._schema.arguments)
        below = entry.state.redispatch_miss(raw & (AFTER_AUTOGRAD_RAW if written else _AFTER_FN))
    except Exception:  # noqa: BLE001 - the generic kernel raises it at the call, in order
        return None
    if fresh_version is not None and _builds_fresh_directly(below):
        fresh_version = None  # Note [Kernels that build their result directly]
    shape = None if inline is None else (inline.saves, inline.uses_result)
    fresh, is_view = fresh_version is not None, view is not None
    key = (facts.declaration, positions, fresh, shape, many, is_view)
    compiled = _COMPILED.get(key)
    if compiled is None:
        compiled = _COMPILED[key] = _compile(facts, fname, positions, key[2], inline, many, key[5])
    code, defaults, kwdefaults = compiled
    scope = {
        "_NO": NOT_GIVEN,
        "_td_st": _ST,
        "_td_below": below,
        "_td_record": record,
        "_td_raw": raw,
        "_td_op": op,
        "_td_fresh": fresh_version,
        "_td_view": view,
        "_td_ST": SavedTensor,
        "_td_TM": TensorMeta,
        "_td_edge": gradient_edge,
        "_td_AG": AccumulateGrad,
        "_td_weak": weakref.ref,
        "_td_meta_of": meta_of,
        "_td_save": _save_any,
        "_td_readattr": _read_attribute,
        "_td_BELOW": _BELOW_ADIOV,
        "_td_new": object.__new__,
        "_td_seq": NODE_SEQUENCE.__next__,
        "_td_noedge": (None, 0),
        "_td_noacc": NO_ACCUMULATOR,
        "_td_numbers": (int, float, bool),
    }
    for i, d in enumerate(facts.defaults):
        if d is not NO_DEFAULT:
            scope[f"_td_d{i}"] = d
    if inline is not None:
        scope["_td_cls"] = inline.node_class
        for attr, fn_of in inline.attributes.items():
            scope[f"_td_A_{attr}"] = fn_of
    fn = FunctionType(code, scope, fname, defaults)
    fn.__kwdefaults__ = kwdefaults
    return fn
