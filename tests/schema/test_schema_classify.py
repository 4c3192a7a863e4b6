"""Classification (SchemaKind, is_view, mutation, signature) on hand-picked schemas, each
checked against torchgen's model or torch's parser as the oracle."""

from __future__ import annotations

import pytest
import torch
import torchgen.model as tg

from tensordispatch.schema import SchemaKind, parse_schema

SCHEMAS = [
    "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "__iand__.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
    "__and__.Scalar(Tensor self, Scalar other) -> Tensor",
    "set_data(Tensor(a!) self, Tensor new_data) -> ()",
    "_fused_moving_avg_obs_fq_helper(Tensor self, Tensor observer_on, Tensor fake_quant_on, Tensor(a!) running_min, Tensor(b!) running_max, Tensor(c!) scale, Tensor(d!) zero_point, float averaging_const, int quant_min, int quant_max, int ch_axis, bool per_row_fake_quant=False, bool symmetric_quant=False) -> (Tensor output, Tensor mask)",
    "foo.scratch_out(Tensor self, *, Tensor(a!) out, Tensor(b!) _scratch_tmp) -> Tensor(a!)",
    "max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)",
    "_foreach_add_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()",
    "_foreach_add.Scalar_out(Tensor[] self, Scalar scalar, *, Tensor(a!)[] out) -> ()",
    "transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
    "split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
    "unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]",
    "transpose_(Tensor(a!) self, int dim0, int dim1) -> Tensor(a!)",
    "empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
    "empty.out(SymInt[] size, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)",
    "bernoulli.p(Tensor self, float p, *, Generator? generator=None) -> Tensor",
    "bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None) -> Tensor(a!)",
    "where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
    "view_copy(Tensor self, SymInt[] size) -> Tensor",
    "slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor",
    "foo(GraphModule g, DimVector d, __torch__.torch.classes.ns.Cls c) -> ()",
    "foo(int x=1, int y) -> ()",
    "foo(int[] x=1, Tensor? t=[], bool b=true) -> ()",
    "myns::op_.overload(Tensor(a!) self) -> Tensor(a!)",
]  # fmt: skip


@pytest.mark.parametrize("text", SCHEMAS)
def test_classification_agrees_with_torchgen(text: str) -> None:
    ours, theirs = parse_schema(text), tg.FunctionSchema.parse(text)
    assert str(ours) == text
    assert ours.kind().name == theirs.kind().name
    assert ours.is_out_fn() == theirs.is_out_fn()
    assert ours.is_mutable == theirs.is_mutable
    assert ours.modifies_arguments() == theirs.modifies_arguments
    assert ours.mutable_arg_names() == theirs.arguments.mutable_arg_names()
    assert ours.aliased_return_names() == theirs.aliased_return_names()
    assert ours.returns_are_aliased() == theirs.returns_are_aliased()
    for kw in ({}, {"strip_default": True}, {"keep_return_names": True}):
        assert str(ours.signature(**kw)) == str(theirs.signature(**kw))
    assert str(ours.view_signature()) == str(theirs.view_signature())


@pytest.mark.parametrize("text", [s for s in SCHEMAS if "GraphModule" not in s and "Cls" not in s
                                  and "int y" not in s and "=[]" not in s])  # fmt: skip
def test_is_view_agrees_with_torch(text: str) -> None:
    assert parse_schema(text).is_view == torch._C.parse_schema(text)._is_view_op()


def test_kinds_in_torchgen_order() -> None:
    kinds = {s: parse_schema(s).kind() for s in SCHEMAS}
    assert kinds[SCHEMAS[1]] is SchemaKind.inplace
    assert kinds[SCHEMAS[3]] is SchemaKind.inplace  # dunder inplace
    assert kinds[SCHEMAS[5]] is SchemaKind.functional  # written self, no trailing _
    assert kinds[SCHEMAS[6]] is SchemaKind.mutable
    assert kinds[SCHEMAS[7]] is SchemaKind.scratch
    assert kinds[SCHEMAS[9]] is SchemaKind.inplace  # Tensor-list inplace returns ()


