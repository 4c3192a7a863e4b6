"""Gradients and second derivatives vs torch on torch's OpInfo samples (float64), for the
operators with a derivatives.yaml entry (directly or through the aten operator the
function reaches), and gradcheck/gradgradcheck on the first samples of each operator.

Inputs are the samples' own tensors, rebuilt in tensordispatch with the same values and
requires_grad; every floating output that requires grad in torch is seeded with the same
random gradient in both libraries.
"""

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
from tests.autograd.opinfo_support import differentiable as _differentiable
from tests.autograd.opinfo_support import flat as _flat
from tests.autograd.opinfo_support import replay, run, smallest
from tests.autograd.opinfo_support import size as _size
from tests.ops import nn_adapters

A = td.ops.aten


def _method(name: str) -> Callable[..., Any]:
    return lambda x, *a, **k: getattr(x, name)(*a, **k)


def _gelu(x: Any, approximate: str = "none") -> Any:
    return A.gelu(x, approximate=approximate)


OURS: dict[str, Callable[..., Any]] = {
    "nn.functional.nll_loss": nn_adapters.nll_loss,
    "nn.functional.cross_entropy": nn_adapters.cross_entropy,
    "nn.functional.layer_norm": nn_adapters.layer_norm,
    "nn.functional.embedding": nn_adapters.embedding,
    "nn.functional.gelu": _gelu,
    "nn.functional.silu": lambda x, inplace=False: A.silu(x),
    "nn.functional.relu": lambda x, inplace=False: A.relu(x),
    "nn.functional.linear": lambda x, w, b=None: A.linear(x, w, b),
    "nn.functional.conv1d": td.conv1d,
    "nn.functional.conv2d": td.conv2d,
    "__getitem__": lambda x, idx: x[idx],
    "where": lambda x, condition, y: td.where(condition, x, y),
    "to": _method("to"),
}
NAMES = [
    "prod",
    "amax",
    "amin",
    "max",
    "min",
    "var",
    "std",
    "norm",
    "logsumexp",
    "cumsum",
    "baddbmm",
    "addmv",
    "addbmm",
    "as_strided",
    "narrow_copy",
    "diagonal",
    "unfold",
    "flip",
    "roll",
    "repeat",
    "tril",
    "triu",
    "index_select",
    "gather",
    "scatter",
    "scatter_add",
    "index_put",
    "masked_fill",
    "masked_select",
    "remainder",
    "pow",
    "erf",
    "round",
    "clamp",
    "clamp_max",
    "clamp_min",
    "maximum",
    "minimum",
    "lerp",
    "addcmul",
    "addcdiv",
    "cat",
    "stack",
    "sort",
    "topk",
    "aminmax",
    "split",
    "split_with_sizes",
    "unbind",
    "chunk",
    "sum",
    "mean",
    "add",
    "sub",
    "mul",
    "div",
    "abs",
    "neg",
    "exp",
    "sin",
    "cos",
    "sqrt",
    "log",
    "log1p",
    "expm1",
    "rsqrt",
    "tan",
    "tanh",
    "sigmoid",
    "floor",
    "sign",
    "permute",
    "where",
    "softmax",
    "log_softmax",
    "mm",
    "bmm",
    "addmm",
    "dot",
    "mv",
    "matmul",
    "t",
    "transpose",
    "unsqueeze",
    "squeeze",
    "select",
    "expand",
    "view",
    "clone",
    "rsub",
    "narrow",
    "reshape",
    "fill",
    "slice_scatter",
    "select_scatter",
    "diagonal_scatter",
    "as_strided_scatter",
] + list(OURS)
# (name, variant) pairs left out: complex inputs, operators outside the library, and
# as_strided of views of a larger storage (the rebuilt input is a fresh tensor, so storage
# offsets mean something else).
EXCLUDED = {("nn.functional.silu", "complex"), ("norm", "nuc"), ("bmm", "triton_optimized"),
            ("max", "binary"), ("min", "binary"), ("as_strided", "partial_views")}  # fmt: skip
