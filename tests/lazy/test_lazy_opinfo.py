"""OpInfo-style sweep (like LTC's test_ts_opinfo): torch's OpInfo samples for every operator
the library has, run on 'cpu' and on 'lazy' (then moved back): same values, dtype, shape.

An operator of the library either traces (backend.yaml) or falls back to CPU; both must give
the eager result. Samples the CPU run rejects are not run on lazy.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
import torch
from torch.testing._internal.common_methods_invocations import op_db

import tensordispatch as td
from tensordispatch import lazy
from tests.ops.conftest import TD

SAMPLES_PER_OP = 2
UNINITIALIZED = {"empty_like", "new_empty", "empty", "empty_strided", "new_empty_strided"}


def _has(name: str) -> bool:
    return hasattr(td, name) or hasattr(td.Tensor, name)


OPINFOS = [o for o in op_db if _has(o.name) and not o.variant_test_name]


def _to_td(x: Any, device: str) -> Any:
    if isinstance(x, torch.Tensor):
        dtype = getattr(td, str(x.dtype).split(".")[-1])
        t = td.from_numpy(np.array(x.detach().numpy(), copy=True)).to(dtype)
        return t.to(device) if device != "cpu" else t
    if isinstance(x, (list, tuple)):
        return type(x)(_to_td(v, device) for v in x)
    if isinstance(x, torch.dtype):
        return getattr(td, str(x).split(".")[-1])
    return x


def _call(info: Any, sample: Any, device: str) -> Any:
    inp = _to_td(sample.input, device)
    args = _to_td(tuple(sample.args), device)
    kwargs = {k: _to_td(v, device) for k, v in sample.kwargs.items()}
    if hasattr(td, info.name) and info.op is getattr(torch, info.name, None):
        return getattr(td, info.name)(inp, *args, **kwargs)
    return getattr(inp, info.name)(*args, **kwargs)


def _cases() -> list[Any]:
    cases = []
    for info in OPINFOS:
        for dtype in (torch.float32, torch.int64):
            if dtype not in info.dtypes:
                continue
            samples = itertools.islice(info.sample_inputs("cpu", dtype), SAMPLES_PER_OP)
            for i, s in enumerate(samples):
                cases.append(pytest.param(info, s, id=f"{info.name}-{str(dtype)[6:]}-{i}"))
    return cases


def _flat(result: Any) -> list[Any]:
    if isinstance(result, (list, tuple)):
        return [t for r in result for t in _flat(r)]
    return [result]


@pytest.mark.parametrize(("info", "sample"), _cases())
def test_lazy_matches_cpu(info: Any, sample: Any) -> None:
    try:
        expected = _flat(_call(info, sample, "cpu"))
    except Exception:  # noqa: BLE001 - the CPU run defines which samples are valid
        return
    got = _flat(_call(info, sample, "lazy"))
    lazy.mark_step()
    assert len(got) == len(expected)
    for e, g in zip(expected, got, strict=True):
        if not isinstance(e, TD.Tensor):
            assert e == g
            continue
        back = g.to("cpu")
        assert back.dtype == e.dtype and tuple(back.shape) == tuple(e.shape)
        if info.name in UNINITIALIZED:
            continue
        np.testing.assert_allclose(
            np.asarray(back.tolist()), np.asarray(e.tolist()), rtol=1e-5, atol=1e-5
        )
