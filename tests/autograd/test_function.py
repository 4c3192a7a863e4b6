"""Custom autograd.Function vs torch.autograd.Function."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import tensordispatch as td
from tensordispatch.autograd.function import Function


def _define(base: Any) -> Any:
    class Cube(base):  # type: ignore[misc, valid-type]
        @staticmethod
        def forward(ctx: Any, x: Any, scale: float) -> Any:
            ctx.save_for_backward(x)
            ctx.scale = scale
            return x * x * x * scale

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            return g * 3 * x * x * ctx.scale, None

    return Cube


def test_forward_backward_and_node_name_match_torch() -> None:
    results = []
    for m, base in ((torch, torch.autograd.Function), (td, Function)):
        x = m.tensor([1.0, 2.0]).requires_grad_()
        y = _define(base).apply(x, 2.0)
        y.sum().backward()
        results.append((y.tolist(), x.grad.tolist(), type(y.grad_fn).__name__))
    assert results[0] == results[1]


def test_needs_input_grad() -> None:
    seen = []

    class Probe(Function):
        @staticmethod
        def forward(ctx: Any, a: Any, b: Any, k: int) -> Any:
            seen.append(ctx.needs_input_grad)
            return a * b

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g, g, None

    Probe.apply(td.ones(1).requires_grad_(), td.ones(1), 3)
    assert seen == [(True, False, False)]


def test_forward_does_not_record() -> None:
    class Inner(Function):
        @staticmethod
        def forward(ctx: Any, a: Any) -> Any:
            inner = a * 2
            assert inner.grad_fn is None
            return inner

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

    y = Inner.apply(td.ones(1).requires_grad_())
    assert y.grad_fn.name() == "InnerBackward"


def test_mark_non_differentiable() -> None:
    class Split(Function):
        @staticmethod
        def forward(ctx: Any, a: Any) -> Any:
            out, idx = a * 2, a * 0
            ctx.mark_non_differentiable(idx)
            return out, idx

        @staticmethod
        def backward(ctx: Any, g: Any, g_idx: Any) -> Any:
            return g * 2

    out, idx = Split.apply(td.ones(2).requires_grad_())
    assert out.requires_grad and not idx.requires_grad


def test_mark_dirty_rebases_history() -> None:
    results = []
    for m, base in ((torch, torch.autograd.Function), (td, Function)):

        class Double(base):  # type: ignore[misc, valid-type]
            @staticmethod
            def forward(ctx: Any, a: Any) -> Any:
                a.mul_(2)
                ctx.mark_dirty(a)
                return a

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                return g * 2

        x = m.tensor([1.0, 3.0]).requires_grad_()
        y = x * 1
        z = Double.apply(y)
        (z * z).sum().backward()
        results.append((z is y, x.grad.tolist()))
    assert results[0] == results[1]


def test_saved_tensor_modified_in_place_raises() -> None:
    x = td.ones(2).requires_grad_()
    y = _define(Function).apply(x * 1, 1.0)
    with td.autograd.no_grad():
        pass
    z = x * 1
    w = _define(Function).apply(z, 1.0)
    z.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        w.sum().backward()
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
