"""Inspecting lazy graphs: ``dump_ir(tensors)`` as text or Graphviz DOT (torch._lazy.debug).

Owns the printing of the pending IR under a set of lazy tensors. Must not run anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tensordispatch.lazy.api import lazy_value_of
from tensordispatch.lazy.executor import graph_of
from tensordispatch.lazy.ir import Node, Operand

__all__ = ["dump_ir", "render_ir_graph"]


def _lazy_data(t: Any) -> Any:
    value = lazy_value_of(t)
    if value is None:
        raise TypeError(
            f"dump_ir: expected lazy tensors, got a {type(t).__name__} on device '{t.device}'"
        )
    return value


def _args_text(node: Node) -> str:
    parts = []
    for a in node.args:
        if type(a) is Operand or (type(a) is tuple and a and type(a[0]) is Operand):
            continue
        parts.append(repr(a))
    return ", ".join(parts)


def dump_ir(tensors: Sequence[Any], ir_format: str = "text") -> str:
    """The IR computing ``tensors`` (pending values; held data shows as device_data), as
    ``"text"`` (one line per node, post-order) or ``"dot"`` (Graphviz).

    >>> import tensordispatch as td, tensordispatch.lazy as lazy
    >>> handle = lazy.init()
    >>> x = td.tensor([1.0, 2.0]).to("lazy"); lazy.mark_step()
    >>> print(dump_ir([x * 2]))
    IR {
      %0 = Float[2] lazy_tensors::device_data()
      %1 = Long[] lazy_tensors::device_data()
      %2 = Float[2] aten::mul.Tensor(%0, %1), ROOT=0
    }
    >>> handle.remove()
    """
    if ir_format not in ("text", "dot"):
        raise ValueError(f"dump_ir: ir_format must be 'text' or 'dot' (given {ir_format!r})")
    values = [_lazy_data(t).ir_value() for t in tensors]
    graph = graph_of(values)
    names = {id(n): i for i, n in enumerate(graph.nodes)}
    roots: dict[int, list[int]] = {}
    for r, value in enumerate(values):
        roots.setdefault(id(value.node), []).append(r)
    if ir_format == "dot":
        return _dot(graph.nodes, names, roots)
    lines = ["IR {"]
    for i, node in enumerate(graph.nodes):
        operands = ", ".join(
            f"%{names[id(v.node)]}" + (f".{v.index}" if len(v.node.shapes) > 1 else "")
            for v in node.operands
        )
        extra = _args_text(node)
        inside = ", ".join(x for x in (operands, extra) if x)
        shapes = ", ".join(map(str, node.shapes))
        root = "".join(f", ROOT={r}" for r in roots.get(id(node), []))
        lines.append(f"  %{i} = {shapes} {node.op}({inside}){root}")
    lines.append("}")
    return "\n".join(lines)


def _dot(nodes: Sequence[Node], names: dict[int, int], roots: dict[int, list[int]]) -> str:
    lines = ["digraph G {"]
    for i, node in enumerate(nodes):
        label = f"{node.op}\\n{', '.join(map(str, node.shapes))}"
        if id(node) in roots:
            label += f"\\nROOT={','.join(map(str, roots[id(node)]))}"
        lines.append(f'  node{i} [label="{label}"]')
    for i, node in enumerate(nodes):
        for j, value in enumerate(node.operands):
            lines.append(f'  node{names[id(value.node)]} -> node{i} [label="i={j}"]')
    lines.append("}")
    return "\n".join(lines)


render_ir_graph = dump_ir
