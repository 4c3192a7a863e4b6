"""The strides of sum's gradient over some dims (autograd/formulas.py ``sum_backward``): torch
unsqueezes the reduced gradient (an inserted dim's stride is the next dim's extent times its
stride, 1 at the end) and expands it, so size-1 dims keep those strides; a hook sees them."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import tensordispatch as td

CASES = [
    ((1, 3), 1, False),
    ((1, 3), 0, False),
    ((3, 1), 1, False),
    ((3, 1), 0, False),
    ((2, 1, 3), (0, 2), False),
    ((2, 1, 3), 1, False),
    ((1, 2, 1), (0,), False),
    ((2, 1, 1, 3), (1, 3), False),
    ((4, 1), (0, 1), False),
    ((2, 3), 1, False),
    ((2, 1, 3), 1, True),
    ((1, 3), 0, True),
]


def _strides(m: Any, shape: tuple[int, ...], dims: Any, keepdim: bool, upstream: str) -> Any:
    x = m.ones(*shape, requires_grad=True)
    seen: list[tuple[int, ...]] = []
    x.register_hook(lambda g: seen.append(g.stride()))
    y = x.sum(dims, keepdim=keepdim)
    if upstream == "sum":  # a stride-0 incoming gradient
        y.sum().backward()
    else:  # a contiguous incoming gradient
        y.backward(m.arange(float(y.numel())).reshape(y.shape))
    return seen, x.grad.tolist()


@pytest.mark.parametrize("upstream", ["sum", "contiguous"])
@pytest.mark.parametrize(("shape", "dims", "keepdim"), CASES)
def test_sum_gradient_strides_match_torch(
    shape: tuple[int, ...], dims: Any, keepdim: bool, upstream: str
) -> None:
    assert _strides(td, shape, dims, keepdim, upstream) == _strides(
        torch, shape, dims, keepdim, upstream
    )


def test_stride_zero_gradient_keeps_stride_zero_in_a_size_one_dim() -> None:
    x = td.ones(1, 3, requires_grad=True)
    seen: list[tuple[int, ...]] = []
    x.register_hook(lambda g: seen.append(g.stride()))
    x.sum(1).sum().backward()
    assert seen == [(0, 0)]  # torch 2.13: (0, 0); before the fix (1, 0)
