"""Run one program on torch and on tensordispatch with the same float64 inputs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import tensordispatch as td
import tensordispatch.autograd

Program = Callable[..., Any]


def make_inputs(shapes: list[tuple[int, ...]], seed: int = 0) -> list[np.ndarray[Any, Any]]:
    rng = np.random.default_rng(seed)
    # Away from 0 so sqrt / div / abs are smooth at every sample.
    return [rng.uniform(0.5, 2.0, s) * rng.choice([-1.0, 1.0], s) for s in shapes]


def leaves(arrays: list[np.ndarray[Any, Any]]) -> tuple[list[torch.Tensor], list[td.Tensor]]:
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    ds = [td.tensor(a).requires_grad_() for a in arrays]
    return ts, ds


def to_numpy(t: Any) -> np.ndarray[Any, Any]:
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return np.asarray(t._data)


def assert_close(ours: Any, theirs: Any, tol: float = 1e-10) -> None:
    assert (ours is None) == (theirs is None), (ours, theirs)
    if ours is None:
        return
    np.testing.assert_allclose(to_numpy(ours), to_numpy(theirs), rtol=tol, atol=tol)
    assert tuple(ours.shape) == tuple(theirs.shape)
