"""backends/cpu/nn.py: the plain (N, C) path of nll_loss (no weight, every target a class)
gives exactly the general path's values (all weights 1) and torch's, and leaves every other
case (ignored targets, out-of-range targets) to the general path with torch's behaviour."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch.backends.cpu.nn import _nll, _nll_plain


def _inputs(dtype: type, n: int = 7, c: int = 5) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(n * 31 + c)
    return rng.standard_normal((n, c)).astype(dtype), rng.integers(0, c, n)


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_plain_path_equals_the_general_path_exactly(dtype: type, reduction: int) -> None:
    x, t = _inputs(dtype)
    target = td.from_numpy(t)
    ones = td.from_numpy(np.ones(x.shape[1], dtype))
    assert _nll_plain(x, t, reduction, -100) is not None  # the plain path applies here
    plain = _nll(x, target, None, reduction, -100, 1)
    general = _nll(x, target, ones, reduction, -100, 1)
    np.testing.assert_array_equal(np.asarray(plain[0]), np.asarray(general[0]))
    np.testing.assert_array_equal(np.asarray(plain[1]), np.asarray(general[1]))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_nll_loss_matches_torch(reduction: str) -> None:
    x, t = _inputs(np.float32, 32, 10)
    got = td.ops.aten.nll_loss.default(
        td.from_numpy(x), td.from_numpy(t), None, ["none", "mean", "sum"].index(reduction)
    )
    expected = torch.nn.functional.nll_loss(
        torch.from_numpy(x), torch.from_numpy(t), reduction=reduction
    )
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6)


def test_ignored_class_takes_the_general_path_like_torch() -> None:
    x, t = _inputs(np.float32)
    t[:3] = 0
    assert _nll_plain(x, t, 1, 0) is None
    got = td.ops.aten.nll_loss.default(td.from_numpy(x), td.from_numpy(t), None, 1, 0)
    expected = torch.nn.functional.nll_loss(
        torch.from_numpy(x), torch.from_numpy(t), ignore_index=0
    )
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6)


@pytest.mark.parametrize("bad", [5, -1])
def test_out_of_range_target_raises_torchs_error(bad: int) -> None:
    x, t = _inputs(np.float32)
    t[2] = bad
    assert _nll_plain(x, t, 1, -100) is None
    with pytest.raises(IndexError) as info:
        td.ops.aten.nll_loss.default(td.from_numpy(x), td.from_numpy(t))
    assert str(info.value) == f"Target {bad} is out of bounds."
