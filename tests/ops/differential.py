"""Shared helpers of the differential tests (tests/ops/test_differential_*.py): operands in
every dtype and layout, the same call run in torch and in tensordispatch, and a comparison of
value, dtype, shape, strides, exception type and message."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from hypothesis import strategies as st

from tests.ops.conftest import TD

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
          "complex64", "complex128"]  # fmt: skip
SHAPES = [(), (0,), (3,), (2, 3), (1, 3), (2, 1), (0, 3)]
LAYOUTS = ["contiguous", "transposed", "expanded", "strided"]
_TOL = {"float16": 2e-3, "float32": 2e-6, "complex64": 2e-6, "float64": 1e-9, "complex128": 1e-9}


def values(dtype: str, shape: tuple[int, ...], seed: int) -> np.ndarray[Any, Any]:
    """Small integers (zeros included) plus fractions for floating dtypes."""
    rng = np.random.default_rng(seed)
    v = np.asarray(rng.integers(-5, 6, size=shape))
    if dtype == "bool":
        return np.asarray(v > 0)
    if dtype == "uint8":
        return np.asarray(np.abs(v).astype(np.uint8))
    if dtype.startswith("float"):
        return np.asarray(np.asarray(v + rng.random(shape).round(2)).astype(dtype))
    if dtype.startswith("complex"):
        return np.asarray(np.asarray(v + 1j * rng.integers(-3, 4, size=shape)).astype(dtype))
    return np.asarray(v.astype(dtype))


@st.composite
def operand(draw: Any, dtypes: list[str] | None = None) -> tuple[str, tuple[int, ...], str, int]:
    """(dtype, shape, layout, seed) of one tensor operand."""
    return (
        draw(st.sampled_from(dtypes or DTYPES)),
        draw(st.sampled_from(SHAPES)),
        draw(st.sampled_from(LAYOUTS)),
        draw(st.integers(0, 2**16)),
    )


def make(lib: Any, spec: tuple[str, tuple[int, ...], str, int]) -> Any:
    """The operand in ``lib``: same values, same strides in both libraries."""
    dtype, shape, layout, seed = spec
    new = torch.from_numpy if lib is torch else TD.from_numpy
    if layout == "transposed" and len(shape) == 2:
        return new(values(dtype, shape[::-1], seed).copy()).t()
    if layout == "expanded" and shape and shape[0] > 0:
        return new(values(dtype, (1, *shape[1:]), seed).copy()).expand(*shape)
    if layout == "strided" and shape:
        wide = (*shape[:-1], 2 * shape[-1])
        return new(values(dtype, wide, seed).copy())[..., ::2]
    return new(values(dtype, shape, seed).copy())


def run(fn: Callable[[Any], Any]) -> tuple[Any, Any]:
    """``fn(torch)`` and ``fn(td)``, each a result or the exception raised."""
    results = []
    for lib in (torch, TD):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                results.append(fn(lib))
            except Exception as e:  # noqa: BLE001 - the exception is the result compared
                results.append(e)
    return results[0], results[1]


def _tolerance(*names: str) -> float:
    return max((_TOL.get(n, 0.0) for n in names), default=0.0)


def compare(expected: Any, got: Any, where: str, inputs: tuple[str, ...] = ()) -> None:
    """Same exception type and first message line, or same results: tensors agree in dtype,
    shape, strides and values (within the tolerance of the loosest dtype involved)."""
    if isinstance(expected, BaseException):
        assert isinstance(got, BaseException), f"{where}: torch raised {expected!r}, we returned"
        assert isinstance(got, type(expected)), f"{where}: torch raised {expected!r}, we {got!r}"
        first = str(expected).split("\n")[0]
        assert str(got).split("\n")[0] == first, f"{where}: {got!r} != {expected!r}"
        return
    assert not isinstance(got, BaseException), f"{where}: torch returned, we raised {got!r}"
    if isinstance(expected, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(expected), where
        for e, g in zip(expected, got, strict=True):
            compare(e, g, where, inputs)
        return
    if not isinstance(expected, torch.Tensor):
        assert got == expected, f"{where}: {got!r} != {expected!r}"
        return
    name = str(expected.dtype).split(".")[-1]
    assert got.dtype.name == name, f"{where}: dtype {got.dtype} != torch.{name}"
    assert tuple(got.shape) == tuple(expected.shape), f"{where}: shape {tuple(got.shape)}"
    if expected.numel() > 1:
        assert got.stride() == expected.stride(), f"{where}: strides {got.stride()}"
    tol = _tolerance(name, *inputs)
    np.testing.assert_allclose(
        np.asarray(got.numpy()), expected.resolve_conj().numpy(), rtol=tol, atol=tol,
        equal_nan=True, err_msg=where,
    )  # fmt: skip
