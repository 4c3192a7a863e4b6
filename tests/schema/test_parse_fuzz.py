"""Property tests: for ANY string the parser either returns a schema that prints back to the
same string, or raises SchemaError, never anything else (IndexError, RecursionError, ...)."""

from __future__ import annotations

import functools
import os

import torchgen
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tensordispatch.schema import FunctionSchema, SchemaError, parse_schema

YAML = os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen", "native", "native_functions.yaml")  # fmt: skip

# Characters and tokens that matter to the grammar, so mutations hit interesting places.
TOKENS = list("()[]?!*|-> ,.=:_'\"\\\naz09") + [
    "Tensor", "int", "SymInt", "->", " -> ", "(a!)", "(a)", "(a -> *)", "Tensor(a!)", "*, ",
    ", ", "[]", "[2]", "?", "__", "_out", "::", "=None", "=[]", "=1", "=1e-05", "self",
    "=[0,1]", "='x'", "()", "_", "i", "functional", "_scratch_",
]  # fmt: skip


@functools.lru_cache(maxsize=1)
def real_schemas() -> list[str]:
    with open(YAML) as f:
        return [e["func"] for e in yaml.load(f, Loader=yaml.CSafeLoader)]


def exercise(text: str) -> None:
    """Parse; if accepted, every derived fact must be computable without error."""
    try:
        s = parse_schema(text)
    except SchemaError as e:
        assert e.text == text
        assert e.column is None or 1 <= e.column <= len(text) + 1
        return
    assert str(s) == text
    assert parse_schema(str(s)) == s
    assert str(FunctionSchema(s.name, s.arguments, s.returns)) == text
    s.kind(), s.is_view, s.boxing_info, s.signature(), s.view_signature()
    for a in s.arguments:
        a.default_value  # noqa: B018 - must not raise for an accepted default
    try:
        s.aliased_return_names()
    except SchemaError:
        pass


@st.composite
def mutated_schema(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(real_schemas()))
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["insert", "delete", "replace", "swap"]))
        if op == "insert":
            text = text[:i] + draw(st.sampled_from(TOKENS)) + text[i:]
        elif op == "delete":
            text = text[:i] + text[i + draw(st.integers(1, 6)) :]
        elif op == "replace":
            text = text[:i] + draw(st.sampled_from(TOKENS)) + text[i + 1 :]
        else:  # swap two ", "-separated pieces
            pieces = text.split(", ")
            if len(pieces) > 2:
                a = draw(st.integers(0, len(pieces) - 1))
                b = draw(st.integers(0, len(pieces) - 1))
                pieces[a], pieces[b] = pieces[b], pieces[a]
                text = ", ".join(pieces)
    return text


@settings(max_examples=1500)
@given(mutated_schema())
def test_mutated_real_schemas_raise_only_schema_error(text: str) -> None:
    exercise(text)


@settings(max_examples=800)
@given(st.text(max_size=80))
def test_random_strings_raise_only_schema_error(text: str) -> None:
    exercise(text)


@settings(max_examples=800)
@given(st.lists(st.sampled_from(TOKENS), max_size=25).map("".join))
def test_random_token_soup_raises_only_schema_error(text: str) -> None:
    exercise(text)


@settings(max_examples=300)
@given(st.sampled_from(["int", "Tensor", "float"]), st.integers(1, 3000))
def test_deeply_nested_types_are_rejected_cleanly(base: str, depth: int) -> None:
    exercise(f"foo({base}{'?' * depth} x) -> ()")
    exercise(f"foo({base}{'[]' * depth} x) -> ()")


def test_every_real_schema_passes_the_property() -> None:
    for text in real_schemas():
        exercise(text)
