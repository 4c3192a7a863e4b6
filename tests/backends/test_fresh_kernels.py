"""The fresh-result functional CPU kernels (Note [Fresh results] in backends/cpu/fresh.py):
meta function + fresh kernel give torch's result (dtype, shape, strides, values) for
contiguous, strided, broadcast, 0-dim and mixed-dtype inputs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch.backends.cpu.fresh import CPU_FRESH_KERNELS, as_result
from tensordispatch.backends.meta import META_FUNCTIONS
from tensordispatch.tensor import float32

# fresh kernel -> (meta function name, torch function, extra args)
OPS: dict[str, tuple[str, Callable[..., Any], int]] = {
    "add_out": ("add.Tensor", torch.add, 2),
    "sub_out": ("sub.Tensor", torch.sub, 2),
    "mul_out": ("mul.Tensor", torch.mul, 2),
    "div_out": ("div.Tensor", torch.div, 2),
    "neg_out": ("neg", torch.neg, 1),
    "exp_out": ("exp", torch.exp, 1),
    "sin_out": ("sin", torch.sin, 1),
    "cos_out": ("cos", torch.cos, 1),
    "sqrt_out": ("sqrt", torch.sqrt, 1),
}
INPUTS: dict[str, Callable[[Any], tuple[Any, Any]]] = {
    "1-d f32": lambda m: (m.tensor([1.0, 2.0, 3.0]), m.tensor([0.5, -1.0, 4.0])),
    "0-d": lambda m: (m.tensor(2.0), m.tensor(3.0)),
    "2-d transposed": lambda m: (m.arange(6.0).reshape(2, 3).t(), m.ones(3, 2)),
    "broadcast": lambda m: (m.arange(6.0).reshape(2, 3), m.tensor([1.0, 2.0, 4.0])),
    "int + float": lambda m: (m.tensor([1, 2, 3]), m.tensor([0.5, 1.5, 2.5])),
    "int64": lambda m: (m.tensor([4, -2, 9]), m.tensor([2, 3, -4])),
    "bool": lambda m: (m.tensor([True, False, True]), m.tensor([True, True, False])),
    "complex": lambda m: (m.tensor([1 + 2j, 3j]), m.tensor([2 - 1j, 1 + 1j])),
    "float16": lambda m: (m.tensor([1.5, 2.5], dtype=m.float16), m.tensor([2.0, 4.0],
                                                                          dtype=m.float16)),
    "empty": lambda m: (m.ones(0, 3), m.ones(0, 3)),
}  # fmt: skip


def _cases() -> list[Any]:
    return [pytest.param(k, i, id=f"{k}-{i}") for k in OPS for i in INPUTS]


@pytest.mark.parametrize(("kernel", "inputs"), _cases())
def test_fresh_kernel_matches_torch(kernel: str, inputs: str) -> None:
    meta_name, torch_fn, arity = OPS[kernel]
    args_t = INPUTS[inputs](torch)[:arity]
    args_d = INPUTS[inputs](td)[:arity]
    try:
        expected = torch_fn(*args_t)
    except Exception as e:  # noqa: BLE001 - the exception type is what we compare
        with pytest.raises(type(e)):
            specs, pre = META_FUNCTIONS[meta_name](None, *args_d)
            CPU_FRESH_KERNELS[kernel](pre, specs[0], *args_d)
        return
    specs, pre = META_FUNCTIONS[meta_name](None, *args_d)
    got = CPU_FRESH_KERNELS[kernel](pre, specs[0], *args_d)
    assert got.dtype.name == str(expected.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(expected.shape) and got.stride() == expected.stride()
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-3, equal_nan=True)
    assert got._data.base is None or got._data.base is not args_d[0]._data


def test_alpha_out_of_range_wraps() -> None:
    a = td.tensor([5, 6], dtype=td.uint8)
    specs, pre = META_FUNCTIONS["add.Tensor"](None, a, a, -3)
    got = CPU_FRESH_KERNELS["add_out"](pre, specs[0], a, a, -3)
    expected = torch.add(torch.tensor([5, 6], dtype=torch.uint8), torch.tensor([5, 6],
                         dtype=torch.uint8), alpha=-3)  # fmt: skip
    assert got.tolist() == expected.tolist()


def test_as_result_copies_when_the_layout_differs() -> None:
    r = np.ones((2, 3), np.float32).T  # Fortran order
    t = as_result(r, ((3, 2), None, float32))
    assert t.stride() == (2, 1) and t._data is not r and t.tolist() == r.tolist()


def test_as_result_keeps_numpys_contiguous_array() -> None:
    r = np.ones((2, 3), np.float32)
    t = as_result(r, ((2, 3), None, float32))
    assert t._data is r and t.stride() == (3, 1)


def test_codegen_list_names_exactly_the_fresh_kernels() -> None:
    from tensordispatch.codegen.model import FRESH_IMPLS

    assert set(CPU_FRESH_KERNELS) == FRESH_IMPLS


def test_as_result_keeps_an_array_with_the_specs_strides() -> None:
    r = np.ones((2, 3), np.float32, order="F")  # element strides (1, 2)
    t = as_result(r, ((2, 3), (1, 2), float32))
    assert t._data is r and t.stride() == (1, 2)


def test_as_result_copies_into_the_specs_strides_when_they_differ() -> None:
    r = np.arange(6, dtype=np.float32).reshape(2, 3)  # C order, spec wants (1, 2)
    t = as_result(r, ((2, 3), (1, 2), float32))
    assert t._data is not r and t.stride() == (1, 2) and t.tolist() == r.tolist()


def test_as_result_narrowing_copy_warns_nothing() -> None:
    import warnings

    from tensordispatch.tensor import float16

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = as_result(np.array([1e6, 1.0], np.float32), ((2,), None, float16))
    assert t.tolist() == [float("inf"), 1.0]