def test_signature_groups_variants() -> None:
    functional, inplace, out = (parse_schema(s) for s in SCHEMAS[:3])
    assert functional.signature() == inplace.signature() == out.signature()
    factory, factory_out = parse_schema(SCHEMAS[15]), parse_schema(SCHEMAS[16])
    assert factory.signature() == factory_out.signature()  # TensorOptions dropped


def test_bernoulli_p_signature_gets_its_default() -> None:
    p, float_ = parse_schema(SCHEMAS[17]), parse_schema(SCHEMAS[18])
    assert (
        str(p.signature())
        == "bernoulli(Tensor self, float p=0.5, *, Generator? generator=None) -> Tensor"
    )
    assert p.signature() == float_.signature()


def test_mutable_signature_returns_written_inputs_named() -> None:
    sig = parse_schema(SCHEMAS[6]).signature(keep_return_names=True)
    assert [r.name for r in sig.returns] == [
        "output", "mask", "running_min_out", "running_max_out", "scale_out", "zero_point_out",
    ]  # fmt: skip


def test_view_copy_pairs_with_view() -> None:
    view = parse_schema("view(Tensor(a) self, SymInt[] size) -> Tensor(a)")
    copy = parse_schema(SCHEMAS[20])
    assert view.view_signature() == copy.view_signature()
    assert str(parse_schema(SCHEMAS[21]).view_signature()).startswith("slice_inverse(")


def test_view_detection() -> None:
    assert parse_schema(SCHEMAS[11]).is_view  # returned read alias
    assert parse_schema(SCHEMAS[12]).is_view  # a -> *
    assert not parse_schema(SCHEMAS[14]).is_view  # inplace_view is a yaml tag, not a schema fact
    assert not parse_schema(SCHEMAS[2]).is_view  # out: written alias


def test_mutated_arguments_and_out() -> None:
    s = parse_schema(SCHEMAS[8])
    assert [a.name for a in s.mutated_arguments()] == ["max", "max_values"]
    assert [a.name for a in s.out] == ["max", "max_values"]
    assert [r.name for r in s.returns] == ["values", "indices"]


def test_pre_self_positional() -> None:
    s = parse_schema(SCHEMAS[19])
    assert [a.name for a in s.pre_self_positional] == ["condition"]
    assert s.self_arg is not None and s.self_arg.name == "self"


def test_tensor_options_partition() -> None:
    s = parse_schema(SCHEMAS[15])
    assert s.tensor_options is not None
    assert [a.name for a in s.tensor_options] == ["dtype", "layout", "device", "pin_memory"]
    assert [a.name for a in s.post_tensor_options_kwarg_only] == ["memory_format"]
    assert [a.name for a in s.kwarg_only] == [
        "dtype", "layout", "device", "pin_memory", "memory_format",
    ]  # fmt: skip


def test_has_symint() -> None:
    assert parse_schema(SCHEMAS[12]).has_symint()
    assert not parse_schema(SCHEMAS[0]).has_symint()


def test_returns_named_and_tuple() -> None:
    s = parse_schema("foo(Tensor self) -> (Tensor values, Tensor indices)")
    t = torch._C.parse_schema(str(s))
    assert [(r.name, str(r.type)) for r in s.returns] == [(r.name, str(r.type)) for r in t.returns]
    assert parse_schema("foo(Tensor self) -> ()").returns == ()
    single = parse_schema("foo(Tensor self) -> Tensor out_name")
    assert single.returns[0].name == "out_name"
    assert str(single) == "foo(Tensor self) -> Tensor out_name"


def test_generated_schemas_from_spec_parse_and_classify() -> None:
    # Spec 10.4: schemas torchgen generates must be valid in our grammar too.
    cases = {
        "zero.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)": SchemaKind.out,
        "_foreach_zero.out(Tensor[] self, *, Tensor(a!)[] out) -> ()": SchemaKind.out,
        "view_copy.out(Tensor self, SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)": SchemaKind.out,
        "_amp_update_scale(Tensor self, Tensor growth_tracker, Tensor found_inf, float scale_growth_factor, float scale_backoff_factor, int growth_interval) -> (Tensor, Tensor growth_tracker_out)": SchemaKind.functional,
    }  # fmt: skip
    for text, kind in cases.items():
        assert parse_schema(text).kind() is kind and str(parse_schema(text)) == text