PER_OP = 3  # samples per operator (keeps the file near a minute on a loaded machine)
GRADGRAD_MAX = 12  # gradgradcheck only on samples with at most this many input elements


def _ours(info: Any) -> Callable[..., Any]:
    if info.name in OURS:
        return OURS[info.name]
    fn = getattr(td, info.name, None)
    return fn if fn is not None else _method(info.name)


def _samples() -> list[Any]:
    params = []
    for info in op_db:
        if info.name not in NAMES or (info.name, info.variant_test_name) in EXCLUDED:
            continue
        if not info.supports_autograd:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            samples = list(info.sample_inputs("cpu", torch.float64, requires_grad=True))
        for i, s in enumerate(samples[:PER_OP]):
            label = f"{info.name}.{info.variant_test_name or 'default'}-{i}"
            params.append(pytest.param(info, s, i, id=label))
    return params


SAMPLES = _samples()


def _run(info: Any, s: Any) -> Any:
    return run(info, s, _ours(info), "forward")


def _close(ours: Any, theirs: Any, tol: float = 1e-8) -> None:
    assert (ours is None) == (theirs is None), (ours, theirs)
    if ours is not None:
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(
            np.asarray(ours.detach()._data), theirs.detach().numpy(), rtol=tol, atol=tol
        )


@pytest.mark.parametrize(("info", "s", "i"), SAMPLES)
def test_gradients_match_torch(info: Any, s: Any, i: int) -> None:
    expected, got, leaves = _run(info, s)
    pairs = _differentiable(expected, got)
    if not pairs or not leaves.torch:
        assert not any(getattr(g, "requires_grad", False) for g in _flat(got))
        return
    rng = np.random.default_rng(i)
    seeds = [rng.uniform(-1, 1, tuple(e.shape)) for e, _ in pairs]
    tg = torch.autograd.grad(
        [e for e, _ in pairs], leaves.torch, [torch.tensor(x) for x in seeds], allow_unused=True
    )
    dg = grad([g for _, g in pairs], leaves.ours, [td.tensor(x) for x in seeds],
              allow_unused=True)  # fmt: skip
    for ours, theirs in zip(dg, tg, strict=True):
        _close(ours, theirs)


@pytest.mark.parametrize(("info", "s", "i"), SAMPLES)
def test_second_derivatives_match_torch(info: Any, s: Any, i: int) -> None:
    if not info.supports_gradgrad:
        pytest.xfail(f"torch has no second derivative for {info.name}")
    expected, got, leaves = _run(info, s)
    pairs = _differentiable(expected, got)
    if not pairs or not leaves.torch:
        return
    t_total = sum((e * e.sin()).sum() for e, _ in pairs)
    d_total = sum((g * g.sin()).sum() for _, g in pairs)
    tg = torch.autograd.grad(t_total, leaves.torch, create_graph=True, allow_unused=True)
    dg = grad(d_total, leaves.ours, create_graph=True, allow_unused=True)
    t_sq = [(g * g).sum() for g in tg if g is not None and g.requires_grad]
    d_sq = [(g * g).sum() for g in dg if g is not None and g.requires_grad]
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


FIRST = smallest(SAMPLES)
# Operators whose torch formula itself fails torch.autograd.gradcheck (we match torch).
TORCH_FAILS_GRADCHECK = {
    "as_strided_scatter": "torch's as_strided_scatter_backward keeps the scattered slice "
    "(torch.autograd.gradcheck fails the same way)",
}


@pytest.mark.parametrize(("info", "s", "i"), FIRST)
def test_gradcheck(info: Any, s: Any, i: int) -> None:
    if info.name in TORCH_FAILS_GRADCHECK:
        pytest.xfail(TORCH_FAILS_GRADCHECK[info.name])
    _, got, leaves = _run(info, s)
    if not leaves.ours or not any(getattr(g, "requires_grad", False) for g in _flat(got)):
        return
    outputs_of = replay(_ours(info), s)
    assert gradcheck(outputs_of, leaves.ours)
    if info.supports_gradgrad and _size(s) <= GRADGRAD_MAX:
        assert gradgradcheck(outputs_of, leaves.ours)
