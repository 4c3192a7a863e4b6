"""The generic lowering of a node: its operator's CPU kernel, called from inside a generated
graph function (lowering.py: every node no NumPy rule lowers).

Owns `run_cpu_kernel` (operand values -> CPU tensors -> the operator's CPU kernel -> output
arrays in the node's dtypes) and `markers` (a node's Operand markers). Must not generate
source (lowering.py) nor run graphs (executor.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import DispatchKeySet
from tensordispatch.lazy.ir import DEVICE_DATA, Node, Operand
from tensordispatch.lazy.shape import fill_arguments, flatten_result
from tensordispatch.tensor.tensor import Tensor

__all__ = ["detached", "markers", "run_cpu_kernel"]

_CPU = DispatchKeySet(DispatchKey.CPU)


def markers(node: Node) -> list[Operand]:
    """The Operand markers in ``node``'s arguments (inside tuples too), in argument order."""
    found: list[Operand] = []
    for a in node.args:
        if type(a) is Operand:
            found.append(a)
        elif type(a) is tuple:
            found.extend(x for x in a if type(x) is Operand)
    return found


def detached(node: Node) -> Node:
    """What `run_cpu_kernel` needs of ``node``: the same operator, arguments and shapes, its
    operands replaced by shape-only stand-ins, so a compiled graph that keeps it does not
    keep the graph under it (and the device buffers that graph reads)."""
    stand_ins = tuple([Node(DEVICE_DATA, None, (), (), (v.shape,)) for v in node.operands])
    return Node(node.op, node.overload, stand_ins, node.args, node.shapes, node.returns)


def _cpu_value(value: Any, kind: str, dtype: Any) -> Any:
    if kind == "scalar":
        return value
    array = value if isinstance(value, np.ndarray) else np.asarray(value, dtype._numpy)
    if array.dtype != dtype._numpy:
        array = array.astype(dtype._numpy)
    t = Tensor._wrap_numpy(array, dtype)
    if kind == "wrapped":
        t._wrapped_number = True
    return t


def run_cpu_kernel(node: Node, *values: Any) -> list[Any]:
    """Run ``node``'s operator on CPU for operand values ``values``; its output arrays."""
    inputs: list[Any] = [None] * len(node.operands)
    operands = node.operands
    for marker in markers(node):
        dtype = operands[marker.index].shape.dtype
        inputs[marker.index] = _cpu_value(values[marker.index], marker.kind, dtype)
    result = node.overload._redispatch_boxed(_CPU, fill_arguments(node.args, inputs))
    tensors, _ = flatten_result(result)
    arrays = []
    for t, shape in zip(tensors, node.shapes, strict=True):
        array = t._data
        if array.dtype != shape.dtype._numpy:
            array = array.astype(shape.dtype._numpy)
        arrays.append(array)
    return arrays
