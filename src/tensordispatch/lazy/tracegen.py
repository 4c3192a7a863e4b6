"""Per-operator tracing kernels generated from their `OpPlan` (the hot path of tracing).

Owns `make_tracer(plan)`: Python source for one operator's boxed Lazy kernel, unrolled over
its tensor and Scalar arguments, compiled once at registration. It builds exactly the node
the generic `kernels.trace` builds (same arguments, markers, shape-cache key and hash), with
the common case inline: an operand that is a LazyTensor. Anything else (wrapped numbers,
0-dim CPU tensors, errors) goes through the generic `_operand`. Operators with tensor-list
arguments keep the generic kernel.

Note [Generated tracers]
The generic kernel walks the plan's argument list per call; at 10-20 operators per
microsecond of Python that walk costs as much as the rest of the trace. Generating the walk
once per operator (what torchgen's LTC codegen does in C++ for each IR node class, and what
issue 10 will drive from backend.yaml) leaves one attribute read and one dict lookup per
operand on the hot path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensordispatch.lazy import metrics
from tensordispatch.lazy.ir import Node, operand, scalar_node
from tensordispatch.lazy.shape import SHAPE_CACHE, infer_shapes
from tensordispatch.tensor.tensor import Tensor

__all__ = ["make_tracer"]


def _static_source(plan: Any) -> str | None:
    """Note [Static tracers]: every input of ``plan`` is a required Tensor or Scalar, so each
    operand's index, marker and signature slot is known when generating; the argument tuple,
    signature, node and its hash are built from locals, without lists or a second walk."""
    from tensordispatch.lazy.kernels import T_SCALAR, T_TENSOR

    arguments = plan.op._schema.arguments
    kinds = dict(plan.inputs)
    if plan.lists or any(kind not in (T_TENSOR, T_SCALAR) for kind in kinds.values()):
        return None
    if any(str(arguments[pos].type).endswith("?") for pos in kinds) or len(kinds) > 64:
        return None
    lines = [
        "def tracer(op, keyset, stack):",
        "    if ST.lazy_force_fallback and forced(PLAN):",
        "        return fallback(op, keyset, stack)",
        "    C[COUNTER] += 1",
    ]
    marks: list[str] = []
    scalars: list[str] = []
    for pos in range(plan.num_args):
        kind = kinds.get(pos)
        if kind is None:
            marks.append(f"stack[{pos}]")
            continue
        k = sum(1 for p in kinds if p < pos)  # this operand's index
        marks.append(f"m{k}")
        lines.append(f"    a = stack[{pos}]")
        if kind == T_SCALAR:
            scalars.append(f"{k}: a{k}")
            lines += [
                f"    a{k} = a",
                f"    v{k} = (scalar_node(a), 0)",
                f"    g{k} = (v{k}[0].shapes[0], 'scalar')",
                f"    m{k} = SCALAR_MARKERS[{k}]",
            ]
            continue
        lines += [
            "    if a.__class__ is LazyTensor:",
            "        d = a._data",
            f"        v{k} = d.ir or d.ir_value()",
            f"        g{k} = (v{k}[0].shapes[v{k}[1]], 'tensor')",
            f"        m{k} = MARKERS[{k}]",
            "    elif a.__class__ is Tensor and a._wrapped_number:",
            f"        v{k} = (scalar_node(a._data.item(), a.dtype), 0)",
            f"        g{k} = (v{k}[0].shapes[0], 'wrapped')",
            f"        m{k} = WRAPPED[{k}]",
            "    else:",
            "        one, sig1 = [], []",
            f"        m{k} = operand({k}, slow_operand(a, one, sig1).kind)",
            f"        v{k}, g{k} = one[0], sig1[0]",
        ]
    n = len(kinds)
    values = "".join(f"v{k}, " for k in range(n))
    hashes = "".join(f"(v{k}[0].hash, v{k}[1]), " for k in range(n))
    lines += [
        f"    frozen = ({''.join(m + ', ' for m in marks)})",
        f"    sig = ({''.join(f'g{k}, ' for k in range(n))})",
        "    key = (KEY, frozen, sig)",
        "    shapes = CACHE.get(key)",
        "    if shapes is None:",
        f"        shapes = infer_shapes(OP, frozen, list(sig), {{{', '.join(scalars)}}}, key)",
        "    node = new(Node)",
        "    node.op = NAME",
        "    node.overload = OP",
        f"    node.operands = ({values})",
        "    node.args = frozen",
        "    node.shapes = shapes",
        "    node.returns = RETURNS",
        "    node.data = None",
        f"    node.hash = hash((NAME, frozen, ({hashes}), shapes))",
        "    return from_value((node, 0))" if plan.returns == "one" else "    return wrap(node)",
    ]
    return "\n".join(lines) + "\n"


def _dynamic_source(plan: Any) -> str | None:
    from tensordispatch.lazy.kernels import T_SCALAR, T_TENSOR

    if any(kind not in (T_TENSOR, T_SCALAR) for _, kind in plan.inputs) or plan.lists:
        return None
    lines = [
        "def tracer(op, keyset, stack):",
        "    if ST.lazy_force_fallback and forced(PLAN):",
        "        return fallback(op, keyset, stack)",
        "    C[COUNTER] += 1",
        f"    args = list(stack[:{plan.num_args}])",
        "    operands = []",
        "    sig = []",
        "    scalars = {}",
    ]
    for pos, kind in plan.inputs:
        lines.append(f"    a = args[{pos}]")
        lines.append("    if a is not None:")
        if kind == T_TENSOR:
            lines += [
                "        if a.__class__ is LazyTensor:",
                "            d = a._data",
                "            value = d.ir or d.ir_value()",
                "            operands.append(value)",
                "            sig.append((value[0].shapes[value[1]], 'tensor'))",
                f"            args[{pos}] = MARKERS[len(operands) - 1]",
                "        elif a.__class__ is Tensor and a._wrapped_number:",
                "            value = (scalar_node(a._data.item(), a.dtype), 0)",
                "            operands.append(value)",
                "            sig.append((value[0].shapes[0], 'wrapped'))",
                f"            args[{pos}] = WRAPPED[len(operands) - 1]",
                "        else:",
                f"            args[{pos}] = slow_operand(a, operands, sig)",
            ]
        else:
            lines += [
                "        n = scalar_node(a)",
                "        scalars[len(operands)] = a",
                "        operands.append((n, 0))",
                "        sig.append((n.shapes[0], 'scalar'))",
                f"        args[{pos}] = operand(len(operands) - 1, 'scalar')",
            ]
    lines += [
        "    frozen = tuple(args)",
        "    key = (KEY, frozen, tuple(sig))",
        "    shapes = CACHE.get(key)",
        "    if shapes is None:",
        "        shapes = infer_shapes(OP, frozen, sig, scalars, key)",
        "    node = Node(NAME, OP, tuple(operands), frozen, shapes, RETURNS)",
        "    return from_value((node, 0))" if plan.returns == "one" else "    return wrap(node)",
    ]
    return "\n".join(lines) + "\n"


_MARKERS = [operand(i) for i in range(64)]
_WRAPPED = [operand(i, "wrapped") for i in range(64)]
_SCALAR_MARKERS = [operand(i, "scalar") for i in range(64)]


def make_tracer(plan: Any) -> Callable[..., Any] | None:
    """The generated boxed kernel of ``plan.op`` (None: use the generic `kernels.trace`).

    The generated kernel must build the same node as the generic one:

    >>> import tensordispatch as td, tensordispatch.lazy as lazy
    >>> from tensordispatch.lazy.kernels import op_plan, trace
    >>> from tensordispatch.lazy.tensor import from_array
    >>> import numpy as np
    >>> x = from_array(np.ones(3, np.float32), td.float32)
    >>> op = td.ops.aten.mul.Tensor
    >>> fast = make_tracer(op_plan(op))(op, None, [x, x])
    >>> slow = trace(op, None, [x, x])
    >>> fast._data.ir[0].hash == slow._data.ir[0].hash
    True
    """
    source = _static_source(plan) or _dynamic_source(plan)
    if source is None:
        return None
    from tensordispatch.lazy import kernels

    namespace: dict[str, Any] = {
        "ST": kernels._ST,
        "forced": kernels._forced,
        "fallback": kernels._fallback,
        "PLAN": plan,
        "C": metrics.COUNTERS,
        "COUNTER": plan.counter,
        "LazyTensor": kernels.LazyTensor,
        "MARKERS": _MARKERS,
        "WRAPPED": _WRAPPED,
        "SCALAR_MARKERS": _SCALAR_MARKERS,
        "new": object.__new__,
        "Tensor": Tensor,
        "slow_operand": kernels._operand,
        "scalar_node": scalar_node,
        "operand": operand,
        "KEY": plan.key,
        "CACHE": SHAPE_CACHE,
        "infer_shapes": infer_shapes,
        "Node": Node,
        "NAME": plan.name,
        "OP": plan.op,
        "RETURNS": plan.returns,
        "wrap": kernels._wrap,
        "from_value": kernels.from_value,
    }
    code = compile(source, f"<lazy tracer {plan.name}>", "exec")
    exec(code, namespace)  # noqa: S102 - our own generated source
    tracer: Callable[..., Any] = namespace["tracer"]
    tracer.__lazy_source__ = source  # type: ignore[attr-defined]
    return tracer
