"""What generated lazy IR modules (gen_lazy.py's output, e.g. lazy/lazy_ir.py) run on.

Owns the names the generated node classes and kernel factories use, in one place, so the
generated text imports one module and the runtime can move without regenerating: the shared
tracing state (thread-local config, counters, operand markers, the shape cache), the node
constructors, and `make_node` for hand-written kernels of ``ir_gen`` operators.
"""

from __future__ import annotations

from typing import Any

from tensordispatch.lazy import metrics
from tensordispatch.lazy.ir import (
    NUMBER_DTYPES,
    IrNode,
    Node,
    Output,
    argument_property,
    operand,
    scalar_node,
)
from tensordispatch.lazy.ir import SCALAR_CACHE as SCALARS
from tensordispatch.lazy.kernels import (
    _ST as ST,
)
from tensordispatch.lazy.kernels import (
    _fallback as fallback,
)
from tensordispatch.lazy.kernels import (
    _forced as forced,
)
from tensordispatch.lazy.kernels import (
    _operand as slow_operand,
)
from tensordispatch.lazy.kernels import (
    _wrap as wrap,
)
from tensordispatch.lazy.kernels import build_node, op_plan
from tensordispatch.lazy.shape import SHAPE_CACHE as CACHE
from tensordispatch.lazy.shape import infer_shapes
from tensordispatch.lazy.tensor import LazyTensor, from_value
from tensordispatch.tensor.tensor import Tensor

__all__ = [
    "CACHE",
    "MARKERS",
    "NUMBER_DTYPES",
    "SCALARS",
    "SCALAR_MARKERS",
    "ST",
    "WRAPPED",
    "C",
    "IrNode",
    "LazyTensor",
    "Output",
    "Tensor",
    "argument_property",
    "fallback",
    "forced",
    "from_value",
    "infer_shapes",
    "make_node",
    "new",
    "operand",
    "scalar_node",
    "slow_operand",
    "wrap",
]  # fmt: skip

C = metrics.COUNTERS
new = object.__new__
MARKERS = tuple(operand(i) for i in range(64))
WRAPPED = tuple(operand(i, "wrapped") for i in range(64))
SCALAR_MARKERS = tuple(operand(i, "scalar") for i in range(64))


def make_node(node_class: type[Node], op: Any, stack: list[Any]) -> Node:
    """A ``node_class`` node for one call of ``op`` with boxed arguments ``stack`` (lazy
    tensors, Scalars, lists...): what a hand-written kernel of an ``ir_gen`` operator uses
    to record its node. Shapes come from the meta functions, as for generated kernels.

    >>> import numpy as np, tensordispatch as td
    >>> from tensordispatch.lazy.tensor import from_array
    >>> x = from_array(np.ones(3, np.float32), td.float32)
    >>> node = make_node(IrNode, td.ops.aten.neg.default, [x])
    >>> type(node).__name__, str(node.shapes[0])
    ('IrNode', 'Float[3]')
    """
    plain = build_node(op_plan(op), list(stack))
    return node_class.make(
        plain.op, plain.overload, plain.operands, plain.args, plain.shapes, plain.returns
    )
