"""The short paths of the classifier loss (issue 5's MLP step): cross_entropy_loss calling
_log_softmax and nll_loss_forward directly, nll_loss_forward's reduced-loss CPU path and
log_softmax written in place give torch's values, gradients and graphs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch.backends.aten import op

_RNG = np.random.default_rng(5)
_X32 = _RNG.standard_normal((6, 4)).astype(np.float32)
_T = np.array([0, 3, 1, 1, 2, 0], dtype=np.int64)


def _both(x: np.ndarray, t: np.ndarray) -> tuple[Any, Any, Any, Any]:
    return (
        td.from_numpy(x.copy()).requires_grad_(),
        td.from_numpy(t.copy()),
        torch.from_numpy(x.copy()).requires_grad_(),
        torch.from_numpy(t.copy()),
    )


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cross_entropy_values_and_grads_match_torch(reduction: str, dtype: Any) -> None:
    dx, dt, tx, tt = _both(_X32.astype(dtype), _T)
    dl = td.nn.functional.cross_entropy(dx, dt, reduction=reduction)
    tl = torch.nn.functional.cross_entropy(tx, tt, reduction=reduction)
    tol = 1e-6 if dtype is np.float32 else 1e-12  # log_softmax's last bits differ from torch's
    np.testing.assert_allclose(dl.detach().numpy(), tl.detach().numpy(), rtol=tol)
    dl.sum().backward()
    tl.sum().backward()
    np.testing.assert_allclose(dx.grad.numpy(), tx.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_cross_entropy_graph_is_nll_loss_over_log_softmax_like_torch() -> None:
    dx, dt, tx, tt = _both(_X32, _T)
    dl = td.nn.functional.cross_entropy(dx, dt)
    tl = torch.nn.functional.cross_entropy(tx, tt)

    def chain(fn: Any) -> list[str]:
        names = []
        while fn is not None and fn.next_functions:
            names.append(type(fn).__name__ if hasattr(fn, "_saved") else fn.name())
            fn = fn.next_functions[0][0]
        return names

    assert [n.split("::")[-1] for n in chain(dl.grad_fn)] == [
        n.split("::")[-1] for n in chain(tl.grad_fn)
    ]
    assert dl.grad_fn.name() == tl.grad_fn.name() == "NllLossBackward0"


def test_cross_entropy_batch_mismatch_raises_torchs_error() -> None:
    x = td.zeros(3, 4)
    with pytest.raises(ValueError) as err:
        td.nn.functional.cross_entropy(x, td.tensor([0, 1]))
    assert str(err.value) == "Expected input batch_size (3) to match target batch_size (2)."


@pytest.mark.parametrize("reduction", [1, 2])
@pytest.mark.parametrize("ignore_index", [-100, 2, 7])
def test_nll_loss_forward_reduced_matches_torch(reduction: int, ignore_index: int) -> None:
    dx, dt, tx, tt = _both(_X32, _T)
    d_loss, d_total = op("nll_loss_forward")(dx.detach(), dt, None, reduction, ignore_index)
    t_loss, t_total = torch.ops.aten.nll_loss_forward(
        tx.detach(), tt, None, reduction, ignore_index
    )
    assert d_loss.item() == pytest.approx(t_loss.item(), rel=1e-6)
    assert d_total.item() == t_total.item()
    assert d_loss.dtype is td.float32 and d_total.dtype is td.float32


def test_nll_loss_forward_out_of_range_target_raises_torchs_error() -> None:
    x = td.from_numpy(_X32)
    with pytest.raises(IndexError) as err:
        op("nll_loss_forward")(x, td.from_numpy(np.array([0, 1, 4, 0, 0, 0])), None, 1, -100)
    assert str(err.value) == "Target 4 is out of bounds."
    with pytest.raises(IndexError) as err:
        op("nll_loss_forward")(x, td.from_numpy(np.array([0, -1, 1, 0, 0, 0])), None, 1, -100)
    assert str(err.value) == "Target -1 is out of bounds."


def test_nll_loss_forward_out_variant_writes_torchs_values() -> None:
    dx, dt, tx, tt = _both(_X32, _T)
    out, total = td.empty(0), td.empty(0)
    op("nll_loss_forward.output")(dx.detach(), dt, None, 1, -100, output=out, total_weight=total)
    t_loss, t_total = torch.ops.aten.nll_loss_forward(tx.detach(), tt, None, 1, -100)
    assert out.shape == total.shape == ()
    assert out.item() == pytest.approx(t_loss.item(), rel=1e-6)
    assert total.item() == t_total.item()


@pytest.mark.parametrize("shape", [(6, 4), (3,), (2, 3, 4)])
@pytest.mark.parametrize("dim", [0, -1])
def test_log_softmax_and_softmax_in_place_write_match_torch(shape: Any, dim: int) -> None:
    x = _RNG.standard_normal(shape)
    x.reshape(-1)[0] = -np.inf
    for name in ("log_softmax", "softmax"):
        ours = getattr(td, name)(td.from_numpy(x.copy()), dim)
        theirs = getattr(torch, name)(torch.from_numpy(x.copy()), dim)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-15)


def test_log_softmax_of_float16_as_float32_matches_torch() -> None:
    x = _X32.astype(np.float16)
    ours = op("_log_softmax")(td.from_numpy(x), 1, False)
    theirs = torch._log_softmax(torch.from_numpy(x), 1, False)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize(
    ("targets", "ignore_index"),
    [(_T, -100), (_T, 1), (np.array([0, -100, 1, 1, 2, -100]), -100), (_T, 9)],
)
def test_nll_loss_gradient_matches_torch(reduction: str, targets: Any, ignore_index: int) -> None:
    dx, dt, tx, tt = _both(_X32.astype(np.float64) * 3, targets)
    dl = td.nn.functional.cross_entropy(dx, dt, ignore_index=ignore_index, reduction=reduction)
    tl = torch.nn.functional.cross_entropy(tx, tt, ignore_index=ignore_index, reduction=reduction)
    (dl * dl).sum().backward()
    (tl * tl).sum().backward()
    np.testing.assert_allclose(dx.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-15)


def test_helper_modules_import_first_in_a_fresh_process() -> None:
    import subprocess
    import sys

    for module in ("functions_manual", "functions_nn", "formulas"):
        code = (
            f"import tensordispatch.autograd.{module}\n"
            "import tensordispatch as td\n"
            "x = td.tensor([[1.0, 2.0, 0.5]]).requires_grad_()\n"
            "td.nn.functional.cross_entropy(x * 1, td.tensor([1])).backward()\n"
            "print([round(v, 6) for v in x.grad.tolist()[0]])\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=False
        )
        expected = "[0.231224, -0.371468, 0.140244]\n"  # torch's gradient of that program
        assert (done.stderr, done.stdout) == ("", expected), module


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_cross_entropy_of_an_empty_batch_matches_torch(reduction: str) -> None:
    empty = np.zeros((0, 4), np.float32)
    dx, dt, tx, tt = _both(empty, np.zeros(0, np.int64))
    dl = td.nn.functional.cross_entropy(dx, dt, reduction=reduction)
    tl = torch.nn.functional.cross_entropy(tx, tt, reduction=reduction)
    np.testing.assert_array_equal(dl.detach().numpy(), tl.detach().numpy())
    dl.backward()
    tl.backward()
    assert dx.grad.shape == tuple(tx.grad.shape) == (0, 4)


def test_log_softmax_and_softmax_of_infinite_and_nan_rows_match_torch() -> None:
    inf, nan = np.inf, np.nan
    rows = np.array(
        [[inf, 1.0], [-inf, -inf], [nan, 1.0], [-inf, 1.0], [inf, inf], [inf, -inf], [1.0, 2.0]],
        np.float32,
    )
    for name in ("log_softmax", "softmax"):
        for dim in (0, 1):
            ours = getattr(td, name)(td.from_numpy(rows), dim).numpy()
            theirs = getattr(torch, name)(torch.from_numpy(rows), dim).numpy()
            np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=0, equal_nan=True)


@pytest.mark.parametrize("reduction", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nll_loss_backward_numpy_path_is_bit_identical_to_the_dispatched_one(
    reduction: int, dtype: Any
) -> None:
    from tensordispatch.autograd import enable_grad, no_grad
    from tensordispatch.autograd.functions_nn import nll_loss_backward

    x, t = td.from_numpy(_X32.astype(dtype)), td.from_numpy(_T.copy())
    _, total = op("nll_loss_forward")(x, t, None, reduction, -100)
    grad = td.from_numpy(np.array(-0.7, dtype))
    with no_grad():  # the NumPy path
        fast = nll_loss_backward(grad, x, t, None, reduction, -100, total)
    with enable_grad():  # grad mode on: the aten calls (numpy_ok declines)
        slow = nll_loss_backward(grad, x, t, None, reduction, -100, total)
    assert fast.dtype == slow.dtype and fast.stride() == slow.stride()
    assert fast.numpy().tobytes() == slow.detach().numpy().tobytes()
