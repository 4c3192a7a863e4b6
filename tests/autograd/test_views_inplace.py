"""In-place ops on views (CopySlices), views of views, version counters: vs torch."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import tensordispatch as td
from tests.autograd.oracle import assert_close, leaves, make_inputs


def _slice(m: Any, t: Any, dim: int, start: int, end: int) -> Any:
    return m.ops.aten.slice.Tensor(t, dim, start, end)


def _row_mul(m: Any, a: Any, b: Any) -> Any:
    x = a * 1
    x.select(0, 1).mul_(2)
    return x * b


def _view_of_view(m: Any, a: Any, b: Any) -> Any:
    x = a.sin()
    v = _slice(m, x.t().select(0, 1), 0, 0, 2)
    v.mul_(v.clone())
    return x * b


def _copy_into_zeros(m: Any, a: Any, b: Any) -> Any:
    x = m.zeros(3, 3, dtype=m.float64)
    x.select(0, 1).copy_(a.select(1, 0))
    return x * b


def _view_grad_after_write(m: Any, a: Any, b: Any) -> Any:
    x = a * 1
    v = x.select(1, 2)
    v.add_(b.select(0, 0))
    return v * v


def _base_used_after(m: Any, a: Any, b: Any) -> Any:
    x = a.sin()
    _slice(m, x, 0, 0, 2).mul_(b.select(0, 0))
    return x.sum(dim=[0]) * x.select(0, 2)


PROGRAMS = [_row_mul, _view_of_view, _copy_into_zeros, _view_grad_after_write, _base_used_after]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_gradients_through_in_place_on_views_match_torch(program: Any) -> None:
    ts, ds = leaves(make_inputs([(3, 3), (3, 3)]))
    tr, dr = program(torch, *ts), program(td, *ds)
    assert_close(dr, tr)
    tr.sum().backward()
    dr.sum().backward()
    for d, t in zip(ds, ts, strict=True):
        assert_close(d.grad, t.grad)


def test_base_gets_copy_slices_and_view_as_strided_backward() -> None:
    for m in (torch, td):
        a = m.ones(3, 3, dtype=m.float64).requires_grad_()
        x = a * 1
        v = x.select(0, 1)
        v.mul_(2)
        names = (type(x.grad_fn).__name__, type(v.grad_fn).__name__)
        assert names == ("CopySlices", "AsStridedBackward0")


def test_view_shares_version_counter() -> None:
    x = td.zeros(3)
    before = x._version  # factories filled in place start above 0 (docs/AUTOGRAD.md)
    v = x.select(0, 1)
    v.add_(1)
    assert (x._version - before, v._version - before) == (1, 1)
    assert x.tolist() == [0.0, 1.0, 0.0]


def test_out_variant_bumps_version() -> None:
    out = td.tensor([0.0, 0.0])
    td.add(td.tensor([1.0, 1.0]), 1.0, out=out)
    t = torch.tensor([0.0, 0.0])
    torch.add(torch.ones(2), 1.0, out=t)
    assert out._version == t._version == 1


def test_detach_shares_storage_and_version() -> None:
    a = td.tensor([1.0, 1.0]).requires_grad_()
    d = a.detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    with td.autograd.no_grad():
        d.add_(1)
    assert a.tolist() == [2.0, 2.0] and a._version == 1


def _stale_view(m: Any, a: Any, b: Any) -> Any:
    x = a * 1
    v = _slice(m, x, 0, 0, 2)
    x.mul_(b)
    return v


def _sibling_view(m: Any, a: Any, b: Any) -> Any:
    x = a * 1
    v = _slice(m, x, 0, 0, 2)
    w = _slice(m, x, 0, 1, 3)
    v.mul_(b.select(0, 0))
    return w * w


@pytest.mark.parametrize("program", [_stale_view, _sibling_view])
def test_view_history_regenerated_after_root_written(program: Any) -> None:
    ts, ds = leaves(make_inputs([(3, 3), (3, 3)]))
    tr, dr = program(torch, *ts), program(td, *ds)
    assert dr.grad_fn.name() == type(tr.grad_fn).__name__
    tr.sum().backward()
    dr.sum().backward()
    for d, t in zip(ds, ts, strict=True):
        assert_close(d.grad, t.grad)


@pytest.mark.parametrize("on_view", [False, True], ids=["root", "view"])
def test_double_backward_through_inplace_matches_torch(on_view: bool) -> None:
    """original_self is recorded and CopySlices records: second derivatives as torch."""
    import numpy as np

    xs = np.linspace(0.5, 2.0, 4)

    def program(m: Any, x: Any) -> Any:
        y = x * 1
        if on_view:
            y[1:3].mul_(x[0:2])
        y.mul_(x).sin_()
        return (y * y).sum()

    xt, xd = torch.tensor(xs, requires_grad=True), td.tensor(xs).requires_grad_()
    (gt,) = torch.autograd.grad(program(torch, xt), xt, create_graph=True)
    (gd,) = td.autograd.grad(program(td, xd), xd, create_graph=True)
    np.testing.assert_allclose(np.asarray(gd.detach()._data), gt.detach().numpy(), rtol=1e-10)
    (ggt,) = torch.autograd.grad((gt * gt).sum(), xt)
    (ggd,) = td.autograd.grad((gd * gd).sum(), xd)
    np.testing.assert_allclose(np.asarray(ggd._data), ggt.numpy(), rtol=1e-10)
