"""torch's own OpInfo samples for the factories (arange, linspace, empty*, eye, full*, ones*,
zeros*, the random factories, fill) on torch and on tensordispatch, on 'cpu' and 'meta'.

Deterministic factories must agree in dtype, shape, strides and values; ``empty*`` and the
random ones in dtype, shape and strides only (random streams differ from torch's by design:
Note [Random streams differ from torch]). A sample torch rejects must raise the same
exception type in ours. On 'meta', factory samples ask for device='meta' and ``*_like``
samples pass a meta tensor.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch
from torch.testing._internal.common_methods_invocations import op_db
from torch.testing._internal.opinfo.core import SampleInput

import tensordispatch as td
from tests.ops.conftest import assert_same_result

VALUES = {
    "arange", "linspace", "eye", "full", "full_like", "ones", "ones_like", "zeros",
    "zeros_like", "fill",
}  # fmt: skip
METADATA_ONLY = {"empty", "empty_like", "empty_strided", "randn", "randn_like", "rand_like",
                 "randint"}  # fmt: skip
DTYPES = (torch.float32, torch.int64, torch.bool, torch.complex64)


def _convert(x: Any, device: str) -> Any:
    if isinstance(x, torch.Tensor):
        dtype = getattr(td, str(x.dtype).split(".")[-1])
        out = td.empty_strided(tuple(x.shape), x.stride(), dtype=dtype, device=device)
        if device == "cpu" and x.numel():
            out.copy_(td.from_numpy(np.array(x.detach().numpy(), copy=True)))
        return out
    if isinstance(x, (torch.dtype, torch.memory_format)):
        return getattr(td, str(x).split(".")[-1])
    if isinstance(x, torch.Size):
        return tuple(x)
    if isinstance(x, (list, tuple)):
        return type(x)(_convert(v, device) for v in x)
    if isinstance(x, dict):
        return {k: _convert(v, device) for k, v in x.items()}
    if isinstance(x, (str, torch.device)) and str(x) == "cpu":
        return device
    return x


def _to_meta(x: Any) -> Any:
    if isinstance(x, torch.Tensor):
        return x.to("meta")
    if isinstance(x, (list, tuple)) and not isinstance(x, torch.Size):
        return type(x)(_to_meta(v) for v in x)
    if isinstance(x, dict):
        return {k: _to_meta(v) for k, v in x.items()}
    if isinstance(x, (str, torch.device)) and str(x) == "cpu":
        return "meta"
    return x


def _cases() -> list[Any]:
    torch.manual_seed(0)  # the same samples every run
    cases = []
    for info in op_db:
        if info.name not in VALUES | METADATA_ONLY:
            continue
        for dtype in DTYPES:
            if dtype not in info.supported_dtypes("cpu"):
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                samples = list(info.sample_inputs_func(info, "cpu", dtype, False))
            label = info.name + (f".{info.variant_test_name}" if info.variant_test_name else "")
            for i, s in enumerate(samples):
                cases.append(pytest.param(info, s, id=f"{label}-{str(dtype)[6:]}-{i}"))
    return cases


def _run(fn: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn()
        except Exception as e:  # noqa: BLE001 - the exception is the result compared
            return e


def _check(info: Any, s: Any, device: str, coverage: Any) -> None:
    label = f"opinfo {info.name}" + ("[meta]" if device == "meta" else "")
    coverage[label][1] += 1
    conv = (lambda x: x) if device == "cpu" else _to_meta
    if device == "meta" and not isinstance(s.input, torch.Tensor) and "device" not in s.kwargs:
        s = SampleInput(s.input, args=s.args, kwargs={**s.kwargs, "device": "cpu"})
    expected = _run(lambda: info.op(conv(s.input), *conv(s.args), **conv(s.kwargs)))
    ours = getattr(td, info.name)
    got = _run(
        lambda: ours(
            _convert(s.input, device), *_convert(s.args, device), **_convert(s.kwargs, device)
        )
    )
    if isinstance(expected, BaseException):
        assert isinstance(got, type(expected)), f"torch raised {expected!r}; we gave {got!r}"
    else:
        if isinstance(got, BaseException):
            raise got
        values = device == "cpu" and info.name in VALUES
        assert_same_result(expected, got, values=values, where=label)
        assert got.device.type == device
        assert got.requires_grad == expected.requires_grad
    coverage[label][0] += 1


CASES = _cases()


@pytest.mark.parametrize(("info", "s"), CASES)
def test_cpu_matches_torch(info: Any, s: Any, coverage: Any) -> None:
    _check(info, s, "cpu", coverage)


@pytest.mark.parametrize(("info", "s"), CASES)
def test_meta_matches_torch(info: Any, s: Any, coverage: Any) -> None:
    _check(info, s, "meta", coverage)
