"""OpInfo-style sweep (like LTC's test_ts_opinfo): torch's OpInfo samples for every operator
the library has, run on 'cpu' and on 'lazy' (then moved back): same values, dtype, shape.

An operator of the library either traces (backend.yaml) or falls back to CPU; both must give
the eager result. Samples the CPU run rejects are not run on lazy.

Collection stays cheap: torch 2.13's OpInfo names and dtypes are listed in opinfo_names.txt
(checked against op_db by a test), the cases are those the library has, and op_db is
imported and sampled inside the tests, once per session.
"""

from __future__ import annotations

import functools
import itertools
import pathlib
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch import lazy
from tests.ops.conftest import TD

SAMPLES_PER_OP = 2
UNINITIALIZED = {"empty_like", "new_empty", "empty", "empty_strided", "new_empty_strided"}
DTYPES = {"f": torch.float32, "i": torch.int64}
NAMES_FILE = pathlib.Path(__file__).with_name("opinfo_names.txt")


def _has(name: str) -> bool:
    return hasattr(td, name) or hasattr(td.Tensor, name)


def _all_cases() -> list[str]:
    lines = NAMES_FILE.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line and not line.startswith("#")]


CASES = [case for case in _all_cases() if _has(case.split(":")[0])]


@functools.cache
def _opinfos() -> dict[str, Any]:
    from torch.testing._internal.common_methods_invocations import op_db

    return {o.name: o for o in op_db if not o.variant_test_name}


def _params() -> list[Any]:
    params = []
    for case in CASES:
        name, codes = case.split(":")
        params += [pytest.param(name, code, id=f"{name}-{str(DTYPES[code])[6:]}") for code in codes]
    return params


def test_opinfo_names_file_is_current() -> None:
    from torch.testing._internal.common_methods_invocations import op_db

    expected = set()
    for info in op_db:
        codes = "".join(c for c, d in DTYPES.items() if d in info.dtypes)
        if codes and not info.variant_test_name:
            expected.add(f"{info.name}:{codes}")
    assert set(_all_cases()) == expected


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


def _flat(result: Any) -> list[Any]:
    if isinstance(result, (list, tuple)):
        return [t for r in result for t in _flat(r)]
    return [result]


def _check(info: Any, sample: Any) -> None:
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


@pytest.mark.parametrize(("name", "code"), _params())
def test_lazy_matches_cpu(name: str, code: str) -> None:
    info = _opinfos()[name]
    samples = itertools.islice(info.sample_inputs("cpu", DTYPES[code]), SAMPLES_PER_OP)
    for sample in samples:
        _check(info, sample)
