"""OpInfo-style sweep (like LTC's test_ts_opinfo): torch's OpInfo samples for every operator
the library has, run on 'cpu' and on 'lazy' (then moved back): same values, dtype, shape.

An operator of the library either traces (backend.yaml) or falls back to CPU; both must give
the eager result. Samples the CPU run rejects are not run on lazy.

Collection stays cheap: the cases are named here (operator : dtypes, f = float32, i = int64)
and torch's op_db is imported and sampled inside the tests, once per session;
test_case_list_is_complete checks the list against op_db.
"""

from __future__ import annotations

import functools
import itertools
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
CASES = [
    "abs:fi", "add:fi", "item:fi", "arange:fi", "clamp_max:fi", "clamp_min:fi", "mul:fi",
    "sub:fi", "addmm:fi", "addmv:fi", "addbmm:fi", "baddbmm:fi", "dot:fi", "bmm:fi", "mv:fi",
    "addcmul:fi", "addcdiv:f", "bitwise_not:i", "ceil:fi", "chunk:fi", "clone:fi",
    "contiguous:fi", "clamp:fi", "view_as_complex:f", "cos:fi", "cumsum:fi", "exp:fi",
    "expand:fi", "expand_copy:fi", "diagonal:fi", "diagonal_copy:fi", "diagonal_scatter:fi",
    "alias_copy:fi", "eq:fi", "remainder:fi", "floor:fi", "flip:fi", "floor_divide:fi",
    "log1p:fi", "ge:fi", "gt:fi", "le:fi", "linspace:fi", "log:fi", "logical_not:fi", "lt:fi",
    "masked_fill:fi", "masked_select:fi", "matmul:fi", "maximum:fi", "minimum:fi",
    "logical_and:fi", "logical_or:fi", "logical_xor:fi", "bitwise_and:i", "bitwise_or:i",
    "bitwise_xor:i", "softmax:f", "aminmax:fi", "as_strided:fi", "as_strided_copy:fi",
    "as_strided_scatter:fi", "native_layer_norm:f", "to:fi", "topk:fi", "mm:fi", "ne:fi",
    "narrow:fi", "narrow_copy:fi", "view_copy:fi", "neg:fi", "outer:fi", "permute:fi",
    "permute_copy:fi", "pow:fi", "real:fi", "roll:fi", "round:fi", "sin:fi", "sign:fi",
    "split:fi", "split_with_sizes:fi", "split_with_sizes_copy:fi", "__radd__:fi", "__rmul__:fi",
    "__rand__:i", "__ror__:i", "__rxor__:i", "__rmod__:fi", "__rpow__:fi", "__rsub__:fi",
    "rsub:fi", "select:fi", "select_scatter:fi", "slice_scatter:fi", "tan:fi", "tanh:fi",
    "expm1:fi", "rsqrt:fi", "sqrt:fi", "lerp:f", "reshape:fi", "view:fi", "flatten:fi",
    "gather:fi", "index_select:fi", "__getitem__:fi", "index_put:fi", "sort:fi", "scatter:fi",
    "bool:fi", "double:fi", "float:fi", "half:fi", "int:fi", "long:fi", "short:fi",
    "cdouble:fi", "cfloat:fi", "empty_like:fi", "zeros_like:fi", "ones_like:fi", "randn:f",
    "randn_like:f", "rand_like:f", "randint:fi", "full_like:fi", "ones:fi", "zeros:fi",
    "full:fi", "empty_strided:fi", "empty:fi", "eye:fi", "scatter_add:fi", "stack:fi", "cat:fi",
    "unbind:fi", "unbind_copy:fi", "unfold:fi", "unfold_copy:fi", "repeat:fi", "squeeze:fi",
    "squeeze_copy:fi", "fill:fi", "resize_:fi", "unsqueeze:fi", "unsqueeze_copy:fi", "zero_:fi",
    "logsumexp:fi", "transpose:fi", "transpose_copy:fi", "T:fi", "H:fi", "mT:fi", "tril:fi",
    "triu:fi", "sigmoid:fi", "erf:fi", "log_softmax:f", "where:fi", "nonzero:fi", "norm:f",
    "t:fi", "t_copy:fi", "all:fi", "any:fi", "amax:fi", "amin:fi", "argmax:fi", "argmin:fi",
    "mean:f", "std:f", "var:f", "prod:fi", "sum:fi",
]  # fmt: skip


def _has(name: str) -> bool:
    return hasattr(td, name) or hasattr(td.Tensor, name)


@functools.cache
def _opinfos() -> dict[str, Any]:
    from torch.testing._internal.common_methods_invocations import op_db

    return {o.name: o for o in op_db if _has(o.name) and not o.variant_test_name}


def _params() -> list[Any]:
    params = []
    for case in CASES:
        name, codes = case.split(":")
        params += [pytest.param(name, code, id=f"{name}-{str(DTYPES[code])[6:]}") for code in codes]
    return params


def test_case_list_is_complete() -> None:
    expected = {
        f"{name}:{''.join(c for c, d in DTYPES.items() if d in info.dtypes)}"
        for name, info in _opinfos().items()
    }
    assert {c for c in expected if not c.endswith(":")} == set(CASES)


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
