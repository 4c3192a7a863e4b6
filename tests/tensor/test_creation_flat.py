"""tensor() of a flat list of Python numbers (Note [Flat lists of Python numbers] in
tensor/creation.py): dtype, values and errors as torch's, whichever path answers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import torch

import tensordispatch as td
from tensordispatch.tensor import creation

DATA: list[Any] = [
    [1.0, 2, 3],
    [1, 2, 3],
    (1, 2.5),
    [True, False],
    [True, 2],
    [True, 1.5],
    [1e300, -1e300],
    [-3.5e38, 1.0],
    [3.4e38],
    [float("nan"), 1.0],
    [float("inf")],
    [2**62, -(2**62)],
    [2**60 + 1, 0.5],
    [-0.0],
    [7],
    [0.1, 1 / 3, 1e-40, 3.4028235e38],
]


def _same(got: Any, expected: torch.Tensor) -> None:
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(expected.shape)
    assert str(got.tolist()) == str(expected.tolist())  # nan, -0.0 and inf spelled alike


@pytest.mark.parametrize("data", DATA, ids=str)
def test_flat_numbers_match_torch(data: Any) -> None:
    _same(td.tensor(data), torch.tensor(data))


@pytest.fixture
def float64_default() -> Iterator[None]:
    td.set_default_dtype(td.float64)
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        td.set_default_dtype(td.float32)
        torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize("data", DATA, ids=str)
def test_flat_numbers_under_float64_default(float64_default: None, data: Any) -> None:
    _same(td.tensor(data), torch.tensor(data))


@pytest.mark.parametrize("data", [[2**63], [1, 2**64], [-(2**63) - 1]], ids=str)
def test_ints_beyond_int64_raise_as_torch(data: Any) -> None:
    with pytest.raises(ValueError):
        torch.tensor(data)
    with pytest.raises(ValueError) as info:
        td.tensor(data)
    assert str(info.value) == (
        "tensor(): overflow when unpacking a Python int: it does not fit in int64; pass "
        "values between -2**63 and 2**63 - 1"
    )


@pytest.mark.parametrize(
    "data",
    [[], [[1.0]], [1, "a"], [1 + 2j], [td.tensor(1.0)], [torch.tensor(1.0).numpy()[()]]],
    ids=["empty", "nested", "str", "complex", "tensor item", "numpy scalar"],
)
def test_other_data_is_left_to_the_general_path(data: Any) -> None:
    assert creation._flat_numbers(data) is None


def test_the_result_is_a_fresh_contiguous_leaf() -> None:
    data = [1.0, 2.0]
    t = td.tensor(data, requires_grad=True)
    data[0] = 9.0
    assert t.tolist() == [1.0, 2.0] and t.requires_grad and t.is_leaf
    assert t.stride() == (1,) and t._version == 0
