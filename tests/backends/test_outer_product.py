"""backends/cpu/kernels.py mm_out/bmm_out with contraction size 1: np.multiply instead of
np.matmul gives exactly matmul's values (and torch's), for every layout and real dtype."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td

DTYPES = ["float32", "float64", "int64", "int32", "float16", "complex64"]


def _pair(m: Any, batched: bool, dtype: str, transposed: bool) -> tuple[Any, Any]:
    gen = np.random.default_rng(3)
    a = gen.standard_normal((4, 5, 1) if batched else (5, 1)) * 100
    b = gen.standard_normal((4, 1, 6) if batched else (1, 6)) * 100
    x, y = m.from_numpy(a).to(getattr(m, dtype)), m.from_numpy(b).to(getattr(m, dtype))
    if transposed:  # non-contiguous operands of the same values
        x = x.transpose(-1, -2).contiguous().transpose(-1, -2)
        y = y.transpose(-1, -2).contiguous().transpose(-1, -2)
    return x, y


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batched", [False, True])
def test_k1_product_equals_torch_and_matmul(batched: bool, dtype: str, transposed: bool) -> None:
    x_d, y_d = _pair(td, batched, dtype, transposed)
    x_t, y_t = _pair(torch, batched, dtype, transposed)
    got = (td.bmm if batched else td.mm)(x_d, y_d)
    expected = (torch.bmm if batched else torch.mm)(x_t, y_t)
    assert got.dtype.name == dtype and got.stride() == expected.stride()
    with np.errstate(all="ignore"):  # the oracle itself: float16 products overflow
        exact = np.matmul(x_d.numpy(), y_d.numpy())
    np.testing.assert_array_equal(got.numpy(), exact)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-3)


def test_k0_product_is_zeros() -> None:
    got = td.mm(td.ones(3, 0), td.ones(0, 2))
    assert got.tolist() == [[0.0, 0.0]] * 3


def test_k1_out_variant_and_overflow_without_warning() -> None:
    import warnings

    out = td.empty(2, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        td.mm(td.tensor([[3e38], [1.0]]), td.tensor([[10.0, 1.0]]), out=out)
    expected = torch.mm(torch.tensor([[3e38], [1.0]]), torch.tensor([[10.0, 1.0]]))
    assert out.tolist() == expected.tolist()
