"""M1's unary pointwise operators (sinh ... atanh, log2, log10, exp2, trunc, frac) and their
aliases (fix, arcsin ...) against torch 2.13: values and dtypes over dtypes, strides, in-place
and out= forms, meta, errors, gradients and autograd nodes."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

FUNCTIONS = ["sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "log2", "log10",
             "exp2", "trunc", "frac"]  # fmt: skip
ALIASES = {"fix": "trunc", "arcsin": "asin", "arccos": "acos", "arctan": "atan",
           "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh"}  # fmt: skip
DTYPES = ["float32", "float64", "float16", "int64", "bool", "complex64"]
VALUES = [0.3, -0.7, 1.5, -2.5, 0.0, 4.0, math.inf, math.nan]


def _input(m: Any, dtype: str) -> Any:
    values = VALUES if dtype.startswith(("float", "complex")) else [0, 1, 3, 2]
    if dtype == "complex64":
        values = [0.3 + 0.2j, -0.7j, 1.5, -2.5 + 1j]
    return m.tensor(values).to(getattr(m, dtype)).reshape(1, -1).expand(2, -1)


def _close(expected: Any, got: Any) -> None:
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(expected.shape)
    assert got.stride() == expected.stride()
    e = expected.detach().numpy()
    g = np.array(got.tolist(), dtype=e.dtype)
    tol = 2e-3 if e.dtype == np.float16 else 2e-6
    np.testing.assert_allclose(g, e, rtol=tol, atol=tol, equal_nan=True)


def _outcome(fn: Any) -> tuple[str, Any]:
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - the error is the outcome compared
        return type(e).__name__, str(e)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", FUNCTIONS + sorted(ALIASES))
def test_values_match_torch(name: str, dtype: str) -> None:
    kind, expected = _outcome(lambda: getattr(torch, name)(_input(torch, dtype)))
    got_kind, got = _outcome(lambda: getattr(td, name)(_input(td, dtype)))
    assert got_kind == kind, (got, expected)
    if kind == "ok":
        _close(expected, got)
        _close(expected, getattr(_input(td, dtype), name)())
    else:
        assert got == expected


@pytest.mark.parametrize("name", FUNCTIONS + ["fix", "arctanh"])
def test_inplace_and_out_match_torch(name: str) -> None:
    t, d = torch.tensor(VALUES), td.tensor(VALUES)
    assert getattr(d, f"{name}_")() is d
    _close(getattr(t, f"{name}_")(), d)
    wide = name not in ("trunc", "frac", "fix")  # those keep the input's dtype exactly
    out_t = torch.empty(0, dtype=torch.float64 if wide else torch.float32)
    out_d = td.empty(0, dtype=td.float64 if wide else td.float32)
    getattr(torch, name)(torch.tensor(VALUES), out=out_t)
    assert getattr(td, name)(td.tensor(VALUES), out=out_d) is out_d
    _close(out_t, out_d)


@pytest.mark.parametrize("name", ["sinh", "acosh", "log10", "trunc", "frac"])
def test_meta_matches_torch(name: str) -> None:
    expected = getattr(torch, name)(torch.ones(2, 3, device="meta", dtype=torch.int32).t())
    got = getattr(td, name)(td.ones(2, 3, device="meta", dtype=td.int32).t())
    assert (str(got.dtype).split(".")[-1], got.shape, got.stride()) == (
        str(expected.dtype).split(".")[-1],
        tuple(expected.shape),
        expected.stride(),
    )


@pytest.mark.parametrize("name", FUNCTIONS + sorted(ALIASES))
def test_gradients_match_torch(name: str) -> None:
    values = [0.3, -0.7, 0.9, 1.5, 2.5] if name not in ("acosh", "arccosh") else [1.5, 2.0, 3.5]
    a = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    b = td.tensor(values, dtype=td.float64, requires_grad=True)
    ra, rb = getattr(torch, name)(a), getattr(td, name)(b)
    assert type(rb.grad_fn).__name__ == ra.grad_fn.name()
    ra.sum().backward()
    rb.sum().backward()
    np.testing.assert_allclose(
        np.array(b.grad.tolist()), a.grad.numpy(), rtol=1e-12, equal_nan=True
    )


def test_complex_gradient_matches_torch() -> None:
    values = [0.3 + 0.2j, -0.7j, 1.5 + 0.5j]
    for name in ("asin", "acosh", "exp2", "log2"):
        a = torch.tensor(values, requires_grad=True)
        b = td.tensor(values, requires_grad=True)
        getattr(torch, name)(a).abs().sum().backward()
        getattr(td, name)(b).abs().sum().backward()
        np.testing.assert_allclose(np.array(b.grad.tolist()), a.grad.numpy(), rtol=1e-5)


def test_error_texts_golden() -> None:
    with pytest.raises(NotImplementedError) as e:
        td.frac(td.tensor([1, 2]))
    assert str(e.value) == "\"frac_cpu\" not implemented for 'Long'"
    with pytest.raises(NotImplementedError) as e:
        td.trunc(td.tensor([1j]))
    assert str(e.value) == "trunc is not supported for complex inputs"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["deg2rad", "rad2deg"])
def test_angle_conversions_match_torch(name: str, dtype: str) -> None:
    kind, expected = _outcome(lambda: getattr(torch, name)(_input(torch, dtype)))
    got_kind, got = _outcome(lambda: getattr(td, name)(_input(td, dtype)))
    assert got_kind == kind, (got, expected)
    if kind == "ok":
        _close(expected, got)
    else:
        assert got == expected


@pytest.mark.parametrize("name", ["deg2rad", "rad2deg"])
def test_angle_conversion_forms_and_gradient(name: str) -> None:
    t, d = torch.tensor(VALUES[:5]), td.tensor(VALUES[:5])
    assert getattr(d, f"{name}_")() is d
    _close(getattr(t, f"{name}_")(), d)
    out_t, out_d = torch.empty(0), td.empty(0)
    getattr(torch, name)(torch.tensor([1, 2]), out=out_t)
    assert getattr(td, name)(td.tensor([1, 2]), out=out_d) is out_d
    _close(out_t, out_d)
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = td.tensor([1.0, 2.0], requires_grad=True)
    ra, rb = getattr(torch, name)(a), getattr(td, name)(b)
    assert type(rb.grad_fn).__name__ == ra.grad_fn.name()
    ra.sum().backward()
    rb.sum().backward()
    np.testing.assert_allclose(b.grad.tolist(), a.grad.tolist(), rtol=1e-6)
