"""Generated ``apply`` of the nodes of one-output operators (torch's generated Node::apply).

Owns the code generated once per node class whose DifferentiabilityInfo is simple (one
output, one plain Tensor per formula). Must not record graphs (kernels.py, entries.py) nor
run them (engine.py).

Note [Generated apply]
The generic ``FormulaNode.apply`` unpacks every saved value into a dict, then builds each
formula's argument list from it by name. For ``MulBackward0`` we exec instead::

    def apply(_td_node, grads):
        grad = grads[0]
        if grad is None:
            return _td_nones
        if _td_node._released:
            raise RuntimeError(_td_freed)
        _td_s = _td_node._saved
        _n0, _n1 = _td_node._needed
        if _n0: other = _td_s['other'].unpack(_td_node)   # inlined: see below
        if _n0: self_scalar_type = _td_s['self_scalar_type']
        if _n1: self = _td_s['self'].unpack(_td_node)
        if _n1: other_scalar_type = _td_s['other_scalar_type']
        return (
            (mul_tensor_backward(grad, other, self_scalar_type)) if _n0 else None,
            (mul_tensor_backward(grad, self, other_scalar_type)) if _n1 else None,
        )

The formulas' translated text is evaluated inline, in the namespace compile_formula uses
(formulas.py's HELPERS), so a gradient costs no call of a per-formula function; when that
text cannot be inlined, the compiled formulas are called (``_td_f0(grad, v_other, ...)``).

A saved input tensor is unpacked inline (its ``_data`` when the storage is still at the
saved version); ``SavedTensor.unpack`` runs only for a saved output (which re-links its
grad_fn) or to raise the version-counter error. Saved values are unpacked in the order they
were saved, all before any formula runs (torch
unpacks every saved variable at the top of apply), so the version-counter error names the
same tensor as the generic path; a freed graph raises torch's error first.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable
from typing import Any

from tensordispatch.autograd.graph import FREED_MESSAGE, SavedTensor

__all__ = ["apply_source", "make_apply"]

# (saved name, kind, formulas reading it); kind "tensor" (a SavedTensor), "value" (an
# attribute such as sizes or dtype, stored as it is) or "any" (decided at run time)
_Save = tuple[str, str, tuple[int, ...]]


def _unpack_any(value: Any, node: Any) -> Any:
    """A saved value whose kind is known only at run time (kernels.py's ``_save`` rule)."""
    if type(value) is SavedTensor:
        return value.unpack(node)
    if type(value) is list and value and type(value[0]) is SavedTensor:
        return [v.unpack(node) for v in value]
    return value


def apply_source(
    saves: tuple[_Save, ...],
    formulas: tuple[tuple[str, ...], ...],
    result: str | None,
    expressions: tuple[str, ...] | None = None,
) -> str:
    """The source of a generated apply (Note [Generated apply]); ``formulas`` holds each
    formula's parameter names, ``result`` the output's name when a formula reads it. With
    ``expressions`` (each formula's Python text) the formulas are evaluated inline, the
    saved values bound to the names they read, instead of called as ``_td_f<k>``.

    >>> print(apply_source((("self", "tensor", (0,)),), (("grad", "self"),), None), end="")
    def apply(_td_node, grads):
        grad = grads[0]
        if grad is None:
            return _td_nones
        if _td_node._released:
            raise RuntimeError(_td_freed)
        _td_s = _td_node._saved
        _n0, = _td_node._needed
        if _n0:
            _td_v = _td_s['self']
            v_self = _td_v._data
            _td_c = v_self._vc
            if _td_v._is_output or (0 if _td_c is None else _td_c.version) != _td_v._version:
                v_self = _td_v.unpack(_td_node)
        return (
            _td_f0(grad, v_self) if _n0 else None,
        )
    """
    lines = [
        "def apply(_td_node, grads):",
        "    grad = grads[0]",
        "    if grad is None:",
        "        return _td_nones",
        "    if _td_node._released:",
        "        raise RuntimeError(_td_freed)",
        "    _td_s = _td_node._saved",
        f"    {''.join(f'_n{k}, ' for k in range(len(formulas))).rstrip()} = _td_node._needed",
    ]
    for name, kind, readers in saves:
        cond = " or ".join(f"_n{k}" for k in readers)
        local = name if expressions is not None else f"v_{name}"
        if kind == "tensor":  # SavedTensor.unpack inlined for an input at its saved version
            lines += [
                f"    if {cond}:",
                f"        _td_v = _td_s[{name!r}]",
                f"        {local} = _td_v._data",
                f"        _td_c = {local}._vc",
                (
                    "        if _td_v._is_output or (0 if _td_c is None else _td_c.version) "
                    "!= _td_v._version:"
                ),
                f"            {local} = _td_v.unpack(_td_node)",
            ]
            continue
        value = {
            "value": f"_td_s[{name!r}]",
            "any": f"_td_u(_td_s[{name!r}], _td_node)",
        }[kind]
        lines.append(f"    if {cond}: {local} = {value}")
    if result is not None:
        local = result if expressions is not None else f"v_{result}"
        lines.append(f"    {local} = _td_s['result'].unpack(_td_node)")
    lines.append("    return (")
    for k, names in enumerate(formulas):
        if expressions is not None:
            lines.append(f"        ({expressions[k]}) if _n{k} else None,")
            continue
        args = ", ".join("grad" if n == "grad" else f"v_{n}" for n in names)
        lines.append(f"        _td_f{k}({args}) if _n{k} else None,")
    lines.append("    )")
    return "\n".join(lines) + "\n"


def make_apply(
    saves: tuple[_Save, ...],
    formulas: tuple[tuple[str, ...], ...],
    functions: tuple[Callable[..., Any], ...],
    result: str | None,
    where: str = "",
    inline: tuple[tuple[str, ...], dict[str, Any]] | None = None,
) -> Callable[..., Any] | None:
    """The generated apply, or None when a name cannot be a Python identifier or a formula
    reads gradients other than ``grad`` (the generic apply handles those). ``inline``:
    (each formula's Python text, the namespace formulas are compiled in) to evaluate the
    formulas in the apply itself (one Python call less per gradient)."""
    for names in formulas:
        for n in names:
            if not n.isidentifier() or keyword.iskeyword(n):
                return None
            if n.startswith("grad") and n != "grad":
                return None
    scope: dict[str, Any] = {
        "_td_nones": (None,) * len(formulas),
        "_td_freed": FREED_MESSAGE,
        "_td_u": _unpack_any,
    }
    for k, fn in enumerate(functions):
        scope[f"_td_f{k}"] = fn
    where = f"<autograd apply {where}>"
    if inline is not None:
        expressions, namespace = inline
        names = {n for f in formulas for n in f} | {s[0] for s in saves}
        if not names & {"_td_node", "_td_s", "grads"} and not any(
            n.startswith("_n") for n in names
        ):
            inlined = dict(namespace)
            inlined.update(scope)
            source = apply_source(saves, formulas, result, expressions)
            try:
                # Generated code by design (Note [Generated apply]); formula text from our
                # own derivatives.yaml, already compiled once by compile_formula.
                exec(compile(source, where, "exec"), inlined)  # noqa: S102
            except SyntaxError:
                pass
            else:
                fast: Callable[..., Any] = inlined["apply"]
                return fast
    # Generated code by design (Note [Generated apply]); built from schema identifiers.
    exec(compile(apply_source(saves, formulas, result), where, "exec"), scope)  # noqa: S102
    apply: Callable[..., Any] = scope["apply"]
    return apply
