"""Differential tests of nn and matrix operators against torch 2.13 over dtype pairs: softmax /
log_softmax (dim, dtype=), layer_norm (mixed parameter dtypes), conv1d/conv2d (complex too),
mm / matmul / dot / outer / addmm, embedding; value, dtype, shape, strides and errors."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest

from tests.ops.differential import compare, make, run

DTYPES = ["bool", "int64", "float16", "float32", "float64", "complex64"]
PAIRS = list(itertools.product(DTYPES, DTYPES))


def _t(dtype: str, shape: tuple[int, ...], seed: int = 0) -> Any:
    return (dtype, shape, "contiguous", seed)


CALLS: dict[str, Callable[[Any, str, str], Any]] = {
    "softmax": lambda L, a, b: L.softmax(make(L, _t(a, (2, 3))), -1, dtype=getattr(L, b)),
    "log_softmax": lambda L, a, b: L.log_softmax(make(L, _t(a, (2, 3))), 0, dtype=getattr(L, b)),
    "layer_norm": lambda L, a, b: L.layer_norm(
        make(L, _t(a, (2, 3))), (3,), make(L, _t(b, (3,), 1)), make(L, _t(b, (3,), 2))
    ),
    "conv2d": lambda L, a, b: L.conv2d(make(L, _t(a, (1, 2, 4, 4))), make(L, _t(b, (3, 2, 2, 2)))),
    "conv1d": lambda L, a, b: L.conv1d(
        make(L, _t(a, (1, 2, 5))), make(L, _t(b, (3, 2, 2))), padding=1
    ),
    "mm": lambda L, a, b: L.mm(make(L, _t(a, (2, 3))), make(L, _t(b, (3, 2), 1))),
    "matmul": lambda L, a, b: L.matmul(make(L, _t(a, (2, 3))), make(L, _t(b, (3,), 1))),
    "dot": lambda L, a, b: L.dot(make(L, _t(a, (3,))), make(L, _t(b, (3,), 1))),
    "outer": lambda L, a, b: L.outer(make(L, _t(a, (3,))), make(L, _t(b, (2,), 1))),
    "addmm": lambda L, a, b: L.addmm(
        make(L, _t(a, (2, 2))), make(L, _t(b, (2, 3), 1)), make(L, _t(b, (3, 2), 2))
    ),
    "embedding": lambda L, a, b: L.embedding(
        make(L, _t(a, (5, 3))), L.tensor([[0, 4], [1, 2]], dtype=getattr(L, b))
    ),
}
# torch's float16 matrix products accumulate differently: values within float16 tolerance
_LOOSE = {"addmm", "mm", "matmul", "conv2d", "conv1d", "dot", "outer"}


CASES = [(name, a, b) for name in CALLS for a, b in PAIRS]


@pytest.mark.parametrize("name,first,second", CASES)
def test_nn_and_matrix_ops_match_torch(name: str, first: str, second: str) -> None:
    expected, got = run(lambda lib: CALLS[name](lib, first, second))
    loose = ("float16",) if name in _LOOSE else ()
    compare(expected, got, f"{name}({first}, {second})", (first, second, *loose))
