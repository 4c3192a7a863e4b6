"""Types: parsing, printing, predicates (torchgen's), canonical spelling."""

from __future__ import annotations

import pytest
import torchgen.model as tg

from tensordispatch.schema import (
    BaseTy,
    BaseType,
    CustomClassType,
    ListType,
    OptionalType,
    SchemaError,
    parse_type,
)

TYPES = [
    "Tensor", "Tensor?", "Tensor[]", "Tensor?[]", "Tensor[]?", "int", "int[]", "int[2]",
    "int[1]?", "SymInt", "SymInt[]", "SymInt[6]", "SymInt?", "float?", "float[]?", "bool[3]",
    "str", "str?", "Scalar", "Scalar?", "Scalar[]", "ScalarType", "ScalarType?", "Layout?",
    "Device", "Device?", "DeviceIndex", "MemoryFormat?", "QScheme", "Generator?", "Storage",
    "Stream", "SymBool", "DimVector", "GraphModule", "int?[]", "int[][]",
    "__torch__.torch.classes.ns.Cls", "__torch__.torch.classes.ns.Cls?",
]  # fmt: skip


@pytest.mark.parametrize("text", TYPES)
def test_type_predicates_agree_with_torchgen(text: str) -> None:
    ours, theirs = parse_type(text), tg.Type.parse(text)
    assert str(ours) == text
    assert ours.is_tensor_like() == theirs.is_tensor_like()
    assert ours.is_nullable() == theirs.is_nullable()
    assert ours.is_symint_like() == theirs.is_symint_like()
    assert ours.is_generator_like() == theirs.is_generator_like()
    assert (ours.is_list_like() is None) == (theirs.is_list_like() is None)


def test_base_types_are_torchgens() -> None:
    assert {t.name for t in BaseTy} == {t.name for t in tg.BaseTy}


def test_type_structure() -> None:
    assert parse_type("int[2]?") == OptionalType(ListType(BaseType(BaseTy.int), 2))
    assert parse_type("Tensor?[]") == ListType(OptionalType(BaseType(BaseTy.Tensor)), None)
    assert parse_type("__torch__.torch.classes.a.B") == CustomClassType("a.B")


def test_is_list_like_returns_the_list() -> None:
    lst = parse_type("SymInt[2]?").is_list_like()
    assert lst == ListType(BaseType(BaseTy.SymInt), 2)


def test_tensor_like_are_the_dispatch_types() -> None:
    assert [
        parse_type(t).is_tensor_like() for t in ("Tensor", "Tensor?", "Tensor[]", "Tensor?[]")
    ] == [True] * 4
    assert not any(
        parse_type(t).is_tensor_like() for t in ("int", "Scalar", "Storage", "Generator?")
    )


def test_parse_is_cached_identity() -> None:
    assert parse_type("SymInt[3]") is parse_type("SymInt[3]")


@pytest.mark.parametrize("text", ["int[0]", "int[ 2]", "Dimname", "Any", "Tensor!", "", "?", "[]"])
def test_bad_types_raise_schema_error(text: str) -> None:
    with pytest.raises(SchemaError):
        parse_type(text)
