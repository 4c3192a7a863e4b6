"""Lazy IR codegen (issue 10 part 2): node classes and kernels generated from backend.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch import lazy
from tensordispatch.codegen.backend_stubs import run
from tensordispatch.lazy import lazy_ir, registration
from tensordispatch.lazy.ir import IrNode, Operand
from tensordispatch.lazy.irgen_runtime import make_node
from tensordispatch.lazy.kernels import HANDWRITTEN, op_plan
from tensordispatch.lazy.lowering import NUMPY_RULES, Rule
from tensordispatch.lazy.tensor import LazyTensor, from_array, from_value
from tensordispatch.lazy.tracegen import make_tracer
from tensordispatch.transforms.functionalize import from_functional

LAZY_DIR = registration.BACKEND_YAML.parent
NEW_OP = "bitwise_left_shift.Tensor"  # has a structured meta function, not in backend.yaml


def _raw(*values: float) -> LazyTensor:
    return from_array(np.array(values, np.float32), td.float32)


def _node(t: Any) -> Any:
    inner = t if isinstance(t, LazyTensor) else from_functional(t)
    return inner._data.ir


def test_checked_in_lazy_ir_is_up_to_date() -> None:
    changed = run(registration.BACKEND_YAML, LAZY_DIR, dry_run=True, ir_only=True)
    assert changed == [], "run: tensordispatch gen-backend-stubs --ir-only -s ... -o ..."


def test_every_full_codegen_operator_has_a_node_class_and_a_kernel() -> None:
    spec = registration.read_backend_yaml()
    assert set(lazy_ir.NODES) == set(spec.full_codegen) | set(spec.ir_gen)
    for name in spec.full_codegen:
        node_class, factory = lazy_ir.NODES[name]
        assert issubclass(node_class, IrNode) and node_class.OP_NAME == f"aten::{name}"
        assert factory is not None


def test_traced_nodes_are_generated_classes_with_named_arguments() -> None:
    x = td.tensor([[1.0, 2.0], [3.0, 4.0]]).to("lazy")
    y = x.sum(dim=[1], keepdim=True) + x
    add = _node(y)
    assert type(add).__name__ == "AddTensor"
    assert type(add.self).__name__ == "SumDimIntList"
    assert add.self.dim == (1,) and add.self.keepdim is True
    assert add.argument("other") == add.operands[1]
    assert add.self.attributes() == {"dim": (1,), "keepdim": True, "dtype": None}
    with pytest.raises(AttributeError) as info:
        add.argument("alpah")
    assert str(info.value) == (
        "AddTensor: aten::add.Tensor has no argument 'alpah' (its arguments: self, other, alpha)"
    )


def test_generated_kernel_builds_the_generic_node_for_list_arguments() -> None:
    from tensordispatch.lazy.kernels import trace

    op = td.ops.aten.sum.dim_IntList
    stack = [_raw(1, 2, 3), [0], False, None]
    fast = make_tracer(op_plan(op))(op, None, list(stack))  # type: ignore[misc]
    slow = trace(op, None, list(stack))
    assert (_node(fast).hash, _node(fast).args) == (_node(slow).hash, _node(slow).args)


def test_mutating_a_callers_list_after_tracing_leaves_the_node_unchanged() -> None:
    op = td.ops.aten.flip.default
    kernel = make_tracer(op_plan(op))
    dims = [0]
    y = kernel(op, None, [_raw(1, 2, 3), dims])  # type: ignore[misc]
    node = _node(y)
    before = (node.hash, node.args)
    dims.append(5)
    dims[0] = 7
    assert node.dims == (0,) and (node.hash, node.args) == before
    assert y.to("cpu").tolist() == [3.0, 2.0, 1.0]


def test_mutating_a_list_after_tracing_does_not_change_the_result() -> None:
    shape = [3, 2]
    x = td.arange(6.0).to("lazy")
    y = x.view(shape) * 2
    shape[0], shape[1] = 2, 3
    lazy.mark_step()
    expected = (torch.arange(6.0).view([3, 2]) * 2).tolist()
    assert y.to("cpu").tolist() == expected and list(y.shape) == [3, 2]


def _yaml_with(tmp_path: Path, key: str, line: str) -> Path:
    text = registration.BACKEND_YAML.read_text(encoding="utf-8")
    path = tmp_path / "backend.yaml"
    path.write_text(text.replace(f"{key}:\n", f"{key}:\n{line}\n", 1), encoding="utf-8")
    return path


def _reinstalled(path: Path, module: Any) -> None:
    lazy.uninstall()
    lazy.install(path, module)


def _shl_expected() -> list[int]:
    return torch.bitwise_left_shift(torch.tensor([1, 2, 3, 4]), torch.tensor([0, 1, 2, 3])).tolist()


def _shl_rule(node: Any, ins: list[str], out: str | None, hoist: Any) -> str | None:
    return f"np.left_shift({ins[0]}, {ins[1]})"


def test_adding_an_operator_is_one_yaml_line_and_a_lowering_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = td.tensor([1, 2, 3, 4]).to("lazy"), td.tensor([0, 1, 2, 3]).to("lazy")
    assert td.bitwise_left_shift(a, b).to("cpu").tolist() == _shl_expected()
    assert lazy.metrics.counter_value(f"aten::{NEW_OP}") == 1  # not listed: the CPU fallback
    path = _yaml_with(tmp_path, "full_codegen", f"- {NEW_OP}")
    assert run(path, tmp_path, ir_only=True) == ["lazy_ir.py"]  # the codegen step
    monkeypatch.setitem(NUMPY_RULES, f"aten::{NEW_OP}", Rule(_shl_rule, writes_into=False))
    try:
        _reinstalled(path, registration.load_ir_file(tmp_path / "lazy_ir.py"))
        lazy.metrics.reset_metrics()
        y = td.bitwise_left_shift(a, b)
        assert type(_node(y)).__name__ == "BitwiseLeftShiftTensor"
        lazy.mark_step()
        assert lazy.get_backend().last_source.count("np.left_shift(") == 1
        assert y.to("cpu").tolist() == _shl_expected()
        counters = ("lazy::bitwise_left_shift", f"aten::{NEW_OP}", "UncachedCompile")
        assert [lazy.metrics.counter_value(n) for n in counters] == [1, None, 1]
    finally:
        lazy.uninstall()
        lazy.install()


def test_ir_gen_operator_gets_its_node_class_for_a_hand_written_kernel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _yaml_with(tmp_path, "supported", f"- {NEW_OP}")
    path.write_text(path.read_text() + f"ir_gen:\n- {NEW_OP}\n")
    assert run(path, tmp_path, ir_only=True) == ["lazy_ir.py"]
    module = registration.load_ir_file(tmp_path / "lazy_ir.py")
    node_class, factory = module.NODES[NEW_OP]
    assert factory is None and module.IR_GEN == (NEW_OP,)
    calls = []

    def shl(self: Any, other: Any) -> Any:  # the hand-written kernel
        calls.append(1)
        return from_value(make_node(node_class, td.ops.aten.bitwise_left_shift.Tensor,
                                    [self, other]))  # fmt: skip

    monkeypatch.setitem(HANDWRITTEN, NEW_OP, shl)
    try:
        _reinstalled(path, module)
        a, b = td.tensor([1, 2, 3, 4]).to("lazy"), td.tensor([0, 1, 2, 3]).to("lazy")
        y = td.bitwise_left_shift(a, b)
        node = _node(y)
        assert type(node) is node_class and str(node.shapes[0]) == "Long[4]"
        assert [type(a) for a in node.args] == [Operand, Operand]
        assert y.to("cpu").tolist() == _shl_expected() and calls == [1]
    finally:
        lazy.uninstall()
        lazy.install()


def test_error_generated_module_out_of_date(tmp_path: Path) -> None:
    path = _yaml_with(tmp_path, "full_codegen", f"- {NEW_OP}")
    spec = registration.read_backend_yaml(path)
    with pytest.raises(registration.StaleIrModuleError) as info:
        registration.ir_module(spec, path)
    assert str(info.value) == (
        "lazy: the generated IR module lazy_ir.py does not match backend.yaml: backend.yaml "
        'lists bitwise_left_shift.Tensor under "full_codegen", which it lacks. Regenerate it: '
        f"tensordispatch gen-backend-stubs --ir-only -s {path} -o {LAZY_DIR}"
    )


SCALARS = [0.0, -0.0, float("nan"), 1, 7, 2.5, np.float64(3.0), 1.0]


@pytest.mark.parametrize("value", range(len(SCALARS)))
def test_inline_scalar_cache_gives_scalar_nodes_node(value: int) -> None:
    from tensordispatch.backends.aten import wrap_number
    from tensordispatch.lazy.ir import scalar_node
    from tensordispatch.lazy.kernels import trace

    v = SCALARS[value]
    for op, stack in (
        (td.ops.aten.add.Tensor, [_raw(1, 2), _raw(3, 4), v]),
        (td.ops.aten.mul.Tensor, [_raw(1, 2), wrap_number(v)]),
    ):
        fast = _node(make_tracer(op_plan(op))(op, None, list(stack)))  # type: ignore[misc]
        slow = _node(trace(op, None, list(stack)))
        assert fast.hash == slow.hash and fast.operands[-1] == slow.operands[-1]
    plain = v.item() if isinstance(v, np.generic) else v
    assert fast.operands[-1] is scalar_node(plain, wrap_number(v).dtype)


def test_uninstall_drops_the_sessions_metrics_and_compiled_graphs() -> None:
    x = td.ones(3).to("lazy")
    (x + 1).to("cpu")
    assert lazy.metrics.counter_value("UncachedCompile") == 1
    lazy.uninstall()
    try:
        assert lazy.metrics.counter_names() == []
    finally:
        lazy.install()
    y = td.ones(3).to("lazy")
    (y + 1).to("cpu")  # the same graph compiles again: the cache went with the session
    assert lazy.metrics.counter_value("UncachedCompile") == 1
