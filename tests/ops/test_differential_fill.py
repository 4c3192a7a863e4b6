"""fill_.Tensor / fill.Tensor against torch 2.13: a 0-dim value tensor is copied with copy_'s
rules (wrapping casts, complex-to-real warning, overlap check), every dtype pair, gradients."""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import pytest
import torch

from tests.ops.conftest import TD, assert_same_result, run_both

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
          "complex64", "complex128"]  # fmt: skip
VALUES = {"bool": True, "uint8": 200, "int8": -7, "int16": 300, "int32": -70000,
          "int64": 2**40 + 3, "float16": 2.5, "float32": -1.75, "float64": 300.25,
          "complex64": 2j, "complex128": -3 + 0.5j}  # fmt: skip


def _results(fn: Any) -> tuple[Any, Any]:
    results = []
    for lib in (torch, TD):
        try:
            results.append(fn(lib, "cpu"))
        except Exception as e:  # noqa: BLE001 - the exception is the result compared
            results.append(e)
    return results[0], results[1]


def _compare(expected: Any, got: Any, where: str) -> None:
    if isinstance(expected, BaseException):
        assert type(got) is type(expected), f"{where}: torch raised {expected!r}, we {got!r}"
        assert str(got) == str(expected), where
        return
    assert not isinstance(got, BaseException), f"{where}: torch returned, we raised {got!r}"
    assert_same_result(expected, got, where=where)


PAIRS = list(itertools.product(DTYPES, DTYPES))


@pytest.mark.parametrize("self_dtype,value_dtype", PAIRS)
def test_fill_with_a_0_dim_tensor_casts_as_copy(self_dtype: str, value_dtype: str) -> None:
    def fn(lib: Any, device: str) -> Any:
        value = lib.tensor(VALUES[value_dtype], dtype=getattr(lib, value_dtype))
        x = lib.zeros(2, 3, dtype=getattr(lib, self_dtype)).t()
        return x.fill_(value), lib.fill(x, value)

    with warnings.catch_warnings():  # torch warns complex-to-real once per process (WARN_ONCE)
        warnings.simplefilter("ignore")
        expected, got = _results(fn)
    _compare(expected, got, f"{self_dtype}.fill_({value_dtype})")


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_fill_with_a_1_dim_tensor_raises(device: str) -> None:
    def fn(lib: Any, dev: str) -> Any:
        return lib.zeros(3, device=dev).fill_(lib.tensor([1.0, 2.0], device=dev))

    expected, got = run_both(fn, device)
    _compare(expected, got, "fill_(1-dim)")
    assert (
        str(got) == "fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions."
    )


def test_fill_of_a_view_of_self_reads_the_value_first() -> None:
    def fn(lib: Any, device: str) -> Any:
        x = lib.arange(4.0)
        return x.fill_(x[3])

    _compare(*run_both(fn, "cpu"), "x.fill_(x[3])")


def test_fill_tensor_of_an_expanded_self_raises_the_overlap_error() -> None:
    def fn(lib: Any, device: str) -> Any:
        return lib.arange(3.0).expand(2, 3).fill_(lib.tensor(1.0))

    expected, got = run_both(fn, "cpu")
    _compare(expected, got, "expanded.fill_(tensor)")


def test_fill_tensor_gradients_match_torch() -> None:
    def fn(lib: Any, device: str) -> Any:
        v = lib.tensor(2.0, requires_grad=True)
        x = lib.zeros(3, requires_grad=True)
        y = lib.fill(x, v) * lib.tensor([1.0, 2.0, 3.0])
        z = x.clone().fill_(v)
        (y.sum() + z.sum()).backward()
        return (
            type(y.grad_fn.next_functions[0][0]).__name__,
            type(z.grad_fn).__name__,
            v.grad,
            x.grad,
        )

    expected, got = run_both(fn, "cpu")
    _compare(expected, got, "fill gradients")


def test_fill_tensor_out_matches_torch() -> None:
    def fn(lib: Any, device: str) -> Any:
        ops = torch.ops if lib is torch else TD.ops
        out = lib.empty(0, dtype=lib.int64)
        return ops.aten.fill.Tensor_out(lib.zeros(2, 2), lib.tensor(3.5), out=out), out

    _compare(*run_both(fn, "cpu"), "fill.Tensor_out")
