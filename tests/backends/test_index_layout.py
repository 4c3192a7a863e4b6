"""index.Tensor's output lays out like its input (TensorIterator over the restrided input
and the index tensors): strides against torch 2.13 for permuted, stepped and expanded
inputs, adjacent and separated indices, masks and int32 indices."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
import torch

import tensordispatch as td


def _base(L: Any, perm: tuple[int, ...], step: bool) -> Any:
    x = L.arange(120.0).reshape(2, 3, 4, 5).permute(perm)
    return x[..., ::2] if step else x


KEYS = {
    "first": lambda L: (L.tensor([1, 0]),),
    "second": lambda L: (slice(None), L.tensor([[1], [0]])),
    "separated": lambda L: (L.tensor([1, 0]), slice(None), L.tensor([0, 1])),
    "adjacent-pair": lambda L: (slice(None), L.tensor([1, 0]), L.tensor([0, 0])),
    "last": lambda L: (..., L.tensor([0, 0, 0])),
    "with-none": lambda L: (None, slice(None), L.tensor([1, 0])),
}


@pytest.mark.parametrize("step", [False, True])
@pytest.mark.parametrize("key", sorted(KEYS))
@pytest.mark.parametrize("perm", list(itertools.permutations(range(4)))[::5])
def test_index_strides_match_torch(perm: tuple[int, ...], key: str, step: bool) -> None:
    theirs = _base(torch, perm, step)[KEYS[key](torch)]
    ours = _base(td, perm, step)[KEYS[key](td)]
    assert ours.shape == theirs.shape
    assert ours.stride() == theirs.stride()
    assert ours.tolist() == theirs.tolist()


CASES = {
    "mask-on-permuted": lambda L: L.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1)[
        L.tensor([True, False, True, True])
    ],
    "2d-mask": lambda L: L.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1)[
        :, L.tensor([[True, False, True], [False, True, True]])
    ],
    "int32-separated": lambda L: L.arange(24.0).reshape(2, 3, 4).permute(1, 2, 0)[
        L.tensor([0, 1], dtype=L.int32), :, L.tensor([1, 0], dtype=L.int32)
    ],
    "expanded-input": lambda L: L.arange(5.0).expand(4, 5).t()[[0, 2]],
    "expanded-index": lambda L: L.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1)[
        L.tensor([[0], [1]]).expand(2, 3).t()
    ],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_index_layout_cases_match_torch(case: str) -> None:
    theirs, ours = CASES[case](torch), CASES[case](td)
    assert (ours.stride(), ours.tolist()) == (theirs.stride(), theirs.tolist())


def test_index_on_meta_follows_the_input_layout() -> None:
    x = td.empty(2, 3, 4, device="meta").permute(2, 0, 1)
    assert x[:, td.tensor([0, 1], device="meta")].stride() == (1, 4, 8)  # as torch's
