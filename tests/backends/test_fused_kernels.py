"""The fused functional CPU kernels (Note [Fused functional kernels] in backends/cpu/fresh.py):
torch's result (dtype, shape, strides, values) or torch's error for every layout and dtype,
whether the fast path or the meta + fresh fallback answers, and no NumPy warnings."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch.backends.aten import wrap_number
from tensordispatch.backends.cpu.fresh import CPU_FUNCTIONAL_KERNELS

# functional overload -> (torch function, arity)
OPS: dict[str, tuple[Callable[..., Any], int]] = {
    "add.Tensor": (torch.add, 2),
    "sub.Tensor": (torch.sub, 2),
    "mul.Tensor": (torch.mul, 2),
    "div.Tensor": (torch.div, 2),
    "neg": (torch.neg, 1),
    "exp": (torch.exp, 1),
    "sin": (torch.sin, 1),
    "cos": (torch.cos, 1),
    "sqrt": (torch.sqrt, 1),
}
F16 = "float16"
INPUTS: dict[str, Callable[[Any], tuple[Any, Any]]] = {
    "1-d f32": lambda m: (m.tensor([1.0, 2.0, 3.0]), m.tensor([0.5, -1.0, 4.0])),
    "1-d strided": lambda m: (m.arange(6.0)[::2], m.arange(3.0)),
    "1-d expanded": lambda m: (m.tensor([2.0]).expand(3), m.tensor([1.0, 2.0, 3.0])),
    "2-d contiguous": lambda m: (m.arange(6.0).reshape(2, 3), m.ones(2, 3)),
    "3-d size-1 dim": lambda m: (m.arange(6.0).reshape(3, 1, 2), m.ones(3, 1, 2)),
    "2-d transposed": lambda m: (m.arange(6.0).reshape(2, 3).t(), m.ones(3, 2)),
    "2-d both transposed": lambda m: (m.arange(6.0).reshape(2, 3).t(), m.ones(2, 3).t()),
    "2-d sliced": lambda m: (m.arange(12.0).reshape(3, 4)[:, 1:3], m.ones(3, 2)),
    "broadcast": lambda m: (m.arange(6.0).reshape(2, 3), m.tensor([1.0, 2.0, 4.0])),
    "0-d": lambda m: (m.tensor(2.0), m.tensor(3.0)),
    "empty": lambda m: (m.ones(0, 3), m.ones(0, 3)),
    "int + float": lambda m: (m.tensor([1, 2, 3]), m.tensor([0.5, 1.5, 2.5])),
    "f32 + f64": lambda m: (m.tensor([1.0, 2.0]), m.tensor([0.5, 1.5], dtype=m.float64)),
    "int64": lambda m: (m.tensor([4, -2, 9]), m.tensor([2, 3, -4])),
    "int8 2-d": lambda m: (m.ones(2, 2, dtype=m.int8), m.ones(2, 2, dtype=m.int8)),
    "bool": lambda m: (m.tensor([True, False, True]), m.tensor([True, True, False])),
    "complex": lambda m: (m.tensor([1 + 2j, 3j]), m.tensor([2 - 1j, 1 + 1j])),
    "float16": lambda m: (m.tensor([1.5, 2.5], dtype=getattr(m, F16)),
                          m.tensor([2.0, 4.0], dtype=getattr(m, F16))),
    "float64 2-d": lambda m: (m.ones(2, 2, dtype=m.float64), m.ones(2, 2, dtype=m.float64)),
}  # fmt: skip


def _pair(name: str, lib: Any) -> tuple[Any, Any]:
    return INPUTS[name](lib)


def _check_same(got: Any, expected: torch.Tensor) -> None:
    assert got.dtype.name == str(expected.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(expected.shape)
    assert got.stride() == expected.stride()
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-3, equal_nan=True)


def _cases() -> list[Any]:
    return [pytest.param(k, i, id=f"{k}-{i}") for k in OPS for i in INPUTS]


@pytest.mark.parametrize(("op", "inputs"), _cases())
def test_fused_kernel_matches_torch(op: str, inputs: str) -> None:
    torch_fn, arity = OPS[op]
    args_t = _pair(inputs, torch)[:arity]
    args_d = _pair(inputs, td)[:arity]
    try:
        expected = torch_fn(*args_t)
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as info:
            CPU_FUNCTIONAL_KERNELS[op](*args_d)
        assert str(info.value) == str(e)
        return
    got = CPU_FUNCTIONAL_KERNELS[op](*args_d)
    _check_same(got, expected)
    assert type(got._data) is np.ndarray and got._data.shape == tuple(expected.shape)
    assert got._base is None and got._autograd_meta is None and got.device.type == "cpu"
    assert not any(got._data is a._data for a in args_d)


@pytest.mark.parametrize("alpha", [2, -1, 1.5, 0])
@pytest.mark.parametrize("op", ["add.Tensor", "sub.Tensor"])
def test_alpha_other_than_one(op: str, alpha: Any) -> None:
    torch_fn = OPS[op][0]
    a_t, b_t = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([0.5, -1.0, 4.0])
    a_d, b_d = td.tensor([1.0, 2.0, 3.0]), td.tensor([0.5, -1.0, 4.0])
    _check_same(CPU_FUNCTIONAL_KERNELS[op](a_d, b_d, alpha=alpha), torch_fn(a_t, b_t, alpha=alpha))


def test_bool_alpha_on_float_is_refused_like_torch() -> None:
    a = td.tensor([True, False])
    with pytest.raises(RuntimeError) as info:
        CPU_FUNCTIONAL_KERNELS["add.Tensor"](a, td.tensor([1.0, 2.0]), alpha=True)
    assert str(info.value) == "Boolean alpha only supported for Boolean results."


def test_uint8_alpha_wraps_like_torch() -> None:
    a_t = torch.tensor([5, 6], dtype=torch.uint8)
    a_d = td.tensor([5, 6], dtype=td.uint8)
    got = CPU_FUNCTIONAL_KERNELS["add.Tensor"](a_d, a_d, alpha=-3)
    assert got.tolist() == torch.add(a_t, a_t, alpha=-3).tolist()


@pytest.mark.parametrize("op", ["add.Tensor", "sub.Tensor", "mul.Tensor", "div.Tensor"])
def test_wrapped_number_operand_promotes_like_torch(op: str) -> None:
    torch_fn = OPS[op][0]
    got = CPU_FUNCTIONAL_KERNELS[op](td.tensor([1, 2], dtype=td.int32), wrap_number(2.5))
    _check_same(got, torch_fn(torch.tensor([1, 2], dtype=torch.int32), 2.5))


def test_bool_sub_and_neg_refused_with_torchs_message() -> None:
    b = td.tensor([True, False])
    with pytest.raises(RuntimeError) as info:
        CPU_FUNCTIONAL_KERNELS["neg"](b)
    assert str(info.value) == (
        "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
        "to invert a mask, use the `~` or `logical_not()` operator instead."
    )
    with pytest.raises(RuntimeError) as info:
        CPU_FUNCTIONAL_KERNELS["sub.Tensor"](b, b)
    assert str(info.value) == (
        "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
        "or `logical_xor()` operator instead."
    )


def test_results_are_fresh_roots_a_view_of_nothing() -> None:
    a = td.arange(6.0).reshape(2, 3)
    got = CPU_FUNCTIONAL_KERNELS["add.Tensor"](a, a)
    got.add_(1)  # an in-place update of the result leaves the inputs alone
    assert a.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert got.tolist() == [[1.0, 3.0, 5.0], [7.0, 9.0, 11.0]]
    assert got._version == 1 and a._version == 0


OVERFLOW = {
    "add": lambda m, x: m.add(x, x),
    "sub": lambda m, x: m.sub(x, -x),
    "mul": lambda m, x: m.mul(x, x),
    "div": lambda m, x: m.div(x, x - x),
    "exp": lambda m, x: m.exp(x),
    "add alpha": lambda m, x: m.add(x, x, alpha=2),
    "add out": lambda m, x: m.add(x, x, out=m.empty(2)),
    "sub out": lambda m, x: m.sub(x, -x, out=m.empty(2)),
    "mul out": lambda m, x: m.mul(x, x, out=m.empty(2)),
    "add_": lambda m, x: x.clone().add_(x),
    "mul scalar": lambda m, x: m.mul(x, 10.0),
    "add 0-d": lambda m, x: m.add(x[0], x[0]),
    "sum": lambda m, x: m.sum(x.abs()),
}


@pytest.mark.parametrize("case", list(OVERFLOW))
def test_float_overflow_warns_nothing_like_torch(case: str) -> None:
    expected = OVERFLOW[case](torch, torch.tensor([3e38, -3e38]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = OVERFLOW[case](td, td.tensor([3e38, -3e38]))
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_table_covers_every_fresh_group() -> None:
    from tensordispatch.backends.cpu.fresh import CPU_FRESH_KERNELS

    assert {f"{k.split('_')[0]}" for k in CPU_FRESH_KERNELS} == {
        k.split(".")[0] for k in CPU_FUNCTIONAL_KERNELS
    }


# -- in-place (Note [Fused in-place kernels]) --------------------------------------------------

INPLACE: dict[str, str] = {
    "add_.Tensor": "add_",
    "sub_.Tensor": "sub_",
    "mul_.Tensor": "mul_",
    "div_.Tensor": "div_",
}
INPLACE_INPUTS: dict[str, Callable[[Any], tuple[Any, Any]]] = {
    "same 1-d": lambda m: (m.tensor([1.0, 2.0, 3.0]), m.tensor([0.5, -1.0, 4.0])),
    "same 2-d transposed self": lambda m: (m.arange(6.0).reshape(2, 3).t(), m.ones(3, 2)),
    "strided self": lambda m: (m.arange(8.0)[::2], m.tensor([1.0, 2.0, 3.0, 4.0])),
    "broadcast other": lambda m: (m.arange(6.0).reshape(2, 3), m.tensor([1.0, 2.0, 4.0])),
    "wrapped int": lambda m: (m.tensor([1.0, 2.0]), 3),
    "wrapped float on int": lambda m: (m.tensor([1, 2]), 2.5),
    "wrapped int on int": lambda m: (m.tensor([7, -3], dtype=m.int16), 2),
    "wrapped bool": lambda m: (m.tensor([1.0, 2.0]), True),
    "wrapped complex on float": lambda m: (m.tensor([1.0, 2.0]), 1j),
    "f64 other on f32": lambda m: (m.tensor([1.0, 2.0]), m.tensor([0.5, 0.25], dtype=m.float64)),
    "f32 other on f64": lambda m: (m.tensor([1.0, 2.0], dtype=m.float64), m.tensor([0.5, 0.25])),
    "int self, int other": lambda m: (m.tensor([6, 9]), m.tensor([2, 3])),
    "bool self": lambda m: (m.tensor([True, False]), m.tensor([True, True])),
    "0-d self": lambda m: (m.tensor(2.0), m.tensor(4.0)),
    "shape mismatch": lambda m: (m.tensor([1.0, 2.0]), m.ones(3, 2)),
}  # fmt: skip


def _inplace_cases() -> list[Any]:
    return [pytest.param(k, i, id=f"{k}-{i}") for k in INPLACE for i in INPLACE_INPUTS]


@pytest.mark.parametrize(("op", "inputs"), _inplace_cases())
def test_fused_inplace_kernel_matches_torch(op: str, inputs: str) -> None:
    from tensordispatch.backends.cpu.fresh import CPU_INPLACE_KERNELS

    self_t, other_t = INPLACE_INPUTS[inputs](torch)
    self_d, other_d = INPLACE_INPUTS[inputs](td)
    if not isinstance(other_d, td.Tensor):
        other_d = wrap_number(other_d)
    try:
        getattr(self_t, INPLACE[op])(other_t)
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as info:
            CPU_INPLACE_KERNELS[op](self_d, other_d)
        assert str(info.value) == str(e)
        return
    data_before = self_d._data
    got = CPU_INPLACE_KERNELS[op](self_d, other_d)
    assert got is self_d and got._data is data_before
    _check_same(got, self_t)


@pytest.mark.parametrize("alpha", [2, -1, 1.5, 0])
@pytest.mark.parametrize("op", ["add_.Tensor", "sub_.Tensor"])
def test_fused_inplace_alpha_other_than_one(op: str, alpha: Any) -> None:
    from tensordispatch.backends.cpu.fresh import CPU_INPLACE_KERNELS

    self_t, other_t = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([0.5, -1.0, 4.0])
    self_d, other_d = td.tensor([1.0, 2.0, 3.0]), td.tensor([0.5, -1.0, 4.0])
    getattr(self_t, INPLACE[op])(other_t, alpha=alpha)
    _check_same(CPU_INPLACE_KERNELS[op](self_d, other_d, alpha=alpha), self_t)


def test_fused_inplace_overflow_warns_nothing() -> None:
    from tensordispatch.backends.cpu.fresh import CPU_INPLACE_KERNELS

    x = td.tensor([3e38, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        CPU_INPLACE_KERNELS["mul_.Tensor"](x, td.tensor([10.0, 1.0]))
        CPU_INPLACE_KERNELS["div_.Tensor"](x, td.tensor([0.0, 0.0]))
    assert x.tolist() == [float("inf"), float("inf")]


# -- functional kernels with a wrapped Python number -----------------------------------------

SCALAR_DTYPES = ["bool", "int8", "int64", "float16", "float32", "float64", "complex64"]
SCALAR_SHAPES: dict[str, Callable[[Any, Any], Any]] = {
    "1-d": lambda m, dt: m.tensor([1, 2, 3]).to(dt),
    "2-d": lambda m, dt: m.arange(6).reshape(2, 3).to(dt),
    "2-d transposed": lambda m, dt: m.arange(6).reshape(2, 3).to(dt).t(),
    "0-d": lambda m, dt: m.tensor(3).to(dt),
}


@pytest.mark.parametrize("shape", list(SCALAR_SHAPES))
@pytest.mark.parametrize("name", SCALAR_DTYPES)
@pytest.mark.parametrize("op", ["add.Tensor", "sub.Tensor", "mul.Tensor", "div.Tensor"])
def test_fused_kernel_with_a_wrapped_number_matches_torch(op: str, name: str, shape: str) -> None:
    torch_fn = OPS[op][0]
    x_t = SCALAR_SHAPES[shape](torch, getattr(torch, name))
    x_d = SCALAR_SHAPES[shape](td, getattr(td, name))
    for s in [True, 3, 2.5, 1j, 1000]:
        if torch.result_type(x_t, s) == torch.complex32:  # no complex32 here (NumPy has none)
            continue
        try:
            expected = torch_fn(x_t, s)
        except RuntimeError as e:
            with pytest.raises(RuntimeError) as info:
                CPU_FUNCTIONAL_KERNELS[op](x_d, wrap_number(s))
            assert str(info.value) == str(e)
            continue
        got = CPU_FUNCTIONAL_KERNELS[op](x_d, wrap_number(s))
        _check_same(got, expected)
        assert type(got._data) is np.ndarray  # a 0-d result is an array, not a NumPy scalar
