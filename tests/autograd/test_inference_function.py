"""Custom autograd Functions and inference_mode against torch 2.13 (function.py with
tensor/inference.py): nothing recorded inside, inference tensors refused by
save_for_backward outside, an input returned as a view keeps torch's fields."""

from __future__ import annotations

from typing import Any

import torch

import tensordispatch as td


def _functions(m: Any) -> tuple[type, type, type]:
    class Double(m.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

    class Same(m.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x.view(x.shape)

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g

    class Mul(m.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any, y: Any) -> Any:
            ctx.save_for_backward(x, y)
            return x * y

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            x, y = ctx.saved_tensors
            return g * y, g * x

    return Double, Same, Mul


def _inside(m: Any) -> tuple[Any, ...]:
    double, same, _ = _functions(m)
    w = m.ones(3, requires_grad=True)
    with m.inference_mode():
        r = double.apply(w)
        v = same.apply(w)
    return (r.requires_grad, r.grad_fn, r.is_inference(), v.requires_grad, v.grad_fn,
            v.is_inference(), v._base is w)  # fmt: skip


def test_apply_inside_inference_mode_as_torch() -> None:
    assert _inside(td) == _inside(torch) == (False, None, True, True, None, False, True)


def _saving_outside(m: Any) -> tuple[str, str]:
    _, _, mul = _functions(m)
    w = m.ones(3, requires_grad=True)
    with m.inference_mode():
        a = m.ones(3)
    try:
        mul.apply(w, a)
    except RuntimeError as e:  # ours names tensordispatch. where torch's names torch.
        return ("RuntimeError", str(e).replace("`torch.", "`tensordispatch."))
    return ("ok", "")


def test_save_for_backward_of_an_inference_tensor_raises_as_torch() -> None:
    ours = _saving_outside(td)
    assert ours == _saving_outside(torch)
    assert ours[1].endswith(
        "or use `tensordispatch.no_grad()` instead of `tensordispatch.inference_mode()`."
    )
