"""Operators with several outputs, Tensor[] outputs or Tensor[] inputs: node names, edges,
and gradients when only some outputs are used, vs torch."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import tensordispatch as td
from tensordispatch.autograd import grad
from tests.autograd.oracle import assert_close, leaves, make_inputs


def _aten(m: Any) -> Any:
    return m.ops.aten


# (id, shapes, program(m, *xs) -> list of outputs to differentiate)
PROGRAMS: list[tuple[str, list[tuple[int, ...]], Any]] = [
    ("max.dim-values", [(3, 4)], lambda m, a: [m.max(a, 1)[0]]),
    ("min.dim-keepdim", [(3, 4)], lambda m, a: [m.min(a, 0, keepdim=True)[0]]),
    ("sort", [(3, 4)], lambda m, a: [m.sort(a, 1, descending=True)[0]]),
    ("topk", [(3, 5)], lambda m, a: [m.topk(a, 2, 1)[0]]),
    ("aminmax-both", [(3, 4)], lambda m, a: list(m.aminmax(a, dim=1))),
    ("aminmax-max-only", [(3, 4)], lambda m, a: [m.aminmax(a, dim=0)[1]]),
    ("split-all", [(5, 3)], lambda m, a: list(m.split(a, 2, 0))),
    ("split-middle-only", [(5, 3)], lambda m, a: [m.split(a, 2, 0)[1]]),
    ("split_with_sizes", [(5, 3)], lambda m, a: [a.split_with_sizes([1, 4], 0)[1]]),
    ("unbind-one", [(3, 2)], lambda m, a: [m.unbind(a, 1)[0]]),
    ("chunk", [(4, 3)], lambda m, a: [m.chunk(a, 2, 0)[0], m.chunk(a, 2, 0)[1]]),
    ("cat", [(2, 3), (1, 3)], lambda m, a, b: [m.cat([a, b], 0)]),
    ("stack", [(2, 3), (2, 3)], lambda m, a, b: [m.stack([a, b], 1)]),
    (
        "native_layer_norm",
        [(2, 3, 4), (4,), (4,)],
        lambda m, x, w, b: [_aten(m).native_layer_norm(x, [4], w, b, 1e-5)[0]],
    ),
    ("layer_norm-no-affine", [(3, 4)], lambda m, x: [_aten(m).layer_norm(x, [4])]),
]


PROGRAMS = [pytest.param(*p, id=p[0]) if type(p) is tuple else p for p in PROGRAMS]


def _run(program: Any, shapes: list[tuple[int, ...]]) -> tuple[Any, ...]:
    ts, ds = leaves(make_inputs(shapes))
    return program(torch, *ts), program(td, *ds), ts, ds


@pytest.mark.parametrize(("name", "shapes", "program"), PROGRAMS)
def test_gradients_match_torch(name: str, shapes: Any, program: Any) -> None:
    t_outs, d_outs, ts, ds = _run(program, shapes)
    seeds = [make_inputs([tuple(o.shape)], seed=i + 1)[0] for i, o in enumerate(t_outs)]
    tg = torch.autograd.grad(t_outs, ts, [torch.tensor(s) for s in seeds], allow_unused=True)
    dg = grad(d_outs, ds, [td.tensor(s) for s in seeds], allow_unused=True)
    for ours, theirs in zip(dg, tg, strict=True):
        assert_close(ours, theirs)


@pytest.mark.parametrize(("name", "shapes", "program"), PROGRAMS)
def test_node_names_and_output_numbers_match_torch(name: str, shapes: Any, program: Any) -> None:
    t_outs, d_outs, _, _ = _run(program, shapes)
    for t, d in zip(t_outs, d_outs, strict=True):
        assert d.grad_fn.name() == type(t.grad_fn).__name__
        assert [type(n).__name__ for n, _ in d.grad_fn.next_functions] == [
            type(n).__name__ for n, _ in t.grad_fn.next_functions
        ]


def test_non_differentiable_outputs_do_not_require_grad() -> None:
    a = td.tensor([[1.0, 3.0], [2.0, 0.0]]).requires_grad_()
    values, indices = td.max(a, 1)
    assert values.requires_grad and values.grad_fn.name() == "MaxBackward0"
    assert not indices.requires_grad and indices.grad_fn is None
    _, sort_idx = td.sort(a)
    assert not sort_idx.requires_grad


def test_split_outputs_have_output_numbers() -> None:
    a = td.ones([4, 2]).requires_grad_()
    parts = td.split(a, 1, 0)
    assert [p.grad_fn for p in parts] == [parts[0].grad_fn] * 4
    (parts[1] * 3 + parts[3]).sum().backward()
    assert a.grad.tolist() == [[0.0, 0.0], [3.0, 3.0], [0.0, 0.0], [1.0, 1.0]]


def test_cross_entropy_is_nll_loss_of_log_softmax_like_torch() -> None:
    x = make_inputs([(4, 3)])[0]
    target = [0, 2, 1, 2]
    tx = torch.tensor(x, requires_grad=True)
    dx = td.tensor(x).requires_grad_()
    w = [0.5, 1.0, 2.0]
    tl = torch.nn.functional.cross_entropy(
        tx, torch.tensor(target), torch.tensor(w, dtype=tx.dtype), ignore_index=1
    )
    dl = td.nn.functional.cross_entropy(
        dx, td.tensor(target), td.tensor(w, dtype=dx.dtype), ignore_index=1
    )
    assert dl.grad_fn.name() == type(tl.grad_fn).__name__ == "NllLossBackward0"
    tl.backward()
    dl.backward()
    assert_close(dl, tl)
    assert_close(dx.grad, tx.grad)


def test_index_put_with_a_none_index_matches_torch() -> None:
    def program(m: Any, x: Any, v: Any) -> Any:
        idx = [m.tensor([0, 2]), None]
        return [_aten(m).index_put(x * 1, idx, v.sum() * m.ones(2, 3, dtype=x.dtype), True)]

    t_outs, d_outs, ts, ds = _run(program, [(3, 3), (3,)])
    tg = torch.autograd.grad(t_outs[0].sin().sum(), ts)
    dg = grad(d_outs[0].sin().sum(), ds)
    for ours, theirs in zip(dg, tg, strict=True):
        assert_close(ours, theirs)


@pytest.mark.parametrize(
    "name, args",
    [
        ("nll_loss_forward", lambda x, t: (x, t, None, 1, -100)),
        ("native_layer_norm", lambda x, t: (x, [3], None, None, 1e-5)),
        ("native_dropout", lambda x, t: (x, 0.5, True)),
    ],
)
def test_single_grad_formulas_make_only_the_first_output_differentiable(
    name: str, args: Any
) -> None:
    """torchgen's rule: without output_differentiability, formulas reading the one ``grad``
    leave the other outputs (total_weight, mean/rstd, mask) without grad, as torch."""
    data = [[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]]
    dx, tx = td.tensor(data).requires_grad_(), torch.tensor(data, requires_grad=True)
    ours = getattr(td.ops.aten, name)(*args(dx, td.tensor([0, 2])))
    theirs = getattr(torch.ops.aten, name)(*args(tx, torch.tensor([0, 2])))
    assert [t.requires_grad for t in ours] == [t.requires_grad for t in theirs]
    assert [t.grad_fn is None for t in ours] == [t.grad_fn is None for t in theirs]
