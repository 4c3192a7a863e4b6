"""Golden tests: every schema error, with its exact message, column and offending text."""

from __future__ import annotations

import pickle
import re

import pytest

from tensordispatch.schema import (
    AliasInfo,
    Argument,
    FunctionSchema,
    ListType,
    Return,
    SchemaError,
    parse_alias_info,
    parse_argument,
    parse_operator_name,
    parse_return,
    parse_schema,
    parse_type,
)
from tensordispatch.schema.types import BaseTy, BaseType

_SPACES = " (write one space between type and name, and ', ' between arguments)"
_LITERAL = " (expected None, True, False, a number, a quoted string, an enum word or a [list] without spaces)"
_INV1 = "Out arguments must have matching return Tensor; furthermore, the ith-argument needs to correspond to the ith return. arg.annotation={}, ret.annotation={}"
_TO_SCHEMA = "foo(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, Tensor(a!) out) -> Tensor(a!)"

# (schema text, expected column, expected reason)
GRAMMAR_CASES = [
    ("foo(Tensor self) ->Tensor", 17,
     "expected ' -> RETURNS' after the argument list, with one space on each side of '->'"),
    ("foo(Tensor self,Tensor other) -> Tensor", 5, f"unrecognized type Tensor self,Tensor{_SPACES}"),
    ("foo(Tensor  self) -> Tensor", 5, f"unrecognized type Tensor {_SPACES}"),
    ("foo(Tensor! self) -> Tensor", 5, "unrecognized type Tensor!"),
    ("foo(Tensor?(a!) self) -> ()", 5, "unrecognized type Tensor?(a!)"),
    ("foo(int(a) x) -> ()", 5, "unrecognized type int(a)"),
    ("foo(Dimname dim) -> ()", 5, "unrecognized type Dimname"),
    ("foo(Any x) -> ()", 5, "unrecognized type Any"),
    ("foo(Tensor x) -> (Tensor a, Tensr b)", 29, "unrecognized type Tensr"),
    ("foo(int[0] x) -> ()", 9, "non-canonical list size in int[0] (write int[])"),
    ("foo(int[02] x) -> ()", 9, "non-canonical list size in int[02] (write int[2])"),
    ("foo(Tensor self) -> (Tensor)", 21, "a single return must not be parenthesised (write Tensor)"),
    ("foo(Tensor x) -> Tensor a, Tensor b", 18,
     "several returns must be parenthesised: (Tensor a, Tensor b)"),
    ("foo(Tensor x) -> ", 18, "missing return type (write () for no returns)"),
    ("foo(Tensor self, *) -> Tensor", 18,
     "kwarg-only specifier * must be followed by at least one argument"),
    ("foo(Tensor self, *, *, int x) -> Tensor", 21,
     "invalid syntax: kwarg-only specifier * can only occur once"),
    ("foo(Tensor x, , Tensor y) -> ()", 15, "empty argument (arguments are separated by ', ')"),
    ("foo(Tensor) -> ()", 5, "illegal argument 'Tensor'"),
    ("foo(Tensor x, int y=1=2) -> ()", 15, "illegal argument with default value: 'int y=1=2'"),
    ("foo(Tensor x=) -> ()", 14, "argument 'x' has an empty default value"),
    ("foo(int[2] x=[1, 2]) -> ()", 14, f"unrecognized default value [1{_LITERAL}"),
    ("foo(int x=a b) -> ()", 11, f"unrecognized default value a b{_LITERAL}"),
    ("foo(str x='a) -> ()", 11, f"unrecognized default value 'a{_LITERAL}"),
    ("foo(int x=mean) -> ()", 11, "unrecognized default value mean for type int"),
    ("foo(Tensor(a) sel-f) -> Tensor", 15, "argument name 'sel-f' is not an identifier"),
    ("foo(Tensor self) -> Tensor ou-t", 28, "return name 'ou-t' is not an identifier"),
    ("foo(Tensor(a|b!) self) -> ()", 12, "alias set larger than 1 is not mutable, got a|b! instead."),
    ("foo(Tensor(a|b -> c|d) self) -> ()", 12,
     "before alias set and after alias set cannot be larger than 1 at the same time, got a|b -> c|d instead."),
    ("foo(Tensor(A) self) -> ()", 12, "unrecognized alias annotation A"),
    ("foo(Tensor(a)?[] x) -> ()", 14, "unrecognized alias analysis form with Tensor: ?[]"),
    ("foo(Tensor(a)[2] self) -> ()", 14, "unrecognized alias analysis form with Tensor: [2]"),
    ("(Tensor x) -> Tensor", 1, "missing operator name; expected NAME(ARGS) -> RETURNS"),
    ("foo Tensor x -> Tensor", 1, "missing '(' after the operator name; expected NAME(ARGS) -> RETURNS"),
    ("foo(Tensor x) -> Tensor\n", 24, "line breaks are not allowed in a schema"),
    ("foo_out(Tensor self) -> Tensor", 1,
     "_out suffix is reserved and not permitted for operator names; did you mean to specify an out overload name instead?"),
    (".out(Tensor x) -> Tensor", 1, "operator name cannot be empty"),
    ("f::(Tensor self) -> ()", 4, "operator name cannot be empty"),
    ("foo.(Tensor x) -> Tensor", 5, "overload name '' is not made of letters, digits and _"),
    ("foo.o-ut(Tensor self) -> ()", 5, "overload name 'o-ut' is not made of letters, digits and _"),
    ("f oo(Tensor self) -> ()", 1, "operator name 'f oo' is not an identifier"),
    ("a::b::foo(Tensor x) -> Tensor", 1,
     "Codegen doesn't support more than 1 level(s) of custom namespace. Got a::b."),
    ("__ifoo__(Tensor x) -> Tensor", 1, "unexpected dunder method starting with 'i': __ifoo__"),
    ("foo_functional_(Tensor(a!) self) -> Tensor(a!)", 1,
     "functional overload cannot be a dunder method or inplace: foo_functional_"),
]  # fmt: skip

