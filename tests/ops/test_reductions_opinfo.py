"""torch's own OpInfo samples (torch.testing._internal.common_methods_invocations) for the F2
operators, run on torch and on tensordispatch, on 'cpu' (values) and 'meta' (metadata).

Inputs are rebuilt with the same shape, strides and dtype; nn.functional.* samples go through
small adapters that call the aten operator torch.nn.functional would reach. Each sample
must give the same result or the same exception type in both libraries.
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
from tests.ops import nn_adapters
from tests.ops.conftest import assert_same_result

A = td.ops.aten


OPS: dict[str, Callable[..., Any]] = {
    "sum": td.sum, "mean": td.mean, "prod": td.prod, "amax": td.amax, "amin": td.amin,
    "max": td.max, "min": td.min, "argmax": td.argmax, "argmin": td.argmin, "var": td.var,
    "std": td.std, "logsumexp": td.logsumexp, "softmax": td.softmax,
    "log_softmax": td.log_softmax, "cumsum": td.cumsum, "all": td.all, "any": td.any,
    "outer": td.outer, "baddbmm": td.baddbmm, "addmv": td.addmv, "addbmm": td.addbmm,
    "mm": td.mm, "bmm": td.bmm, "matmul": td.matmul, "dot": td.dot, "mv": td.mv,
    "nn.functional.linear": A.linear, "nn.functional.layer_norm": nn_adapters.layer_norm,
    "nn.functional.nll_loss": nn_adapters.nll_loss,
    "nn.functional.cross_entropy": nn_adapters.cross_entropy,
    "nn.functional.embedding": nn_adapters.embedding, "nn.functional.one_hot": A.one_hot,
    "nn.functional.conv2d": td.conv2d, "norm": td.norm, "aminmax": td.aminmax,
    "addmm": td.addmm, "native_layer_norm": td.native_layer_norm,
}  # fmt: skip
VARIANTS = {"": None, "reduction_with_dim": None, "reduction_no_dim": None, "unbiased": None,
            "with_dtype": None, "fro": None, "inf": None}  # fmt: skip
DTYPES = (torch.float32, torch.int64, torch.complex64)
# int64 samples only where integer rules differ (promotion to int64, bool/uint8 results)
# complex64 samples for the ops whose complex rules differ (sums, products, matrix products)
COMPLEX_OPS = {"sum", "mean", "prod", "cumsum", "mm", "bmm", "matmul", "dot", "mv", "outer",
               "addmm", "addmv", "baddbmm", "addbmm", "var", "std", "norm", "logsumexp",
               "softmax", "log_softmax", "all", "any", "nn.functional.linear"}  # fmt: skip
INT_OPS = {"sum", "prod", "cumsum", "all", "any", "argmax", "max", "mean", "aminmax", "addmm"}


def _convert(x: Any, device: str) -> Any:
    if isinstance(x, torch.Tensor):
        dtype = getattr(td, str(x.dtype).split(".")[-1])
        out = td.empty_strided(list(x.shape), list(x.stride()), dtype=dtype, device=device)
        if device == "cpu":
            values = x.detach().resolve_conj().resolve_neg()  # OpInfo samples conj views
            out.copy_(td.from_numpy(np.array(values.numpy(), order="C")))
        return out
    if isinstance(x, torch.dtype):
        return getattr(td, str(x).split(".")[-1])
    if isinstance(x, (list, tuple)):
        return type(x)(_convert(v, device) for v in x)
    if isinstance(x, dict):
        return {k: _convert(v, device) for k, v in x.items()}
    return x


def _samples() -> list[Any]:
    torch.manual_seed(0)  # the same samples every run
    params = []
    for info in op_db:
        if info.name not in OPS or info.variant_test_name not in VARIANTS:
            continue
        for dtype in DTYPES:
            if dtype not in info.supported_dtypes("cpu"):
                continue
            if dtype is torch.int64 and info.name not in INT_OPS:
                continue
            if dtype is torch.complex64 and info.name not in COMPLEX_OPS:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                # the generator itself: OpInfo.sample_inputs inspects the stack per call
                samples = list(info.sample_inputs_func(info, "cpu", dtype, False))
            for i, s in enumerate(samples):
                label = f"{info.name}.{info.variant_test_name or 'default'}-{dtype}-{i}"
                params.append(pytest.param(info, s, id=label))
    return params


SAMPLES = _samples()


def _run(fn: Callable[[], Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn()
        except Exception as e:  # noqa: BLE001 - the exception is the result compared
            return e


def _check(info: Any, s: Any, device: str, coverage: Any) -> None:
    label = f"opinfo {info.name}" + ("[meta]" if device == "meta" else "")
    coverage[label][1] += 1
    t_in = s.input if device == "cpu" else _to_meta(s.input)
    t_args = s.args if device == "cpu" else _to_meta(s.args)
    t_kwargs = s.kwargs if device == "cpu" else _to_meta(s.kwargs)
    expected = _run(lambda: info.op(t_in, *t_args, **t_kwargs))
    ours = OPS[info.name]
    got = _run(lambda: ours(_convert(s.input, device), *_convert(s.args, device),
                            **_convert(s.kwargs, device)))  # fmt: skip
    if isinstance(expected, BaseException):
        if device == "meta" and not isinstance(got, BaseException):
            coverage[label][0] += 1  # torch's meta path lacks some CPU checks
            return
        assert isinstance(got, type(expected)), f"torch raised {expected!r}; we gave {got!r}"
    else:
        if isinstance(got, BaseException):
            raise got
        assert_same_result(expected, got, values=False, where=label)
        if device == "cpu":
            _assert_close(expected, got, label)
    coverage[label][0] += 1


def _assert_close(expected: Any, got: Any, label: str) -> None:
    """Values within float32 accumulation-order error (OpInfo tests use per-op tolerances;
    NumPy sums in another order than ATen), exact for integers and bool."""
    if isinstance(expected, (tuple, list)):
        for e, g in zip(expected, got):
            _assert_close(e, g, label)
        return
    if not isinstance(expected, torch.Tensor):
        return
    exact = not (expected.dtype.is_floating_point or expected.dtype.is_complex)
    single = expected.dtype in (torch.float32, torch.complex64)
    tol = 0 if exact else 1e-4 if single else 1e-7
    np.testing.assert_allclose(
        got.numpy(),
        expected.resolve_conj().numpy(),
        rtol=tol,
        atol=tol,
        equal_nan=True,
        err_msg=label,
    )


def _to_meta(x: Any) -> Any:
    if isinstance(x, torch.Tensor):
        return x.to("meta")
    if isinstance(x, (list, tuple)):
        return type(x)(_to_meta(v) for v in x)
    if isinstance(x, dict):
        return {k: _to_meta(v) for k, v in x.items()}
    return x


@pytest.mark.parametrize(("info", "s"), SAMPLES)
def test_cpu_matches_torch(info: Any, s: Any, coverage: Any) -> None:
    _check(info, s, "cpu", coverage)


@pytest.mark.parametrize(("info", "s"), SAMPLES)
def test_meta_matches_torch(info: Any, s: Any, coverage: Any) -> None:
    _check(info, s, "meta", coverage)
