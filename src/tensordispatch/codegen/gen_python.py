"""Emit the Python API: generated/functions.py (``td.add``) and generated/methods.py.

Each public name gets one function with torch's Python signature for it: ``self`` is called
``input`` in functions, out= variants merge into their functional overload as ``out=None``,
factories take ``requires_grad``, a lone int-list parameter may be passed as varargs
(``zeros(2, 3)``, also ``zeros(size=(2, 3))``), an ``int[N]`` parameter accepts a bare int.
When a name has several overloads, the generated function picks one by which arguments were
given and, where overloads differ only by a Tensor-vs-number parameter, by ``isinstance``.
The calls go to the operators' entry functions with only the arguments the caller gave, so
there is no generic argument parsing on the path.

Note [Bindings call the entry]
Calling an OpOverload goes through its class's ``__call__`` (op_overload.py, Note [One
class per operator]), which CPython reaches through a slot wrapper that costs ~50 ns. The
bindings keep each operator's OperatorEntry instead and call ``entry.entry_function``: the
entry object is the one the OpOverload holds, and ``OperatorEntry._install_entry`` sets
``entry_function`` together with the class's ``__call__`` (lazy generation, def, drop), so
a binding always reaches the current entry, the same function the OpOverload would call.

Note [Factories run below ADInplaceOrView]
torch's Python factories (``torch.zeros``, ``torch.full``, ...) call the C++ factory functions,
which exclude the autograd and ADInplaceOrView keys around the operator call: their composite
kernels fill a fresh tensor in place, and that fill must not count as a user's in-place write
(the result has version 0; ``torch.ops.aten.zeros`` directly gives version 1, in torch too).
The generated function does the same with the thread-local excluded set, on the functional
branch only (an out= call is a real write and bumps its out's version); hand-written
factories use ``backends.aten.below_ad_inplace_or_view``. torch's bindings call the
``torch::`` form also for function-only operators with a Tensor argument and TensorOptions or
a ``_like`` name (``torch.zeros_like``): visible when the input is an inference tensor
outside inference mode (no autograd kernel excludes ADInplaceOrView then), where
``torch.zeros_like`` gives version 0 and ``torch.ops.aten.zeros_like`` 1. Those bindings
guard each entry call alone, so a one hop in front still sees the default words.

Note [Overload choice by presence]
torch's Python arg parser tries each signature in order. Ours is decided at codegen time:
overloads are merged into one parameter list (their positional names must be prefixes of
one another), and each overload is chosen when every parameter it lacks was left out and
every parameter it requires was given. A name whose overloads cannot merge is an error
naming both signatures; none of the current operators needs more.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from tensordispatch.codegen.model import (
    DUNDER_METHODS,
    HIDDEN_FROM_PYTHON,
    NUMBERS_AS_TENSORS,
    PYTHON_FUNCTIONS,
    PYTHON_METHODS,
    PYTHON_MODULES,
    PYTHON_PARAMETER_NAMES,
    SKIPPED_PYTHON_BINDINGS,
    CodegenError,
    ident,
    int_list,
    is_tensor,
    sized_int_list,
)
from tensordispatch.codegen.python_errors import (
    extra_arguments_line,
    number_input_retry,
    varargs_except,
    varargs_lines,
)
from tensordispatch.codegen.python_hops import (
    ONE_HOP_FACTORIES,
    ONE_HOP_FUNCTIONS,
    ONE_HOP_METHODS,
    guarded,
    guarded_calls,
    method_hop,
    one_hop,
    pyname,
)
from tensordispatch.schema.model import Argument
from tensordispatch.schema.native import ParsedNativeFunctions
from tensordispatch.schema.native_model import NativeFunction, Variant

__all__ = ["emit_functions", "emit_methods", "emit_module_functions", "emit_return_types"]

_OPTIONS = ("dtype", "layout", "device", "pin_memory")


@dataclass
class _Overload:
    f: NativeFunction
    out: NativeFunction | None
    method: bool
    positional: list[Argument] = field(default_factory=list)
    kwonly: list[Argument] = field(default_factory=list)

    def __post_init__(self) -> None:
        args = [a for a in self.f.func.arguments if not a.is_write or not self.f.func.out]
        if self.method:
            base = self.f.func.name.name.base + ("_" if self.f.func.name.name.inplace else "")
            args = [
                replace(a, name=PYTHON_PARAMETER_NAMES.get((base, a.name), a.name))
                for a in args[1:]
            ]
        self.positional = [a for a in args if not a.kwarg_only]
        self.kwonly = [a for a in args if a.kwarg_only]

    @property
    def required(self) -> list[str]:
        return [a.name for a in self.positional + self.kwonly if a.default is None]

    @property
    def names(self) -> list[str]:
        return [a.name for a in self.positional + self.kwonly]

    @property
    def factory(self) -> bool:
        return self.f.func.tensor_options is not None


def _return_type(f: NativeFunction) -> str | None:
    """The torch.return_types name of ``f``'s result (``max``, ``max_out``), or None when its
    returns are not all named (Note [Named tuples like torch's structseq])."""
    names = [r.name for r in f.func.returns]
    if not names or any(n is None for n in names):
        return None
    return f.func.name.name.base + ("_out" if f.func.kind().name == "out" else "")


def _collect(
    parsed: ParsedNativeFunctions, method: bool, module: str | None = None
) -> dict[str, list[_Overload]]:
    """Python name -> overloads it binds: methods, or the functions of one python_module
    (None: the top level)."""
    outs: dict[str, NativeFunction] = {}
    for g in parsed.groups:
        outs[str(g.functional.func.name)] = g.out
    result: dict[str, list[_Overload]] = {}
    variant = Variant.method if method else Variant.function
    for f in parsed.native_functions:
        name = str(f.func.name)
        if variant not in f.variants or name in HIDDEN_FROM_PYTHON or f.namespace != "aten":
            continue
        if not method and f.python_module != module:
            continue
        if any(p.match(f.func.name.name.base) for p in SKIPPED_PYTHON_BINDINGS):
            continue
        if f.func.kind().name == "out" or f.func.name.name.base.startswith("_"):
            continue
        if f.func.name.name.dunder_method:
            continue  # __lshift__ & co: Python operators, bound in model.PYTHON_METHODS
        base = f.func.name.name.base + ("_" if f.func.name.name.inplace else "")
        if base in (PYTHON_METHODS if method else PYTHON_FUNCTIONS):
            continue  # bound by hand (_handwritten)
        out = outs.get(name) if not method else None
        if out is not None and (
            Variant.function not in out.variants
            or ("generated" in out.tags and "view_copy" not in out.tags)
        ):
            out = None  # torch's binding exposes autogen out= variants of view_copy ops only
        result.setdefault(base, []).append(_Overload(f, out, method))
    for overloads in result.values():
        overloads.sort(key=lambda o: (-len(o.required), -len(o.names)))
    return dict(sorted(result.items()))


def _merge(name: str, overloads: list[_Overload]) -> tuple[list[Argument], list[Argument]]:
    longest = max(overloads, key=lambda o: len(o.positional))
    positional = longest.positional
    for o in overloads:
        if [a.name for a in o.positional] != [a.name for a in positional[: len(o.positional)]]:
            raise CodegenError(
                f"python name {name}: overloads {o.f.func} and {longest.f.func} have "
                "positional parameters that are not prefixes of one another (Note [Overload "
                "choice by presence] in codegen/gen_python.py)"
            )
    kwonly: list[Argument] = []
    for o in overloads:
        for a in o.kwonly:
            if all(a.name != k.name for k in kwonly) and all(a.name != p.name for p in positional):
                kwonly.append(a)
    return positional, kwonly


def _discriminators(overloads: list[_Overload]) -> dict[int, dict[str, bool]]:
    """Per overload: parameter name -> must be a Tensor (True) / must not (False)."""
    result: dict[int, dict[str, bool]] = {i: {} for i in range(len(overloads))}
    for i, o in enumerate(overloads):
        for j, other in enumerate(overloads):
            if i == j or sorted(o.names) != sorted(other.names):
                continue
            for a in o.positional + o.kwonly:
                b = next(x for x in other.positional + other.kwonly if x.name == a.name)
                if is_tensor(a) != is_tensor(b):
                    result[i][a.name] = is_tensor(a)
    return result


def _signature(
    name: str, overloads: list[_Overload], method: bool, missing: bool = False
) -> tuple[str, list[Argument], list[Argument], bool, bool]:
    positional, kwonly = _merge(name, overloads)
    lead = ["self"] if method else []
    varargs = len(positional) == 1 and int_list(positional[0]) and len(overloads) == 1
    parts = list(lead)
    required_everywhere = set.intersection(*(set(o.required) for o in overloads))
    has_out = any(o.out is not None for o in overloads)
    factory = any(o.factory for o in overloads)
    kw = [f"{a.name}=_NO" for a in ([positional[0]] if varargs else []) + kwonly]
    kw += ["out=None"] * has_out + ["requires_grad=False"] * factory
    # Note [Functions count their arguments] in codegen/python_errors.py: a function without
    # keyword-only parameters keeps Python's texts (and CPython's specialized call), a method
    # its REQUIRED defaults without *_td_more
    missing = missing and (method or bool(kw))
    if varargs:
        parts.append("*_td_args")
    else:
        seen_default = False
        for a in positional:
            if a.name in required_everywhere and not seen_default:
                # Note [Missing arguments] in ops/binding_errors.py
                parts.append(pyname(a.name, method) + ("=_REQ" if missing else ""))
            else:
                parts.append(f"{pyname(a.name, method)}=_NO")
                seen_default = True
    more = missing and bool(kw) and any(p.endswith("=_REQ") for p in parts)
    if more:
        parts.append("*_td_more")
    if kw:
        parts.append(("" if varargs or more else "*, ") + ", ".join(kw))
    return ", ".join(parts), positional, kwonly, has_out, varargs


def _call(o: _Overload, target: str, method: bool, indent: str, with_out: bool) -> list[str]:
    """Lines calling ``target`` with the given arguments of overload ``o``."""
    lead = ["self"] if method else []
    required_pos = [pyname(a.name, method) for a in o.positional if a.default is None]
    optional = [a for a in o.positional + o.kwonly if a.default is not None]
    required_kw = [a.name for a in o.kwonly if a.default is None]
    outs: list[str] = []
    if with_out and o.out is not None:
        names = [a.name for a in o.out.func.out]
        outs = (
            [f"{names[0]}=out"]
            if len(names) == 1
            else [f"{n}=out[{i}]" for i, n in enumerate(names)]
        )
    args = ", ".join(lead + required_pos + [f"{n}={n}" for n in required_kw] + outs)
    if not optional:
        return [f"{indent}_r = {target}({args})"]
    lines = [f"{indent}if {' and '.join(f'{a.name} is _NO' for a in optional)}:"]
    lines.append(f"{indent}    _r = {target}({args})")
    lines.append(f"{indent}else:")
    lines.append(f"{indent}    _kw = {{}}")
    for a in optional:
        lines.append(f"{indent}    if {a.name} is not _NO: _kw[{a.name!r}] = {a.name}")
    lines.append(f"{indent}    _r = {target}({args}, **_kw)")
    return lines


def _conversions(name: str, positional: list[Argument], kwonly: list[Argument], method: bool,
                 discriminated: set[str]) -> list[str]:  # fmt: skip
    lines = []
    for a in positional + kwonly:
        n = pyname(a.name, method)
        if is_tensor(a) and name in NUMBERS_AS_TENSORS and n not in discriminated | {"input"}:
            lines.append(f"    if not isinstance({n}, _Tensor): {n} = _wrap_argument({n})")
        elif sized_int_list(a):
            lines.append(f"    if type({n}) is int: {n} = [{n}]")
    return lines


def _number_input_retry(name: str, fname: str, positional: list[Argument],
                        kwonly: list[Argument], has_out: bool, method: bool,
                        discriminated: set[str]) -> list[str]:  # fmt: skip
    """python_errors.number_input_retry's lines for a numbers-as-tensors function whose
    ``input`` is a Tensor parameter, else none."""
    if method or name not in NUMBERS_AS_TENSORS or "input" in discriminated:
        return []
    if not positional or positional[0].name != "self" or not is_tensor(positional[0]):
        return []
    names = [pyname(a.name, method) for a in positional] + [a.name for a in kwonly]
    return number_input_retry(fname, names + (["out"] if has_out else []))


def _return(f: NativeFunction, indent: str, factory: bool) -> list[str]:
    lines = [f"{indent}if requires_grad: _r.requires_grad_(True)"] if factory else []
    named = _return_type(f)
    if named is not None:
        lines.append(f"{indent}return _RT.{named}(_r)")
    elif [str(r.type) for r in f.func.returns] == ["Tensor[]"]:
        lines.append(f"{indent}return tuple(_r)")  # torch's binding gives a tuple
    else:
        lines.append(f"{indent}return _r")
    return lines


def _function(
    name: str, overloads: list[_Overload], method: bool, not_implemented: bool = False
) -> str:
    """The binding of ``name``; with ``not_implemented``, its operator form ``_n_<name>``
    (Note [Operators return NotImplemented])."""
    missing = not not_implemented  # Note [Missing arguments]
    params, positional, kwonly, has_out, varargs = _signature(name, overloads, method, missing)
    fname = f"_n_{name}" if not_implemented else f"_m_{name}" if method else name
    lines = [f"def {fname}({params}):"]
    if varargs:
        lines += varargs_lines(name, positional[0].name)
    disc = _discriminators(overloads)
    discriminated = {p for d in disc.values() for p in d}
    lines += _conversions(name, positional, kwonly, method, discriminated)
    union = [a.name for a in positional + kwonly]
    everywhere = set.intersection(*(set(o.required) for o in overloads))
    for i, o in enumerate(overloads):
        conds = [f"{pyname(n, method)} is _NO" for n in union if n not in o.names]
        conds += [
            f"{pyname(n, method)} is not _NO"
            for n in o.required
            if n in union and n not in everywhere and len(overloads) > 1
        ]
        conds += [
            ("" if must else "not ") + f"isinstance({pyname(n, method)}, _Tensor)"
            for n, must in disc[i].items()
        ]
        if o.out is None and has_out:
            conds.append("out is None")
        indent = "    "
        if conds and len(overloads) > 1:
            lines.append(f"    if {' and '.join(conds)}:")
            indent = "        "
        target = f"_E_{ident(o.f)}.entry_function"  # Note [Bindings call the entry]
        if o.out is not None:
            lines.append(f"{indent}if out is None:")
            full = guarded(o, guarded_calls(o, _call(o, target, method, indent + "    ", False)))
            lines += one_hop(o, method, full)
            lines += _return(o.f, indent + "    ", o.factory)
            lines.append(f"{indent}else:")
            lines += _call(o, f"_E_{ident(o.out)}.entry_function", method, indent + "    ", True)
            lines += _return(o.out, indent + "    ", o.factory)
        else:
            call = method_hop(o, method, _call(o, target, method, indent, False))
            full = guarded(o, guarded_calls(o, call))
            lines += one_hop(o, method, full)
            lines += _return(o.f, indent, o.factory)
    if len(overloads) > 1:  # no overload took the arguments given
        lines.append(f"    raise _no_overload({name!r}, {method})")
    # Note [Binding argument errors]: torch's binding rejects a wrong argument type with a
    # TypeError naming the Python parameter; ours lets the entry reject it (no check on the
    # success path; a try costs nothing in CPython 3.11+) and translates the error here.
    names = tuple(pyname(a.name, method) for a in positional)
    translated = f"_binding_argument_error({name!r}, _e, {names!r}, {method})"
    head = [extra_arguments_line(name, method)] if "*_td_more" in params else []
    body = head + (
        ["    try:"]
        + ["    " + line for line in lines[1:]]
        + ["    except _ArgumentTypeError as _e:"]
        + (
            [
                f"        _t = {translated}",
                "        if isinstance(_t, TypeError): return NotImplemented",
                "        raise _t from None",
                "    except TypeError:",
                "        return NotImplemented",
            ]
            if not_implemented
            else [
                *_number_input_retry(
                    name, fname, positional, kwonly, has_out, method, discriminated
                ),
                f"        raise {translated} from None",
            ]
        )
    )
    if varargs and not not_implemented:
        others = [a.name for a in kwonly] + ["out"] * has_out
        others += ["requires_grad"] * any(o.factory for o in overloads)
        body += varargs_except(fname, name, positional[0].name, others, method)
    return "\n".join(lines[:1] + body)


_HEADER = '''\
"""{what}

@generated by tensordispatch.codegen (src/tensordispatch/codegen/gen_python.py)
from {source}. Do not edit: run `tensordispatch codegen`.
"""

# ruff: noqa
# mypy: ignore-errors
from __future__ import annotations

from tensordispatch.backends.aten import wrap_argument as _wrap_argument
from tensordispatch.backends.aten import wrap_number as _wrap_number
from tensordispatch.dispatch.calling import NOT_GIVEN as _NO
from tensordispatch.dispatch.errors import ArgumentTypeError as _ArgumentTypeError
from tensordispatch.ops.binding_errors import REQUIRED as _REQ
from tensordispatch.ops.binding_errors import binding_type_error as _binding_argument_error
from tensordispatch.ops.binding_errors import extra_arguments as _extra_arguments
from tensordispatch.ops.binding_errors import no_overload as _no_overload
from tensordispatch.ops.binding_errors import varargs_list as _varargs_list
from tensordispatch.dispatch.keyset import AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW as _BELOW_AD
from tensordispatch.dispatch.tls import local_state as _local_state
from tensordispatch.generated import return_types as _RT
from tensordispatch.tensor.tensor import Tensor as _Tensor
'''


def _bindings(overloads_by_name: dict[str, list[_Overload]]) -> list[str]:
    names = sorted(
        {ident(o.f) for os in overloads_by_name.values() for o in os}
        | {ident(o.out) for os in overloads_by_name.values() for o in os if o.out is not None}
    )
    by_ident = {
        ident(f): f
        for os in overloads_by_name.values()
        for o in os
        for f in ([o.f] + ([o.out] if o.out is not None else []))
    }
    # Note [Deferred entries] in ops/deferred.py: each global becomes the operator's entry at
    # the first call, so importing this module defines no operator.
    lines = [
        "from tensordispatch.ops.deferred import deferred_entry as _deferred",
        "",
        "_G = globals()",
    ]
    for n in names:
        lines.append(f"_E_{n} = _deferred(_G, '_E_{n}', {str(by_ident[n].func.name)!r})")
    return lines


def _handwritten(table: dict[str, str], prefix: str) -> list[str]:
    """Import lines binding the hand-written Python functions of ``table`` (model.py's
    PYTHON_FUNCTIONS / PYTHON_METHODS) as ``<prefix><name>``."""
    lines = []
    for name, target in sorted(table.items()):
        module, _, attr = target.partition(":")
        lines.append(f"from {module} import {attr} as {prefix}{name}")
    return lines


def emit_functions(parsed: ParsedNativeFunctions, source: str) -> str:
    """The text of generated/functions.py."""
    return emit_module_functions(parsed, source, None)


def emit_module_functions(parsed: ParsedNativeFunctions, source: str, module: str | None) -> str:
    """The text of the functions of one yaml ``python_module`` (None: generated/functions.py,
    the top level; "nn": generated/nn_functions.py, torch._C._nn's counterpart)."""
    overloads = _collect(parsed, method=False, module=module)
    handwritten = PYTHON_FUNCTIONS if module is None else {}
    what = (
        "The operator functions (torch.add, torch.zeros, ...)."
        if module is None
        else f"The functions of python_module: {module} (torch._C._{module}'s)."
    )
    parts = [_HEADER.format(what=what, source=source)]
    parts.append(f"__all__ = {sorted([*overloads, *handwritten])!r}")
    parts.append("")
    parts += _bindings(overloads)
    hops = sorted({h for os in overloads.values() for o in os for table in
                   (ONE_HOP_FACTORIES, ONE_HOP_FUNCTIONS)
                   if (h := table.get(ident(o.f))) is not None})  # fmt: skip
    parts += [f"from tensordispatch.backends.composite_fast import {h} as _H_{h}" for h in hops]
    parts += _handwritten(handwritten, "")
    for name, os in overloads.items():
        parts += ["", "", _function(name, os, method=False)]
    parts.append("")
    return "\n".join(parts)


def emit_return_types(parsed: ParsedNativeFunctions, source: str) -> str:
    """The text of generated/return_types.py: one named-tuple type per Python-visible
    operator whose returns are all named (torch.return_types)."""
    fields: dict[str, tuple[str, ...]] = {}
    bound = [_collect(parsed, method=True)] + [
        _collect(parsed, method=False, module=m) for m in (None, *PYTHON_MODULES)
    ]
    for overloads in bound:
        for os in overloads.values():
            for o in os:
                for f in [o.f] + ([o.out] if o.out is not None else []):
                    name = _return_type(f)
                    if name is not None:
                        fields[name] = tuple(str(r.name) for r in f.func.returns)
    lines = [
        '"""Named-tuple result types (torch.return_types), one per operator name.',
        "",
        "@generated by tensordispatch.codegen (src/tensordispatch/codegen/gen_python.py)",
        f"from {source}. Do not edit: run `tensordispatch codegen`.",
        '"""',
        "",
        "# ruff: noqa",
        "from tensordispatch.tensor.return_types import structseq as _structseq",
        "",
        f"__all__ = {sorted(fields)!r}",
        "",
    ]
    for name, names in sorted(fields.items()):
        lines.append(f"{name} = _structseq({name!r}, {names!r}, __name__)")
    lines.append("")
    return "\n".join(lines)


def _named(fname: str, name: str) -> str:
    """A line naming generated method ``fname`` as torch's (``add``), so Python's own argument
    errors read "add() got an unexpected keyword argument 'x'", as torch's parser words them."""
    return f"{fname}.__name__ = {fname}.__qualname__ = {name!r}"


# Note [Operators return NotImplemented]
# torch's Tensor operators turn any TypeError of their call into NotImplemented, so Python
# tries the other operand and then raises its own "unsupported operand type(s) for +: 'Tensor'
# and 'str'" (`t == 'a'` is False). An operator that forwards to a method binding gets its own
# copy of that binding, ``_n_<method>``, whose except clauses return NotImplemented where the
# binding raises a TypeError; the success path is the binding's, line for line. The other
# operators call a function inside a try.
def _dunders(
    overloads: dict[str, list[_Overload]], functions: dict[str, list[_Overload]]
) -> tuple[list[str], list[str]]:
    """The OPERATORS table's lines and the functions they name."""
    table: list[str] = []
    parts: list[str] = []
    emitted: set[str] = set()
    for dunder, (target, how) in DUNDER_METHODS.items():
        if how == "same" and target in overloads:
            if target not in emitted:
                emitted.add(target)
                body = _function(target, overloads[target], True, True)
                parts += ["", "", body, _named(f"_n_{target}", target)]
            table.append(f"    {dunder!r}: _n_{target},")
            continue
        if how == "reciprocal" and target in overloads:
            call = f"_m_{target}(self) * other"
        elif how == "function" and target in functions:
            call = f"_functions.{target}(self, other)"
        elif how in ("reflected", "swapped") and target in functions:
            # reflected: other is a number made a wrapped tensor; swapped: passed as given
            first = "_wrap_number(other)" if how == "reflected" else "other"
            call = f"_functions.{target}({first}, self)"
        else:
            continue
        parts += [
            "", "",
            f"def _d{dunder}(self, other):",
            "    try:",
            f"        return {call}",
            "    except TypeError:",
            "        return NotImplemented",
        ]  # fmt: skip
        table.append(f"    {dunder!r}: _d{dunder},")
    return table, parts


def emit_methods(parsed: ParsedNativeFunctions, source: str) -> str:
    """The text of generated/methods.py (Tensor methods and Python operators)."""
    overloads = _collect(parsed, method=True)
    functions = _collect(parsed, method=False)
    parts = [
        _HEADER.format(
            what="Tensor methods and Python operators, installed by install().", source=source
        )
    ]
    parts.append("from tensordispatch.generated import functions as _functions")
    parts.append("")
    parts += _bindings(overloads)
    hops = sorted({h for os in overloads.values() for o in os
                   if (h := ONE_HOP_METHODS.get(ident(o.f))) is not None})  # fmt: skip
    parts += [f"from tensordispatch.backends.composite_fast_inplace import {h} as _H_{h}"
              for h in hops]  # fmt: skip
    parts += _handwritten(PYTHON_METHODS, "_m_")
    for name, os in overloads.items():
        parts += ["", "", _function(name, os, method=True), _named(f"_m_{name}", name)]
    dunders, parts_dunders = _dunders(overloads, functions)
    parts += parts_dunders
    parts += ["", "", "METHODS = {"]
    parts += [f"    {name!r}: _m_{name}," for name in sorted([*overloads, *PYTHON_METHODS])]
    parts += ["}", "", "OPERATORS = {"]
    parts += dunders
    parts += ["}", ""]
    parts.append(
        '''

def install(cls):
    """Set the generated methods and operators on ``cls`` (the Tensor class), keeping any
    attribute the class defines itself; returns the names installed."""
    installed = []
    for name, fn in {**METHODS, **OPERATORS}.items():
        if name in cls.__dict__ and not getattr(cls.__dict__[name], "_td_generated", False):
            continue
        fn._td_generated = True
        setattr(cls, name, fn)
        installed.append(name)
    return installed
'''
    )
    return "\n".join(parts)
