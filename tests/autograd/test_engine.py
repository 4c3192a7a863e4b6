"""The engine: accumulation, retain_graph, create_graph, hooks, retain_grad, order, depth."""

from __future__ import annotations

from typing import Any

import torch

import tensordispatch as td
from tensordispatch.autograd import backward, grad


def _x(m: Any) -> Any:
    return m.tensor([1.0, 2.0, 3.0]).requires_grad_()


def test_grad_accumulates_on_leaves() -> None:
    x = _x(td)
    for _ in range(2):
        (x * x).sum().backward()
    assert x.grad.tolist() == [4.0, 8.0, 12.0]


def test_retain_graph_allows_a_second_backward() -> None:
    x = _x(td)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0, 12.0]


def test_backward_with_explicit_gradient() -> None:
    results = []
    for m in (torch, td):
        x = _x(m)
        (x * 3).backward(m.tensor([1.0, 0.5, 2.0]))
        results.append(x.grad.tolist())
    assert results[0] == results[1]


def test_is_leaf_and_requires_grad() -> None:
    x = _x(td)
    y = x * 2
    with td.autograd.no_grad():
        z = x * 2
    assert (x.is_leaf, y.is_leaf, z.is_leaf, td.ones(1).is_leaf) == (True, False, True, True)
    assert (y.requires_grad, z.requires_grad) == (True, False)


def test_non_leaf_grad_is_none_unless_retained() -> None:
    x = _x(td)
    y = x * 2
    z = x * 3
    z.retain_grad()
    (y * z).sum().backward()
    assert y.grad is None and z.retains_grad
    assert z.grad.tolist() == [2.0, 4.0, 6.0]


def test_hooks_run_and_replace_gradients_like_torch() -> None:
    logs = []
    for m in (torch, td):
        log: list[Any] = []
        x = _x(m)
        y = x * 2
        y.register_hook(lambda g, log=log: log.append(("y", g.tolist())) or g * 10)
        x.register_hook(lambda g, log=log: log.append(("x", g.tolist())))
        (y * y).sum().backward()
        logs.append((log, x.grad.tolist()))
    assert logs[0] == logs[1]


def test_hook_handle_remove() -> None:
    x = _x(td)
    handle = x.register_hook(lambda g: g * 0)
    handle.remove()
    (x * 1).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]


def test_grad_does_not_touch_dot_grad() -> None:
    x = _x(td)
    (g,) = grad((x * x).sum(), x)
    assert g.tolist() == [2.0, 4.0, 6.0] and x.grad is None


def test_grad_of_non_leaf_input() -> None:
    results = []
    for m in (torch, td):
        x = _x(m)
        y = x * x
        z = (y * 3).sum()
        (gy,) = (torch.autograd if m is torch else td.autograd).grad(z, y)
        results.append(gy.tolist())
    assert results[0] == results[1]


def test_third_derivative_with_create_graph() -> None:
    values = []
    for m in (torch, td):
        ag = torch.autograd if m is torch else td.autograd
        x = m.tensor([2.0]).requires_grad_()
        y = (x * x * x * x).sum()
        (g1,) = ag.grad(y, x, create_graph=True)
        (g2,) = ag.grad(g1.sum(), x, create_graph=True)
        (g3,) = ag.grad(g2.sum(), x)
        values.append([g1.item(), g2.item(), g3.item()])
    assert values[0] == values[1] == [32.0, 48.0, 48.0]


def test_backward_create_graph_gives_differentiable_grad() -> None:
    x = _x(td)
    (x * x * x).sum().backward(create_graph=True)
    assert x.grad.grad_fn is not None
    (g,) = grad(x.grad.sum(), x)
    assert g.tolist() == [6.0, 12.0, 18.0]


def test_backward_inputs_restricts_accumulation() -> None:
    x, w = _x(td), _x(td)
    backward((x * w).sum(), inputs=[w])
    assert x.grad is None and w.grad.tolist() == [1.0, 2.0, 3.0]


def test_hundred_thousand_node_chain_does_not_recurse() -> None:
    x = td.tensor([1.0]).requires_grad_()
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.backward()
    assert x.grad.tolist() == [1.0]


def test_execution_order_is_deterministic_and_matches_torch() -> None:
    orders = []
    for m in (torch, td):
        order: list[str] = []
        x = _x(m)
        a = x * 2
        b = x * 3
        c = a * b
        for name, t in (("a", a), ("b", b), ("c", c)):
            t.register_hook(lambda g, name=name, order=order: order.append(name))
        c.sum().backward()
        orders.append(order)
    assert orders[0] == orders[1]


def test_shared_subgraph_gradients_sum() -> None:
    grads = []
    for m in (torch, td):
        x = _x(m)
        y = x.sin()
        (y * y + y.exp()).sum().backward()
        grads.append(x.grad.tolist())
    assert all(abs(a - b) < 1e-6 for a, b in zip(grads[0], grads[1], strict=True))


def test_leaf_hooks_run_in_torchs_order_among_other_hooks() -> None:
    orders = []
    for m in (torch, td):
        order: list[str] = []
        x = m.tensor([1.0, 2.0], requires_grad=True)
        w = m.tensor([3.0, 4.0], requires_grad=True)
        y = x * w
        z = y * x + w
        for name, t in (("x", x), ("w", w), ("y", y), ("z", z)):
            t.register_hook(lambda g, name=name, order=order: order.append(name))
        z.sum().backward()
        orders.append((order, x.grad.tolist(), w.grad.tolist()))
    assert orders[0] == orders[1]
