"""The record of several-output operators with one differentiable input, for positional
calls (kernels_general.py, Note [One differentiable input]): nll_loss_forward and max.dim
record the node torch records (saved values, edges, gradients, version checks), and calls
that leave out defaults (the general record) agree with it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch.backends.aten import op

_RNG = np.random.default_rng(11)
_X = _RNG.standard_normal((5, 4)).astype(np.float32)
_T = np.array([0, 3, 1, 2, 3], dtype=np.int64)
_W = np.array([0.5, 1.0, 2.0, 0.25], dtype=np.float32)


def _nll_both(weight: bool, reduction: int, ignore_index: int) -> tuple[Any, Any, Any, Any]:
    """(our loss, our leaf, torch's loss, torch's leaf) of nll_loss_forward over
    _log_softmax, called positionally."""
    dx = td.from_numpy(_X.copy()).requires_grad_()
    tx = torch.from_numpy(_X.copy()).requires_grad_()
    dw = td.from_numpy(_W.copy()) if weight else None
    tw = torch.from_numpy(_W.copy()) if weight else None
    dlp = op("_log_softmax")(dx, 1, False)
    tlp = torch.ops.aten._log_softmax(tx, 1, False)
    dl = op("nll_loss_forward")(dlp, td.from_numpy(_T.copy()), dw, reduction, ignore_index)[0]
    tl = torch.ops.aten.nll_loss_forward(tlp, torch.from_numpy(_T), tw, reduction, ignore_index)
    return dl, dx, tl[0], tx


def test_nll_loss_node_saves_what_torch_saves() -> None:
    dl, _, tl, _ = _nll_both(True, 1, 3)
    expected = {a.removeprefix("_saved_") for a in dir(tl.grad_fn) if a.startswith("_saved_")}
    assert set(dl.grad_fn._saved) == expected
    assert (dl.grad_fn._saved["reduction"], dl.grad_fn._saved["ignore_index"]) == (
        tl.grad_fn._saved_reduction,
        tl.grad_fn._saved_ignore_index,
    )


@pytest.mark.parametrize("weight", [False, True])
@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_nll_loss_gradients_match_torch(weight: bool, reduction: int) -> None:
    dl, dx, tl, tx = _nll_both(weight, reduction, 1)
    np.testing.assert_allclose(dl.detach().numpy(), tl.detach().numpy(), rtol=1e-6)
    dl.sum().backward()
    tl.sum().backward()
    np.testing.assert_allclose(dx.grad.numpy(), tx.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_nll_loss_total_weight_output_is_not_differentiable() -> None:
    dx = td.from_numpy(_X.copy()).requires_grad_()
    tx = torch.from_numpy(_X.copy()).requires_grad_()
    d = op("nll_loss_forward")(dx, td.from_numpy(_T.copy()), None, 1, -100)
    t = torch.ops.aten.nll_loss_forward(tx, torch.from_numpy(_T), None, 1, -100)
    assert [o.requires_grad for o in d] == [o.requires_grad for o in t] == [True, False]
    assert type(d[0].grad_fn).__name__ == type(t[0].grad_fn).__name__ == "NllLossBackward0"


def test_nll_loss_edge_points_at_the_input_history() -> None:
    dl, _, tl, _ = _nll_both(False, 1, -100)
    edges, t_edges = dl.grad_fn.next_functions, tl.grad_fn.next_functions
    assert len(edges) == len(t_edges) == 1
    ((node, nr),) = edges
    assert type(node).__name__ == type(t_edges[0][0]).__name__ == "LogSoftmaxBackward0"
    assert nr == t_edges[0][1] == 0


def test_nll_loss_input_changed_in_place_fails_backward_as_torch() -> None:
    dx = td.from_numpy(_X.copy()).requires_grad_()
    dlp = op("_log_softmax")(dx, 1, False)
    dl = op("nll_loss_forward")(dlp, td.from_numpy(_T.copy()), None, 1, -100)[0]
    with td.no_grad():
        dlp.add_(1)
    with pytest.raises(RuntimeError) as e:
        dl.backward()
    assert str(e.value) == (
        "one of the variables needed for gradient computation has been modified by an "
        "inplace operation: [tensordispatch.FloatTensor [5, 4]], which is output 0 of "
        "LogSoftmax, is at version 1; expected version 0 instead. Hint: enable anomaly "
        "detection to find the operation that failed to compute its gradient, with "
        "tensordispatch.autograd.set_detect_anomaly(True, check_nan=False)."
    )


@pytest.mark.parametrize("given", [(1,), (1, False), (1, True)])
def test_max_dim_positional_and_defaulted_calls_match_torch(given: tuple[Any, ...]) -> None:
    # (1,) leaves keepdim out (the general record); the others give every argument
    dx = td.from_numpy(_X.copy()).requires_grad_()
    tx = torch.from_numpy(_X.copy()).requires_grad_()
    dv, di = op("max.dim")(dx, *given)
    tv, ti = torch.ops.aten.max.dim(tx, *given)
    assert di.tolist() == ti.tolist()
    assert di.requires_grad is ti.requires_grad is False
    (
        dv * td.from_numpy(np.arange(1.0, dv.numel() + 1, dtype=np.float32)).reshape(dv.shape)
    ).sum().backward()
    (tv * torch.arange(1.0, tv.numel() + 1).reshape(tv.shape)).sum().backward()
    np.testing.assert_array_equal(dx.grad.numpy(), tx.grad.numpy())


def test_nll_loss_without_grad_records_nothing() -> None:
    x = td.from_numpy(_X.copy())
    out, total = op("nll_loss_forward")(x, td.from_numpy(_T.copy()), None, 1, -100)
    assert out.grad_fn is None and total.grad_fn is None
    assert not out.requires_grad


@pytest.mark.parametrize("given", [(1,), (1, True)])
def test_max_dim_node_saves_what_torch_saves(given: tuple[Any, ...]) -> None:
    dv, _ = op("max.dim")(td.from_numpy(_X.copy()).requires_grad_(), *given)
    tv, _ = torch.ops.aten.max.dim(torch.from_numpy(_X.copy()).requires_grad_(), *given)
    expected = {a.removeprefix("_saved_") for a in dir(tv.grad_fn) if a.startswith("_saved_")}
    assert set(dv.grad_fn._saved) == expected
    assert tuple(dv.grad_fn._saved["self_sym_sizes"]) == tuple(tv.grad_fn._saved_self_sym_sizes)
    assert dv.grad_fn._saved["keepdim"] is tv.grad_fn._saved_keepdim


def test_nll_loss_node_keeps_torch_class_name() -> None:
    dl, _, tl, _ = _nll_both(False, 1, -100)
    assert type(dl.grad_fn).__name__ == type(tl.grad_fn).__name__ == "NllLossBackward0"
    assert dl.grad_fn.name() == tl.grad_fn.name()


def test_second_backward_through_nll_loss_node_raises_freed_error() -> None:
    dl, _, _, _ = _nll_both(False, 1, -100)
    dl.backward()
    with pytest.raises(RuntimeError) as e:
        dl.backward()
    assert str(e.value) == (
        "Trying to backward through the graph a second time (or directly access saved tensors "
        "after they have already been freed). Saved intermediate values of the graph are freed "
        "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
        "backward through the graph a second time or if you need to access saved tensors after "
        "calling backward."
    )


def test_retained_nll_loss_graph_accumulates_like_torch() -> None:
    dl, dx, tl, tx = _nll_both(True, 2, -100)
    for _ in range(2):
        dl.backward(retain_graph=True)
        tl.backward(retain_graph=True)
    np.testing.assert_allclose(dx.grad.numpy(), tx.grad.numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("descending", [False, True])
def test_sort_gradient_matches_torch(descending: bool) -> None:
    dx = td.from_numpy(_X.copy()).requires_grad_()
    tx = torch.from_numpy(_X.copy()).requires_grad_()
    dv, _ = op("sort")(dx, 1, descending)
    tv, _ = torch.ops.aten.sort(tx, 1, descending)
    scale = np.arange(1.0, _X.size + 1, dtype=np.float32).reshape(_X.shape)
    (dv * td.from_numpy(scale)).sum().backward()
    (tv * torch.from_numpy(scale)).sum().backward()
    np.testing.assert_array_equal(dx.grad.numpy(), tx.grad.numpy())
