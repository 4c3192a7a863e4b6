"""Complex add and sub multiply by alpha even when it is 1, and sub is add with -alpha
(Note [Complex alpha] in backends/cpu/kernels.py): every path (structured impls, fresh and
fused kernels, in-place, out=, wrapped numbers) against torch, signs of zeros included."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td

INF, NAN = math.inf, math.nan
VALUES = [1 + 1j, -0.0 - 1j, complex(INF, 0), complex(0, -0.0), 2 - 3j, complex(INF, INF)]
CALLS: dict[str, Any] = {
    "add": lambda L, a, b, v: L.add(a, b),
    "sub": lambda L, a, b, v: L.sub(a, b),
    "add number": lambda L, a, b, v: a + v,
    "sub number": lambda L, a, b, v: a - v,
    "number minus": lambda L, a, b, v: v - a,
    "add real number": lambda L, a, b, v: a + INF,
    "add alpha 2": lambda L, a, b, v: L.add(a, b, alpha=2),
    "sub alpha 2": lambda L, a, b, v: L.sub(a, b, alpha=2),
    "add_": lambda L, a, b, v: a.add_(b),
    "sub_": lambda L, a, b, v: a.sub_(b),
    "add_ number": lambda L, a, b, v: a.add_(v),
    "sub_ number": lambda L, a, b, v: a.sub_(v),
    "add out": lambda L, a, b, v: L.add(a, b, out=L.empty(1, dtype=a.dtype)),
    "sub out": lambda L, a, b, v: L.sub(a, b, out=L.empty(1, dtype=a.dtype)),
    "add broadcast": lambda L, a, b, v: L.add(a.expand(2, 1).contiguous(), b),
    "sub real tensor": lambda L, a, b, v: L.sub(a, L.tensor([v.real])),
}


def _bits_equal(ours: Any, theirs: Any) -> None:
    x, y = np.asarray(ours.numpy()), theirs.numpy()
    assert x.dtype == y.dtype and x.shape == y.shape
    for u, w in ((x.real, y.real), (x.imag, y.imag)):
        assert np.array_equal(u, w, equal_nan=True)
        assert np.array_equal(np.signbit(u[~np.isnan(u)]), np.signbit(w[~np.isnan(w)]))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", list(CALLS))
def test_complex_add_and_sub_match_torch(name: str, dtype: str) -> None:
    for u, v in itertools.product(VALUES, VALUES):
        ours = CALLS[name](
            td,
            td.tensor([u], dtype=getattr(td, dtype)),
            td.tensor([v], dtype=getattr(td, dtype)),
            v,
        )
        theirs = CALLS[name](
            torch,
            torch.tensor([u], dtype=getattr(torch, dtype)),
            torch.tensor([v], dtype=getattr(torch, dtype)),
            v,
        )
        _bits_equal(ours, theirs)


def test_real_add_keeps_its_shortcut_values() -> None:
    a, b = td.tensor([-0.0, 1.5]), td.tensor([-0.0, INF])
    _bits_equal(a + b, torch.tensor([-0.0, 1.5]) + torch.tensor([-0.0, INF]))
    _bits_equal(a - b, torch.tensor([-0.0, 1.5]) - torch.tensor([-0.0, INF]))
