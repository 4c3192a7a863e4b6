"""torch's own OpInfo samples (torch.testing._internal.common_methods_invocations) for the F3
operators that have an OpInfo, run on torch and on tensordispatch on 'cpu' in float32 and
int64: same result type, dtype, shape, strides and values, or the same exception type.

Inputs keep torch's strides (OpInfo makes non-contiguous samples on purpose).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from torch.testing._internal.common_methods_invocations import op_db

import tensordispatch as td
from tests.ops.conftest import assert_same_result

NAMES = {
    "as_strided", "permute", "narrow", "diagonal", "unfold", "split", "split_with_sizes",
    "chunk", "unbind", "flatten", "view_as_real", "view_as_complex", "contiguous", "cat",
    "stack", "flip", "roll", "repeat", "tril", "triu", "index_select", "gather", "scatter",
    "scatter_add", "masked_fill", "masked_select", "nonzero", "sort", "topk", "index_put",
    "narrow_copy", "permute_copy", "unbind_copy", "split_copy", "alias_copy", "detach",
    "expand", "view", "reshape", "squeeze", "unsqueeze", "transpose", "t", "select", "clone",
    "as_strided_copy", "diagonal_copy", "expand_copy", "squeeze_copy", "t_copy",
    "transpose_copy", "unfold_copy", "unsqueeze_copy", "view_copy", "split_with_sizes_copy",
    "__getitem__", "to", "T", "H", "mT", "real", "imag", "as_strided_scatter",
    "diagonal_scatter", "select_scatter", "slice_scatter", "resize_", "zero_",
}  # fmt: skip
DTYPES = (torch.float32, torch.int64, torch.complex64)
OPINFOS = [o for o in op_db if o.name in NAMES]


def _to_td(x: Any) -> Any:
    if isinstance(x, torch.Tensor) and x._base is not None:  # keep the view's storage offset
        return _to_td(x._base).as_strided(tuple(x.shape), x.stride(), x.storage_offset())
    if isinstance(x, torch.Tensor):
        dtype = getattr(td, str(x.dtype).split(".")[-1])
        result = td.empty_strided(tuple(x.shape), x.stride(), dtype=dtype)
        if x.numel():
            result.copy_(td.from_numpy(np.array(x.detach().numpy(), copy=True)))
        return result
    if isinstance(x, (list, tuple)):
        return type(x)(_to_td(v) for v in x)
    if isinstance(x, (torch.dtype, torch.memory_format)):
        return getattr(td, str(x).split(".")[-1])
    if isinstance(x, torch.device):
        return td.device(str(x))
    if isinstance(x, dict):
        return {k: _to_td(v) for k, v in x.items()}
    return x


def _cases(dtypes: tuple[Any, ...] = DTYPES) -> list[Any]:
    torch.manual_seed(0)  # the same samples every run
    cases = []
    for info in OPINFOS:
        for dtype in dtypes:
            if dtype not in info.dtypes:
                continue
            # the generator itself: OpInfo.sample_inputs inspects the call stack per call
            samples = list(info.sample_inputs_func(info, "cpu", dtype, False))
            for i, s in enumerate(samples):
                label = (
                    f"{info.name}{'.' + info.variant_test_name if info.variant_test_name else ''}"
                )
                cases.append(pytest.param(info, s, id=f"{label}-{str(dtype)[6:]}-{i}"))
    return cases


def _call(info: Any, lib: Any, sample: Any, convert: Any) -> Any:
    inp = convert(sample.input)
    args = convert(tuple(sample.args))
    kwargs = {k: convert(v) for k, v in sample.kwargs.items()}
    if lib is torch:
        return info.op(inp, *args, **kwargs)
    if hasattr(td, info.name) and info.op is getattr(torch, info.name, None):
        return getattr(td, info.name)(inp, *args, **kwargs)
    attribute = getattr(inp, info.name)
    if isinstance(attribute, td.Tensor):  # a property (x.T, x.real, ...)
        return attribute
    return attribute(*args, **kwargs)


@pytest.mark.parametrize(("info", "sample"), _cases())
def test_opinfo_sample_matches_torch(info: Any, sample: Any, coverage: Any) -> None:
    label = f"opinfo:{info.name}"
    coverage[label][1] += 1
    try:
        expected = _call(info, torch, sample, lambda x: x)
    except Exception as e:  # noqa: BLE001 - the exception type is what we compare
        with pytest.raises(type(e)):
            _call(info, td, sample, _to_td)
        coverage[label][0] += 1
        return
    got = _call(info, td, sample, _to_td)
    if info.name == "topk":
        # ties may be broken differently: compare values, and that the indices select them
        assert_same_result(expected[0], got[0], where=info.name)
        assert_same_result(expected[1], got[1], values=False, where=info.name)
        dim = sample.args[1] if len(sample.args) > 1 else sample.kwargs.get("dim", -1)
        source = _to_td(sample.input)
        if source.dim():
            assert source.gather(dim, got[1]).tolist() == got[0].tolist()
    else:
        assert_same_result(expected, got, where=info.name)
    coverage[label][0] += 1


def _meta(convert: Any) -> Any:
    def to_meta(x: Any) -> Any:
        if isinstance(x, (list, tuple)):
            return type(x)(to_meta(v) for v in x)
        y = convert(x)
        return y.to("meta") if isinstance(y, (torch.Tensor, td.Tensor)) else y

    return to_meta


@pytest.mark.parametrize(("info", "sample"), _cases((torch.float32,)))
def test_opinfo_sample_on_meta_matches_torch(info: Any, sample: Any, coverage: Any) -> None:
    label = f"opinfo:{info.name}[meta]"
    coverage[label][1] += 1
    try:
        expected = _call(info, torch, sample, _meta(lambda x: x))
    except Exception as e:  # noqa: BLE001 - the exception type is what we compare
        with pytest.raises(type(e)):
            _call(info, td, sample, _meta(_to_td))
        coverage[label][0] += 1
        return
    got = _call(info, td, sample, _meta(_to_td))
    assert_same_result(expected, got, values=False, where=info.name)
    coverage[label][0] += 1
