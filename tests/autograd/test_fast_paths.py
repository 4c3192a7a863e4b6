"""The NumPy fast paths of backward helpers (formulas.py, Note [NumPy fast paths]) give
torch's values and leave leaves' ``.grad`` as ordinary writable tensors."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import tensordispatch as td


def _sum_program(lib: Any, dims: Any, keepdim: bool) -> list[Any]:
    a = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    b = lib.tensor([[0.5, -1.0, 2.0], [3.0, 0.25, -2.0]], requires_grad=True)
    c = lib.tensor([1.0, 1.0, 1.0], requires_grad=True)
    y = a * b + c
    s = y.sum() if dims is None else y.sum(dims, keepdim=keepdim)
    (s * s).sum().backward()
    return [t.grad.tolist() for t in (a, b, c)]


@pytest.mark.parametrize(
    ("dims", "keepdim"), [(None, False), (0, False), (1, True), ([0, 1], False)]
)
def test_sum_and_mul_backward_match_torch(dims: Any, keepdim: bool) -> None:
    assert _sum_program(td, dims, keepdim) == _sum_program(torch, dims, keepdim)


def test_leaf_grad_from_an_expanded_gradient_is_writable() -> None:
    c = td.tensor([1.0, 2.0, 3.0]).requires_grad_()
    (c * 1).sum().backward()
    c.grad.mul_(2)  # the broadcast gradient was copied into .grad
    tc = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (tc * 1).sum().backward()
    tc.grad.mul_(2)
    assert c.grad.tolist() == tc.grad.tolist()
    assert list(c.grad.stride()) == list(tc.grad.stride())


def test_second_order_through_sum_and_mul_stays_recorded() -> None:
    x = td.tensor([1.0, 2.0, 3.0]).requires_grad_()
    (g,) = td.autograd.grad((x * x).sum(), x, create_graph=True)
    (gg,) = td.autograd.grad(g.sum(), x)
    tx = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (tg,) = torch.autograd.grad((tx * tx).sum(), tx, create_graph=True)
    (tgg,) = torch.autograd.grad(tg.sum(), tx)
    assert (g.tolist(), gg.tolist()) == (tg.tolist(), tgg.tolist())
    assert g.grad_fn is not None


def test_zero_dim_mul_backward_gives_array_backed_grads() -> None:
    a, b = td.tensor(2.0).requires_grad_(), td.tensor(3.0).requires_grad_()
    (a * b * b).backward()
    ta, tb = torch.tensor(2.0, requires_grad=True), torch.tensor(3.0, requires_grad=True)
    (ta * tb * tb).backward()
    assert (a.grad.item(), b.grad.item()) == (ta.grad.item(), tb.grad.item())
    assert a.grad.shape == ta.grad.shape
    a.grad.add_(1)  # a real (writable) tensor
    assert a.grad.item() == ta.grad.item() + 1


def _leaf_grad_strides(lib: Any, case: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    if case == "linear weight":
        layer = lib.nn.Linear(4, 3)
        layer(lib.ones(2, 4)).sum().backward()
        return tuple(layer.weight.grad.stride()), tuple(layer.bias.grad.stride())
    if case == "transposed leaf":
        w = lib.ones(3, 4).t().detach().requires_grad_()
        (w * lib.ones(4, 3)).sum().backward()
    elif case == "gradient through t()":
        w = lib.ones(4, 3).requires_grad_()
        (w.t() * lib.ones(3, 4)).sum().backward()
    else:  # a leaf that is a strided slice: not dense, the gradient is contiguous
        w = lib.ones(4, 6)[:, ::2].detach().requires_grad_()
        (w.t() * lib.ones(3, 4)).sum().backward()
    return tuple(w.stride()), tuple(w.grad.stride())


@pytest.mark.parametrize(
    "case", ["linear weight", "transposed leaf", "gradient through t()", "strided slice"]
)
def test_accumulated_grad_is_laid_out_like_torchs(case: str) -> None:
    assert _leaf_grad_strides(td, case) == _leaf_grad_strides(torch, case)


@pytest.mark.parametrize("shape", [(3,), (1, 3), (3, 1), (2, 1, 3)])
def test_full_sum_backward_gradient_is_an_expanded_view_like_torchs(shape: Any) -> None:
    # what a hook sees: torch's strides (stride 0 in every dim, size-1 dims included), and
    # an in-place write refused with torch's internal-overlap error (the kernels' check)
    seen = []
    for lib in (torch, td):
        x = lib.ones(shape, requires_grad=True)
        y = x * 2
        found: list[Any] = []

        def hook(g: Any, found: list[Any] = found) -> None:
            found.append(g.stride())
            try:
                g.add_(1)
            except RuntimeError as e:
                found.append(str(e))

        y.register_hook(hook)
        y.sum().backward()
        seen.append((found, x.grad.tolist()))
    assert seen[0] == seen[1]
    assert "more than one element of the written-to tensor" in seen[1][0][1]
