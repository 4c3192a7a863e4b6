"""Size and the stride rules (contiguity, dense layouts) against torch."""

from __future__ import annotations

import torch
from hypothesis import given
from hypothesis import strategies as st

from tensordispatch.tensor.geometry import (
    Size,
    contiguous_strides,
    dense_strides_like,
    is_non_overlapping_and_dense,
)


@st.composite
def view_geometry(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=ndim, max_size=ndim)))
    strides = tuple(draw(st.lists(st.integers(0, 6), min_size=ndim, max_size=ndim)))
    offset = draw(st.integers(0, 5))
    return shape, strides, offset


def storage_size(shape: tuple[int, ...], strides: tuple[int, ...], offset: int) -> int:
    return offset + 1 + sum((s - 1) * st for s, st in zip(shape, strides, strict=True) if s)


def test_size_prints_like_torch() -> None:
    for shape in [(), (2,), (2, 3), (0, 1, 5)]:
        assert repr(Size(shape)) == repr(torch.Size(shape)).replace("torch.", "tensordispatch.")
        assert str(Size(shape)) == str(torch.Size(shape)).replace("torch.", "tensordispatch.")


def test_size_slicing_and_concatenation_stay_sizes() -> None:
    s = Size([2, 3, 4])
    assert type(s[1:]) is Size and s[1:] == (3, 4)
    assert type(s + (5,)) is Size and type((1,) + s) is Size
    assert type(s[0]) is int
    assert s.numel() == torch.Size([2, 3, 4]).numel() == 24


def test_contiguous_strides_match_torch_empty_strided() -> None:
    for shape in [(), (3,), (2, 3, 4), (2, 0, 3), (0,), (1, 1)]:
        assert contiguous_strides(shape) == torch.empty(shape).stride()


@given(view_geometry())
def test_dense_strides_like_matches_torch_empty_like(
    geometry: tuple[tuple[int, ...], tuple[int, ...], int],
) -> None:
    shape, strides, offset = geometry
    view = torch.as_strided(torch.zeros(storage_size(shape, strides, offset)), shape, strides)
    assert dense_strides_like(shape, strides) == torch.empty_like(view).stride()


@given(view_geometry())
def test_is_non_overlapping_and_dense_matches_torch(
    geometry: tuple[tuple[int, ...], tuple[int, ...], int],
) -> None:
    from torch._prims_common import is_non_overlapping_and_dense_or_false as theirs

    shape, strides, offset = geometry
    view = torch.as_strided(torch.zeros(storage_size(shape, strides, offset)), shape, strides)
    assert is_non_overlapping_and_dense(shape, strides) == theirs(view)


def test_is_non_overlapping_and_dense_2d_shortcut_matches_the_definition() -> None:
    # The 2-d case is spelled out in geometry.py; the definition: dims of size >= 2 sorted
    # by stride must have strides 1, size, size * size, ... (torch's rule).
    import itertools

    from tensordispatch.tensor.geometry import is_non_overlapping_and_dense

    def definition(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
        if 0 in shape:
            return True
        dims = sorted((d for d in range(len(shape)) if shape[d] >= 2), key=lambda d: strides[d])
        expected = 1
        for d in dims:
            if strides[d] != expected:
                return False
            expected *= shape[d]
        return True

    for shape in itertools.product(range(5), repeat=2):
        for strides in itertools.product(range(13), repeat=2):
            assert is_non_overlapping_and_dense(shape, strides) == definition(shape, strides)
