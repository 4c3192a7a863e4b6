"""Matrix norms over the SVD against torch: aten::_linalg_svd (shapes, strides, dtypes on cpu
and meta; U S Vh rebuilds A), linalg_svdvals, linalg_matrix_norm[.str_ord] for every order,
dims, keepdim and dtype, torch.norm's routing of 'nuc' / 'fro' to them, and the refusals with
torch's messages."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
import tensordispatch.linalg  # td.linalg

g = torch.Generator().manual_seed(0)


def _td(t: torch.Tensor, device: str = "cpu") -> Any:
    dtype = getattr(td, str(t.dtype).split(".")[-1])
    if device == "meta":
        return td.empty_strided(list(t.shape), list(t.stride()), dtype=dtype, device="meta")
    return td.from_numpy(t.numpy().copy())


def _close(got: Any, expected: torch.Tensor, rtol: float = 1e-5) -> None:
    assert tuple(got.shape) == tuple(expected.shape)
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=rtol, atol=1e-5)


SVD_INPUTS = {
    "3x4": (3, 4),
    "4x3 batched": (2, 4, 3),
    "square": (5, 5),
    "empty rows": (2, 0, 3),
    "empty batch": (0, 3, 2),
}


@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize("compute_uv", [True, False])
@pytest.mark.parametrize("full_matrices", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.complex64])
@pytest.mark.parametrize("name", SVD_INPUTS)
def test_linalg_svd_layout_matches_torch_cpu(
    name: str, dtype: torch.dtype, full_matrices: bool, compute_uv: bool, device: str
) -> None:
    a = torch.randn(*SVD_INPUTS[name], dtype=dtype, generator=g)
    expected = torch.ops.aten._linalg_svd(a, full_matrices, compute_uv)
    got = td.ops.aten._linalg_svd(_td(a, device), full_matrices, compute_uv)
    for ours, theirs in zip(got, expected, strict=True):
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert tuple(ours.stride()) == tuple(theirs.stride())  # torch's CPU strides
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    if device == "cpu":
        _close(got[1], expected[1])
        if compute_uv and a.numel():
            u, s, vh = (t.numpy() for t in got)
            k = s.shape[-1]
            rebuilt = (u[..., :k] * s[..., None, :]) @ vh[..., :k, :]
            np.testing.assert_allclose(rebuilt, a.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64])
def test_svdvals_match_torch(dtype: torch.dtype) -> None:
    a = torch.randn(3, 4, 2, dtype=dtype, generator=g)
    _close(td.linalg.svdvals(_td(a)), torch.linalg.svdvals(a))


NORMS: dict[str, tuple[tuple[int, ...], Any, dict[str, Any]]] = {
    "fro": ((3, 4), "fro", {}),
    "nuc": ((3, 4), "nuc", {}),
    "nuc batched, dims (0, 2), keepdim": ((2, 3, 4), "nuc", {"dim": (0, 2), "keepdim": True}),
    "2": ((3, 4), 2, {}),
    "-2 keepdim dims (2, 0)": ((2, 3, 4), -2, {"dim": (2, 0), "keepdim": True}),
    "1": ((3, 4), 1, {}),
    "-1 dims (2, 0)": ((2, 3, 4), -1, {"dim": (2, 0)}),
    "inf": ((2, 3, 4), math.inf, {}),
    "-inf keepdim": ((2, 3, 4), -math.inf, {"keepdim": True}),
    "nuc float64 dtype": ((3, 4), "nuc", {"dtype": torch.float64}),
    "1 float64 dtype": ((3, 4), 1, {"dtype": torch.float64}),
    "fro complex": ((3, 4), "fro", {"complex": True}),
    "nuc complex": ((3, 4), "nuc", {"complex": True}),
}


def _norm_case(name: str) -> tuple[torch.Tensor, Any, dict[str, Any], dict[str, Any]]:
    shape, ord, kwargs = NORMS[name]
    kwargs = dict(kwargs)
    dtype = torch.complex64 if kwargs.pop("complex", False) else torch.float32
    a = torch.randn(*shape, dtype=dtype, generator=g)
    ours = {k: getattr(td, str(v).split(".")[-1]) if k == "dtype" else v for k, v in kwargs.items()}
    return a, ord, kwargs, ours


@pytest.mark.parametrize("name", NORMS)
def test_matrix_norm_matches_torch(name: str) -> None:
    a, ord, kwargs, ours = _norm_case(name)
    _close(td.linalg.matrix_norm(_td(a), ord, **ours), torch.linalg.matrix_norm(a, ord, **kwargs))


@pytest.mark.parametrize("name", NORMS)
def test_matrix_norm_on_meta_matches_torch(name: str) -> None:
    a, ord, kwargs, ours = _norm_case(name)
    got = td.linalg.matrix_norm(_td(a, "meta"), ord, **ours)
    expected = torch.linalg.matrix_norm(a, ord, **kwargs)
    assert tuple(got.shape) == tuple(expected.shape)
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]


TORCH_NORM: dict[str, tuple[tuple[int, ...], tuple[Any, ...], dict[str, Any]]] = {
    "nuc": ((5, 5), ("nuc",), {}),
    "nuc over dims": ((5, 5, 5), ("nuc", [1, 2]), {}),
    "nuc keepdim": ((2, 3, 4), ("nuc", (0, 1)), {"keepdim": True}),
    "fro over two dims": ((3, 4, 5), ("fro", (0, 2)), {}),
}


@pytest.mark.parametrize("name", TORCH_NORM)
def test_torch_norm_routes_matrix_norms_as_torch(name: str) -> None:
    shape, args, kwargs = TORCH_NORM[name]
    a = torch.randn(*shape, generator=g)
    _close(td.norm(_td(a), *args, **kwargs), torch.norm(a, *args, **kwargs))


def test_matrix_norm_out_matches_torch() -> None:
    a = torch.randn(3, 4, generator=g)
    out_t, out = torch.empty(0), td.empty(0)
    torch.linalg.matrix_norm(a, "nuc", out=out_t)
    assert td.linalg.matrix_norm(_td(a), "nuc", out=out) is out
    _close(out, out_t)


REFUSED: dict[str, Callable[[Any], Any]] = {
    "svdvals of a vector": lambda m: m.linalg.svdvals(m.ones(3)),
    "svdvals of int64": lambda m: m.linalg.svdvals(m.ones(3, 3, dtype=m.int64)),
    "matrix_norm of a vector": lambda m: m.linalg.matrix_norm(m.ones(3), "nuc"),
    "nuc of float16": lambda m: m.linalg.matrix_norm(m.ones(3, 3, dtype=m.float16), "nuc"),
    "three dims": lambda m: m.linalg.matrix_norm(m.ones(3, 3, 3), "nuc", dim=(0, 1, 2)),
    "same dim twice": lambda m: m.linalg.matrix_norm(m.ones(3, 3), "nuc", dim=(1, -1)),
    "unknown order name": lambda m: m.linalg.matrix_norm(m.ones(3, 3), "abc"),
    "order 3": lambda m: m.linalg.matrix_norm(m.ones(3, 3), 3),
    "order -1.5": lambda m: m.linalg.matrix_norm(m.ones(3, 3), -1.5),
    "integer dtype": lambda m: m.linalg.matrix_norm(m.ones(3, 3), "nuc", dtype=m.int64),
    "real dtype for complex": lambda m: m.linalg.matrix_norm(
        m.ones(3, 3, dtype=m.complex64), "nuc", dtype=m.float32
    ),
    "narrowing dtype": lambda m: m.linalg.matrix_norm(
        m.ones(3, 3, dtype=m.float64), "fro", dtype=m.float32
    ),
    "norm nuc of 3-D": lambda m: m.norm(m.ones(3, 3, 3), "nuc"),
    "norm fro over three dims": lambda m: m.norm(m.ones(3, 3, 3), "fro", dim=(0, 1, 2)),
    "norm nuc over one dim": lambda m: m.norm(m.ones(3, 3, 3), "nuc", dim=1),
}


def _message(fn: Callable[[Any], Any], module: Any) -> str:
    with pytest.raises(RuntimeError) as info:
        fn(module)
    return str(info.value)


@pytest.mark.parametrize("name", REFUSED)
def test_refusal_message_is_torchs(name: str) -> None:
    assert _message(REFUSED[name], td) == _message(REFUSED[name], torch)


def test_refusal_messages_golden() -> None:
    assert [_message(fn, td) for fn in REFUSED.values()] == [
        "linalg.svd: The input tensor A must have at least 2 dimensions.",
        "linalg.svd: Expected a floating point or complex tensor as input. Got Long",
        "linalg.matrix_norm: The input tensor A must have at least 2 dimensions.",
        "linalg.matrix_norm: Low precision dtypes not supported. Got Half",
        "linalg.matrix_norm: dim must be a 2-tuple. Got 0 1 2",
        "linalg.matrix_norm: dims must be different. Got (1, 1)",
        "linalg.matrix_norm: Order abc not supported.",
        "linalg.matrix_norm: Order 3 not supported.",
        "linalg.matrix_norm: Order -1.5 not supported.",
        "linalg.matrix_norm: dtype should be floating point or complex, but got Long",
        "linalg.matrix_norm: dtype should be complex for complex inputs, but got Float",
        (
            "linalg.matrix_norm: the dtype of the input (Double) should be convertible without "
            "narrowing to the specified dtype (Float)"
        ),
        "linalg.matrix_norm: dim must be a 2-tuple. Got 0 1 2",
        "linalg.matrix_norm: dim must be a 2-tuple. Got 0 1 2",
        "linalg.matrix_norm: dim must be a 2-tuple. Got 1",
    ]


def test_float16_svd_is_not_implemented_as_torch() -> None:
    with pytest.raises(NotImplementedError) as ours:
        td.linalg.svdvals(td.ones(3, 3, dtype=td.float16))
    with pytest.raises(NotImplementedError) as theirs:
        torch.linalg.svdvals(torch.ones(3, 3, dtype=torch.float16))
    assert str(ours.value) == str(theirs.value) == "\"linalg_svd_cpu\" not implemented for 'Half'"


# -- gradients (LinalgSvdBackward0: svd_backward) ---------------------------------------------


def _grads(module: Any, a: torch.Tensor, loss: Callable[[Any, Any], Any]) -> Any:
    if module is torch:
        x = a.clone().requires_grad_()
    else:
        x = _td(a).requires_grad_()
    loss(module, x).backward()
    return x.grad


GRAD_LOSSES: dict[str, tuple[tuple[int, ...], torch.dtype, Callable[[Any, Any], Any]]] = {
    "nuc": ((3, 4), torch.float64, lambda m, x: m.linalg.matrix_norm(x, "nuc")),
    "nuc batched keepdim": (
        (2, 4, 3), torch.float64,
        lambda m, x: (m.linalg.matrix_norm(x, "nuc", dim=(0, 2), keepdim=True) ** 2).sum(),
    ),
    "spectral": ((4, 3), torch.float64, lambda m, x: m.linalg.matrix_norm(x, 2)),
    "torch.norm nuc, float32": ((3, 3), torch.float32, lambda m, x: m.norm(x, "nuc")),
    "nuc complex": ((3, 4), torch.complex128, lambda m, x: m.linalg.matrix_norm(x, "nuc")),
    "singular vectors (sign-invariant loss), wide": (
        (3, 5), torch.float64,
        lambda m, x: sum(
            ((t**2) * w).sum() for t, w in zip(m.ops.aten._linalg_svd(x), (1.0, 2.0, 3.0))
        ),
    ),
    "singular vectors, tall batched": (
        (2, 5, 3), torch.float64,
        lambda m, x: (m.ops.aten._linalg_svd(x)[0] ** 4).sum() + m.ops.aten._linalg_svd(x)[1].sum(),
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", GRAD_LOSSES)
def test_gradient_matches_torch(name: str) -> None:
    shape, dtype, loss = GRAD_LOSSES[name]
    a = torch.randn(*shape, dtype=dtype, generator=g)
    expected = _grads(torch, a, loss)
    got = _grads(td, a, loss)
    rtol = 1e-4 if dtype == torch.float32 else 1e-8
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=rtol, atol=rtol)


def test_nuclear_norm_grad_fn_is_torchs() -> None:
    x = td.ones(2, 2, requires_grad=True)
    y = td.linalg.matrix_norm(x, "nuc")
    assert type(y.grad_fn).__name__ == "SumBackward1"
    assert type(y.grad_fn.next_functions[0][0]).__name__ == "LinalgSvdBackward0"


def test_gradgradcheck_of_nuclear_norm() -> None:
    from tensordispatch.autograd.gradcheck import gradcheck, gradgradcheck

    a = torch.randn(3, 4, dtype=torch.float64, generator=g)
    x = _td(a).requires_grad_()
    fn = lambda t: td.linalg.matrix_norm(t, "nuc")
    assert gradcheck(fn, (x,)) and gradgradcheck(fn, (x,))


def test_complex_singular_vector_gradients_match_torch() -> None:
    # a loss that does not depend on the singular vectors' phases (torch requires that)
    def loss(m: Any, x: Any) -> Any:
        u, s, vh = m.ops.aten._linalg_svd(x)
        w = m.arange(1.0, u.shape[-1] + 1, dtype=m.float64)
        return ((u.abs() ** 2) * w).sum() + (vh.abs() ** 4).sum() + (s**2).sum()

    for shape in ((3, 5), (5, 3), (2, 3, 3)):
        a = torch.randn(*shape, dtype=torch.complex128, generator=g)
        got, expected = _grads(td, a, loss), _grads(torch, a, loss)
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-8, atol=1e-10)
