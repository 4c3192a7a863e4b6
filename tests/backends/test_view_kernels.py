"""The view kernels of backends/views.py through their operators, against torch 2.13 for
random arguments (dims in both spellings, out-of-range bounds, steps, -1 sizes) over bases of
several layouts: values, shape, strides, storage offset, _base, and the error messages."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import tensordispatch as td

BASES = {
    "matrix": lambda L: L.arange(12.0).view(3, 4),
    "matrix-t": lambda L: L.arange(12.0).view(3, 4).t(),
    "cube-offset": lambda L: L.arange(90.0).view(3, 6, 5)[1:, 1:],
    "vector": lambda L: L.arange(5.0),
    "scalar": lambda L: L.tensor(2.0),
}


def _outcome(L: Any, base_name: str, call: Any) -> Any:
    base = BASES[base_name](L)
    try:
        r = call(L, base)
    except Exception as e:  # noqa: BLE001 - the exception is compared
        return (type(e).__name__, str(e))
    root = base if base._base is None else base._base
    return (r.tolist(), tuple(r.shape), r.stride(), r.storage_offset(), r._base is root)


DIMS = st.integers(-4, 3)


@st.composite
def _call(draw: Any) -> Any:
    kind = draw(st.sampled_from(["transpose", "t", "select", "slice", "view"]))
    if kind == "transpose":
        d0, d1 = draw(DIMS), draw(DIMS)
        return lambda L, b: L.ops.aten.transpose.int(b, d0, d1)
    if kind == "t":
        return lambda L, b: b.t()
    if kind == "select":
        d, i = draw(DIMS), draw(st.integers(-6, 5))
        return lambda L, b: L.ops.aten.select.int(b, d, i)
    if kind == "slice":
        d = draw(DIMS)
        lo, hi = draw(st.one_of(st.none(), st.integers(-9, 9))), draw(st.integers(-9, 9))
        step = draw(st.integers(1, 3))
        return lambda L, b: L.ops.aten.slice.Tensor(b, d, lo, hi, step)
    sizes = draw(st.lists(st.sampled_from([-1, 1, 2, 3, 4, 5, 6, 12]), max_size=3))
    return lambda L, b: b.view(sizes)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(BASES)), _call())
def test_view_kernels_match_torch(base_name: str, call: Any) -> None:
    assert _outcome(td, base_name, call) == _outcome(torch, base_name, call)


@pytest.mark.parametrize("size", [(1,), (3,), (2, 1), (1, 1), (2, 3, 1), ()])
@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_expand_of_a_0_dim_tensor_has_torch_zero_strides(
    size: tuple[int, ...], device: str
) -> None:
    # torch gives every dim of an expanded 0-dim tensor stride 0, size-1 dims included
    ours = td.ones((), device=device).expand(size)
    theirs = torch.ones((), device=device).expand(size)
    assert (tuple(ours.shape), ours.stride()) == (tuple(theirs.shape), theirs.stride())
