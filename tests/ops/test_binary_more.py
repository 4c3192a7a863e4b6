"""M1's binary pointwise operators (atan2 / arctan2, fmod, hypot, logaddexp) against torch
2.13: values and dtypes over dtype pairs (promotion, broadcasting), number operands, in-place
and out= forms, meta, errors, gradients and autograd nodes."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

NAMES = ["atan2", "arctan2", "fmod", "hypot", "logaddexp"]
PAIRS = [("float32", "float32"), ("float64", "float32"), ("int64", "int64"), ("int32", "float16"),
         ("bool", "bool"), ("complex64", "complex64"), ("float16", "float16"), ("int64", "float32")]  # fmt: skip
LEFT = [[0.3, -0.7, 1.5], [-2.5, 0.0, 7.0]]
RIGHT = [1.0, -2.0, 0.5]


def _operands(m: Any, left: str, right: str) -> tuple[Any, Any]:
    a = m.tensor(LEFT).to(getattr(m, left))
    b = m.tensor(RIGHT).to(getattr(m, right))
    return a, b


def _outcome(fn: Any) -> tuple[str, Any]:
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - the error is the outcome compared
        return type(e).__name__, str(e)


def _close(expected: Any, got: Any) -> None:
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(expected.shape)
    assert got.stride() == expected.stride()
    e = expected.detach().numpy()
    g = np.array(got.tolist(), dtype=e.dtype)
    tol = 2e-3 if e.dtype == np.float16 else 2e-6
    np.testing.assert_allclose(g, e, rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize(("left", "right"), PAIRS)
@pytest.mark.parametrize("name", NAMES)
def test_values_match_torch(name: str, left: str, right: str) -> None:
    kind, expected = _outcome(lambda: getattr(torch, name)(*_operands(torch, left, right)))
    got_kind, got = _outcome(lambda: getattr(td, name)(*_operands(td, left, right)))
    assert got_kind == kind, (got, expected)
    if kind == "ok":
        _close(expected, got)
        a, b = _operands(td, left, right)
        _close(expected, getattr(a, name)(b))
    else:
        assert got == expected


@pytest.mark.parametrize("other", [3, -2, 2.5, True])
@pytest.mark.parametrize("dtype", ["int32", "float32", "int64"])
def test_fmod_number_matches_torch(dtype: str, other: Any) -> None:
    kind, expected = _outcome(
        lambda: torch.fmod(torch.tensor([7, -7, 0]).to(getattr(torch, dtype)), other)
    )
    got_kind, got = _outcome(lambda: td.fmod(td.tensor([7, -7, 0]).to(getattr(td, dtype)), other))
    assert (got_kind, kind) == ("ok", "ok") or (got_kind, got) == (kind, expected)
    if kind == "ok":
        _close(expected, got)


def test_special_values_match_torch() -> None:
    special = [math.inf, -math.inf, math.nan, 0.0, -0.0, 1e308]
    for name in ("atan2", "fmod", "hypot", "logaddexp"):
        t = getattr(torch, name)(torch.tensor(special, dtype=torch.float64).view(-1, 1),
                                 torch.tensor(special, dtype=torch.float64))  # fmt: skip
        d = getattr(td, name)(td.tensor(special, dtype=td.float64).view(-1, 1),
                              td.tensor(special, dtype=td.float64))  # fmt: skip
        assert str(d.tolist()) == str(t.tolist()), name


@pytest.mark.parametrize("name", ["atan2", "arctan2", "fmod", "hypot"])
def test_inplace_and_out_match_torch(name: str) -> None:
    t, d = torch.tensor(LEFT), td.tensor(LEFT)
    assert getattr(d, f"{name}_")(td.tensor(RIGHT)) is d
    _close(getattr(t, f"{name}_")(torch.tensor(RIGHT)), d)
    out_t, out_d = torch.empty(0), td.empty(0)
    getattr(torch, name)(torch.tensor(LEFT), torch.tensor(RIGHT), out=out_t)
    assert getattr(td, name)(td.tensor(LEFT), td.tensor(RIGHT), out=out_d) is out_d
    _close(out_t, out_d)


def test_fmod_scalar_inplace_and_out() -> None:
    d = td.tensor([7.0, -7.0])
    assert d.fmod_(3) is d
    assert d.tolist() == [1.0, -1.0]
    out = td.empty(2)
    assert td.fmod(td.tensor([7.0, -7.0]), 4, out=out) is out
    assert out.tolist() == torch.fmod(torch.tensor([7.0, -7.0]), 4).tolist()


@pytest.mark.parametrize("name", ["atan2", "fmod", "hypot", "logaddexp"])
def test_meta_matches_torch(name: str) -> None:
    expected = getattr(torch, name)(
        torch.ones(2, 3, device="meta").t(), torch.ones(3, 1, device="meta")
    )
    got = getattr(td, name)(td.ones(2, 3, device="meta").t(), td.ones(3, 1, device="meta"))
    assert (tuple(got.shape), got.stride()) == (tuple(expected.shape), expected.stride())


@pytest.mark.parametrize("name", NAMES + ["fmod number"])
def test_gradients_match_torch(name: str) -> None:
    left, right = [0.3, -0.7, 1.5, -2.5], [1.0, -2.0, 0.5, 0.7]
    grads = []
    for m in (torch, td):
        a = m.tensor(left, dtype=m.float64, requires_grad=True)
        b = m.tensor(right, dtype=m.float64, requires_grad=True)
        r = m.fmod(a, 2) if name == "fmod number" else getattr(m, name)(a, b)
        node = r.grad_fn.name() if m is torch else type(r.grad_fn).__name__
        r.sum().backward()
        grads.append((node, a.grad.tolist(), None if b.grad is None else b.grad.tolist()))
    (tn, ta, tb), (dn, da, db) = grads
    assert dn == tn
    np.testing.assert_allclose(da, ta, rtol=1e-12)
    assert (db is None) == (tb is None)
    if tb is not None:
        np.testing.assert_allclose(db, tb, rtol=1e-12)


def test_complex_logaddexp_matches_torch() -> None:
    a = [0.3 + 0.2j, -0.7j, 30 + 1j, -2.5 + 0.1j]
    b = [1.0 - 1j, 2j, -30.0, 0.5]
    _close(
        torch.logaddexp(torch.tensor(a), torch.tensor(b)), td.logaddexp(td.tensor(a), td.tensor(b))
    )


ERRORS = {
    "fmod int zero": lambda m: m.fmod(m.tensor([5, -5]), m.tensor([0, 3])),
    "atan2 number": lambda m: m.atan2(m.ones(2), 2),
    "hypot int": lambda m: m.hypot(m.tensor([1]), m.tensor([2])),
    "fmod bool": lambda m: m.fmod(m.tensor([True]), m.tensor([True])),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_torch(case: str) -> None:
    kind, expected = _outcome(lambda: ERRORS[case](torch))
    assert kind != "ok"
    assert _outcome(lambda: ERRORS[case](td)) == (kind, expected)


def test_error_text_golden() -> None:
    with pytest.raises(NotImplementedError) as e:
        td.hypot(td.tensor([1]), td.tensor([2]))
    assert str(e.value) == "\"hypot_cpu\" not implemented for 'Long'"


MORE = ["logaddexp2", "fmax", "fmin"]


@pytest.mark.parametrize(("left", "right"), PAIRS)
@pytest.mark.parametrize("name", MORE)
def test_more_values_match_torch(name: str, left: str, right: str) -> None:
    kind, expected = _outcome(lambda: getattr(torch, name)(*_operands(torch, left, right)))
    got_kind, got = _outcome(lambda: getattr(td, name)(*_operands(td, left, right)))
    assert got_kind == kind, (got, expected)
    if kind == "ok":
        _close(expected, got)
    else:
        assert got == expected


@pytest.mark.parametrize("name", MORE)
def test_more_gradients_and_nan_handling_match_torch(name: str) -> None:
    left, right = [0.3, -0.7, 1.5, math.nan, 2.0], [1.0, 2.0, math.nan, 0.7, 2.0]
    results = []
    for m in (torch, td):
        a = m.tensor(left, dtype=m.float64, requires_grad=True)
        b = m.tensor(right, dtype=m.float64, requires_grad=True)
        r = getattr(m, name)(a, b)
        node = r.grad_fn.name() if m is torch else type(r.grad_fn).__name__
        r.sum().backward()
        results.append((node, str(r.tolist()), str(a.grad.tolist()), str(b.grad.tolist())))
    assert results[1] == results[0]
