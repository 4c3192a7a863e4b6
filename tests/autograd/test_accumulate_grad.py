"""AccumulateGrad (graph.py): a leaf's first gradient under create_graph is a recorded copy
laid out like the leaf (torch's clone_obey_contract), later ones accumulate like torch's."""

from __future__ import annotations

import warnings
from typing import Any

import torch

import tensordispatch as td


def _name(node: Any) -> str | None:
    return None if node is None else type(node).__name__


def _first_grad_under_create_graph(lib: Any, transposed: bool) -> tuple[Any, ...]:
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]])
    x = (x.t() if transposed else x).requires_grad_()
    with warnings.catch_warnings():  # torch warns about the .grad reference cycle
        warnings.simplefilter("ignore")
        (x * x).sum().backward(create_graph=True)
    g = x.grad
    return (
        g.tolist(),
        g.stride(),
        g.requires_grad,
        _name(g.grad_fn),
        [_name(n) for n, _ in g.grad_fn.next_functions],
    )


def test_first_gradient_under_create_graph_is_a_recorded_copy_like_torchs() -> None:
    for transposed in (False, True):
        ours = _first_grad_under_create_graph(td, transposed)
        assert ours == _first_grad_under_create_graph(torch, transposed)
        assert ours[3] == "CopyBackwards"


def _constant_gradient_then_more(lib: Any) -> list[Any]:
    # sum's gradient is a stride-0 constant: the leaf's .grad must be a dense copy of it
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x.sum().backward(create_graph=True)
    seen = [x.grad.tolist(), x.grad.stride(), x.grad.requires_grad]
    x.grad.add_(lib.tensor([1.0, 2.0, 3.0]))
    (x * lib.tensor([1.0, 10.0, 100.0])).sum().backward()
    return [*seen, x.grad.tolist()]


def test_constant_first_gradient_under_create_graph_is_dense() -> None:
    assert _constant_gradient_then_more(td) == _constant_gradient_then_more(torch)


def _second_order_through_dot_grad(lib: Any) -> list[float]:
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (x * x * x).sum().backward(create_graph=True)
    (x.grad * x.grad).sum().backward()
    result: list[float] = x.grad.tolist()
    return result


def test_second_order_through_dot_grad_accumulates_like_torch() -> None:
    ours, theirs = _second_order_through_dot_grad(td), _second_order_through_dot_grad(torch)
    assert all(abs(a - b) < 1e-4 for a, b in zip(ours, theirs, strict=True))
