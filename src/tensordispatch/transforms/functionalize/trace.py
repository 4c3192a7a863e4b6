"""``make_fx``: record the operators that reach the layers below functionalization and print
them as Python code (like torch.fx's printout of a make_fx graph).

Owns the recording DispatchMode and the Graph it builds. Must not change what runs: the mode
calls every operator unchanged and only names its inputs and outputs.

Note [Tracing below Functionalize]
The Python key sits below Functionalize (as in torch), so a DispatchMode entered around a
functionalized call sees exactly the calls functionalization makes on inner tensors (every
one of them is a fresh call, Note [Calling below functionalization]), plus the caller-side
``copy_`` of input write-back. Calls made by kernels below (a composite kernel's pieces)
run with the mode popped and are not recorded, as in make_fx. Values are named by object
identity; the graph keeps every named tensor alive while tracing so identities stay unique.
"""

from __future__ import annotations

import builtins
import keyword
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tensordispatch.dispatch.modes import DispatchMode
from tensordispatch.tensor.tensor import Tensor

__all__ = ["Graph", "Node", "TracingMode", "make_fx"]

_RESERVED = frozenset(dir(builtins)) | frozenset(keyword.kwlist)


@dataclass(frozen=True, slots=True)
class Node:
    """One recorded call: the operator, its printed arguments, its output names."""

    target: str  # "aten.add.Tensor"
    args: str  # printed arguments
    outputs: tuple[str, ...]

    @property
    def op_name(self) -> str:
        """The operator name without namespace and overload (``add``)."""
        return self.target.split(".")[1]


class Graph:
    """The recorded program: placeholders, nodes in call order, returned names."""

    def __init__(self) -> None:
        self.placeholders: list[str] = []
        self.nodes: list[Node] = []
        self.outputs: str = "None"
        self._names: dict[int, str] = {}
        self._alive: list[Any] = []
        self._counts: dict[str, int] = {}

    def _fresh(self, base: str) -> str:
        # like torch.fx: a name that would shadow a builtin or keyword starts at "_1"
        n = self._counts.get(base, 1 if base in _RESERVED else 0)
        self._counts[base] = n + 1
        return base if n == 0 else f"{base}_{n}"

    def name_of(self, t: Tensor, base: str) -> str:
        name = self._names.get(id(t))
        if name is None:
            name = self._fresh(base)
            self._names[id(t)] = name
            self._alive.append(t)
        return name

    def fmt(self, v: Any) -> str:
        if isinstance(v, Tensor):
            if v._wrapped_number and id(v) not in self._names:
                return repr(v.item())
            name = self._names.get(id(v))
            return name if name is not None else self.name_of(v, "_tensor_constant")
        if isinstance(v, list | tuple):
            return "[" + ", ".join(self.fmt(x) for x in v) + "]"
        if hasattr(v, "is_floating_point") and hasattr(v, "itemsize"):  # a dtype
            return f"tensordispatch.{v}".replace(
                "tensordispatch.tensordispatch.", "tensordispatch."
            )
        return repr(v)

    @property
    def op_names(self) -> list[str]:
        """Operator names in call order, overloads dropped (``["view_copy", "add", ...]``)."""
        return [n.op_name for n in self.nodes]

    @property
    def code(self) -> str:
        """The program as Python, one line per operator call."""
        lines = [f"def forward(self, {', '.join(self.placeholders)}):"]
        for n in self.nodes:
            lhs = n.outputs[0] if len(n.outputs) == 1 else ", ".join(n.outputs) or "_"
            lines.append(f"    {lhs} = tensordispatch.ops.{n.target}({n.args})")
        lines.append(f"    return {self.outputs}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.code


class TracingMode(DispatchMode):
    """Records every operator call it sees into ``graph`` (Note [Tracing below Functionalize])."""

    def __init__(self, graph: Graph) -> None:
        super().__init__()
        self.graph = graph

    def __torch_dispatch__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None
    ) -> Any:
        kwargs = kwargs or {}
        g = self.graph
        printed = [g.fmt(a) for a in args] + [f"{k}={g.fmt(v)}" for k, v in kwargs.items()]
        out = func(*args, **kwargs)
        base = func._opname if func._opname.isidentifier() else "t"
        if isinstance(out, Tensor):
            names: tuple[str, ...] = (
                g.name_of(out, base) if id(out) not in g._names else g._fresh(base),
            )
        elif isinstance(out, list | tuple):
            names = tuple(g.name_of(o, f"{base}") for o in out if isinstance(o, Tensor))
        else:
            names = ()
        g.nodes.append(Node(str(func), ", ".join(printed), names))
        return out


def make_fx(fn: Callable[..., Any]) -> Callable[..., Graph]:
    """``make_fx(fn)(*args)`` runs ``fn`` under a TracingMode and returns the Graph (torch's
    make_fx with real tensors: the program runs for real while it is recorded).

    >>> import tensordispatch as td
    >>> from tensordispatch.transforms.functionalize import functionalize
    >>> def f(x):
    ...     y = x.view(4)
    ...     y.mul_(2)
    ...     return x + 1
    >>> g = make_fx(functionalize(f, remove="mutations_and_views"))(td.ones(2, 2))
    >>> print(g.code)
    def forward(self, x_1):
        view_copy = tensordispatch.ops.aten.view_copy.default(x_1, [4])
        mul = tensordispatch.ops.aten.mul.Tensor(view_copy, 2)
        view_copy_1 = tensordispatch.ops.aten.view_copy.default(mul, [2, 2])
        view_copy_2 = tensordispatch.ops.aten.view_copy.default(view_copy_1, [4])
        add = tensordispatch.ops.aten.add.Tensor(view_copy_1, 1)
        copy_ = tensordispatch.ops.aten.copy_.default(x_1, view_copy_1)
        return add
    """

    def traced(*args: Any) -> Graph:
        import inspect

        graph = Graph()
        try:
            params = list(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            params = []
        for i, a in enumerate(args):
            base = params[i] if i < len(params) else f"arg{i}"
            if isinstance(a, Tensor):
                graph.placeholders.append(graph.name_of(a, f"{base}_1"))
        with TracingMode(graph):
            out = fn(*args)
        outs = out if isinstance(out, list | tuple) else [out]
        printed = [graph.fmt(o) for o in outs]
        graph.outputs = (
            printed[0] if not isinstance(out, list | tuple) else "[" + ", ".join(printed) + "]"
        )
        return graph

    return traced
