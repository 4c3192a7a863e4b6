"""full / fill_ with a Python number outside the dtype's range: torch's RuntimeError
(c10's checked conversion), the cases torch wraps or allows, against torch 2.13."""

from __future__ import annotations

import math

import pytest
import torch

import tensordispatch as td

DTYPES = [
    "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
    "complex64", "complex128",
]  # fmt: skip
VALUES = [
    300, -129, 255, 256, -1, -255, -256, 2**31, 2**63, 2**64 - 1, 5, True, 1e300, 300.5,
    127.9, -128.9, 3.7, -3.7, 1e20, 9.3e18, 70000, 65504.5, 1e39, math.nan, math.inf,
    -math.inf, 1j, 1 + 0j, 1 + 1j,
]  # fmt: skip


def _outcome(make: object) -> object:
    try:
        values = make()  # type: ignore[operator]
    except (RuntimeError, OverflowError) as error:
        return type(error).__name__, str(error)
    return [("nan" if v != v else v) for v in values.tolist()]


@pytest.mark.parametrize("value", VALUES, ids=repr)
@pytest.mark.parametrize("dtype", DTYPES)
def test_full_and_fill_match_torch(dtype: str, value: object) -> None:
    ours_t, theirs_t = getattr(td, dtype), getattr(torch, dtype)
    theirs = _outcome(lambda: torch.full((2,), value, dtype=theirs_t))
    assert _outcome(lambda: td.full((2,), value, dtype=ours_t)) == theirs
    theirs = _outcome(lambda: torch.zeros(2, dtype=theirs_t).fill_(value))
    assert _outcome(lambda: td.zeros(2, dtype=ours_t).fill_(value)) == theirs


def test_full_int8_overflow_message() -> None:
    with pytest.raises(RuntimeError) as ours:
        td.full((2,), 300, dtype=td.int8)
    assert str(ours.value) == "value cannot be converted to type int8_t without overflow"


def test_fill_float16_overflow_message() -> None:
    with pytest.raises(RuntimeError) as ours:
        td.zeros(2, dtype=td.float16).fill_(70000)
    assert str(ours.value) == "value cannot be converted to type c10::Half without overflow"


def test_fill_complex_into_real_message() -> None:
    with pytest.raises(RuntimeError) as ours:
        td.zeros(2).fill_(1 + 1j)
    assert str(ours.value) == "value cannot be converted to type float without overflow"


def test_uint8_fill_wraps_negative_values() -> None:
    assert td.zeros(2, dtype=td.uint8).fill_(-1).tolist() == [255, 255]


def test_python_int_beyond_uint64_is_overflow_error() -> None:
    with pytest.raises(OverflowError) as ours:
        td.zeros(2, dtype=td.int64).fill_(2**64)
    assert str(ours.value) == "int too big to convert"
    with pytest.raises(OverflowError) as ours:
        td.zeros(2, dtype=td.int64).fill_(-(2**63) - 1)
    assert str(ours.value) == "can't convert negative int to unsigned"


def test_meta_full_does_not_check() -> None:
    assert td.full((2,), 300, dtype=td.int8, device="meta").shape == (2,)
