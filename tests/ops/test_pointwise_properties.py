"""Property tests of the pointwise family F1 against torch 2.13: random dtypes, broadcastable
shapes, transposed operands and Python numbers for binary ops and their in-place forms
(type promotion, broadcasting, output strides, integer semantics, errors)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import tensordispatch as td
from tests.ops.conftest import assert_same_result

DTYPES = ["bool", "uint8", "int16", "int32", "int64", "float16", "float32", "float64"]
BINARY = ["remainder", "pow", "floor_divide", "maximum", "minimum", "bitwise_and",
          "bitwise_xor", "logical_or"]  # fmt: skip


@st.composite
def operands(draw: Any) -> tuple[Any, ...]:
    """Two broadcastable shapes (one maybe transposed), dtypes, and data."""
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=ndim, max_size=ndim)))
    other = tuple(s if draw(st.booleans()) else 1 for s in shape[draw(st.integers(0, ndim)) :])
    seed = draw(st.integers(0, 2**16))
    return shape, other, draw(st.sampled_from(DTYPES)), draw(st.sampled_from(DTYPES)), seed


def _data(shape: tuple[int, ...], dtype: str, rng: np.random.Generator) -> np.ndarray[Any, Any]:
    return np.asarray(_values(shape, dtype, rng))


def _values(shape: tuple[int, ...], dtype: str, rng: np.random.Generator) -> Any:
    values = np.asarray(rng.integers(-4, 5, size=shape))
    if dtype == "bool":
        return np.asarray(values > 0)
    if dtype == "uint8":
        return np.abs(values).astype(np.uint8)
    if dtype.startswith("float"):
        return np.asarray(values + rng.random(shape).round(2)).astype(dtype)
    return values.astype(dtype)


def _both(fn: Any, a: np.ndarray[Any, Any], b: Any, transpose: bool) -> tuple[Any, Any]:
    results = []
    for lib, make in ((torch, torch.from_numpy), (td, td.from_numpy)):
        x = make(a.copy())
        if transpose and x.dim() >= 2:
            x = x.transpose(0, 1)
        y = make(b.copy()) if isinstance(b, np.ndarray) else b
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                results.append(fn(lib, x, y))
            except Exception as e:  # noqa: BLE001 - the exception is what is compared
                results.append(e)
    return results[0], results[1]


def _compare(expected: Any, got: Any, where: str) -> None:
    if isinstance(expected, BaseException):
        assert isinstance(got, type(expected)), f"{where}: torch raised {expected!r}, we {got!r}"
        return
    assert not isinstance(got, BaseException), f"{where}: torch returned, we raised {got!r}"
    assert_same_result(expected, got, where=where)


@settings(max_examples=120)
@given(operands(), st.sampled_from(BINARY), st.booleans(), st.booleans())
def test_binary_ops_match_torch(args: Any, name: str, transpose: bool, in_place: bool) -> None:
    shape, other, da, db, seed = args
    rng = np.random.default_rng(seed)
    a, b = _data(shape, da, rng), _data(other, db, rng)
    if in_place and name in ("maximum", "minimum"):
        in_place = False  # no in-place forms

    def fn(lib: Any, x: Any, y: Any) -> Any:
        return getattr(x, name + "_")(y) if in_place else getattr(lib, name)(x, y)

    expected, got = _both(fn, a, b, transpose)
    _compare(expected, got, f"{name}{'_' if in_place else ''}({da}{shape}, {db}{other})")


@settings(max_examples=80)
@given(operands(), st.sampled_from(["%", "**", "//", "&", "|", "^"]),
       st.sampled_from([2, -3, 1.5, True]), st.booleans())  # fmt: skip
def test_operators_with_numbers_match_torch(
    args: Any, symbol: str, number: Any, reflected: bool
) -> None:
    shape, _, da, _, seed = args
    a = _data(shape, da, np.random.default_rng(seed))
    expr = f"y {symbol} x" if reflected else f"x {symbol} y"

    def fn(lib: Any, x: Any, y: Any) -> Any:
        return eval(expr, {"x": x, "y": y})

    expected, got = _both(fn, a, number, False)
    _compare(expected, got, f"{expr} with x {da}{shape}, y={number!r}")