# Schema-level invariants (spec 1.9): torchgen's messages; no column (they are not local).
INVARIANT_CASES = [
    ("foo.out(Tensor self, *, Tensor(a!) out) -> Tensor", _INV1.format("a!", "None")),
    ("foo_(Tensor(a!) self, *, Tensor(b!) out) -> Tensor(a!)", _INV1.format("b!", "a!")),
    ("foo(Tensor x, Tensor(a!) y) -> Tensor(a!)",
     "If you have a schema with mutable positional args, we expect them to not be returned. schema: foo(Tensor x, Tensor(a!) y) -> Tensor(a!)"),
    ("foo(Tensor(a!) self) -> (Tensor(a!), Tensor)",
     "NativeFunctions must have either only mutable returns, or only immutable returns. Found: foo(Tensor(a!) self) -> (Tensor(a!), Tensor)"),
    ("foo(Tensor self) -> Tensor(a!)",
     'All mutable returns must be aliased either to a keyword argument, or to "self". Did you forget to mark an out argument as keyword-only?'),
    ("foo.out(Tensor self, *, Tensor(a!)[] out) -> ()", None),  # accepted: see test below
    ("foo.out(Tensor self, *, Tensor(a!) out, Tensor(b!) out2) -> Tensor(a!)",
     "Must return as many arguments as there are out arguments, or no return at all. Got 2 non-scratch out args and 1 returns"),
    ("foo_(Tensor(a!) self, *, Tensor(a!) out) -> Tensor(a!)", "A schema cannot be both out= and inplace"),
    ("foo_(Tensor self) -> Tensor",
     "Inplace op foo_ must have a self argument with a mutable annotation"),
    ("foo_(Tensor(a!) self) -> Tensor", "Inplace op foo_ with Tensor self must return self"),
    ("foo_(Tensor(a!)[] self) -> Tensor[]",
     "Inplace op foo_ with non-Tensor self must have no returns"),
    (_TO_SCHEMA,
     f"Found an operator that is not functional or out variant, but has tensor options arguments.This is not allowed- tensor options arguments are only allowed for factory functions.schema: {_TO_SCHEMA}"),
    ("foo.functional(Tensor self, Tensor(a!) x) -> ()",
     "Found an operator that is not functional, but its overload contains the string 'functional'.This is a special keyword in the codegen, please use a different overload name.schema: foo.functional(Tensor self, Tensor(a!) x) -> ()"),
    ("foo(Tensor self, *, Tensor(a!) out, int x) -> Tensor(a!)",
     "non-mutable argument 'x' cannot follow mutable out arguments"),
    ("foo(Tensor(a!) x, Tensor self) -> ()",
     "mutable pre_self_positional arguments are not currently supported in the schema: [Tensor(a!) x]"),
    ("foo(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor", "tensor options arguments can only appear once"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "column", "reason"), GRAMMAR_CASES)
def test_grammar_error_message_and_column(text: str, column: int, reason: str) -> None:
    with pytest.raises(SchemaError) as info:
        parse_schema(text)
    assert (info.value.text, info.value.column, info.value.reason) == (text, column, reason)
    assert str(info.value) == f"invalid function schema '{text}' at column {column}: {reason}"


@pytest.mark.parametrize(("text", "reason"), [c for c in INVARIANT_CASES if c[1] is not None])
def test_invariant_error_message(text: str, reason: str) -> None:
    with pytest.raises(SchemaError) as info:
        parse_schema(text)
    assert (info.value.text, info.value.column, info.value.reason) == (text, None, reason)
    assert str(info.value) == f"invalid function schema '{text}': {reason}"


