"""arange / linspace against torch 2.13: the int fast paths (length, int64 values), the
int64 truncated-step ValueError, linspace computed in the output's float type, and the
bool linspace refusal."""

from __future__ import annotations

import pytest
import torch

import tensordispatch as td

ARANGE = [
    (5,), (0,), (10, 0, -3), (-3, 7, 2), (7, -3, -2), (1, 2.5, 0.5), (0, -8.000001, -4.0),
    (0.5,), (2**40, 2**40 + 10, 3), (-5, 5, 7),
]  # fmt: skip
LINSPACE = [(0, 1, 5), (1, 0, 7), (0, 10, 4), (0.1, 0.7, 11), (-2, 3, 2), (3, 3, 1), (0, 1, 0)]
DTYPES = [None, "int64", "int32", "float32", "float64", "float16", "uint8"]


def _kw(module: object, name: str | None) -> dict[str, object]:
    return {} if name is None else {"dtype": getattr(module, name)}


def _same(ours: td.Tensor, theirs: torch.Tensor) -> None:
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert ours.shape == theirs.shape
    assert ours.tolist() == theirs.tolist()


# Not generated: negative values in uint8 and values beyond float16's range (the values are
# out of the dtype's range: torch's results there are its C casts' undefined behaviour).
ARANGE_CASES = [
    (args, dtype)
    for args in ARANGE
    for dtype in DTYPES
    if not (dtype == "uint8" and min(args) < 0) and not (dtype == "float16" and max(args) > 60000)
]


@pytest.mark.parametrize(("args", "dtype"), ARANGE_CASES)
def test_arange_matches_torch(args: tuple[float, ...], dtype: str | None) -> None:
    try:
        theirs = torch.arange(*args, **_kw(torch, dtype))
    except (RuntimeError, ValueError) as error:
        with pytest.raises(type(error)) as ours:
            td.arange(*args, **_kw(td, dtype))
        assert str(ours.value) == str(error)
        return
    _same(td.arange(*args, **_kw(td, dtype)), theirs)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("args", LINSPACE)
def test_linspace_matches_torch(args: tuple[float, ...], dtype: str | None) -> None:
    _same(td.linspace(*args, **_kw(td, dtype)), torch.linspace(*args, **_kw(torch, dtype)))


def test_arange_int64_truncated_step_is_value_error() -> None:
    with pytest.raises(ValueError) as theirs:
        torch.arange(0, 5, 0.5, dtype=torch.int64)
    with pytest.raises(ValueError) as ours:
        td.arange(0, 5, 0.5, dtype=td.int64)
    assert str(ours.value) == str(theirs.value) == "step must be nonzero"


def test_arange_zero_int_step_is_runtime_error() -> None:
    with pytest.raises(RuntimeError) as ours:
        td.arange(0, 5, 0)
    assert str(ours.value) == "step must be nonzero"


def test_arange_int_bounds_against_step_sign() -> None:
    with pytest.raises(RuntimeError) as ours:
        td.arange(5, 0, 1)
    assert str(ours.value) == "upper bound and lower bound inconsistent with step sign"


def test_arange_into_strided_int64_out() -> None:
    out = td.zeros(10, dtype=td.int64)[::2]
    td.arange(5, out=out)
    assert out.tolist() == [0, 1, 2, 3, 4]


def test_linspace_bool_refused_over_one_step() -> None:
    with pytest.raises(NotImplementedError) as ours:
        td.linspace(0, 1, 3, dtype=td.bool)
    assert str(ours.value) == "\"linspace_cpu\" not implemented for 'Bool'"
    assert td.linspace(0, 1, 1, dtype=td.bool).tolist() == [False]


def test_linspace_negative_steps() -> None:
    with pytest.raises(RuntimeError) as ours:
        td.linspace(0, 1, -1)
    assert str(ours.value) == "number of steps must be non-negative"


LINSPACE_BOUNDS = [
    ((-1.5, 3.5, 3), "uint8"), ((-1.5, 3.5, 1), "uint8"), ((-1.5, 3.5, 0), "uint8"),
    ((-1, 3, 3), "uint8"), ((-7, 100, 9), "uint8"), ((0, 300, 3), "int8"),
    ((0, 300, 1), "int8"), ((0, 1e39, 3), "float32"), ((0, 1e39, 1), "float32"),
    ((0, 1e39, 3), "complex64"), ((1, 0, 1), "bool"),
]  # fmt: skip


def _linspace(module: object, args: tuple[float, ...], dtype: str) -> object:
    try:
        return module.linspace(*args, dtype=getattr(module, dtype)).tolist()  # type: ignore[attr-defined]
    except RuntimeError as error:
        return str(error)


@pytest.mark.parametrize(("args", "dtype"), LINSPACE_BOUNDS)
def test_linspace_bounds_checked_and_wrapped_as_torch(args: tuple[float, ...], dtype: str) -> None:
    assert _linspace(td, args, dtype) == _linspace(torch, args, dtype)


def test_linspace_bound_overflow_message() -> None:
    with pytest.raises(RuntimeError) as ours:
        td.linspace(0, 300, 3, dtype=td.int8)
    assert str(ours.value) == "value cannot be converted to type int8_t without overflow"
