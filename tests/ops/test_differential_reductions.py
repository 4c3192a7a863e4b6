"""Differential property tests of reductions against torch 2.13: every dtype, 0-dim and empty
inputs, dim (int, negative, tuple, none) / keepdim / dtype= / out= of any dtype, comparing
value, dtype, shape, strides and errors.

Left out: mean/std/var/logsumexp into a wider out= (torch computes in the narrower dtype and
casts: last-bit differences, REQUESTS.md to P5/AG5), amax/amin of empty complex results
(strict xfail in test_differential_errors.py)."""

from __future__ import annotations

from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.ops.differential import DTYPES, compare, make, operand, run

DIM_REDUCTIONS = ["sum", "mean", "prod", "amax", "amin", "all", "any", "std", "var", "logsumexp",
                  "norm", "argmax", "argmin", "max", "min", "cumsum", "aminmax"]  # fmt: skip
ONE_DIM = {"argmax", "argmin", "max", "min", "cumsum", "aminmax", "prod"}
WITH_DTYPE = ["sum", "mean", "prod", "cumsum"]
DIMS = [None, 0, 1, -1, (0, 1), (), (-1, 0)]


def _reduce(lib: Any, name: str, x: Any, dim: Any, keepdim: bool, **kw: Any) -> Any:
    if name == "aminmax":
        return tuple(lib.aminmax(x, dim=dim, keepdim=keepdim, **kw))
    if name == "cumsum":
        return lib.cumsum(x, dim, **kw)
    if name == "norm":
        return lib.norm(x, 2, dim, keepdim, **kw)
    if name == "logsumexp":
        return lib.logsumexp(x, () if dim is None else dim, keepdim, **kw)
    if dim is None:
        return getattr(lib, name)(x, **kw)
    result = getattr(lib, name)(x, dim, keepdim=keepdim, **kw)
    return tuple(result) if name in ("max", "min") else result


def _skip(name: str, dtype: str, dim: Any) -> bool:
    """Combinations left to the other files (see the module docstring)."""
    if name in ONE_DIM and isinstance(dim, tuple):
        return True  # a binding TypeError in torch, an argument error with another type here
    if name in ("amax", "amin") and dtype.startswith("complex"):
        return True
    return name == "cumsum" and dim is None


@settings(max_examples=300)
@given(operand(), st.sampled_from(DIM_REDUCTIONS), st.sampled_from(DIMS), st.booleans())
def test_reductions_match_torch(a: Any, name: str, dim: Any, keepdim: bool) -> None:
    assume(not _skip(name, a[0], dim))
    expected, got = run(lambda lib: _reduce(lib, name, make(lib, a), dim, keepdim))
    compare(expected, got, f"{name}({a}, dim={dim}, keepdim={keepdim})", (a[0], "float32"))


@settings(max_examples=150)
@given(operand(), st.sampled_from(WITH_DTYPE), st.sampled_from([None, 0, -1]),
       st.sampled_from(DTYPES))  # fmt: skip
def test_reductions_with_dtype_match_torch(a: Any, name: str, dim: Any, dtype: str) -> None:
    assume(not _skip(name, a[0], dim))
    expected, got = run(
        lambda lib: _reduce(lib, name, make(lib, a), dim, False, dtype=getattr(lib, dtype))
    )
    compare(expected, got, f"{name}({a}, dim={dim}, dtype={dtype})", (a[0], dtype, "float32"))


@settings(max_examples=150)
@given(operand(), st.sampled_from(["sum", "prod", "amax", "amin", "all", "any", "argmax",
                                   "cumsum", "mean", "norm"]),
       st.sampled_from([0, -1]), st.sampled_from(DTYPES), st.sampled_from([(0,), (1,), (7, 2)]),
       st.booleans())  # fmt: skip
def test_reduction_out_forms_match_torch(
    a: Any, name: str, dim: int, out_dtype: str, out_shape: tuple[int, ...], keepdim: bool
) -> None:
    """out= of any dtype and shape: dtype rules per operator, resizing, the result."""
    assume(not _skip(name, a[0], dim))
    wider = out_dtype in ("float64", "complex128") and a[0] not in ("float64", "complex128")
    assume(not (name in ("mean", "norm") and wider))  # module docstring

    def fn(lib: Any) -> Any:
        out = lib.empty(out_shape, dtype=getattr(lib, out_dtype))
        x = make(lib, a)
        if name in ("cumsum",):
            result = lib.cumsum(x, dim, out=out)
        elif name == "norm":
            result = lib.norm(x, 2, dim, keepdim, out=out)
        else:
            result = getattr(lib, name)(x, dim, keepdim=keepdim, out=out)
        return result, result is out

    expected, got = run(fn)
    compare(expected, got, f"{name}({a}, {dim}, out={out_dtype}{out_shape})",
            (a[0], out_dtype, "float32"))  # fmt: skip