def test_tensor_list_out_with_no_returns_is_accepted() -> None:
    s = parse_schema("foo.out(Tensor self, *, Tensor(a!)[] out) -> ()")
    assert s.kind().name == "out"


def test_tensor_list_out_with_returns_is_rejected() -> None:
    with pytest.raises(SchemaError) as info:
        parse_schema("foo.out(Tensor self, *, Tensor(a!)[] out, Tensor(b!) o2) -> Tensor(b!)")
    assert info.value.reason.startswith(_INV1.format("a!", "b!")[:40])


def test_full_message_names_text_and_column() -> None:
    with pytest.raises(SchemaError) as info:
        parse_schema("foo(Tensorr self) -> Tensor")
    assert str(info.value) == (
        "invalid function schema 'foo(Tensorr self) -> Tensor' at column 5: unrecognized type Tensorr"
    )


def test_schema_error_is_a_value_error_and_pickles() -> None:
    with pytest.raises(ValueError) as info:
        parse_schema("foo(Tensorr self) -> Tensor")
    again = pickle.loads(pickle.dumps(info.value))
    assert isinstance(again, SchemaError)
    assert (again.text, again.column, again.reason) == (
        info.value.text, info.value.column, info.value.reason,
    )  # fmt: skip


def test_non_string_input_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="parse_schema expects a str, got bytes"):
        parse_schema(b"foo() -> ()")  # type: ignore[arg-type]


def test_type_error_standalone_has_column() -> None:
    with pytest.raises(SchemaError) as info:
        parse_type("int[0]")
    assert (info.value.column, info.value.reason) == (
        5,
        "non-canonical list size in int[0] (write int[])",
    )


def test_argument_error_standalone() -> None:
    with pytest.raises(SchemaError) as info:
        parse_argument("Tensor(a!)? x=None=1")
    assert str(info.value) == (
        "invalid argument 'Tensor(a!)? x=None=1' at column 1: illegal argument with default value: 'Tensor(a!)? x=None=1'"
    )


def test_standalone_errors_name_what_was_parsed() -> None:
    with pytest.raises(SchemaError) as info:
        parse_type("Tensor[0]")
    assert str(info.value) == (
        "invalid type 'Tensor[0]' at column 8: non-canonical list size in Tensor[0] (write Tensor[])"
    )
    with pytest.raises(SchemaError) as info:
        parse_return("Tensor x y")
    assert (
        str(info.value)
        == "invalid return 'Tensor x y' at column 1: unrecognized type Tensor x (write one space between type and name, and ', ' between arguments)"
    )
    with pytest.raises(SchemaError) as info:
        parse_alias_info("a!!")
    assert (
        str(info.value)
        == "invalid alias annotation 'a!!' at column 1: unrecognized alias annotation a!!"
    )
    with pytest.raises(SchemaError) as info:
        parse_operator_name("add_out")
    assert info.value.what == "operator name"


def test_annotation_on_non_tensor_built_directly_is_rejected() -> None:
    with pytest.raises(SchemaError) as info:
        Argument("x", BaseType(BaseTy.int), None, False, AliasInfo(("a",), (), True))
    assert info.value.reason == (
        "alias annotation (a!) on non-Tensor type int of argument 'x'; annotations attach only to Tensor, Tensor? and Tensor[]"
    )


def test_positional_after_kwarg_only_built_directly_is_rejected() -> None:
    s = parse_schema("foo(Tensor self, *, int a) -> Tensor")
    swapped = (s.arguments[1], Argument("b", BaseType(BaseTy.int)))
    with pytest.raises(SchemaError) as info:
        FunctionSchema(s.name, swapped, s.returns)
    assert info.value.reason == "positional argument 'b' cannot follow keyword-only arguments"


def test_bad_alias_info_and_list_size_built_directly_are_rejected() -> None:
    with pytest.raises(SchemaError, match=re.escape("not mutable, got a|b! instead.")):
        AliasInfo(("a", "b"), (), True)
    with pytest.raises(SchemaError, match="alias sets are single lowercase letters"):
        AliasInfo(("ab",))
    with pytest.raises(SchemaError, match="list size must be a positive integer or None, got 0"):
        ListType(BaseType(BaseTy.int), 0)


def test_aliased_return_names_with_two_sources_raises() -> None:
    s = parse_schema("foo(Tensor(a) self, Tensor(a) other) -> Tensor(a)")
    with pytest.raises(SchemaError) as info:
        s.aliased_return_names()
    assert info.value.reason == "Found a return (None)that aliases multiple inputs (self, other)"


def test_unnamed_return_with_after_set_is_rejected() -> None:
    with pytest.raises(SchemaError) as info:
        Return(None, BaseType(BaseTy.Tensor), AliasInfo(("a",), ("*",)))
    assert info.value.reason == (
        "an unnamed return cannot have an alias after-set (Tensor(a -> *)); name the return or drop the '->' part"
    )
