"""float32 exp against torch 2.13, on a fixed sample of inputs.

NumPy's float32 exp (its SIMD loop) differs from torch's on about 39% of random inputs in
[-10, 10] on this machine, by at most 2 ulp; torch's result is the correctly rounded one on
about 99% of them. Computing in float64 and rounding to float32 gives torch's bits on ~98.9%
and NumPy's on ~61% of them, but costs ~2.1x the float32 kernel (10M elements), over the 10%
budget, so the kernel stays NumPy's float32 exp. The strict xfail records that gap."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tensordispatch as td


def _sample() -> np.ndarray:
    return np.random.default_rng(7).uniform(-10, 10, 20_000).astype(np.float32)


def _ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs(a.view(np.int32).astype(np.int64) - b.view(np.int32).astype(np.int64))


def test_float32_exp_is_within_two_ulp_of_torch() -> None:
    x = _sample()
    ours = td.from_numpy(x).exp().numpy()
    theirs = torch.from_numpy(x).exp().numpy()
    assert int(_ulp_distance(ours, theirs).max()) <= 2


def test_float32_exp_of_exactly_representable_results_matches_torch() -> None:
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 89.0, -104.0, -200.0], np.float32)
    ours = td.from_numpy(x).exp().numpy()
    theirs = torch.from_numpy(x).exp().numpy()
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.xfail(strict=True, reason="known gap: NumPy's float32 exp is up to 2 ulp off torch's")
def test_float32_exp_bits_equal_torch() -> None:
    x = _sample()
    ours = td.from_numpy(x).exp().numpy()
    theirs = torch.from_numpy(x).exp().numpy()
    np.testing.assert_array_equal(ours, theirs)
