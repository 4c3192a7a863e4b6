"""Property: every schema object prints to text that parses back to an equal object.

Objects are generated directly (not from text), so this checks the printer and the parser
against each other over the whole object space, not only over spellings we thought of.
"""

from __future__ import annotations

import pickle

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tensordispatch.schema import (
    AliasInfo,
    Argument,
    BaseOperatorName,
    BaseTy,
    BaseType,
    CustomClassType,
    FunctionSchema,
    ListType,
    OperatorName,
    OptionalType,
    Return,
    SchemaError,
    Type,
    parse_alias_info,
    parse_argument,
    parse_operator_name,
    parse_return,
    parse_schema,
    parse_type,
)

letters = st.sampled_from("abcdefgh")
identifiers = st.builds(
    str.__add__,
    st.sampled_from(["a", "x", "self", "out", "foo", "bar_baz", "i", "_private", "dtype"]),
    st.sampled_from(["", "1", "_2", "_x", "9a"]),
)


def types() -> st.SearchStrategy[Type]:
    base: st.SearchStrategy[Type] = st.sampled_from([BaseType(t) for t in BaseTy])
    base = base | st.builds(CustomClassType, st.sampled_from(["ns.Cls", "a.b.C"]))
    return st.recursive(
        base,
        lambda inner: (
            st.builds(OptionalType, inner)
            | st.builds(ListType, inner, st.none() | st.integers(1, 12))
        ),
        max_leaves=3,
    )


@st.composite
def alias_infos(draw: st.DrawFn) -> AliasInfo:
    before = tuple(draw(st.lists(letters, min_size=1, max_size=3)))
    is_write = len(before) == 1 and draw(st.booleans())
    after: tuple[str, ...] = draw(
        st.sampled_from([(), ("*",)]) | st.lists(letters, min_size=1, max_size=3).map(tuple)
    )
    assume(not (len(before) > 1 and len(after) > 1))
    return AliasInfo(before, after, is_write)


TENSORS = [BaseType(BaseTy.Tensor), OptionalType(BaseType(BaseTy.Tensor))]
TENSORS.append(ListType(BaseType(BaseTy.Tensor), None))


@st.composite
def arguments(draw: st.DrawFn, kwarg_only: bool | None = None) -> Argument:
    annotated = draw(st.integers(0, 3)) == 0
    t = draw(st.sampled_from(TENSORS)) if annotated else draw(types())
    info = draw(alias_infos()) if annotated else None
    default = draw(
        st.none() | st.sampled_from(["None", "1", "-2", "1e-05", "'x'", "[0,1]", "True"])
    )
    kw = draw(st.booleans()) if kwarg_only is None else kwarg_only
    return Argument(draw(identifiers), t, default, kw, info)


@st.composite
def returns(draw: st.DrawFn) -> Return:
    annotated = draw(st.integers(0, 3)) == 0
    t = draw(st.sampled_from(TENSORS)) if annotated else draw(types())
    info = draw(alias_infos()) if annotated else None
    name = draw(st.none() | identifiers)
    if info is not None and info.after_set and name is None:
        name = "r"  # an unnamed return cannot carry `-> ...` (see test_schema_errors)
    return Return(name, t, info)


@st.composite
def operator_names(draw: st.DrawFn) -> OperatorName:
    dunder = draw(st.booleans())
    if dunder:
        inplace = draw(st.booleans())
        base = draw(
            st.sampled_from(["add", "and", "or", "lshift"] if inplace else ["add", "eq", "ne"])
        )
        name = BaseOperatorName(base, inplace, True)
    else:
        base = draw(identifiers)
        assume(not base.endswith(("_out", "_functional", "_")))
        inplace = draw(st.booleans())
        functional = not inplace and draw(st.booleans())
        name = BaseOperatorName(base, inplace, False, functional, draw(st.none() | identifiers))
    return OperatorName(
        name, draw(st.sampled_from(["", "Tensor", "out", "Scalar_out", "int", "2", "_x"]))
    )


@given(types())
def test_type_round_trip(t: Type) -> None:
    assert parse_type(str(t)) == t


@given(alias_infos())
def test_alias_info_round_trip(info: AliasInfo) -> None:
    assert parse_alias_info(str(info)) == info


@given(arguments())
def test_argument_round_trip(arg: Argument) -> None:
    assert parse_argument(str(arg), arg.kwarg_only) == arg


@given(returns())
def test_return_round_trip(ret: Return) -> None:
    assert parse_return(str(ret)) == ret


@given(operator_names())
def test_operator_name_round_trip(name: OperatorName) -> None:
    assert parse_operator_name(str(name)) == name


@settings(max_examples=60)
@given(
    operator_names(),
    st.lists(arguments(kwarg_only=False), max_size=4),
    st.lists(arguments(kwarg_only=True), max_size=3),
    st.lists(returns(), max_size=3),
)
def test_schema_round_trip(
    name: OperatorName, positional: list[Argument], keyword: list[Argument], rets: list[Return]
) -> None:
    try:
        schema = FunctionSchema(name, tuple(positional + keyword), tuple(rets))
    except SchemaError:
        assume(False)
        return
    text = str(schema)
    again = parse_schema(text)
    assert again == schema and hash(again) == hash(schema)
    assert again.kind() is schema.kind()
    assert pickle.loads(pickle.dumps(schema)) == schema
