"""Gradients through the conjugate and negative bits against torch 2.13: ConjBackward0 and
NegViewBackward0 (derivatives.yaml ``_conj`` / ``_neg_view``), saved tensors with a bit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td

W = [2 - 1j, 0.5 + 1j]

LOSSES: dict[str, Callable[[Any, Any], Any]] = {
    "conj * w": lambda m, x: (x.conj() * m.tensor(W)).abs().sum(),
    "imag and real of conj": lambda m, x: (x.conj().imag * 3).sum() + (x.conj().real ** 2).sum(),
    "saved conj operand": lambda m, x: ((x.conj() * 2).conj() * (x.conj() * 2)).real.sum(),
    "conj of a view": lambda m, x: (x[1:].conj() * 1j).real.sum(),
    "resolve_conj": lambda m, x: (x.conj().resolve_conj() * m.tensor(W)).imag.sum(),
    "conj through matmul": lambda m, x: (x.conj() @ m.tensor(W)).abs(),
    "imag times real tensor": lambda m, x: (x.conj().imag * m.tensor([3.0, -1.0])).sum(),
}


@pytest.mark.parametrize("name", LOSSES)
def test_gradient_matches_torch(name: str) -> None:
    grads = []
    for m in (torch, td):
        x = m.tensor([1 + 2j, 3 - 4j], requires_grad=True)
        LOSSES[name](m, x).backward()
        grads.append(np.array(x.grad.tolist()))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6)


def test_grad_fn_names_are_torchs() -> None:
    names = []
    for m in (torch, td):
        x = m.tensor([1 + 2j], requires_grad=True)
        r = m.tensor([1.0], requires_grad=True)
        names.append(
            [
                type(x.conj().grad_fn).__name__,
                type(x.conj().grad_fn.next_functions[0][0]).__name__,
                type(r._neg_view().grad_fn).__name__,
                x.resolve_conj().grad_fn,
                type(x.conj().resolve_conj().grad_fn).__name__,
            ]
        )
    assert names[1] == names[0] == [
        "ConjBackward0", "AccumulateGrad", "NegViewBackward0", None, "CloneBackward0"
    ]  # fmt: skip


def test_neg_view_gradient_matches_torch() -> None:
    grads = []
    for m in (torch, td):
        x = m.tensor([1.0, -2.0], requires_grad=True)
        (x._neg_view() * m.tensor([3.0, 4.0])).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[1] == grads[0] == [-3.0, -4.0]


def test_real_tensor_conj_records_nothing() -> None:
    x = td.tensor([1.0], requires_grad=True)
    assert x.conj() is x


def _inplace_through_conj(m: Any, x: Any) -> Any:
    y = x * 1
    c = y.conj()
    c.mul_(m.tensor([2j, 1 + 1j]))
    return (y * m.tensor(W)).abs().sum() + (c * m.tensor([1j, 1.0])).real.sum()


def _inplace_through_neg(m: Any, x: Any) -> Any:
    y = x.real * 1  # (y.conj().imag would change the dtype: in-place writes through
    n = y._neg_view()  # dtype-changing views do not rebase yet, bits or not)
    n.mul_(m.tensor([3.0, -2.0]))
    n.add_(1)
    return (y * m.tensor([2.0, 5.0])).sum() + (n * n).sum()


INPLACE: dict[str, Callable[[Any, Any], Any]] = {
    "conj view": _inplace_through_conj,
    "negative view": _inplace_through_neg,
}


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", INPLACE)
def test_inplace_on_a_bit_view_rebases_like_torch(name: str, create_graph: bool) -> None:
    grads = []
    for m in (torch, td):
        x = m.tensor([1 + 2j, 3 - 4j], requires_grad=True)
        (g,) = m.autograd.grad(INPLACE[name](m, x), [x], create_graph=create_graph)
        grads.append(np.array(g.tolist()))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5)


def test_gradcheck_of_bit_views_passes_as_in_torch() -> None:
    for m in (torch, td):
        x = m.tensor([1 + 2j, 3 - 4j], dtype=m.complex128, requires_grad=True)
        assert m.autograd.gradcheck(lambda t: t.conj(), (x,))
        assert m.autograd.gradcheck(lambda t: t.conj().imag, (x,))
        assert m.autograd.gradgradcheck(lambda t: (t.conj() * t).real, (x,))
