"""`precomputed` lists are accepted exactly when torchgen's Precompute.parse accepts them
(it keys replacements by argument and requires the list to reprint as written)."""

from __future__ import annotations

import pytest
from torchgen.model import Precompute as TorchgenPrecompute

from tensordispatch.schema.native_parse import EntryError, parse_precomputed

LISTS = [
    ["dim -> int dim"],
    ["dim -> int dim", "dim -> int dim"],  # found by the Hypothesis mutation test
    ["dim -> int dim", "dim -> int other"],
    ["dim -> int dim, bool keep", "bool flag"],
    ["dim -> int dim,bool keep"],
    ["a -> int x", "b -> int y", "bool z"],
    ["a -> int x", "b -> int y", "a -> int z"],
]


def _torchgen_accepts(src: list[str]) -> bool:
    try:
        TorchgenPrecompute.parse(list(src))
    except (AssertionError, RuntimeError, ValueError):
        return False
    return True


@pytest.mark.parametrize("src", LISTS, ids=[" | ".join(s) for s in LISTS])
def test_precomputed_accepted_exactly_when_torchgen_accepts(src: list[str]) -> None:
    try:
        parse_precomputed(src)
    except EntryError:
        ours = False
    else:
        ours = True
    assert ours == _torchgen_accepts(src)


def test_repeated_argument_error_names_both_forms() -> None:
    with pytest.raises(EntryError) as info:
        parse_precomputed(["dim -> int dim", "dim -> int dim"])
    assert str(info.value) == (
        "precomputed lines must name each argument once, in the form 'arg -> TYPE name, ...': "
        "read ['dim -> int dim', 'dim -> int dim'], which prints as ['dim -> int dim']"
    )
