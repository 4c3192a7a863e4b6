"""copy_ on CPU (Note [copy_ of one dtype and shape] in backends/cpu/kernels.py): the one
assignment of the common call and the checked path give torch's values, versions and
errors for every kind of pair."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import tensordispatch as td

# name -> build(lib) returning (self, src); self is written by self.copy_(src)
PAIRS: dict[str, Callable[[Any], tuple[Any, Any]]] = {
    "same 2-d": lambda m: (m.zeros(2, 3), m.arange(6.0).reshape(2, 3)),
    "0-d": lambda m: (m.zeros(()), m.tensor(2.5)),
    "empty": lambda m: (m.zeros(0, 3), m.ones(0, 3)),
    "into a view": lambda m: (m.zeros(4, 4)[1:3], m.ones(2, 4)),
    "from a view": lambda m: (m.zeros(2, 2), m.arange(8.0).reshape(2, 4)[:, ::2]),
    "transposed self": lambda m: (m.zeros(3, 2).t(), m.arange(6.0).reshape(2, 3)),
    "cast": lambda m: (m.zeros(3, dtype=m.int32), m.tensor([1.7, -2.2, 3.9])),
    "broadcast": lambda m: (m.zeros(2, 3), m.tensor([1.0, 2.0, 3.0])),
    "int64": lambda m: (m.zeros(3, dtype=m.int64), m.tensor([5, -6, 7])),
    "bool": lambda m: (m.zeros(2, dtype=m.bool), m.tensor([True, False])),
}


@pytest.mark.parametrize("name", list(PAIRS))
def test_copy_matches_torch(name: str) -> None:
    a, b = PAIRS[name](td)
    ta, tb = PAIRS[name](torch)
    before = a._version
    result = a.copy_(b)
    expected = ta.copy_(tb)
    assert result is a
    assert a.tolist() == expected.tolist()
    assert a._version == before + 1


def test_same_elements_are_left_alone() -> None:
    x = td.arange(4.0)
    assert x.copy_(x[:]).tolist() == [0.0, 1.0, 2.0, 3.0]


SIZE_MISMATCH = (
    "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"
)


def _shifted(x: Any) -> tuple[Any, Any]:
    return x[1:], x[:-1]


@pytest.mark.parametrize(
    "build",
    [
        lambda m: _shifted(m.arange(5.0)),
        lambda m: (m.zeros(1, 3).expand(2, 3), m.ones(2, 3)),
    ],
    ids=["partial overlap", "internal overlap"],
)
def test_overlaps_raise_torchs_error(build: Callable[[Any], tuple[Any, Any]]) -> None:
    a, b = build(td)
    ta, tb = build(torch)
    with pytest.raises(RuntimeError) as expected:
        ta.copy_(tb)
    with pytest.raises(RuntimeError) as got:
        a.copy_(b)
    assert str(got.value) == str(expected.value).split("\n")[0]


@pytest.mark.parametrize(
    ("size", "golden"),
    [
        ((4,), SIZE_MISMATCH),
        ((2, 1, 3), "output with shape [2, 3] doesn't match the broadcast shape [2, 2, 3]"),
    ],
)
def test_shape_mismatch_messages(size: tuple[int, ...], golden: str) -> None:
    with pytest.raises(RuntimeError) as info:
        td.zeros(2, 3).copy_(td.ones(*size))
    with pytest.raises(RuntimeError) as expected:
        torch.zeros(2, 3).copy_(torch.ones(*size))
    assert str(info.value) == str(expected.value) == golden


def test_copy_into_one_storage_from_another_root_over_it() -> None:
    x = td.arange(6.0)
    y = x.view(2, 3)
    y.copy_(td.ones(2, 3))
    assert x.tolist() == [1.0] * 6
