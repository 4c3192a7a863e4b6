"""Complex gradients vs torch 2.13 (formulas.py, Note [Complex gradients]): torch's OpInfo
samples in complex128 for the differentiable operators of the library that take complex
inputs (gradients and second derivatives vs torch, gradcheck / gradgradcheck), and the
conventions themselves (conjugate Wirtinger, real losses of complex inputs, complex
``backward()`` seeds)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from torch.testing._internal.common_methods_invocations import op_db

import tensordispatch as td
from tensordispatch.autograd import grad
from tensordispatch.autograd.gradcheck import gradcheck, gradgradcheck
from tests.autograd.opinfo_support import differentiable as _pairs
from tests.autograd.opinfo_support import flat as _flat
from tests.autograd.opinfo_support import replay, run, smallest
from tests.autograd.opinfo_support import size as _size

A = td.ops.aten

NAMES = [
    "add", "sub", "mul", "div", "neg", "rsub", "exp", "log", "sin", "cos", "tan", "tanh",
    "sigmoid", "sqrt", "rsqrt", "abs", "pow", "sum", "mean", "prod", "cumsum", "mm", "bmm",
    "mv", "dot", "matmul", "addmm", "addmv", "baddbmm", "addbmm", "addcmul", "addcdiv", "lerp",
    "t", "transpose", "permute", "unsqueeze", "squeeze", "select", "expand", "view", "reshape",
    "clone", "narrow", "flip", "roll", "repeat", "diagonal", "tril", "triu", "index_select",
    "gather", "masked_fill", "where", "cat", "stack", "split", "unbind", "chunk", "fill",
    "log1p", "expm1", "var", "std", "norm", "as_strided", "narrow_copy", "unfold", "scatter",
    "scatter_add", "index_put", "masked_select", "slice_scatter", "select_scatter",
    "diagonal_scatter", "split_with_sizes", "logsumexp", "sign", "maximum", "minimum",
    "to", "__getitem__", "view_as_real", "view_as_complex", "outer", "contiguous", "flatten",
]  # fmt: skip


def _method(name: str) -> Callable[..., Any]:
    return lambda x, *a, **k: getattr(x, name)(*a, **k)


OURS: dict[str, Callable[..., Any]] = {
    "where": lambda x, condition, y: td.where(condition, x, y),
    "__getitem__": lambda x, idx: x[idx],
    "to": _method("to"),
}
# (name, variant) pairs left out: as_strided of views of a larger storage (the rebuilt input
# is a fresh tensor, so storage offsets mean something else).
EXCLUDED = {("as_strided", "partial_views")}
# (name, variant) -> why its second derivative is not compared (none left: norm nuc's went
# through the complex singular vectors, differentiated since svd_backward's phase term)
NO_SECOND_DERIVATIVE: dict[tuple[str, str], str] = {}
PER_OP = 2
GRADGRAD_MAX = 8


def _ours(info: Any) -> Callable[..., Any]:
    if info.name in OURS:
        return OURS[info.name]
    fn = getattr(td, info.name, None)
    return fn if fn is not None else _method(info.name)


def _samples() -> list[Any]:
    params = []
    for info in op_db:
        if info.name not in NAMES or not info.supports_autograd:
            continue
        if (info.name, info.variant_test_name) in EXCLUDED:
            continue
        if torch.complex128 not in info.supported_backward_dtypes("cpu"):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            samples = list(info.sample_inputs("cpu", torch.complex128, requires_grad=True))
        for i, s in enumerate(samples[:PER_OP]):
            label = f"{info.name}.{info.variant_test_name or 'default'}-{i}"
            params.append(pytest.param(info, s, i, id=label))
    return params


SAMPLES = _samples()


def _run(info: Any, s: Any) -> Any:
    return run(info, s, _ours(info), "complex forward")


def _seed(shape: tuple[int, ...], complex_: bool, rng: np.random.Generator) -> np.ndarray:
    x = rng.uniform(-1, 1, shape)
    return x + 1j * rng.uniform(-1, 1, shape) if complex_ else x


def _close(ours: Any, theirs: Any, tol: float = 1e-8) -> None:
    assert (ours is None) == (theirs is None), (ours, theirs)
    if ours is not None:
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        np.testing.assert_allclose(
            np.asarray(ours.detach()._data), theirs.detach().resolve_conj().numpy(),
            rtol=tol, atol=tol,
        )  # fmt: skip


@pytest.mark.parametrize(("info", "s", "i"), SAMPLES)
def test_complex_gradients_match_torch(info: Any, s: Any, i: int) -> None:
    expected, got, leaves = _run(info, s)
    pairs = _pairs(expected, got)
    if not pairs or not leaves.torch:
        return
    rng = np.random.default_rng(i)
    seeds = [_seed(tuple(e.shape), e.dtype.is_complex, rng) for e, _ in pairs]
    tg = torch.autograd.grad([e for e, _ in pairs], leaves.torch,
                             [torch.tensor(x) for x in seeds], allow_unused=True)  # fmt: skip
    dg = grad([g for _, g in pairs], leaves.ours, [td.tensor(x) for x in seeds],
              allow_unused=True)  # fmt: skip
    for ours, theirs in zip(dg, tg, strict=True):
        _close(ours, theirs)


def _real_loss(lib: Any, x: Any) -> Any:
    y = x * x.sin()
    if y.numel() == 0:  # torch's double backward through view_as_real fails on empty tensors
        return y.abs().sum()
    return lib.view_as_real(y).sum() if y.dtype.is_complex else y.sum()


@pytest.mark.parametrize(("info", "s", "i"), SAMPLES)
def test_complex_second_derivatives_match_torch(info: Any, s: Any, i: int) -> None:
    if not info.supports_gradgrad:
        pytest.xfail(f"torch has no second derivative for {info.name}")
    if (info.name, info.variant_test_name) in NO_SECOND_DERIVATIVE:
        pytest.xfail(NO_SECOND_DERIVATIVE[info.name, info.variant_test_name])
    if _size(s) == 0:
        return  # empty inputs: nothing to differentiate
    expected, got, leaves = _run(info, s)
    pairs = _pairs(expected, got)
    if not pairs or not leaves.torch:
        return
    t_total = sum(_real_loss(torch, e) for e, _ in pairs)
    d_total = sum(_real_loss(td, g) for _, g in pairs)
    tg = torch.autograd.grad(t_total, leaves.torch, create_graph=True, allow_unused=True)
    dg = grad(d_total, leaves.ours, create_graph=True, allow_unused=True)
    t_sq = [_real_loss(torch, g) for g in tg if g is not None and g.requires_grad]
    d_sq = [_real_loss(td, g) for g in dg if g is not None and g.requires_grad]
    assert len(t_sq) == len(d_sq)
    if not t_sq:
        return
    tgg = torch.autograd.grad(sum(t_sq), leaves.torch, allow_unused=True)
    dgg = grad(sum(d_sq), leaves.ours, allow_unused=True)
    for ours, theirs in zip(dgg, tgg, strict=True):
        if theirs is not None and ours is None:
            assert not theirs.any()  # torch materializes a zero gradient
            continue
        _close(ours, theirs, 1e-6)


@pytest.mark.parametrize(("info", "s", "i"), smallest(SAMPLES))
def test_complex_gradcheck(info: Any, s: Any, i: int) -> None:
    _, got, leaves = _run(info, s)
    if not leaves.ours or not any(getattr(g, "requires_grad", False) for g in _flat(got)):
        return
    fn = replay(_ours(info), s)
    assert gradcheck(fn, leaves.ours)
    if info.supports_gradgrad and _size(s) <= GRADGRAD_MAX:
        assert gradgradcheck(fn, leaves.ours)


# --- the conventions ------------------------------------------------------------------------


def _z(lib: Any, requires_grad: bool = True) -> Any:
    return lib.tensor([1 + 2j, -0.5 + 0.25j, 3 - 1j], dtype=lib.complex128,
                      requires_grad=requires_grad)  # fmt: skip


def _grad_of(lib: Any, loss_of: Callable[[Any, Any], Any]) -> np.ndarray:
    z = _z(lib)
    loss_of(lib, z).backward()
    return np.array(z.grad.tolist())


@pytest.mark.parametrize(
    "loss",
    [
        lambda lib, z: (z * z).abs().sum(),
        lambda lib, z: lib.view_as_real(z * z.exp()).sum(),
        lambda lib, z: (z.abs() * z.abs()).sum(),
        lambda lib, z: lib.view_as_real(z / (z + 2)).pow(2).sum(),
        lambda lib, z: lib.view_as_real(z.sqrt() * z.sin()).select(-1, 1).sum(),
    ],
    ids=["abs-of-square", "real-and-imag-of-z-exp-z", "abs-squared", "quotient", "imag-part"],
)
def test_real_loss_of_complex_input_is_conjugate_wirtinger(loss: Any) -> None:
    ours, theirs = _grad_of(td, loss), _grad_of(torch, loss)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def test_abs_squared_gradient_is_two_z() -> None:
    z = _z(td)
    (z.abs() * z.abs()).sum().backward()
    np.testing.assert_allclose(np.array(z.grad.tolist()), 2 * np.array(_z(td, False).tolist()))


def test_holomorphic_vjp_conjugates_the_derivative() -> None:
    z = _z(td)
    v = td.tensor([1.0 + 0j, 1j, 0.5 - 0.5j], dtype=td.complex128)
    (g,) = grad(z * z, z, v)
    expected = np.array(v.tolist()) * np.conj(2 * np.array(_z(td, False).tolist()))
    np.testing.assert_allclose(np.array(g.tolist()), expected)


def test_real_input_of_a_complex_product_gets_a_real_gradient() -> None:
    def of(lib: Any) -> tuple[Any, np.ndarray]:
        x = lib.tensor([0.5, -1.5, 2.0], dtype=lib.float64, requires_grad=True)
        lib.view_as_real(x * _z(lib, False)).sum().backward()
        return str(x.grad.dtype).split(".")[-1], np.array(x.grad.tolist())

    (ours_dtype, ours), (theirs_dtype, theirs) = of(td), of(torch)
    assert ours_dtype == theirs_dtype == "float64"
    np.testing.assert_allclose(ours, theirs)


def test_backward_of_a_complex_scalar_raises_torchs_error() -> None:
    z = _z(td)
    with pytest.raises(RuntimeError) as e:
        (z * z).sum().backward()
    assert str(e.value) == (
        "grad can be implicitly created only for real scalar outputs but got "
        "tensordispatch.complex128"
    )


def test_backward_of_a_complex_scalar_with_an_explicit_gradient() -> None:
    def of(lib: Any) -> np.ndarray:
        z = _z(lib)
        (z * z.exp()).sum().backward(lib.tensor(1 - 1j, dtype=lib.complex128))
        return np.array(z.grad.tolist())

    np.testing.assert_allclose(of(td), of(torch), rtol=1e-12)


def test_backward_of_a_complex_vector_without_gradient_names_the_shape_rule() -> None:
    with pytest.raises(RuntimeError) as e:
        (_z(td) * 2).backward()
    assert str(e.value) == "grad can be implicitly created only for scalar outputs"
