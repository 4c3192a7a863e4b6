"""The IR's Values (lazy/ir.py Note [Values]): a single-output node is its own Value, the
outputs of a multi-output node are `Output` objects, and a traced op leaves exactly the
objects it needs."""

from __future__ import annotations

import gc
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch import lazy
from tensordispatch.lazy import lazy_ir
from tensordispatch.lazy.ir import BackendData, Node, Output, Shape, device_data_node, operand
from tensordispatch.transforms.functionalize import from_functional


def _ir(t: Any) -> Any:
    return from_functional(t)._data.ir


def _leaf() -> Node:
    return device_data_node(BackendData(np.ones(2, np.float32), Shape.of(td.float32, (2,))))


def test_a_traced_single_output_node_is_its_own_value() -> None:
    x = td.ones(2).to("lazy")
    y = x * 2.0 + 1.0
    node = _ir(y)
    assert type(node).__name__ == "AddTensor"
    assert (node.node is node, node.index, node.shape is node.shapes[0]) == (True, 0, True)
    assert node.output(0) is node
    assert type(node.operands[0]).__name__ == "MulTensor"


def test_a_node_does_not_refer_to_itself() -> None:
    # a self-reference would keep every traced node alive until the cyclic collector ran
    x = td.ones(2).to("lazy")
    node = _ir(x + 1.0)
    assert all(r is not node for r in gc.get_referents(node))


def test_a_traced_op_leaves_four_tracked_objects() -> None:
    # node, its operand tuple, LazyTensor (its own value: tensor.py Note [LazyData]) and
    # FunctionalTensor: no (node, 0) tuple, no separate value object
    x = td.ones(4).to("lazy")
    lazy.mark_step()
    y = x
    for i in range(6):  # teach the inlined methods first
        y = y + 0.5 if i % 2 == 0 else y * 0.999
    kept = [None] * 50
    gc.collect()
    gc.disable()
    try:
        before = len(gc.get_objects())
        for i in range(50):
            y = y + 0.5 if i % 2 == 0 else y * 0.999
            kept[i] = y
        made = len(gc.get_objects()) - before
    finally:
        gc.enable()
    assert 4 * 50 - 10 <= made <= 4 * 50  # (the odd bookkeeping object may die meanwhile)


def test_an_argument_named_like_a_value_attribute_is_renamed() -> None:
    cls = lazy_ir.NODES["index_select"][0]
    assert cls.index == 0 and isinstance(cls.__dict__["index_"], property)
    x = td.tensor([1.0, 2.0, 3.0]).to("lazy")
    i = td.tensor([2, 0]).to("lazy")
    node = _ir(td.index_select(x, 0, i))
    assert node.index == 0 and node.index_ is node.operands[1] and node.dim == 0


def test_outputs_of_one_node_are_distinct_values() -> None:
    shape = Shape.of(td.float32, (2,))
    node = Node("aten::sort", None, (_leaf(),), (operand(0), -1, False), (shape, shape), "tuple")
    first, second = node.output(0), node.output(1)
    assert first == Output(node, 0) and hash(first) == hash(Output(node, 0))
    assert first != second and first.hash != second.hash and first.hash != node.hash
    assert (second.node, second.index, second.shape) == (node, 1, shape)
    users = [Node("aten::neg", None, (v,), (operand(0),), (shape,)) for v in (first, second)]
    assert users[0].hash != users[1].hash


def test_single_output_node_refuses_other_outputs() -> None:
    with pytest.raises(IndexError) as info:
        _leaf().output(1)
    assert str(info.value) == "lazy_tensors::device_data: a single-output node has no output 1"


def test_multi_output_values_flow_through_a_graph_like_torch() -> None:
    data = [[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]]
    x = td.tensor(data).to("lazy")
    values, indices = td.sort(x, 1)
    assert type(_ir(values)) is Output and _ir(values).node is _ir(indices).node
    y = (values * 2.0 + values).sum(1)  # the same Output used twice
    tv, ti = torch.sort(torch.tensor(data), 1)
    assert y.cpu().tolist() == pytest.approx((tv * 2.0 + tv).sum(1).tolist())
    assert indices.cpu().tolist() == ti.tolist()
    text = lazy.debug.dump_ir([values, indices])
    assert "ROOT=0" in text and "ROOT=1" in text and "aten::sort" in text
