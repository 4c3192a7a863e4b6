"""backends/cpu/fpstate.py: the cheap np.errstate(all="ignore") of the kernel path."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch.backends.cpu import fpstate

_IGNORE = {"divide": "ignore", "over": "ignore", "under": "ignore", "invalid": "ignore"}


def _divide_by_zero() -> None:
    np.divide(np.float32(1), np.float32(0))


def test_quiet_fp_sets_numpy_error_state_to_ignore() -> None:
    with fpstate.quiet_fp():
        assert np.geterr() == _IGNORE


def test_quiet_fp_restores_the_previous_state() -> None:
    with np.errstate(all="raise"):
        with fpstate.quiet_fp():
            _divide_by_zero()
        with pytest.raises(FloatingPointError):
            _divide_by_zero()


def test_quiet_fp_is_reentrant_and_restores_on_error() -> None:
    with np.errstate(all="raise"):
        with pytest.raises(ValueError), fpstate.quiet_fp():
            with fpstate.quiet_fp():
                _divide_by_zero()
            _divide_by_zero()
            raise ValueError("leave")
        assert np.geterr()["divide"] == "raise"


def test_inline_set_reset_silences_warnings() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        token = fpstate.FP_STATE.set(fpstate.FP_QUIET)
        try:
            _divide_by_zero()
        finally:
            fpstate.FP_STATE.reset(token)
        with pytest.raises(RuntimeWarning):
            _divide_by_zero()


def test_stand_in_used_when_numpy_hides_its_state(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fpstate, "FP_STATE", fpstate.ErrstateStandIn())
    monkeypatch.setattr(fpstate, "FP_QUIET", None)
    with np.errstate(all="raise"):
        with fpstate.quiet_fp():
            assert np.geterr() == _IGNORE
        assert np.geterr()["divide"] == "raise"


def test_this_numpy_takes_the_fast_path() -> None:
    assert not isinstance(fpstate.FP_STATE, fpstate.ErrstateStandIn)


@pytest.mark.parametrize("name", ["sin", "log", "sqrt", "exp", "tan"])
def test_unary_kernels_warn_nothing_like_torch(name: str) -> None:
    values = [float("inf"), -1.0, 0.0, 1000.0]
    expected = getattr(torch, name)(torch.tensor(values))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = getattr(td, name)(td.tensor(values))
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6, equal_nan=True)


def test_div_by_zero_warns_nothing_like_torch() -> None:
    a, b = [1.0, 0.0, -1.0], [0.0, 0.0, 0.0]
    expected = torch.div(torch.tensor(a), torch.tensor(b))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = td.div(td.tensor(a), td.tensor(b))
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
