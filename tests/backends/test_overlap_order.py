"""In-place calls whose input overlaps the written tensor in a way torch does not refuse
(Note [Overlaps torch allows but computes in its own order] in backends/overlap.py): torch's
element order where its answer is the same on every machine, NumPy's buffered answer (every
read before any write) where torch's depends on its SIMD width."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import tensordispatch as td
from tensordispatch.backends.overlap import torch_element_order

# name -> (make the tensor, the in-place call on it)
CASES: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "add_ 2x3 (the issue's case)": (
        lambda m: m.arange(6.0).reshape(2, 3),
        lambda x: x[:, 1:].add_(x[:, :2]),
    ),
    "copy_ 2x3": (lambda m: m.arange(6.0).reshape(2, 3), lambda x: x[:, 1:].copy_(x[:, :2])),
    "sub_ through a transpose": (
        lambda m: m.arange(12.0).reshape(3, 4),
        lambda x: x.t()[1:].sub_(x.t()[:3]),
    ),
    "mul_ down a column": (
        lambda m: m.arange(1.0, 9.0).reshape(4, 2),
        lambda x: x[1:, 0].mul_(x[:3, 0]),
    ),
    "div_ 2x3": (lambda m: m.arange(1.0, 7.0).reshape(2, 3), lambda x: x[:, 1:].div_(x[:, :2])),
    "int64 add_": (lambda m: m.arange(6).reshape(2, 3), lambda x: x[:, 1:].add_(x[:, :2])),
    "reads ahead (any order agrees)": (
        lambda m: m.arange(6.0).reshape(2, 3),
        lambda x: x[:, :2].mul_(x[:, 1:]),
    ),
    "copy_ of a long strided column": (
        lambda m: m.arange(200.0).reshape(100, 2),
        lambda x: x[1:, 0].copy_(x[:99, 0]),
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_torchs_order_where_it_is_the_same_on_every_machine(name: str) -> None:
    make, call = CASES[name]
    ours, theirs = make(td), make(torch)
    call(ours)
    call(theirs)
    assert ours.tolist() == theirs.tolist()


def test_the_issue_case_values() -> None:
    m = td.arange(6.0).reshape(2, 3)
    m[:, 1:].add_(m[:, :2])
    assert m.tolist() == [[0.0, 1.0, 3.0], [3.0, 7.0, 12.0]]


def test_long_unit_stride_rows_read_before_writing() -> None:
    # torch runs rows of >= 64 bytes in chunks of its SIMD width (AVX2: 16 floats, AVX512:
    # 32), so its answer differs between machines; ours is every read before any write.
    m = td.arange(80.0).reshape(2, 40)
    assert torch_element_order(m[:, 1:], m[:, :39]) is None
    expected = m[:, 1:] + m[:, :39].clone()
    m[:, 1:].add_(m[:, :39])
    assert m[:, 1:].tolist() == expected.tolist()


def test_order_is_torchs_loop_order() -> None:
    x = td.arange(12.0).reshape(3, 4)
    order = torch_element_order(x.t()[1:], x.t()[:3])
    # the transposed views' inner dim is their dim 0 (stride 1)
    assert order == [(i, j) for j in range(3) for i in range(3)]


@pytest.mark.parametrize(
    "pair",
    [
        lambda x: (x[0], x[1]),  # one storage, disjoint elements
        lambda x: (x, x),  # the same tensor
        lambda x: (x[:, :2], x[:, :2]),  # the same elements
        lambda x: (x, td.ones(2, 3)),  # another storage
    ],
    ids=["disjoint", "same tensor", "same elements", "other storage"],
)
def test_no_order_when_it_cannot_matter(pair: Callable[[Any], tuple[Any, Any]]) -> None:
    assert torch_element_order(*pair(td.arange(6.0).reshape(2, 3))) is None
