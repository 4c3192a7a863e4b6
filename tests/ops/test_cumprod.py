"""cumprod (+ cumprod_, cumprod.out) against torch 2.13: values and result dtypes (integers
and bool multiply in int64, dtype=), meta, errors, and the zero-exact gradient (gradcheck)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td

CASES = [
    ([1.5, 2.0, -3.0, 0.5], "float32", 0, None),
    ([[1, 2, 3], [4, 0, 6]], "int32", 1, None),
    ([[1, 2, 3], [4, 5, 6]], "int64", 0, "float64"),
    ([True, False, True], "bool", 0, None),
    ([[0.5, 2.0], [3.0, 0.25]], "float16", -1, None),
    ([1 + 1j, 2j, 0.5], "complex64", 0, None),
    (3.0, "float32", 0, None),
]


@pytest.mark.parametrize(("values", "dtype", "dim", "result"), CASES)
def test_values_match_torch(values: Any, dtype: str, dim: int, result: str | None) -> None:
    got = [], []
    for i, m in enumerate((torch, td)):
        x = m.tensor(values).to(getattr(m, dtype))
        kwargs = {} if result is None else {"dtype": getattr(m, result)}
        r = m.cumprod(x, dim, **kwargs)
        got[i].extend([str(r.dtype).split(".")[-1], tuple(r.shape), r.tolist()])
        got[i].append(x.cumprod(dim, **kwargs).tolist())
    assert got[1] == got[0]


def test_inplace_and_out_match_torch() -> None:
    t, d = torch.tensor([[1.0, 2.0], [3.0, 4.0]]), td.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert d.cumprod_(0) is d
    assert d.tolist() == t.cumprod_(0).tolist()
    out_t, out_d = torch.empty(0, dtype=torch.int64), td.empty(0, dtype=td.int64)
    torch.cumprod(torch.tensor([2, 3, 4]), 0, out=out_t)
    assert td.cumprod(td.tensor([2, 3, 4]), 0, out=out_d) is out_d
    assert out_d.tolist() == out_t.tolist()


def test_meta_matches_torch() -> None:
    expected = torch.cumprod(torch.ones(2, 3, device="meta", dtype=torch.int8), 1)
    got = td.cumprod(td.ones(2, 3, device="meta", dtype=td.int8), 1)
    assert (got.dtype.name, tuple(got.shape)) == (str(expected.dtype)[6:], tuple(expected.shape))


def test_dim_error_matches_torch() -> None:
    with pytest.raises(IndexError) as expected:
        torch.cumprod(torch.ones(2), 3)
    with pytest.raises(IndexError) as got:
        td.cumprod(td.ones(2), 3)
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize(
    "values",
    [[1.5, 2.0, -3.0, 0.5], [1.0, 0.0, 3.0, 2.0], [0.0, 0.0, 2.0, 3.0], [2.0, 3.0, 4.0, 0.0]],
)
def test_gradient_matches_torch_with_zeros(values: list[float]) -> None:
    weights = [1.0, 2.0, 3.0, 4.0]
    a = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    b = td.tensor(values, dtype=td.float64, requires_grad=True)
    ra, rb = torch.cumprod(a, 0), td.cumprod(b, 0)
    assert type(rb.grad_fn).__name__ == ra.grad_fn.name()
    (ra * torch.tensor(weights, dtype=torch.float64)).sum().backward()
    (rb * td.tensor(weights, dtype=td.float64)).sum().backward()
    np.testing.assert_allclose(b.grad.tolist(), a.grad.tolist())


def test_gradient_along_a_middle_dim_and_complex() -> None:
    x = np.random.RandomState(0).randn(2, 3, 4)
    a = torch.tensor(x, requires_grad=True)
    b = td.tensor(x.tolist(), dtype=td.float64, requires_grad=True)
    torch.cumprod(a, 1).sum().backward()
    td.cumprod(b, 1).sum().backward()
    np.testing.assert_allclose(np.array(b.grad.tolist()), a.grad.numpy())
    c = [1 + 1j, 2 - 1j, 0.5j]
    a, b = torch.tensor(c, requires_grad=True), td.tensor(c, requires_grad=True)
    torch.cumprod(a, 0).abs().sum().backward()
    td.cumprod(b, 0).abs().sum().backward()
    np.testing.assert_allclose(np.array(b.grad.tolist()), a.grad.numpy(), rtol=1e-6)


def test_second_derivative_matches_torch() -> None:
    values = [1.5, 0.0, -3.0]
    a = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    b = td.tensor(values, dtype=td.float64, requires_grad=True)
    (ga,) = torch.autograd.grad(torch.cumprod(a, 0).sum(), a, create_graph=True)
    (gb,) = td.autograd.grad(td.cumprod(b, 0).sum(), b, create_graph=True)
    ga.sum().backward()
    gb.sum().backward()
    np.testing.assert_allclose(b.grad.tolist(), a.grad.tolist())
