"""The binding-level fast paths of the generated Python bindings (helpers of gen_python.py).

Owns which generated bindings run below ADInplaceOrView (factories, Note [Factories run
below ADInplaceOrView] in gen_python.py) and which try a one hop first (Note [One-hop
factory bindings] in backends/composite_fast.py, Note [One-hop in-place methods] in
backends/composite_fast_inplace.py): the tables naming the hops and the line rewriting
that puts a hop in front of a binding's full call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tensordispatch.codegen.model import CodegenError, ident

if TYPE_CHECKING:
    from tensordispatch.codegen.gen_python import _Overload

__all__ = [
    "ONE_HOP_FACTORIES",
    "ONE_HOP_FUNCTIONS",
    "ONE_HOP_METHODS",
    "below_ad_inplace_or_view",
    "guarded",
    "guarded_calls",
    "like_below_ad_inplace_or_view",
    "method_hop",
    "one_hop",
    "pyname",
]


def pyname(name: str, method: bool) -> str:
    """A schema argument's Python name in a binding (``self`` is ``input`` in functions)."""
    return "input" if name == "self" and not method else name


def below_ad_inplace_or_view(o: _Overload) -> bool:
    """A factory function (TensorOptions, no Tensor argument, one Tensor result): torch's
    binding runs it below autograd and ADInplaceOrView (Note [Factories run below
    ADInplaceOrView])."""
    f = o.f.func
    return (
        o.factory
        and not o.method
        and not _has_tensor_argument(o)
        and [str(r.type) for r in f.returns] == ["Tensor"]
    )


def _has_tensor_argument(o: _Overload) -> bool:
    return any("Tensor" in str(a.type) for a in o.f.func.arguments)


def like_below_ad_inplace_or_view(o: _Overload) -> bool:
    """A function-only operator with a Tensor argument and TensorOptions or a ``_like``
    name (``zeros_like``, ``full_like``, ...): torch's binding calls its ``torch::`` form,
    which also runs below autograd and ADInplaceOrView (Note [Factories run below
    ADInplaceOrView])."""
    variants = {v.name for v in o.f.variants}
    return (
        not o.method
        and variants == {"function"}
        and _has_tensor_argument(o)
        and (o.factory or o.f.func.name.name.base.endswith("_like"))
    )


def guarded_calls(o: _Overload, lines: list[str]) -> list[str]:
    """``lines`` with each entry call (``_r = _E_...``) run with the autograd keys and
    ADInplaceOrView excluded, for a ``_like`` factory: a one hop in front stays outside the
    guard (it reads the default words)."""
    if not like_below_ad_inplace_or_view(o):
        return lines
    out: list[str] = []
    for line in lines:
        body = line.lstrip()
        indent = line[: len(line) - len(body)]
        if body.startswith("if _r is None: _r = _E_"):
            out.append(f"{indent}if _r is None:")
            body, indent = body.removeprefix("if _r is None: "), indent + "    "
        elif not body.startswith("_r = _E_"):
            out.append(line)
            continue
        out += [
            f"{indent}_st = _local_state(); _sv = _st.excluded",
            f"{indent}_st.excluded = _sv | _BELOW_AD",
            f"{indent}try:",
            f"{indent}    {body}",
            f"{indent}finally:",
            f"{indent}    _st.excluded = _sv",
        ]
    return out


def guarded(o: _Overload, lines: list[str]) -> list[str]:
    """``lines`` run with the autograd keys and ADInplaceOrView excluded, for a factory."""
    if not below_ad_inplace_or_view(o):
        return lines
    indent = lines[0][: len(lines[0]) - len(lines[0].lstrip())]
    return [
        f"{indent}_st = _local_state(); _sv = _st.excluded",
        f"{indent}_st.excluded = _sv | _BELOW_AD",
        f"{indent}try:",
        *["    " + line for line in lines],
        f"{indent}finally:",
        f"{indent}    _st.excluded = _sv",
    ]


# Note [One-hop factory bindings] in backends/composite_fast.py: functional overload ident ->
# the hop there, called with the required arguments, dtype and device when the other options
# are absent; it returns the result, or None for the full dispatch.
ONE_HOP_FACTORIES = {
    "zeros": "zeros",
    "ones": "ones",
    "empty_memory_format": "empty_memory_format",
    "empty_strided": "empty_strided",
    "full": "full",
    "linspace": "linspace",
}


def one_hop(o: _Overload, method: bool, lines: list[str]) -> list[str]:
    """``lines`` (the full call) behind the overload's one hop, if it has one."""
    hop = ONE_HOP_FACTORIES.get(ident(o.f))
    if hop is None or method or not below_ad_inplace_or_view(o):
        return lines
    indent = lines[0][: len(lines[0]) - len(lines[0].lstrip())]
    required = [pyname(a.name, method) for a in o.positional if a.default is None]
    others = [a.name for a in o.positional + o.kwonly if a.default is not None]
    if (
        "dtype" not in others
        or "device" not in others
        or required != [a.name for a in o.positional]
    ):
        raise CodegenError(
            f"one-hop factory {ident(o.f)}: expected required positionals, a dtype and a "
            "device option (Note [One-hop factory bindings])"
        )
    passed = ("dtype", "device")  # the hop takes them (device: absent or the CPU device)
    absent = " and ".join(f"{n} is _NO" for n in others if n not in passed) or "True"
    call = f"_H_{hop}({', '.join(required)}, dtype, device)"
    return [
        f"{indent}_r = {call} if {absent} else None",
        f"{indent}if _r is None:",
        *["    " + line for line in lines],
    ]


# Note [One-hop in-place methods] in backends/composite_fast_inplace.py: method overload
# ident -> the hop there, called with the required arguments when the optional ones are
# absent.
ONE_HOP_METHODS = {
    "add__Tensor": "add_",
    "copy_": "copy_",
    "contiguous": "contiguous",
    "reshape": "reshape",
    "flatten_using_ints": "flatten",
}
# The same for functions, hops of backends/composite_fast.py (Note [One-hop factory bindings]).
ONE_HOP_FUNCTIONS = {
    "zeros_like": "zeros_like",
    "ones_like": "ones_like",
    "empty_like": "empty_like",
}


def method_hop(o: _Overload, method: bool, lines: list[str]) -> list[str]:
    """``lines`` (the call) with the overload's one hop tried first, if it has one: in the
    branch where every optional argument is absent."""
    hop = (ONE_HOP_METHODS if method else ONE_HOP_FUNCTIONS).get(ident(o.f))
    if hop is None:
        return lines
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("_r = "))
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    lead = ["self"] if method else []
    required = lead + [pyname(a.name, method) for a in o.positional if a.default is None]
    return [
        *lines[:at],
        f"{indent}_r = _H_{hop}({', '.join(required)})",
        f"{indent}if _r is None: {lines[at].lstrip()}",
        *lines[at + 1 :],
    ]
