"""Generated tracers (lazy/tracegen.py) build the node the generic `kernels.trace` builds."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensordispatch as td
from tensordispatch.backends.aten import wrap_number
from tensordispatch.lazy.kernels import op_plan, trace
from tensordispatch.lazy.tensor import from_array
from tensordispatch.lazy.tracegen import _static_source, make_tracer


def _lazy(*values: float) -> Any:
    return from_array(np.array(values, np.float32), td.float32)


def _node_facts(t: Any) -> tuple[Any, ...]:
    node = t._data.ir
    return node.hash, node.args, node.operands, node.shapes, node.returns, node.op


CASES = [
    ("add.Tensor", lambda: [_lazy(1, 2), _lazy(3, 4), 2]),
    ("add.Tensor", lambda: [_lazy(1, 2), wrap_number(0.5), 1]),
    ("add.Tensor", lambda: [_lazy(1, 2), td.tensor(3.0), 1.5]),  # 0-dim CPU: slow operand
    ("mul.Tensor", lambda: [wrap_number(2), _lazy(1, 2)]),
    ("where.self", lambda: [_lazy(1, 0) > 0.5, _lazy(1, 2), _lazy(3, 4)]),
    ("sub.Scalar", lambda: [_lazy(1, 2), 3, 1]),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_static_tracer_builds_the_generic_node(case: int) -> None:
    name, make = CASES[case]
    packet, overload = name.split(".")
    op = getattr(getattr(td.ops.aten, packet), overload)
    plan = op_plan(op)
    assert _static_source(plan) is not None
    stack = make()
    fast = make_tracer(plan)(op, None, list(stack))  # type: ignore[misc]
    slow = trace(op, None, list(stack))
    assert _node_facts(fast) == _node_facts(slow)
    assert fast.dtype is slow.dtype and fast.shape == slow.shape


def test_optional_inputs_keep_the_dynamic_tracer() -> None:
    plan = op_plan(td.ops.aten.clamp.default)  # Scalar? min, Scalar? max
    assert _static_source(plan) is None
    stack = [_lazy(1, 5), None, 3]
    fast = make_tracer(plan)(plan.op, None, list(stack))  # type: ignore[misc]
    slow = trace(plan.op, None, list(stack))
    assert _node_facts(fast) == _node_facts(slow)


def test_static_tracer_rejects_a_cpu_tensor_as_generic_trace_does() -> None:
    op = td.ops.aten.mul.Tensor
    stack = [_lazy(1, 2), td.ones(2)]
    with pytest.raises(RuntimeError) as fast:
        make_tracer(op_plan(op))(op, None, list(stack))  # type: ignore[misc]
    with pytest.raises(RuntimeError) as slow:
        trace(op, None, list(stack))
    assert (
        str(fast.value)
        == str(slow.value)
        == (
            "lazy: every tensor argument must be a lazy tensor, but found a Tensor on device "
            "'cpu'; move it with .to('lazy') first (only 0-dim CPU tensors may join lazy ones)"
        )
    )
