"""In-place view ops (t_, transpose_, unsqueeze_, squeeze_, as_strided_) on views
against torch 2.13 (views.py ``rebase_history``): the view gets the op's node, its base
keeps its history, and gradients stay right through later writes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import tensordispatch as td

_OPS: dict[str, Callable[[Any], Any]] = {
    "t_": lambda v: v.t_(),
    "transpose_": lambda v: v.transpose_(0, 1),
    "unsqueeze_": lambda v: v.unsqueeze_(0),
    "squeeze_": lambda v: v.unsqueeze_(0).squeeze_(0),
    "squeeze_dim": lambda v: v.unsqueeze_(1).squeeze_(1),
    "as_strided_": lambda v: v.as_strided_((2, 2), (1, 2)),
}


def _run(m: Any, name: str, then: str) -> tuple[Any, ...]:
    x = m.arange(1.0, 5.0).requires_grad_()
    y = x * 1
    v = y.view(2, 2)
    _OPS[name](v)
    if then == "write view":
        v.mul_(m.arange(1.0, 5.0).view(v.shape))
    elif then == "write base":
        y.add_(1)
    weights = m.arange(1.0, 5.0).view(v.shape)
    (g_view,) = m.autograd.grad((v * weights).sum(), x, retain_graph=True)
    (g_base,) = m.autograd.grad((y * y).sum(), x)
    return (
        g_view.tolist(),
        g_base.tolist(),
        type(v.grad_fn).__name__,
        type(y.grad_fn).__name__,
        list(v.shape),
        v._base is y,
    )


@pytest.mark.parametrize("then", ["nothing", "write view", "write base"])
@pytest.mark.parametrize("name", list(_OPS))
def test_inplace_view_op_on_a_view_as_torch(name: str, then: str) -> None:
    assert _run(td, name, then) == _run(torch, name, then)
