"""Broadcast operands in the fused functional kernels (Note [Broadcast operands in the fused
kernels] in backends/cpu/fresh.py): torch's result (dtype, shape, strides, values) for
operands of different shapes, and torch's error when they do not broadcast."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import tensordispatch as td
from tensordispatch.backends.cpu import fresh

SHAPES = [
    ((4, 4), (4,)),
    ((4,), (4, 4)),
    ((4, 1), (1, 4)),
    ((1, 4), (4, 1)),
    ((2, 1, 3), (1, 4, 1)),
    ((3,), (2, 3)),
    ((2, 1), (2, 3)),
    ((2, 3), ()),
    ((0, 3), (3,)),
    ((1,), (5,)),
]
DTYPES = ["float32", "float64", "int64", "int8", "complex64"]
OPS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "add": lambda m, a, b: m.add(a, b),
    "sub": lambda m, a, b: m.sub(a, b),
    "mul": lambda m, a, b: m.mul(a, b),
    "div": lambda m, a, b: m.div(a, b),
}


def _operands(lib: Any, shapes: tuple[Any, Any], dtype: str) -> tuple[Any, Any]:
    a_shape, b_shape = shapes
    dt = getattr(lib, dtype)
    a = lib.arange(1, 1 + _numel(a_shape)).reshape(a_shape).to(dt)
    b = (lib.arange(_numel(b_shape)).reshape(b_shape) % 3 + 1).to(dt)
    return a, b


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_broadcast_matches_torch(op: str, dtype: str, shapes: tuple[Any, Any]) -> None:
    got = OPS[op](td, *_operands(td, shapes, dtype))
    expected = OPS[op](torch, *_operands(torch, shapes, dtype))
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(expected.shape)
    assert got.stride() == expected.stride()
    torch.testing.assert_close(torch.from_numpy(got.numpy().copy()), expected)


def test_a_transposed_operand_gets_torchs_strides() -> None:
    a, ta = td.ones(3, 4).t(), torch.ones(3, 4).t()
    got, expected = a * td.arange(3.0), ta * torch.arange(3.0)
    assert got.stride() == expected.stride() == (1, 4)
    assert got.tolist() == expected.tolist()


def test_shapes_that_do_not_broadcast_raise_torchs_error() -> None:
    with pytest.raises(RuntimeError) as info:
        td.ones(2, 3) * td.ones(4)
    golden = (
        "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"
    )
    assert str(info.value) == golden
    with pytest.raises(RuntimeError) as expected:
        torch.ones(2, 3) * torch.ones(4)
    assert str(expected.value) == golden


def test_the_plan_of_a_pair_is_cached() -> None:
    td.ones(5, 2) + td.ones(2)
    plan = fresh._PLANS[(5, 2), (2,)]
    assert plan == ((5, 2), (2, 1), (1,), (2, 1))
