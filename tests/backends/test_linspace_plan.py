"""linspace from both ends by plan (Note [linspace from both ends by plan] in
backends/cpu/linspace.py): ``linspace_cpu`` and ``linspace_out``'s planned branch.

Oracles: the element formula of torch's CPU kernel evaluated one element at a time in the
result's type (``_reference``); torch 2.13 for dtypes, shapes, endpoints and error texts.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import tensordispatch as td
from tensordispatch.backends.cpu.linspace import linspace_cpu


def _reference(start: Any, end: Any, steps: int, dtype: str) -> np.ndarray[Any, Any]:
    """``start + step * i`` below ``steps // 2``, else ``end - step * (steps - 1 - i)``, every
    operation on NumPy scalars of the result's floating type."""
    kind = np.dtype(dtype).type
    lo, hi = kind(start), kind(end)
    step = (hi - lo) / kind(steps - 1)
    half = steps // 2
    values = [lo + step * kind(i) if i < half else hi - step * kind(steps - 1 - i)
              for i in range(steps)]  # fmt: skip
    return np.array(values, dtype=dtype)


_bounds = st.one_of(
    st.integers(-1000, 1000),
    st.floats(-1e4, 1e4, allow_nan=False, allow_infinity=False),
)


@settings(max_examples=100, deadline=None)
@given(_bounds, _bounds, st.integers(2, 2049), st.sampled_from(["float16", "float32", "float64"]))
def test_values_are_the_element_formula(start: Any, end: Any, steps: int, dtype: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # float16 overflow of a large span, both sides alike
        expected = _reference(start, end, steps, dtype)
        ours = td.linspace(start, end, steps, dtype=getattr(td, dtype))
    assert ours.numpy().tobytes() == expected.tobytes()
    assert tuple(ours.shape) == (steps,) and ours.stride() == (1,)


_wide_bounds = st.one_of(
    st.integers(-(2**30), 2**30),
    st.floats(-3e38, 3e38, allow_nan=False, allow_infinity=False),
    st.floats(-1.0, 1.0, allow_nan=False),
)


@settings(max_examples=150, deadline=None)
@given(_wide_bounds, _wide_bounds, st.integers(2, 16), st.sampled_from(["float32", "float64"]))
def test_few_steps_are_the_element_formula(start: Any, end: Any, steps: int, dtype: str) -> None:
    """Up to 16 steps the values are Python floats rounded as float32 (Note [linspace from
    both ends by plan], the few-steps paragraph); ints beyond 2**24 and overflowing spans
    take the NumPy path."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an overflowing float32 span, both sides alike
        expected = _reference(start, end, steps, dtype)
        ours = td.linspace(start, end, steps, dtype=getattr(td, dtype))
    assert ours.numpy().tobytes() == expected.tobytes()


def test_an_overflowing_span_warns_as_numpys_scalars() -> None:
    with pytest.warns(RuntimeWarning, match="overflow"):
        ours = td.linspace(-3e38, 3e38, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = _reference(-3e38, 3e38, 5, "float32")
    assert ours.numpy().tobytes() == expected.tobytes()


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("steps", [2, 3, 5, 100, 2049])
def test_planned_results_match_torchs_shape_dtype_and_ends(dtype: str, steps: int) -> None:
    ours = td.linspace(-3, 7.5, steps, dtype=getattr(td, dtype))
    theirs = torch.linspace(-3, 7.5, steps, dtype=getattr(torch, dtype))
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1] == dtype
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.stride() == theirs.stride()
    np.testing.assert_array_equal(ours.numpy()[[0, -1]], theirs.numpy()[[0, -1]])
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-3, atol=1e-5)


def test_default_dtype_result_is_torchs() -> None:
    ours, theirs = td.linspace(0, 1, 5), torch.linspace(0, 1, 5)
    assert ours.dtype == td.float32
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_out_of_one_dtype_is_written_in_place_and_a_strided_out_through_a_copy() -> None:
    out = td.empty(5, dtype=td.float64)
    data = out._data
    assert td.linspace(1, 2, 5, out=out) is out
    assert out._data is data
    np.testing.assert_array_equal(out.numpy(), _reference(1, 2, 5, "float64"))
    wide = td.zeros(10, dtype=td.float64)
    strided = wide[::2]
    td.linspace(1, 2, 5, out=strided)
    np.testing.assert_array_equal(strided.numpy(), _reference(1, 2, 5, "float64"))
    np.testing.assert_array_equal(wide.numpy()[1::2], np.zeros(5))


def test_declined_bounds_and_dtypes_take_the_general_kernel() -> None:
    f32 = td.float32
    assert linspace_cpu(0, 1, 5, td.int64) is None
    assert linspace_cpu(0, 1, 1, f32) is None and linspace_cpu(0, 1, 2050, f32) is None
    assert linspace_cpu(float("nan"), 1, 5, f32) is None
    assert linspace_cpu(0, 1e39, 5, f32) is None and linspace_cpu(True, 1, 5, f32) is None
    assert linspace_cpu(0, 2**63, 5, td.float64) is None
    assert linspace_cpu(0, 1.0 + 0j, 5, f32) is None
    for args in [(0, 10, 5), (-1.5, 3.5, 3), (0, 100, 7)]:
        for dt in ("int32", "int64", "uint8") if args[0] >= 0 else ("int32", "int64"):
            ours = td.linspace(*args, dtype=getattr(td, dt))
            theirs = torch.linspace(*args, dtype=getattr(torch, dt))
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    nan = td.linspace(float("nan"), 1, 3).numpy()
    assert np.isnan(nan[0]) and np.isnan(torch.linspace(float("nan"), 1, 3).numpy()[0])


def _texts(ours: Any, theirs: Any) -> tuple[str, str]:
    with pytest.raises(Exception) as t:
        theirs()
    with pytest.raises(Exception) as o:
        ours()
    assert type(o.value).__name__ == type(t.value).__name__
    return str(o.value), str(t.value)


def test_error_texts_are_torchs() -> None:
    o, t = _texts(lambda: td.linspace(0, 1, -1), lambda: torch.linspace(0, 1, -1))
    assert o == t == "number of steps must be non-negative"
    o, t = _texts(lambda: td.linspace(0, 1e39, 5), lambda: torch.linspace(0, 1e39, 5))
    assert o == t == "value cannot be converted to type float without overflow"
    o, t = _texts(
        lambda: td.linspace(0, 7e4, 5, dtype=td.float16),
        lambda: torch.linspace(0, 7e4, 5, dtype=torch.float16),
    )
    assert o == t == "value cannot be converted to type c10::Half without overflow"
