"""Operator names: overloads, inplace and dunder forms, functional overloads, namespaces."""

from __future__ import annotations

import pytest
import torch
import torchgen.model as tg

from tensordispatch.schema import BaseOperatorName, OperatorName, parse_schema

NAMES = [
    "add", "add_", "add.Tensor", "add_.Tensor", "__iand__.Scalar", "__and__.Tensor",
    "__lshift__.Scalar", "__irshift__.Tensor", "_foreach_add_.List", "_fused_moving_avg_obs_fq_helper_functional",
    "_", "native_batch_norm.out", "a_b_c_.d_e",
]  # fmt: skip


@pytest.mark.parametrize("text", NAMES)
def test_operator_name_fields_agree_with_torchgen(text: str) -> None:
    ours, theirs = OperatorName.parse(text), tg.OperatorName.parse(text)
    assert str(ours) == text
    assert (ours.name.base, ours.name.inplace, ours.name.dunder_method) == (
        theirs.name.base, theirs.name.inplace, theirs.name.dunder_method,
    )  # fmt: skip
    assert ours.name.functional_overload == theirs.name.functional_overload
    assert ours.overload_name == theirs.overload_name
    assert ours.unambiguous_name() == theirs.unambiguous_name()
    assert str(ours.remove_inplace()) == str(theirs.remove_inplace())
    assert str(ours.with_overload("x")) == str(theirs.with_overload("x"))


def test_dunder_inplace_name_prints_back() -> None:
    name = BaseOperatorName.parse("__iand__")
    assert (name.base, name.inplace, name.dunder_method) == ("and", True, True)
    assert str(BaseOperatorName("and", False, True)) == "__and__"


def test_namespaced_schema_round_trips_and_qualifies_like_torch() -> None:
    text = "myns::op.overload(Tensor self) -> Tensor"
    s = parse_schema(text)
    t = torch._C.parse_schema(text)
    assert str(s) == text
    assert s.name.name.namespace == "myns"
    assert (s.qualified_name, s.overload_name) == (t.name, t.overload_name)


def test_default_namespace_is_aten() -> None:
    s = parse_schema("add.Tensor(Tensor self, Tensor other) -> Tensor")
    assert s.name.name.namespace is None
    assert (s.qualified_name, s.overload_name) == ("aten::add", "Tensor")


def test_namespaced_inplace_and_dunder() -> None:
    s = parse_schema("myns::op_(Tensor(a!) self) -> Tensor(a!)")
    assert s.name.name.inplace and s.qualified_name == "myns::op_"
    assert s.kind().name == "inplace"
    d = parse_schema("myns::__ior__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)")
    assert (d.name.name.base, d.name.name.inplace, d.qualified_name) == (
        "or",
        True,
        "myns::__ior__",
    )


def test_functional_overload_name() -> None:
    s = parse_schema("foo_functional(Tensor self) -> Tensor")
    assert (s.name.name.base, s.name.name.functional_overload) == ("foo", True)
    assert str(s.name) == "foo_functional"


def test_with_name_rechecks_and_keeps_arguments() -> None:
    s = parse_schema("add.Tensor(Tensor self, Tensor other) -> Tensor")
    renamed = s.with_name(OperatorName.parse("plus.Tensor"))
    assert str(renamed) == "plus.Tensor(Tensor self, Tensor other) -> Tensor"
    assert renamed.arguments is s.arguments


def test_names_are_hashable_values() -> None:
    assert OperatorName.parse("add.Tensor") == OperatorName.parse("add.Tensor")
    assert len({OperatorName.parse("add.Tensor"), OperatorName.parse("add.Tensor")}) == 1
    assert OperatorName.parse("add.Tensor") != OperatorName.parse("add_.Tensor")
