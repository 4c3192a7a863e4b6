"""out= of the list-returning view copies against torch 2.13: split_copy copies into each
output with copy_ (broadcast, cast, never resized); split_with_sizes_copy and unbind_copy resize
(with the deprecation warning) and require the piece's dtype. Values, strides, messages."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import torch

from tests.ops.conftest import TD, assert_same_result

OUTS = {
    "exact": lambda lib: [lib.empty(2, 2), lib.empty(2, 2), lib.empty(2, 2)],
    "empty": lambda lib: [lib.empty(0), lib.empty(0), lib.empty(0)],
    "wrong shape": lambda lib: [lib.empty(2, 2), lib.empty(5), lib.empty(2, 2)],
    "broadcast": lambda lib: [lib.empty(3, 2, 2), lib.empty(2, 2), lib.empty(2, 2)],
    "other dtype": lambda lib: [lib.empty(2, 2, dtype=lib.int64), lib.empty(2, 2), lib.empty(2, 2)],
    "transposed": lambda lib: [lib.empty(2, 2).t(), lib.empty(2, 2), lib.empty(2, 2)],
    "too few": lambda lib: [lib.empty(2, 2), lib.empty(2, 2)],
    "too many": lambda lib: [lib.empty(2, 2)] * 4,
}
CALLS = {
    "split_copy.Tensor_out": lambda ops, x, out: ops.aten.split_copy.Tensor_out(x, 2, 0, out=out),
    "split_with_sizes_copy.out": lambda ops, x, out: ops.aten.split_with_sizes_copy.out(
        x, [2, 2, 2], 0, out=out
    ),
    "unbind_copy.int_out": lambda ops, x, out: ops.aten.unbind_copy.int_out(
        x.reshape(3, 2, 2), 0, out=out
    ),
}


def _run(lib: Any, call: str, outs: str) -> tuple[Any, list[str]]:
    ops = torch.ops if lib is torch else TD.ops
    x = lib.arange(12.0).reshape(6, 2)
    out = OUTS[outs](lib)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            CALLS[call](ops, x, out)
            result: Any = out
        except Exception as e:  # noqa: BLE001 - the exception is the result compared
            result = e
    return result, sorted({str(w.message)[:40] for w in caught})


@pytest.mark.parametrize("outs", list(OUTS))
@pytest.mark.parametrize("call", list(CALLS))
def test_list_copy_out_matches_torch(call: str, outs: str) -> None:
    (expected, torch_warnings), (got, our_warnings) = _run(torch, call, outs), _run(TD, call, outs)
    # torch's resize warning in these two kernels reaches only C++ stderr, not Python's warnings
    assert set(torch_warnings) <= set(our_warnings)
    if call == "split_copy.Tensor_out":
        assert our_warnings == torch_warnings
    if isinstance(expected, Exception):
        assert type(got) is type(expected), f"torch raised {expected!r}, we {got!r}"
        assert str(got) == str(expected)
        return
    assert not isinstance(got, Exception), f"torch returned, we raised {got!r}"
    assert_same_result(expected, got, where=f"{call} {outs}")


def test_split_copy_out_count_message() -> None:
    out = [TD.empty(2), TD.empty(2)]
    with pytest.raises(RuntimeError) as info:
        TD.ops.aten.split_copy.Tensor_out(TD.arange(6.0), 2, 0, out=out)
    assert (
        str(info.value) == "split_copy_Tensor_out() expected an out= argument of size 3, got size 2"
    )


def test_unbind_copy_out_dtype_message() -> None:
    out = [TD.empty(2), TD.empty(2, dtype=TD.int32)]
    with pytest.raises(RuntimeError) as info:
        TD.ops.aten.unbind_copy.int_out(TD.zeros(2, 2), 0, out=out)
    assert str(info.value) == "Expected out tensor to have dtype float, but got int instead"
