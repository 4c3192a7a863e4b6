"""Random shapes, strides, dims, keepdim and dtypes for the reductions, against torch
(hypothesis, derandomized in CI by tests/conftest.py). Inputs may be transposed or empty;
each draw must give torch's result or torch's exception type."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.ops.conftest import TD, assert_same_result, run_both

DTYPES = ["float32", "float64", "int64", "int32", "bool", "uint8"]
REDUCE = ["sum", "mean", "prod", "amax", "amin", "argmax", "var", "std", "logsumexp", "all",
          "any", "cumsum", "softmax", "max", "norm"]  # fmt: skip


@st.composite
def cases(draw: Any) -> tuple[Any, ...]:
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(0, 3), min_size=ndim, max_size=ndim)))
    dtype = draw(st.sampled_from(DTYPES))
    seed = draw(st.integers(0, 2**16))
    op = draw(st.sampled_from(REDUCE))
    dim = draw(st.one_of(st.none(), st.integers(-ndim - 1, ndim), st.lists(
        st.integers(-max(ndim, 1), max(ndim, 1) - 1), max_size=2)))  # fmt: skip
    keepdim = draw(st.booleans())
    transpose = ndim >= 2 and draw(st.booleans())
    return op, shape, dtype, seed, dim, keepdim, transpose


def _call(L: Any, op: str, x: Any, dim: Any, keepdim: bool) -> Any:
    fn = getattr(L, op)
    single = dim if isinstance(dim, int) else (dim[0] if dim else 0)
    if op in ("cumsum", "softmax"):
        return fn(x, single)
    if op in ("argmax", "max", "prod"):  # int dim only (a list is the binding's TypeError)
        return fn(x) if dim is None else fn(x, single, keepdim)
    if op in ("logsumexp",):
        return fn(x, [] if dim is None else dim, keepdim)
    if op == "norm":
        return fn(x, 2, dim, keepdim)
    if dim is None:
        return fn(x)
    return fn(x, dim, keepdim=keepdim)


@settings(max_examples=300, deadline=None)
@given(cases())
def test_random_reduction_matches_torch(case: tuple[Any, ...]) -> None:
    op, shape, dtype, seed, dim, keepdim, transpose = case
    data = np.random.default_rng(seed).standard_normal(shape) * 3

    def build(L: Any, d: str) -> Any:
        x = L.tensor(data.tolist(), dtype=L.float64, device=d).to(getattr(L, dtype))
        if transpose:
            x = x.transpose(0, 1)
        result = _call(L, op, x, dim, keepdim)
        return tuple(result) if isinstance(result, tuple) else result

    def quiet(L: Any, d: str) -> Any:
        # meta runs against torch on CPU, whose kernels warn where no meta kernel does
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return build(L, "meta" if L is TD else "cpu")

    for device in ("cpu", "meta"):
        expected, got = run_both(build, device) if device == "cpu" else run_both(quiet, device)
        if isinstance(expected, BaseException):
            assert isinstance(got, type(expected)), (case, device, expected, got)
        else:
            assert not isinstance(got, BaseException), (case, device, expected, got)
            assert_same_result(expected, got, values=device == "cpu", where=str(case))


def test_torch_meta_oracle_is_cpu() -> None:
    """The random test compares meta against torch on CPU (whose checks our meta shares)."""
    assert torch.ones(2, device="meta").sum().device.type == "meta"
    assert TD.ones(2, device="meta").sum().device.type == "meta"
