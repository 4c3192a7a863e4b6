"""gen-backend-stubs for lazy-style backends: full_codegen / ir_gen (issue 10 part 2)."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

import pytest

from tensordispatch.codegen.backend_stubs import (
    LazyIrError,
    MissingShapeFunctionsError,
    generate_backend_stubs,
    run,
)
from tensordispatch.codegen.backend_stubs.cli import main
from tensordispatch.codegen.backend_stubs.gen_lazy import IrOp, generate_ir_module, node_class_name
from tensordispatch.dispatch.dispatcher import DISPATCHER
from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.schema.parse import parse_schema

HEAD = "backend: XLA\ncpp_namespace: my_backend\n"


def _exec(text: str) -> types.ModuleType:
    module = types.ModuleType("generated_lazy_ir")
    exec(compile(text, "generated_lazy_ir.py", "exec"), module.__dict__)  # noqa: S102 - under test
    return module


def test_full_codegen_emits_the_ir_module_next_to_the_kernel_module() -> None:
    files = generate_backend_stubs(HEAD + "full_codegen: [abs, add.Tensor]\nsupported: [clone]")
    assert sorted(files) == ["xla_ir.py", "xla_native_functions.py"]
    ir = _exec(files["xla_ir.py"])
    assert ir.FULL_CODEGEN == ("abs", "add.Tensor") and ir.IR_GEN == ()
    assert [(n, c.__name__, f.__name__) for n, (c, f) in ir.NODES.items()] == [
        ("abs", "Abs", "make_lazy_abs"),
        ("add.Tensor", "AddTensor", "make_lazy_add_Tensor"),
    ]
    assert ir.AddTensor.ARGUMENTS == (("self", "tensor"), ("other", "tensor"), ("alpha", "scalar"))
    assert (
        ir.AddTensor.SCHEMA == "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    )


def test_kernel_module_asks_only_for_hand_written_kernels() -> None:
    files = generate_backend_stubs(HEAD + "full_codegen: [abs]\nsupported: [clone]")
    stubs = _exec(files["xla_native_functions.py"])
    assert [k.name for k in stubs.KERNELS] == ["clone", "_copy_from_and_resize"]
    # abs.out / abs_ are derived at registration (register_generated), clone.out synthesized
    assert [op for _, op, _, _ in stubs.REGISTRATIONS] == ["clone", "clone.out"]
    assert stubs.LAZY_IR == "xla_ir.py"


def test_ir_only_writes_only_the_ir_module(tmp_path: Path) -> None:
    path = tmp_path / "xla.yaml"
    path.write_text(HEAD + "full_codegen: [abs]\n")
    assert run(path, tmp_path, ir_only=True) == ["xla_ir.py"]
    assert run(path, tmp_path, ir_only=True) == []


def test_ir_gen_operators_get_a_node_class_and_no_kernel() -> None:
    files = generate_backend_stubs(HEAD + "supported: [abs]\nir_gen: [nonzero]", ir_only=True)
    ir = _exec(files["xla_ir.py"])
    assert ir.NODES["nonzero"][1] is None and ir.Nonzero.TRACER is None
    assert "def make_lazy_nonzero" not in files["xla_ir.py"]


def test_tracer_kinds() -> None:
    ops = [IrOp(n, parse_schema(s)) for n, s in (
        ("neg", "neg(Tensor self) -> Tensor"),
        ("flip", "flip(Tensor self, int[] dims) -> Tensor"),
        ("clamp", "clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor"),
        ("cat", "cat(Tensor[] tensors, int dim=0) -> Tensor"),
    )]  # fmt: skip
    ir = _exec(generate_ir_module(ops, backend="Lazy", source="x.yaml"))
    assert [ir.NODES[n][0].TRACER for n in ("neg", "flip", "clamp", "cat")] == [
        "static", "static", "dynamic", "dynamic",
    ]  # fmt: skip
    assert ir.Cat.ARGUMENTS == (("tensors", "tensor_list"), ("dim", "attribute"))


def test_argument_names_that_clash_get_a_trailing_underscore() -> None:
    op = IrOp("f", parse_schema("f(Tensor self, int hash, int data, int op) -> Tensor"))
    text = generate_ir_module([op], backend="Lazy", source="x.yaml")
    assert "    hash_ = argument_property(1, 'hash')" in text
    assert "    data_ = argument_property(2, 'data')" in text
    assert "    op_ = argument_property(3, 'op')" in text


def test_node_class_names_follow_ltc() -> None:
    names = ["add.Tensor", "_log_softmax", "bitwise_and.Scalar_Tensor", "max.dim"]
    assert [node_class_name(n) for n in names] == [
        "AddTensor", "LogSoftmax", "BitwiseAndScalarTensor", "MaxDim",
    ]  # fmt: skip


def test_error_missing_shape_functions_listed_all_at_once() -> None:
    text = HEAD + "full_codegen:\n- abs\n- nonzero\n- masked_select\n"
    with pytest.raises(MissingShapeFunctionsError) as info:
        generate_backend_stubs(text)
    assert str(info.value) == (
        "<string>: 2 operators listed for lazy codegen have no shape function, so their output "
        "shapes cannot be inferred:\n"
        "  nonzero(Tensor self) -> Tensor\n"
        "  masked_select(Tensor self, Tensor mask) -> Tensor\n"
        "  Give each a Meta kernel (dispatch: Meta in native_functions.yaml, a structured meta "
        'function, or a composite kernel), or list it under "supported" with a hand-written '
        "kernel."
    )


def test_ir_gen_operators_need_no_shape_function() -> None:
    assert generate_backend_stubs(HEAD + "supported: [abs]\nir_gen: [nonzero]", ir_only=True)


def test_error_views_and_mutating_operators_listed_all_at_once() -> None:
    text = HEAD + "full_codegen:\n- transpose.int\n- abs\n- add_.Tensor\n- abs.out\n"
    with pytest.raises(LazyIrError) as info:
        generate_backend_stubs(text)
    assert str(info.value) == (
        "<string>: lazy codegen generates functional operators only:\n"
        "  transpose.int is a view operator; lazy backends see views as their _copy variants "
        "(functionalization runs above): list transpose_copy.int instead\n"
        "  add_.Tensor is an inplace operator; list its functional variant only (the in-place "
        "and out= kernels are derived from it)\n"
        "  abs.out is an out operator; list its functional variant only (the in-place and out= "
        "kernels are derived from it)"
    )


def test_error_two_operators_with_one_node_class_name() -> None:
    ops = [IrOp(n, parse_schema(f"{n}(Tensor self) -> Tensor")) for n in ("ab_c", "abC")]
    from tensordispatch.codegen.backend_stubs.gen_lazy import check_ir_ops

    with pytest.raises(LazyIrError) as info:
        check_ir_ops(ops, "x.yaml")
    assert str(info.value) == (
        "x.yaml: ab_c and abC would both get the node class AbC; list only one of them"
    )


def test_cli_check_mode_on_the_lazy_backend_yaml(capsys: pytest.CaptureFixture[str]) -> None:
    from tensordispatch.lazy.registration import BACKEND_YAML

    argv = ["--ir-only", "--check", "-s", str(BACKEND_YAML), "-o", str(BACKEND_YAML.parent)]
    assert main(argv) == 0
    assert capsys.readouterr().out == f"{BACKEND_YAML.parent}: up to date\n"


def test_generated_register_installs_the_generated_kernels(tmp_path: Path) -> None:
    yaml_path = tmp_path / "pu1.yaml"
    yaml_path.write_text("backend: PrivateUse1\ncpp_namespace: pu1\nfull_codegen: [abs]\n")
    assert sorted(run(yaml_path, tmp_path)) == [
        "privateuse1_ir.py",
        "privateuse1_native_functions.py",
    ]
    from tensordispatch.lazy.registration import load_ir_file

    stubs = load_ir_file(tmp_path / "privateuse1_native_functions.py")
    key = DispatchKey.PrivateUse1
    entries = [DISPATCHER.find("aten::abs", ""), DISPATCHER.find("aten::abs_", "")]
    assert [key in e.kernels for e in entries] == [False, False]
    handle: Any = stubs.register(types.SimpleNamespace())
    try:
        assert [key in e.kernels for e in entries] == [True, True]
    finally:
        handle.remove()
    assert [key in e.kernels for e in entries] == [False, False]


def test_cli_reports_missing_shape_functions_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "x.yaml"
    path.write_text(HEAD + "full_codegen:\n- nonzero\n")
    assert main(["--ir-only", "-s", str(path), "-o", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    head = (
        f"{path}: error: {path}: 1 operator listed for lazy codegen has no shape function, so "
        "its output shapes cannot be inferred:"
    )
    assert err.splitlines()[:2] == [head, "  nonzero(Tensor self) -> Tensor"]
    assert not (tmp_path / "xla_ir.py").exists()


def test_non_native_entries_get_ir_only_node_classes() -> None:
    text = (
        HEAD + "supported: [abs]\nnon_native:\n"
        "- func: scalar(Scalar value, ScalarType type) -> Tensor\n"
        "  opkind: at::prim::Constant\n"
        "- func: expand(Tensor input, int[] size, bool is_scalar_expand) -> Tensor\n"
    )
    ir = _exec(generate_backend_stubs(text, ir_only=True)["xla_ir.py"])
    assert ir.NON_NATIVE == ("expand", "scalar") and ir.IR_GEN == () and ir.FULL_CODEGEN == ()
    assert (ir.Scalar.OP_NAME, ir.Expand.OP_NAME) == ("at::prim::Constant", "lazy::expand")
    assert ir.NODES["expand"][1] is None
    assert ir.Expand.ARGUMENTS == (
        ("input", "tensor"), ("size", "attribute"), ("is_scalar_expand", "attribute"),
    )  # fmt: skip
    import tensordispatch as td
    from tensordispatch.lazy.ir import BackendData, Shape, device_data_node, operand

    x = device_data_node(BackendData(1.0, Shape.of(td.float32, ())))
    node = ir.Expand.make(
        ir.Expand.OP_NAME, None, (x,), (operand(0), (3,), True),
        (Shape.of(td.float32, (3,)),),
    )  # fmt: skip
    assert (node.input, node.size, node.is_scalar_expand) == (x, (3,), True)
