"""Alias annotations: parsing, printing, and agreement with torch's alias sets."""

from __future__ import annotations

import pytest
import torch
import torchgen.model as tg

from tensordispatch.schema import AliasInfo, parse_argument, parse_schema

ANNOTATIONS = ["a", "a!", "b!", "a -> *", "a|b", "a! -> a|b", "a|b -> c", "z"]


@pytest.mark.parametrize("text", ANNOTATIONS)
def test_annotation_agrees_with_torchgen(text: str) -> None:
    ours, theirs = AliasInfo.parse(text), tg.Annotation.parse(text)
    assert str(ours) == text
    assert (ours.before_set, ours.after_set, ours.is_write) == (
        theirs.alias_set, theirs.alias_set_after, theirs.is_write,
    )  # fmt: skip
    assert (ours.alias_set, ours.alias_set_after) == (theirs.alias_set, theirs.alias_set_after)


@pytest.mark.parametrize("text", ANNOTATIONS)
def test_annotation_sets_agree_with_torch(text: str) -> None:
    info = torch._C.parse_schema(f"foo(Tensor({text}) x) -> ()").arguments[0].alias_info
    ours = AliasInfo.parse(text)
    assert set(ours.before_set) == info.before_set
    assert set(ours.after_set or ours.before_set) == info.after_set
    assert ours.is_write == info.is_write


def test_wildcard_after_set() -> None:
    arg = parse_argument("Tensor(a -> *) self")
    assert arg.alias_info is not None
    assert arg.alias_info.is_wildcard_after and arg.alias_info.after_set == ("*",)
    assert str(arg) == "Tensor(a -> *) self"


def test_annotation_binds_before_optional_and_list() -> None:
    opt = parse_argument("Tensor(a!)? x")
    lst = parse_argument("Tensor(a!)[] xs")
    assert (str(opt.type), str(opt.alias_info)) == ("Tensor?", "a!")
    assert (str(lst.type), str(lst.alias_info)) == ("Tensor[]", "a!")
    assert str(opt) == "Tensor(a!)? x" and str(lst) == "Tensor(a!)[] xs"


def test_write_flag_on_arguments_and_returns() -> None:
    s = parse_schema("foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
    assert [a.is_write for a in s.arguments] == [False, True]
    assert s.returns[0].is_write and s.returns[0].alias_info == s.arguments[1].alias_info


def test_alias_info_is_a_value() -> None:
    assert AliasInfo.parse("a!") == AliasInfo(("a",), (), True)
    assert hash(AliasInfo.parse("a|b")) == hash(AliasInfo(("a", "b")))
    assert AliasInfo.parse("a!") != AliasInfo.parse("a")
