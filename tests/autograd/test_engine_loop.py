"""The engine loop of ``backward()`` (engine.py ``_run_root`` / ``_loop``): gradients handed
from node to node, buffers for nodes reached several times, roots that are not output 0,
gradients that are None all the way to a leaf, and node order with hooks, against torch."""

from __future__ import annotations

from typing import Any

import torch

import tensordispatch as td
from tensordispatch.autograd import Function, backward


class _NoGrad:
    """A custom Function whose backward returns None (no gradient for its input)."""

    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        return x * 2

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        return None


class _TorchNoGrad(_NoGrad, torch.autograd.Function):
    pass


class _TdNoGrad(_NoGrad, Function):
    pass


def _leaves(m: Any) -> tuple[Any, Any]:
    return (
        m.tensor([1.0, 2.0, 3.0], requires_grad=True),
        m.tensor([4.0, 5.0, 6.0], requires_grad=True),
    )


def test_only_none_gradients_reach_a_leaf_like_torch() -> None:
    # every gradient reaching x is None: x.grad stays None, x's hook still sees None
    seen = []
    for m, fn in ((torch, _TorchNoGrad), (td, _TdNoGrad)):
        x, y = _leaves(m)
        calls: list[Any] = []
        x.register_hook(lambda g, calls=calls: calls.append(g))
        (fn.apply(x) * y).sum().backward()
        seen.append((calls, x.grad, y.grad.tolist()))
    assert seen[0] == seen[1] == ([None], None, [2.0, 4.0, 6.0])


def test_only_none_gradients_reach_a_node_like_torch() -> None:
    # the MulBackward0 under the Function gets no gradient and hands None on
    results = []
    for m, fn in ((torch, _TorchNoGrad), (td, _TdNoGrad)):
        x, y = _leaves(m)
        (fn.apply(x * y) + y).sum().backward()
        results.append((x.grad, y.grad.tolist()))
    assert results[0] == results[1] == (None, [1.0, 1.0, 1.0])


def test_root_that_is_a_later_output() -> None:
    # unbind's second output: the root's gradient goes to input 1 of UnbindBackward0
    results = []
    for m in (torch, td):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        _, b = x.unbind()
        (b * 3).backward()
        results.append(x.grad.tolist())
    assert results[0] == results[1] == [0.0, 3.0]


def test_node_reached_through_several_outputs_sums_its_buffer() -> None:
    # both outputs of unbind feed the graph: its buffer holds two gradients, then runs once
    results = []
    for m in (torch, td):
        x = m.tensor([2.0, 3.0], requires_grad=True)
        a, b = x.unbind()
        (a * b + b * b + a).backward()
        results.append(x.grad.tolist())
    assert results[0] == results[1] == [4.0, 8.0]


def test_leaf_used_twice_by_one_node_accumulates_once() -> None:
    # two edges of MulBackward0 into one AccumulateGrad: one call of x's hook, with the sum
    results = []
    for m in (torch, td):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        calls: list[list[float]] = []
        x.register_hook(lambda g, calls=calls: calls.append(g.tolist()))
        (x * x).sum().backward()
        results.append((calls, x.grad.tolist()))
    assert results[0] == results[1] == ([[2.0, 4.0]], [2.0, 4.0])


def test_order_of_node_hooks_with_branches_matches_torch() -> None:
    # several nodes ready at once go through the queue (highest sequence number first)
    orders = []
    for m in (torch, td):
        order: list[str] = []
        x, y = _leaves(m)
        a, b, c = x * y, x + y, x - y
        d = a * b + c * a + b
        for name, t in (("a", a), ("b", b), ("c", c), ("d", d)):
            t.grad_fn.register_hook(lambda gi, go, name=name, order=order: order.append(name))
        d.sum().backward()
        orders.append((order, x.grad.tolist(), y.grad.tolist()))
    assert orders[0] == orders[1]


def test_prehook_on_a_leaf_accumulator_runs_through_the_queue() -> None:
    # an AccumulateGrad with a hook is not run at once: it waits its turn like torch's
    results = []
    for m in (torch, td):
        order: list[str] = []
        x, y = _leaves(m)
        z = x * y
        acc = z.grad_fn.next_functions[0][0]
        acc.register_prehook(lambda go, order=order: order.append("acc_x"))
        z.register_hook(lambda g, order=order: order.append("z"))
        (z + y).sum().backward()
        results.append((order, x.grad.tolist(), y.grad.tolist()))
    assert results[0] == results[1]


def test_several_roots_share_a_graph() -> None:
    results = []
    for m in (torch, td):
        x, y = _leaves(m)
        z = x * y
        run = torch.autograd.backward if m is torch else backward
        run([z.sum(), (z * z).sum()])
        results.append((x.grad.tolist(), y.grad.tolist()))
    assert results[0] == results[1]


def test_backward_on_a_leaf_itself() -> None:
    results = []
    for m in (torch, td):
        x = m.tensor(2.0, requires_grad=True)
        x.backward()
        x.backward()
        results.append(x.grad.item())
    assert results == [2.0, 2.0]


def test_backward_stub_binds_the_engine_and_keeps_working() -> None:
    # tensor_methods.backward imports the engine on first use and puts its tensor_backward
    # on Tensor; a reference to the stub taken before keeps working
    from tensordispatch.autograd import engine, tensor_methods

    x = td.tensor([1.0, 2.0], requires_grad=True)
    tensor_methods.backward((x * x).sum())
    assert td.Tensor.backward is engine.tensor_backward
    tensor_methods.backward((x * 3).sum())
    (x * x).sum().backward()
    assert x.grad.tolist() == [7.0, 11.0]
