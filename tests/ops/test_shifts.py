"""Shifts (bitwise_left_shift / bitwise_right_shift, aten::__lshift__ / __rshift__ and their
in-place forms, Python's << >> <<= >>=) against torch: values for in-range and
out-of-range counts, promotion, refused dtypes, meta metadata, out= and aliasing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import tensordispatch as td
from tests.ops.conftest import check_sample

SAMPLES: dict[str, Callable[[Any, str], Any]] = {
    "x << n": lambda m, d: m.tensor([1, -8, 3, 100], device=d) << 1,
    "x >> n": lambda m, d: m.tensor([1, -8, 3, 100], device=d) >> 1,
    "n << x": lambda m, d: 1 << m.tensor([0, 2, 5], device=d),
    "n >> x": lambda m, d: 100 >> m.tensor([0, 2, 5], device=d),
    "counts out of range": lambda m, d: (
        m.tensor([1, -8, 3, 100], device=d) << m.tensor([0, -1, 63, 64], device=d)
    ),
    "right, counts out of range": lambda m, d: (
        m.tensor([1, -8, 3, 100], device=d) >> m.tensor([0, -1, 63, 64], device=d)
    ),
    "int8": lambda m, d: (
        m.tensor([1, -128], dtype=m.int8, device=d) >> m.tensor([7, 9], dtype=m.int8, device=d)
    ),
    "uint8": lambda m, d: m.tensor([200], dtype=m.uint8, device=d) >> 8,
    "mixed dtypes": lambda m, d: m.tensor([3], device=d) << m.tensor([2], dtype=m.uint8, device=d),
    "bool and number": lambda m, d: m.tensor([True], device=d) << 1,
    "float refused": lambda m, d: m.tensor([1.5], device=d) << 1,
    "bool refused": lambda m, d: m.tensor([True], device=d) << m.tensor([True], device=d),
    "function Scalar_Tensor": lambda m, d: m.bitwise_right_shift(64, m.tensor([1, 3], device=d)),
    "method": lambda m, d: m.tensor([5, 6], device=d).bitwise_left_shift(2),
    "out=": lambda m, d: m.bitwise_left_shift(
        m.tensor([1, 2], device=d), 3, out=m.empty(2, dtype=m.int64, device=d)
    ),
}


@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize("name", SAMPLES)
def test_shift_matches_torch(name: str, device: str, coverage: Any) -> None:
    check_sample("shifts", SAMPLES[name], device, device == "cpu", coverage)


META_REFUSALS: dict[str, Callable[[Any], Any]] = {
    "bool self": lambda m: m.tensor([True], device="meta") << 1,
    "float self, in place": lambda m: m.tensor([1.5], device="meta").__irshift__(1),
    "float shift tensor": lambda m: m.tensor([1], device="meta") >> m.tensor([1.0], device="meta"),
    "float shift number": lambda m: m.tensor([1], device="meta") << 1.5,
}


def _message(fn: Callable[[Any], Any], module: Any) -> str:
    with pytest.raises(RuntimeError) as info:
        fn(module)
    return str(info.value).replace("torch.", "tensordispatch.")


@pytest.mark.parametrize("name", META_REFUSALS)
def test_meta_shift_refusal_message_is_torchs(name: str) -> None:
    # torch's meta path (shift_dtype_check) words these; ours must read the same
    assert _message(META_REFUSALS[name], td) == _message(META_REFUSALS[name], torch)


def test_meta_shift_refusal_messages_golden() -> None:
    got = [_message(fn, td) for fn in META_REFUSALS.values()]
    assert got == [
        "lshift: Expected input tensor to have an integral dtype. Got tensordispatch.bool",
        "rshift: Expected input tensor to have an integral dtype. Got tensordispatch.float32",
        "rshift: Expected shift value to have an integral dtype. Got tensordispatch.float32",
        "lshift: Expected shift value to be an int. Got 1.5",
    ]


def test_meta_bitwise_shift_function_takes_bool() -> None:
    # only the dunders carry the meta dtype check: bitwise_left_shift(bool, bool) passes
    got = td.bitwise_left_shift(td.tensor([True], device="meta"), td.tensor([True], device="meta"))
    expected = torch.bitwise_left_shift(
        torch.tensor([True], device="meta"), torch.tensor([True], device="meta")
    )
    assert str(got.dtype).split(".")[1] == str(expected.dtype).split(".")[1] == "bool"


def test_in_place_shift_is_the_same_tensor() -> None:
    x = td.tensor([1, 2])
    y = x
    x <<= 2
    assert x is y and x.tolist() == [4, 8]
    x >>= td.tensor([1])
    assert x is y and x.tolist() == [2, 4]
    t = torch.tensor([1, 2])
    t <<= 2
    t >>= torch.tensor([1])
    assert t.tolist() == x.tolist()


def test_aten_dunder_operator_runs() -> None:
    from tensordispatch.backends.aten import op

    got = op("__lshift__.Scalar")(td.tensor([3, -1]), 2)
    expected = torch.ops.aten.__lshift__.Scalar(torch.tensor([3, -1]), 2)
    assert got.tolist() == expected.tolist() and str(got.dtype) == "tensordispatch.int64"
