"""Custom Function details against torch 2.13 (function.py, Note [Custom Function node and
ctx]): the node reads its ctx, gradient checks of backward's results, mark_dirty on a leaf,
vjp, once_differentiable."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import tensordispatch as td

BOTH = (
    "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You should "
    "only implement one of them."
)
TWICE = "trying to differentiate twice a function that was marked with @once_differentiable"


def _outcome(fn: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return ("ok", fn())
    except RuntimeError as e:
        return (type(e).__name__, str(e))


def _square(m: Any) -> type:
    class Sq(m.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            ctx.note = "set in forward"
            return x * x

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            return 2 * x * g

    return Sq


def _node_reads_ctx(m: Any) -> tuple[Any, ...]:
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = _square(m).apply(x)
    before = (y.grad_fn.saved_tensors[0] is x, y.grad_fn.needs_input_grad, y.grad_fn.note)
    y.sum().backward()
    return (*before, _outcome(lambda: y.grad_fn.saved_tensors))


def test_the_node_reads_its_ctx_as_torch() -> None:
    ours = _node_reads_ctx(td)
    assert ours == _node_reads_ctx(torch)
    assert ours[:3] == (True, (True,), "set in forward")
    assert ours[3][1].startswith("Trying to backward through the graph a second time")


def _returning(m: Any, grads: Callable[[Any], tuple[Any, ...]], n_tensors: int = 1) -> Any:
    class Fn(m.autograd.Function):
        @staticmethod
        def forward(ctx: Any, *args: Any) -> Any:
            return args[-1] * 1

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return grads(m)

    return Fn


_CASES: dict[str, tuple[Callable[[Any], Any], Callable[[Any, Any], tuple[Any, ...]]]] = {
    "wrong shape": (
        lambda m: (m.ones(3, 2),),
        lambda m, x: (x,),
    ),
    "a number first: index among tensors": (
        lambda m: (None, m.ones(5)),
        lambda m, x: (2, x),
    ),
    "not needed: dropped": (
        lambda m: (m.ones(5), m.ones(2, 3)),
        lambda m, x: (m.ones(2, 3), x),
    ),
    "broadcast, other dtype: summed and cast": (
        lambda m: (m.ones(4, 2, 3, dtype=m.float64),),
        lambda m, x: (x,),
    ),
    "0-dim for a [2, 3] input": (
        lambda m: (m.tensor(1.0),),
        lambda m, x: (x,),
    ),
}


@pytest.mark.parametrize("case", list(_CASES))
def test_gradients_backward_returns_are_checked_as_torch(case: str) -> None:
    grads, inputs = _CASES[case]

    def run(m: Any) -> tuple[str, Any]:
        x = m.ones(2, 3, requires_grad=True)

        def go() -> Any:
            _returning(m, grads).apply(*inputs(m, x)).sum().backward()
            return (x.grad.tolist(), str(x.grad.dtype).split(".")[-1])

        return _outcome(go)

    assert run(td) == run(torch)


def test_invalid_gradient_message_as_torch() -> None:
    def run(m: Any) -> tuple[str, Any]:
        x = m.ones(2, 3, requires_grad=True)
        return _outcome(lambda: _returning(m, lambda m: (m.ones(3, 2),)).apply(x).sum().backward())

    assert run(td) == run(torch)
    assert run(td)[1] == (
        "Function FnBackward returned an invalid gradient at index 0 - got [3, 2] but expected "
        "shape compatible with [2, 3]"
    )


def _dirty(m: Any, view: bool) -> tuple[str, Any]:
    class Dirty(m.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

    a = m.ones(2, requires_grad=True)
    return _outcome(lambda: Dirty.apply(a[:1] if view else a))


@pytest.mark.parametrize("view", [False, True])
def test_mark_dirty_on_a_leaf_raises_torchs_message(view: bool) -> None:
    ours = _dirty(td, view)
    assert ours == _dirty(torch, view)
    what = "a view of a leaf Variable that requires grad is being" if view else (
        "a leaf Variable that requires grad has been"
    )  # fmt: skip
    assert ours == ("RuntimeError", f"{what} used in an in-place operation.")


def _vjp(m: Any, both: bool) -> tuple[str, Any]:
    body: dict[str, Any] = {
        "forward": staticmethod(lambda ctx, x: x * 3),
        "vjp": staticmethod(lambda ctx, g: g * 3),
    }
    if both:
        body["backward"] = staticmethod(lambda ctx, g: g * 3)
    fn = type("Triple", (m.autograd.Function,), body)
    x = m.ones(2, requires_grad=True)

    def go() -> Any:
        fn.apply(x).sum().backward()
        return x.grad.tolist()

    return _outcome(go)


@pytest.mark.parametrize("both", [False, True])
def test_vjp_is_backwards_other_name_as_torch(both: bool) -> None:
    ours = _vjp(td, both)
    assert ours == _vjp(torch, both)
    assert ours == (("RuntimeError", BOTH) if both else ("ok", [3.0, 3.0]))


def _once(m: Any, create_graph: bool) -> tuple[Any, ...]:
    class Once(m.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @m.autograd.function.once_differentiable
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = m.ones(2, requires_grad=True)
    seed = m.ones(2, requires_grad=create_graph)
    (g,) = m.autograd.grad(Once.apply(x), x, grad_outputs=seed, create_graph=create_graph)
    name = None if g.grad_fn is None else type(g.grad_fn).__name__
    return (g.tolist(), g.requires_grad, name, _outcome(lambda: g.sum().backward()))


@pytest.mark.parametrize("create_graph", [False, True])
def test_once_differentiable_as_torch(create_graph: bool) -> None:
    ours = _once(td, create_graph)
    assert ours == _once(torch, create_graph)
    if create_graph:
        assert ours[2:] == ("Error", ("RuntimeError", TWICE))
