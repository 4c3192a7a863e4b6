"""Default values: the source text is kept, the value is what torch's own parser reports."""

from __future__ import annotations

import pytest
import torch

from tensordispatch.schema import default_value, parse_argument, parse_schema, parse_type

# (type, default text) pairs that both parsers accept; torch's default_value is the oracle.
CASES = [
    ("float", "1e-05"), ("float", "1e-15"), ("float", "2.5e+3"), ("float", "1E5"),
    ("float", "1"), ("float", "0"), ("float", "-0.5"), ("float", ".5"), ("float", "1."),
    ("int", "-100"), ("int", "0"), ("int", "Mean"), ("int", "long"), ("int", "contiguous_format"),
    ("Scalar", "1"), ("Scalar", "1.0"), ("Scalar", "0.3333333333333333"), ("Scalar", "-1"),
    ("bool", "True"), ("bool", "False"), ("bool?", "None"), ("bool?", "False"),
    ("str", "'linear'"), ("str", '"L"'), ("str", '""'), ("str", r'"\"\'\\"'),
    ("str", r"'\"\'\\'"), ("str", "'a b'"), ("str?", "None"),
    ("ScalarType?", "long"), ("ScalarType", "bfloat16"), ("ScalarType?", "cdouble"),
    ("MemoryFormat", "contiguous_format"), ("Layout", "strided"),
    ("int[2]", "1"), ("SymInt[3]", "0"), ("int[1]", "0"), ("int[2]", "[]"),
    ("int[]", "[-2,-1]"), ("int[]", "[0,1]"), ("SymInt[]", "[]"), ("int[1]", "[-2,-1]"),
    ("int[2]?", "None"), ("float[]", "[1.5,2]"), ("bool[3]", "[True,False,True]"),
    ("Tensor?", "None"), ("int?", "0"),
]  # fmt: skip


@pytest.mark.parametrize(("type_text", "default"), CASES)
def test_default_value_agrees_with_torch(type_text: str, default: str) -> None:
    schema = f"foo({type_text} x={default}) -> ()"
    expected = torch._C.parse_schema(schema).arguments[0].default_value
    arg = parse_schema(schema).arguments[0]
    assert arg.default == default  # the source text is kept for printing
    assert arg.default_value == expected
    assert type(arg.default_value) is type(expected)


def test_scientific_notation_keeps_its_text() -> None:
    s = parse_schema("foo(float eps=1e-05) -> ()")
    assert str(s) == "foo(float eps=1e-05) -> ()"
    assert s.arguments[0].default_value == 1e-05


def test_fixed_size_list_scalar_default_is_replicated() -> None:
    arg = parse_argument("int[2] stride=1")
    assert arg.default_value == [1, 1]
    assert parse_argument("SymInt[3] padding=0").default_value == [0, 0, 0]


def test_default_value_lists_are_fresh_objects() -> None:
    arg = parse_argument("int[2] stride=1")
    first = arg.default_value
    first.append(99)  # type: ignore[union-attr]
    assert arg.default_value == [1, 1]


def test_no_default_is_none() -> None:
    assert parse_argument("Tensor self").default_value is None
    assert parse_argument("Tensor self").default is None


def test_torchgen_only_spellings_have_values() -> None:
    # torchgen accepts these (torch does not); we follow torchgen and give them a meaning.
    assert parse_argument("bool b=true").default_value is True
    assert parse_argument("Tensor? t=[]").default_value is None
    assert parse_argument("int[] x=1").default_value == [1]


def test_default_value_function_directly() -> None:
    assert default_value("Mean", parse_type("int")) == 1
    assert default_value(None, parse_type("int")) is None
    assert default_value("2", parse_type("float")) == 2.0


def test_string_escapes() -> None:
    assert parse_argument(r"str s='a\nb'").default_value == "a\nb"
    assert parse_argument(r"str s='a\qb'").default_value == "a\\qb"


def test_scalar_type_words_only_for_scalar_type() -> None:
    assert parse_argument("ScalarType dtype=double").default_value == 7
    with pytest.raises(ValueError, match="unrecognized default value double for type int"):
        parse_argument("int x=double")
