"""backends/cpu/fpstate.py: the cheap np.errstate(all="ignore") of the kernel path."""

from __future__ import annotations

import warnings
from typing import Any

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


# -- quiet_call: the quiet context (Note [Quiet context]) ---------------------------------------


def test_quiet_call_silences_and_leaves_the_callers_state() -> None:
    with np.errstate(all="raise"):
        got = fpstate.quiet_call(np.log, np.zeros(2))
        assert np.geterr()["divide"] == "raise"
        with pytest.raises(FloatingPointError):
            np.log(np.zeros(2))
    assert got.tolist() == [float("-inf")] * 2


def test_quiet_call_passes_keywords() -> None:
    out = np.empty(2, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fpstate.quiet_call(np.divide, np.ones(2), np.zeros(2), out=out, casting="unsafe")
    assert out.tolist() == [float("inf")] * 2


def test_quiet_call_inside_the_entered_context_takes_the_slow_path() -> None:
    # The inner call finds the context entered (RuntimeError before calling) and sets and
    # resets the state instead.
    def inner() -> Any:
        return fpstate.quiet_call(np.log, np.zeros(1))

    with np.errstate(all="raise"):
        got = fpstate.quiet_call(inner)
    assert got.tolist() == [float("-inf")]


def test_quiet_call_reraises_the_functions_own_runtime_error() -> None:
    calls = []

    def fails() -> None:
        calls.append(1)
        raise RuntimeError("from the function")

    with pytest.raises(RuntimeError, match="from the function"):
        fpstate.quiet_call(fails)
    assert len(calls) == 1  # not run again on the slow path


def test_quiet_call_from_many_threads_at_once() -> None:
    import threading

    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def work() -> None:
        barrier.wait()
        try:
            for _ in range(2000):
                r = fpstate.quiet_call(np.divide, np.ones(3), np.zeros(3))
                assert r.tolist() == [float("inf")] * 3
        except BaseException as e:  # noqa: BLE001 - reported to the main thread
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    with warnings.catch_warnings():  # a warning in any thread raises there
        warnings.simplefilter("error")
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []
