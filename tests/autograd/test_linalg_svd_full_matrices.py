"""``_linalg_svd`` backward with ``full_matrices=True`` against torch 2.13: torch's formula
narrows U, Vh and their gradients to the first min(m, n) vectors (derivatives.py reads an
output's ``sym_size`` from the saved output)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td


def _grad(m: Any, shape: tuple[int, int], which: str) -> np.ndarray:
    a = np.random.RandomState(0).randn(*shape)
    k = min(shape)
    x = m.tensor(a, dtype=m.float64, requires_grad=True)
    u, s, vh = m.ops.aten._linalg_svd(x, full_matrices=True)
    weights = m.arange(1.0, 1 + shape[0], dtype=m.float64).view(-1, 1)
    # losses that do not depend on the vectors' signs or on the vectors past the k-th
    loss = {
        "U": lambda: (u[:, :k] ** 2 * weights).sum(),
        "S": lambda: (s * s).sum(),
        "Vh": lambda: (vh[:k].abs() * m.arange(1.0, 1 + shape[1], dtype=m.float64)).sum(),
        "all": lambda: u[:, :k].abs().sum() + s.sum() + vh[:k].abs().sum(),
    }[which]()
    loss.backward()
    return np.asarray(x.grad.tolist())


@pytest.mark.parametrize("which", ["U", "S", "Vh", "all"])
@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3)])
def test_full_matrices_gradient_as_torch(shape: tuple[int, int], which: str) -> None:
    np.testing.assert_allclose(_grad(td, shape, which), _grad(torch, shape, which), atol=1e-10)


def test_full_matrices_node_as_torch() -> None:
    def node(m: Any) -> str:
        x = m.ones(3, 2, dtype=m.float64, requires_grad=True)
        return type(m.ops.aten._linalg_svd(x, full_matrices=True)[0].grad_fn).__name__

    assert node(td) == node(torch) == "LinalgSvdBackward0"
