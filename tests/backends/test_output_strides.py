"""backends/meta/iterator.py output_strides: TensorIterator's output strides, checked against
torch's own outputs, for every broadcast of contiguous operands up to 4 dims (where the
shortcut for all-contiguous operands answers) and for permuted / expanded operands."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
import torch

import tensordispatch as td
from tensordispatch.backends.common import broadcast_shapes
from tensordispatch.backends.meta.iterator import output_strides
from tensordispatch.tensor.tensor import contiguous_strides


def _sub_shapes(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Every shape that broadcasts to ``shape``: trailing dims, each kept or made 1."""
    out = set()
    for k in range(len(shape) + 1):
        for mask in itertools.product([0, 1], repeat=len(shape) - k):
            out.add(tuple(shape[k + i] if m else 1 for i, m in enumerate(mask)))
    return sorted(out)


def _strides(shape: tuple[int, ...], operands: list[Any]) -> tuple[int, ...]:
    got = output_strides(shape, operands)
    return contiguous_strides(shape) if got is None else got


@pytest.mark.parametrize("ndim", [2, 3, 4])
def test_contiguous_operands_any_broadcast_match_torch(ndim: int) -> None:
    sizes = {2: [0, 1, 2, 3], 3: [1, 2, 3], 4: [1, 2]}[ndim]
    for shape in itertools.product(sizes, repeat=ndim):
        subs = _sub_shapes(shape)
        for a, b in itertools.product(subs, subs):
            ours = [td.empty(a), td.empty(b)]
            expected = torch.add(torch.empty(a), torch.empty(b)).stride()
            assert _strides(broadcast_shapes(a, b), ours) == expected, (a, b)


PERMUTED = {
    "transposed + contiguous": lambda m: (m.empty(3, 4).t(), m.empty(4, 3)),
    "both transposed": lambda m: (m.empty(3, 4).t(), m.empty(3, 4).t()),
    "3-d permuted + row": lambda m: (m.empty(2, 3, 4).permute(2, 0, 1), m.empty(3)),
    "expanded + transposed": lambda m: (m.empty(1, 3).expand(4, 3), m.empty(3, 4).t()),
    "sliced + contiguous": lambda m: (m.empty(4, 6)[:, ::2], m.empty(4, 3)),
    "size-1 dim odd stride": lambda m: (m.empty(3, 1, 4).transpose(0, 1), m.empty(1, 3, 4)),
    "empty transposed": lambda m: (m.empty(0, 3).t(), m.empty(3, 0)),
}


@pytest.mark.parametrize("case", list(PERMUTED))
def test_permuted_operands_match_torch(case: str) -> None:
    a, b = PERMUTED[case](td)
    ta, tb = PERMUTED[case](torch)
    shape = broadcast_shapes(a._shape, b._shape)
    assert _strides(shape, [a, b]) == torch.add(ta, tb).stride()


def test_broadcast_shapes_cache_returns_the_same_answers() -> None:
    assert broadcast_shapes((3, 1), (4,)) == (3, 4)
    assert broadcast_shapes((3, 1), (4,)) == (3, 4)  # second call: from the cache
    assert broadcast_shapes([2, 1], [3]) == (2, 3)  # lists are not cached, still answered
    with pytest.raises(RuntimeError) as info:
        broadcast_shapes((2, 3), (4,))
    assert str(info.value) == (
        "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"
    )
