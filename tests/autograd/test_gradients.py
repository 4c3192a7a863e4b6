"""Gradients, second derivatives and grad_fn names of every differentiable op vs torch."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import tensordispatch as td
from tensordispatch.autograd import grad
from tensordispatch.autograd.gradcheck import gradcheck, gradgradcheck
from tests.autograd.oracle import assert_close, leaves, make_inputs


def _aten(m: Any) -> Any:
    return m.ops.aten


# (id, shapes, program(m, *xs) -> tensor); m is torch or tensordispatch.
SAMPLES: list[tuple[str, list[tuple[int, ...]], Any]] = [
    ("add.Tensor", [(2, 3), (2, 3)], lambda m, a, b: m.add(a, b, alpha=2.5)),
    ("add.Tensor-broadcast", [(2, 3), (3,)], lambda m, a, b: a + b),
    ("add.Scalar", [(3,)], lambda m, a: _aten(m).add.Scalar(a, 2.0, 3)),
    ("sub.Tensor", [(2, 3), (1, 3)], lambda m, a, b: m.sub(a, b, alpha=0.5)),
    ("sub.Scalar", [(3,)], lambda m, a: _aten(m).sub.Scalar(a, 2.0)),
    ("rsub.Tensor", [(3,), (3,)], lambda m, a, b: _aten(m).rsub.Tensor(a, b, alpha=2)),
    ("rsub.Scalar", [(3,)], lambda m, a: 1.5 - a),
    ("mul.Tensor", [(2, 3), (2, 1)], lambda m, a, b: a * b),
    ("mul.Scalar", [(3,)], lambda m, a: _aten(m).mul.Scalar(a, -2.0)),
    ("div.Tensor", [(2, 3), (2, 3)], lambda m, a, b: a / b),
    ("div.Scalar", [(3,)], lambda m, a: _aten(m).div.Scalar(a, 4.0)),
    ("div.Tensor_mode", [(3,), (3,)], lambda m, a, b: m.div(a, b, rounding_mode="floor")),
    (
        "div.Scalar_mode",
        [(3,)],
        lambda m, a: _aten(m).div.Scalar_mode(a, 2.0, rounding_mode="trunc"),
    ),
    ("abs", [(2, 3)], lambda m, a: a.abs()),
    ("neg", [(2, 3)], lambda m, a: a.neg()),
    ("exp", [(2, 3)], lambda m, a: a.exp()),
    ("sin", [(2, 3)], lambda m, a: a.sin()),
    ("cos", [(2, 3)], lambda m, a: a.cos()),
    ("sqrt", [(2, 3)], lambda m, a: (a * a).sqrt()),
    ("clone", [(2, 3)], lambda m, a: a.clone() * a),
    ("view", [(2, 3)], lambda m, a: a.view([3, 2]) * 2),
    ("transpose.int", [(2, 3)], lambda m, a: a.transpose(0, 1).exp()),
    ("t", [(2, 3)], lambda m, a: a.t().sin()),
    ("unsqueeze", [(2, 3)], lambda m, a: a.unsqueeze(1).exp()),
    ("squeeze.dim", [(2, 1, 3)], lambda m, a: a.squeeze(1).exp()),
    ("select.int", [(2, 3)], lambda m, a: a.select(1, -1).exp()),
    ("slice.Tensor", [(4, 3)], lambda m, a: _aten(m).slice.Tensor(a, 0, 1, 4, 2).exp()),
    ("expand", [(3, 1)], lambda m, a: a.expand(2, 3, 4).sin()),
    ("sum", [(2, 3)], lambda m, a: (a * a).sum()),
    ("sum.dim_IntList", [(2, 3, 4)], lambda m, a: (a * a).sum(dim=[0, 2])),
    ("sum.dim_IntList-keepdim", [(2, 3)], lambda m, a: (a * a).sum(dim=[1], keepdim=True)),
    ("mean", [(2, 3)], lambda m, a: (a * a).mean()),
    ("mean.dim", [(2, 3, 4)], lambda m, a: (a * a).mean(dim=[1])),
    ("mm", [(2, 3), (3, 4)], lambda m, a, b: m.mm(a, b)),
    ("bmm", [(2, 2, 3), (2, 3, 4)], lambda m, a, b: m.bmm(a, b)),
    ("addmm", [(2, 4), (2, 3), (3, 4)], lambda m, a, b, c: m.addmm(a, b, c, beta=0.5, alpha=2)),
    ("dot", [(3,), (3,)], lambda m, a, b: m.dot(a, b)),
    ("mv", [(2, 3), (3,)], lambda m, a, b: m.mv(a, b)),
    ("matmul", [(2, 3), (3,)], lambda m, a, b: m.matmul(a, b)),
    ("fill.Scalar", [(3,)], lambda m, a: _aten(m).fill.Scalar(a, 2.0) + a),
    ("log", [(2, 3)], lambda m, a: (a * a).log()),
    ("log1p", [(2, 3)], lambda m, a: (a * a).log1p()),
    ("expm1", [(2, 3)], lambda m, a: a.expm1()),
    ("rsqrt", [(2, 3)], lambda m, a: (a * a).rsqrt()),
    ("tan", [(2, 3)], lambda m, a: (a * 0.5).tan()),
    ("tanh", [(2, 3)], lambda m, a: a.tanh()),
    ("sigmoid", [(2, 3)], lambda m, a: a.sigmoid()),
    ("relu", [(2, 3)], lambda m, a: m.relu(a) * a),
    ("floor", [(2, 3)], lambda m, a: m.floor(a) + a),
    ("sign", [(2, 3)], lambda m, a: m.sign(a) * a),
    ("permute", [(2, 3, 4)], lambda m, a: a.permute(2, 0, 1).exp()),
    ("pow.Tensor_Scalar", [(2, 3)], lambda m, a: a.pow(3)),
    ("where.self", [(2, 3), (2, 3)], lambda m, a, b: m.where(a > 0, a, b) * b),
    ("_log_softmax", [(2, 3)], lambda m, a: m.log_softmax(a, 1)),
    ("_softmax", [(2, 3)], lambda m, a: m.softmax(a, 0)),
]
# torch has no double backward through rounding division, and fill/abs have zero second
# derivatives that gradgradcheck checks just the same; all are included.
IDS = [s[0] for s in SAMPLES]


def _run(program: Any, shapes: list[tuple[int, ...]]) -> tuple[Any, ...]:
    arrays = make_inputs(shapes)
    ts, ds = leaves(arrays)
    return program(torch, *ts), program(td, *ds), ts, ds


@pytest.mark.parametrize(("name", "shapes", "program"), SAMPLES, ids=IDS)
def test_first_derivatives_match_torch(name: str, shapes: Any, program: Any) -> None:
    tr, dr, ts, ds = _run(program, shapes)
    seed = make_inputs([tuple(tr.shape)], seed=1)[0]
    tg = torch.autograd.grad(tr, ts, torch.tensor(seed), allow_unused=True)
    dg = grad(dr, ds, td.tensor(seed), allow_unused=True)
    for ours, theirs in zip(dg, tg, strict=True):
        assert_close(ours, theirs)


@pytest.mark.parametrize(("name", "shapes", "program"), SAMPLES, ids=IDS)
def test_second_derivatives_match_torch(name: str, shapes: Any, program: Any) -> None:
    tr, dr, ts, ds = _run(program, shapes)
    tg = torch.autograd.grad(tr.sin().sum(), ts, create_graph=True, allow_unused=True)
    dg = grad(dr.sin().sum(), ds, create_graph=True, allow_unused=True)
    t_total = sum((g * g).sum() for g in tg if g is not None and g.requires_grad)
    d_total = sum((g * g).sum() for g in dg if g is not None and g.requires_grad)
    if not isinstance(t_total, torch.Tensor):
        assert not isinstance(d_total, td.Tensor)
        return
    tgg = torch.autograd.grad(t_total, ts, allow_unused=True)
    dgg = grad(d_total, ds, allow_unused=True)
    for ours, theirs in zip(dgg, tgg, strict=True):
        assert_close(ours, theirs, tol=1e-9)


@pytest.mark.parametrize(("name", "shapes", "program"), SAMPLES, ids=IDS)
def test_grad_fn_name_matches_torch(name: str, shapes: Any, program: Any) -> None:
    tr, dr, _, _ = _run(program, shapes)
    assert dr.grad_fn.name() == type(tr.grad_fn).__name__
    assert [type(n).__name__ for n, _ in dr.grad_fn.next_functions] == [
        type(n).__name__ for n, _ in tr.grad_fn.next_functions
    ]


@pytest.mark.parametrize(("name", "shapes", "program"), SAMPLES, ids=IDS)
def test_gradcheck_and_gradgradcheck(name: str, shapes: Any, program: Any) -> None:
    _, _, _, ds = _run(program, shapes)
    assert gradcheck(lambda *xs: program(td, *xs), ds)
    assert gradgradcheck(lambda *xs: program(td, *xs), ds)


def _index(like: Any, values: Any) -> Any:
    return (torch if isinstance(like, torch.Tensor) else td).tensor(values)


INPLACE: list[tuple[str, Any]] = [
    ("add_", lambda x, b: x.add_(b, alpha=2)),
    ("sub_", lambda x, b: x.sub_(b)),
    ("mul_", lambda x, b: x.mul_(b)),
    ("div_", lambda x, b: x.div_(b)),
    ("abs_", lambda x, b: x.abs_()),
    ("neg_", lambda x, b: x.neg_()),
    ("exp_", lambda x, b: x.exp_()),
    ("sin_", lambda x, b: x.sin_()),
    ("cos_", lambda x, b: x.cos_()),
    ("sqrt_", lambda x, b: x.abs_().sqrt_()),
    ("fill_", lambda x, b: x.fill_(3.0)),
    ("copy_", lambda x, b: x.copy_(b * 2)),
    ("addmm_", lambda x, b: x.addmm_(b, b.t(), beta=2, alpha=0.5)),
    ("clamp_", lambda x, b: x.clamp_(-0.5, 1.0)),
    ("clamp_min_.Tensor", lambda x, b: x.clamp_min_(b)),
    ("masked_fill_", lambda x, b: x.masked_fill_(b > 0, 2.0)),
    ("index_put_", lambda x, b: x.index_put_((_index(x, [0, 2]),), b[:2], True)),
    ("scatter_", lambda x, b: x.scatter_(0, _index(x, [[0, 1, 2], [2, 1, 0]]), b[:2])),
    ("scatter_add_", lambda x, b: x.scatter_add_(1, _index(x, [[0, 0, 1], [2, 2, 2]]), b[:2])),
    ("tril_", lambda x, b: x.tril_(-1)),
    ("pow_.Tensor", lambda x, b: x.abs_().pow_(b)),
    ("lerp_", lambda x, b: x.lerp_(b, 0.3)),
    ("addcmul_", lambda x, b: x.addcmul_(b, b, value=0.5)),
    ("addcdiv_", lambda x, b: x.addcdiv_(b, b * b + 1, value=2)),
    ("zero_", lambda x, b: x.zero_()),
    ("unsqueeze_", lambda x, b: x.unsqueeze_(0).squeeze_(0)),
    ("t_", lambda x, b: x.t_()),
    ("transpose_", lambda x, b: x.transpose_(0, 1)),
    ("uniform_", lambda x, b: x.uniform_()),
    ("normal_", lambda x, b: x.normal_()),
]


@pytest.mark.parametrize(("name", "step"), INPLACE, ids=[n for n, _ in INPLACE])
def test_inplace_variants_match_torch(name: str, step: Any) -> None:
    arrays = make_inputs([(3, 3), (3, 3)])
    ts, ds = leaves(arrays)

    def program(m: Any, a: Any, b: Any) -> Any:
        x = a * 1
        step(x, b)
        return x * a

    tr, dr = program(torch, *ts), program(td, *ds)
    assert dr.grad_fn.next_functions[0][0].name() == type(tr.grad_fn.next_functions[0][0]).__name__
    if name in ("uniform_", "normal_"):  # random values differ: the gradients do not
        tr, dr = tr * 0, dr * 0
    tr.sum().backward()
    dr.sum().backward()
    for d, t in zip(ds, ts, strict=True):
        assert_close(d.grad, t.grad)
