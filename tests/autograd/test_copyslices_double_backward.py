"""Double backward through CopySlices / AsStridedBackward0 when the root is not contiguous
(views.py, Note [Views replay as strided]), against torch 2.13 and gradgradcheck."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch.autograd import gradgradcheck


def _permuted_root(lib: Any, x: Any) -> Any:
    r = lib.empty_strided((3, 3), (1, 3), dtype=lib.float64)
    r.copy_(x * 1)
    r[1].mul_(x[0])
    return (r * r).sum()


def _permuted_3d_root(lib: Any, x: Any) -> Any:
    r = lib.empty_strided((2, 3, 2), (1, 4, 2), dtype=lib.float64)
    r.copy_(x.reshape(2, 3, 2).sin())
    r.narrow(1, 1, 2).select(2, 0).mul_(x.reshape(2, 3, 2)[:, :2, 1])
    return (r * r.cos()).sum()


def _root_with_gaps(lib: Any, x: Any) -> Any:
    r = lib.empty_strided((3, 2), (4, 1), dtype=lib.float64)
    r.copy_(x[:, :2] * 2)
    r.select(1, 1).mul_(x[:, 2])
    return (r * r * r).sum()


def _transposed_view_of_permuted_root(lib: Any, x: Any) -> Any:
    r = lib.empty_strided((3, 3), (1, 3), dtype=lib.float64)
    r.copy_(x.exp())
    v = r.t().narrow(0, 0, 2)
    v.mul_(v.detach() * 0 + x[:2])
    return (r * x).sum() + (v * v).sum()


PROGRAMS: dict[str, Callable[[Any, Any], Any]] = {
    "permuted root": _permuted_root,
    "permuted 3-d root": _permuted_3d_root,
    "root with gaps": _root_with_gaps,
    "view of the view, read after the write": _transposed_view_of_permuted_root,
}
_SHAPES = {"permuted 3-d root": (12,)}


def _input(name: str) -> np.ndarray:
    shape = _SHAPES.get(name, (3, 3))
    return np.random.default_rng(7).uniform(-1.0, 1.0, shape)


def _first_and_second(lib: Any, name: str) -> tuple[np.ndarray, np.ndarray]:
    x = lib.tensor(_input(name), dtype=lib.float64, requires_grad=True)
    out = PROGRAMS[name](lib, x)
    (gx,) = lib.autograd.grad(out, x, create_graph=True)
    weights = lib.tensor(np.linspace(0.5, 1.5, x.numel()).reshape(x.shape), dtype=lib.float64)
    (ggx,) = lib.autograd.grad((gx * weights).sum(), x)
    return np.array(gx.detach().tolist()), np.array(ggx.tolist())


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_second_derivative_equals_torch(name: str) -> None:
    ours = _first_and_second(td, name)
    theirs = _first_and_second(torch, name)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_gradgradcheck(name: str) -> None:
    x = td.tensor(_input(name), dtype=td.float64, requires_grad=True)
    assert gradgradcheck(lambda t: PROGRAMS[name](td, t), (x,))


def test_first_gradient_records_for_a_permuted_root() -> None:
    x = td.tensor(_input("permuted root"), dtype=td.float64, requires_grad=True)
    (gx,) = td.autograd.grad(_permuted_root(td, x), x, create_graph=True)
    assert gx.requires_grad and gx.grad_fn is not None


def test_root_gradient_without_create_graph_is_unrecorded() -> None:
    x = td.tensor(_input("root with gaps"), dtype=td.float64, requires_grad=True)
    (gx,) = td.autograd.grad(_root_with_gaps(td, x), x)
    theirs = _first_and_second(torch, "root with gaps")[0]
    assert gx.grad_fn is None
    np.testing.assert_allclose(np.array(gx.tolist()), theirs, rtol=1e-10, atol=1e-12)
