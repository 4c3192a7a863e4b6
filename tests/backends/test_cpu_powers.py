"""pow on CPU at special bases, against torch 2.13: NumPy's 0-dim power differs from its
array loop at a negative infinite base, and pow(Scalar, Tensor)'s base converts like a
tensor of the common dtype (backends/cpu/pointwise.py, powers.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import tensordispatch as td

_BASES = [-math.inf, math.inf, -0.0, 0.0, -2.0, -(2**63), 70000]
_EXPONENTS = [0.5, -0.5, 2.0, 3.0, -3.0, 0.0]


def _same(ours: td.Tensor, theirs: torch.Tensor) -> None:
    assert ours.dtype.name == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    # nan and inf positions exactly; finite values to a float32 ulp or so (powf vs std::pow)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=0)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("shape", [(), (1,), (2,)])
def test_number_base_matches_torch(dtype: str, shape: tuple[int, ...]) -> None:
    for base in _BASES:
        for e in _EXPONENTS:
            theirs = base ** torch.full(shape, e, dtype=getattr(torch, dtype))
            ours = base ** td.full(shape, e, dtype=getattr(td, dtype))
            _same(ours, theirs)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("shape", [(), (2,)])
def test_tensor_base_matches_torch(dtype: str, shape: tuple[int, ...]) -> None:
    for base in _BASES[:5]:
        for e in _EXPONENTS:
            t = torch.full(shape, base, dtype=getattr(torch, dtype))
            x = td.full(shape, base, dtype=getattr(td, dtype))
            _same(td.pow(x, td.full(shape, e, dtype=x.dtype)),
                  torch.pow(t, torch.full(shape, e, dtype=t.dtype)))  # fmt: skip
