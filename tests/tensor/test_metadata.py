"""Tensor.is_contiguous against torch (Note [Contiguity by cached strides] in metadata.py)."""

from __future__ import annotations

import itertools

import torch
from hypothesis import given
from hypothesis import strategies as st

import tensordispatch as td
from tensordispatch.tensor import metadata


@st.composite
def geometry(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...]]:
    ndim = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=ndim, max_size=ndim)))
    strides = tuple(draw(st.lists(st.integers(0, 70), min_size=ndim, max_size=ndim)))
    return shape, strides


@given(geometry())
def test_is_contiguous_matches_torch_for_any_strides(
    geom: tuple[tuple[int, ...], tuple[int, ...]],
) -> None:
    shape, strides = geom
    ours = td.empty_strided(shape, strides)
    expected = torch.empty_strided(shape, strides).is_contiguous()
    assert ours.is_contiguous() is expected
    assert ours.is_contiguous() is expected  # the answer kept per geometry


def test_is_contiguous_matches_torch_for_size_one_and_size_zero_dims() -> None:
    for shape in [(1,), (1, 1), (2, 1), (1, 3), (2, 1, 3), (0,), (2, 0), (0, 1, 3), (1, 0, 1)]:
        for strides in itertools.product([0, 1, 2, 3, 6, 9], repeat=len(shape)):
            ours = td.empty_strided(shape, strides).is_contiguous()
            assert ours is torch.empty_strided(shape, strides).is_contiguous(), (shape, strides)


def test_is_contiguous_of_views_matches_torch() -> None:
    ours, theirs = td.arange(24.0).view(2, 3, 4), torch.arange(24.0).view(2, 3, 4)
    cases = [
        lambda t: t,
        lambda t: t.transpose(0, 2),
        lambda t: t[:, 1],
        lambda t: t[1],
        lambda t: t[:, :, ::2],
        lambda t: t.unsqueeze(1),
        lambda t: t[0:1].permute(1, 0, 2),
        lambda t: t[:, 0:1, :],
        lambda t: t.expand(5, 2, 3, 4),
    ]
    for case in cases:
        assert case(ours).is_contiguous() is case(theirs).is_contiguous()


def test_is_contiguous_answer_cache_is_bounded() -> None:
    for i in range(4100):
        assert not td.empty_strided((2, 2), (1, 2 + i)).is_contiguous()
    assert len(metadata._ANSWERS) <= 4096
    assert td.empty_strided((2, 2), (1, 2)).is_contiguous() is False
