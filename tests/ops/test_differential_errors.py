"""Golden messages and corner cases the differential audit found, each checked against torch
2.13 and against the expected text; strict xfails for the ones other layers own (see
/work/notes/REQUESTS.md)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

from tests.ops.conftest import TD
from tests.ops.differential import compare, run

# (id, call, exception type, message): torch raises exactly this and so do we.
ERRORS: list[tuple[str, Callable[[Any], Any], type[Exception], str]] = [
    ("in-place: shape before dtype", lambda L: L.zeros(3, dtype=L.bool).add_(L.ones(2, 3)),
     RuntimeError, "output with shape [3] doesn't match the broadcast shape [2, 3]"),
    ("maximum complex before out cast",
     lambda L: L.maximum(L.ones(2), L.ones(2, dtype=L.complex64), out=L.empty(2, dtype=L.bool)),
     RuntimeError, "maximum not implemented for complex tensors."),
    ("sign complex before out dtype",
     lambda L: L.sign(L.ones(2, dtype=L.complex64), out=L.empty(2)), NotImplementedError,
     ("Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
     "torch.sgn instead.")),
    ("floor complex before out dtype",
     lambda L: L.floor(L.ones(2, dtype=L.complex64), out=L.empty(2)), NotImplementedError,
     "floor is not supported for complex inputs"),
    ("neg out keeps the dtype", lambda L: L.neg(L.ones(2, dtype=L.int64), out=L.empty(2)),
     RuntimeError, "Found dtype Float but expected Long"),
    ("abs out keeps the dtype", lambda L: L.abs(L.ones(2), out=L.empty(2, dtype=L.float64)),
     RuntimeError, "Found dtype Double but expected Float"),
    ("abs complex into int",
     lambda L: L.abs(L.ones(2, dtype=L.complex64), out=L.empty(2, dtype=L.int64)),
     RuntimeError, "result type Float can't be cast to the desired output type Long"),
    ("mean into an int out", lambda L: L.mean(L.ones(2, 3), 1, out=L.empty(0, dtype=L.int64)),
     RuntimeError, "result type Float can't be cast to the desired output type Long"),
    ("norm of ints", lambda L: L.norm(L.ones(3, dtype=L.int64)), RuntimeError,
     "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long"),
    ("norm dtype int", lambda L: L.norm(L.ones(3), 2, 0, dtype=L.int32), RuntimeError,
     "linalg.vector_norm: dtype should be floating point or complex, but got Int"),
    ("norm dtype narrowing", lambda L: L.norm(L.ones(3), dtype=L.float16), RuntimeError,
     ("linalg.vector_norm: the dtype of the input (Float) should be convertible without "
     "narrowing to the specified dtype (Half)")),
    ("norm -1 of empty", lambda L: L.norm(L.zeros(3, 0), -1), RuntimeError,
     ("linalg.vector_norm cannot compute the -1 norm on an empty tensor because the operation "
     "does not have an identity")),
    ("norm inf over an empty dim", lambda L: L.norm(L.zeros(3, 0), math.inf, -1), RuntimeError,
     ("linalg.vector_norm cannot compute the inf norm on the dimension -1because this dimension "
     "is empty and the operation does not have an identity")),
    ("amax prints the dim given", lambda L: L.amax(L.zeros(3, 0), -1), IndexError,
     "amax(): Expected reduction dim -1 to have non-zero size."),
    ("max.dim: emptiness before complex", lambda L: L.zeros(3, 0, dtype=L.complex64).max(1),
     IndexError, "max(): Expected reduction dim 1 to have non-zero size."),
    ("amax checks each dim as it wraps it", lambda L: L.amax(L.zeros(0), (0, 1)), IndexError,
     "amax(): Expected reduction dim 0 to have non-zero size."),
    ("cumsum into bool", lambda L: L.cumsum(L.ones(3), 0, dtype=L.bool), NotImplementedError,
     "\"cumsum_out_cpu\" not implemented for 'Bool'"),
    ("aminmax complex", lambda L: L.aminmax(L.ones(2, dtype=L.complex64)), NotImplementedError,
     "\"aminmax_cpu\" not implemented for 'ComplexFloat'"),
    ("aminmax complex 0-dim with dim",
     lambda L: L.aminmax(L.ones((), dtype=L.complex64), dim=0), RuntimeError,
     "aminmax not implemented for ComplexFloat"),
    ("clamp float with a complex bound", lambda L: L.clamp(L.ones(2), 1 + 1j), RuntimeError,
     "value cannot be converted to type double without overflow"),
    ("clamp_ int with a complex bound", lambda L: L.ones(2, dtype=L.int64).clamp_(1j),
     RuntimeError, "result type ComplexFloat can't be cast to the desired output type long int"),
    ("layer_norm: mixed dtypes before shapes",
     lambda L: L.layer_norm(L.ones((), dtype=L.float64), (), L.ones(1)),
     RuntimeError, "mixed dtype (CPU): all inputs must share same datatype."),
    ("layer_norm: parameters other than float32",
     lambda L: L.layer_norm(L.ones(2, 3), (3,), L.ones(3, dtype=L.float64)),
     RuntimeError, "mixed dtype (CPU): expect parameter to have scalar type of Float"),
    ("layer_norm: float16 input, float64 weight",
     lambda L: L.layer_norm(L.ones(2, 3, dtype=L.float16), (3,), L.ones(3, dtype=L.float64)),
     RuntimeError, "mixed dtype (CPU): expect parameter to have scalar type of Float"),
    ("layer_norm of ints", lambda L: L.layer_norm(L.ones(2, 3, dtype=L.int64), (3,)),
     NotImplementedError, "\"LayerNormKernelImpl\" not implemented for 'Long'"),
    ("matmul of bool matrix and vector",
     lambda L: L.matmul(L.ones(2, 3, dtype=L.bool), L.ones(3, dtype=L.bool)),
     NotImplementedError, "\"addmv_impl_cpu\" not implemented for 'Bool'"),
    ("dot of bool", lambda L: L.dot(L.ones(2, dtype=L.bool), L.ones(2, dtype=L.bool)),
     NotImplementedError, "\"dot\" not implemented for 'Bool'"),
    ("conv2d of bool with a float16 weight",
     lambda L: L.conv2d(L.ones(1, 2, 4, 4, dtype=L.bool), L.ones(3, 2, 2, 2, dtype=L.float16)),
     NotImplementedError, "\"slow_conv2d_cpu\" not implemented for 'Bool'"),
    ("conv2d of complex with a float16 weight",
     lambda L: L.conv2d(L.ones(1, 2, 4, 4, dtype=L.complex64), L.ones(3, 2, 2, 2, dtype=L.float16)),
     RuntimeError, ("Input type (CPUComplexFloatType) and weight type (torch.HalfTensor) should be "
     "the same")),
    ("conv1d of complex with a bool weight",
     lambda L: L.conv1d(L.ones(1, 2, 4, dtype=L.complex128), L.ones(3, 2, 2, dtype=L.bool)),
     RuntimeError, ("Input type (CPUComplexDoubleType) and weight type (CPUBoolType) should be the "
     "same")),
    ("where: a number converted to the result dtype",
     lambda L: L.where(L.tensor([True, False]), L.ones(2, dtype=L.uint8), 256), RuntimeError,
     "value cannot be converted to type uint8_t without overflow"),
    ("pow float16 exponent overflow", lambda L: L.ones(2, dtype=L.float16) ** 70000, RuntimeError,
     "value cannot be converted to type c10::Half without overflow"),
]  # fmt: skip


@pytest.mark.parametrize("call,kind,message", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_error_matches_torch_and_golden(
    call: Callable[[Any], Any], kind: type[Exception], message: str
) -> None:
    expected, got = run(call)
    compare(expected, got, message)
    assert type(got) is kind or isinstance(got, kind)
    assert str(got) == message


# (id, call): results agree with torch (values, dtype, shape, strides).
CASES: list[tuple[str, Callable[[Any], Any]]] = [
    ("integer remainder into an empty result", lambda L: L.remainder(L.ones(0, 3, dtype=L.int8),
                                                                      L.zeros(3, dtype=L.int8))),
    ("integer floor_divide into an empty result",
     lambda L: L.floor_divide(L.ones(0, 3, dtype=L.int64), L.zeros(3, dtype=L.int64))),
    ("complex pow at zero", lambda L: L.pow(L.tensor([0j, 1 + 1j, 0j]),
                                            L.tensor([0j, 0j, -1 + 0j]))),
    ("float16 computation into a float32 out",
     lambda L: L.log(L.tensor([1.001, 3.3, 1000.7], dtype=L.float16), out=L.empty(3))),
    ("float16 division into a float64 out",
     lambda L: L.remainder(L.tensor([7.3, -2.9], dtype=L.float16),
                           L.tensor([0.7, 1.1], dtype=L.float16), out=L.empty(2, dtype=L.float64))),
    ("abs of a transposed complex tensor", lambda L: L.abs(L.ones(3, 2, dtype=L.complex64).t())),
    ("abs complex into a complex out",
     lambda L: L.abs(L.tensor([3 + 4j]), out=L.empty(1, dtype=L.complex64))),
    ("bool expanded + uint8 transposed", lambda L: L.add(L.ones(1, 3, dtype=L.bool).expand(2, 3),
                                                         L.ones(3, 2, dtype=L.uint8).t())),
    ("int strided + float", lambda L: L.arange(12).reshape(2, 6)[:, ::2] + L.ones(3).t()),
    ("pow of a size-1-dim tensor", lambda L: L.ones(3, 1, dtype=L.bool).t() ** True),
    ("where converts only self and other",
     lambda L: L.where(L.ones(1, 3, dtype=L.bool).expand(2, 3), L.ones(3, 2).t(), 2)),
    ("cumsum of a 0-dim tensor into bool", lambda L: L.cumsum(L.ones(()), 0, dtype=L.bool)),
    ("where: -1 wraps into uint8",
     lambda L: L.where(L.tensor([True, False]), L.ones(2, dtype=L.uint8), -1)),
    ("where: a float16 number overflows to inf",
     lambda L: L.where(L.tensor([True, False]), L.ones(2, dtype=L.float16), 1e6)),
    ("where: two numbers", lambda L: L.where(L.tensor([True, False]), 300, 2)),
    ("layer_norm: float16 input with float32 parameters",
     lambda L: L.layer_norm(L.arange(6.0).reshape(2, 3).to(L.float16), (3,), L.ones(3), L.ones(3))),
    ("mv of an empty bool matrix", lambda L: L.mv(L.ones(2, 0, dtype=L.bool),
                                                  L.ones(0, dtype=L.bool))),
    ("conv2d of complex tensors", lambda L: L.conv2d(
        L.arange(32.0).reshape(1, 2, 4, 4).to(L.complex64) * (1 - 2j),
        L.arange(24.0).reshape(3, 2, 2, 2).to(L.complex64) * 1j, padding=1)),
    ("mean into a float64 out", lambda L: L.mean(L.ones(2, 3), 1, out=L.empty(0, dtype=L.float64))),
    (
        "meta: converted inputs lay out the output",
        lambda L: L.add(
            L.ones(1, 3, dtype=L.bool, device="meta").expand(2, 3),
            L.ones(3, 2, dtype=L.uint8, device="meta").t(),
        ).stride(),
    ),
    ("maximum of complex on meta", lambda L: L.maximum(L.ones(2, dtype=L.complex64, device="meta"),
                                                       L.ones(2, device="meta")).shape),
]  # fmt: skip


@pytest.mark.parametrize("call", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_case_matches_torch(call: Callable[[Any], Any]) -> None:
    expected, got = run(call)
    compare(expected, got, "case")


# -- found in layers other helpers own: strict xfails to flip (REQUESTS.md) ---------------------

_P5 = pytest.mark.xfail(strict=True, reason="backends/cpu/kernels.py or layout.py: P5")

OTHERS: list[Any] = [
    pytest.param(
        lambda L: L.lt(L.ones(2, dtype=L.complex64), L.ones(2)),
        id="lt on complex raises NotImplementedError",
    ),
    pytest.param(
        lambda L: L.tensor([1 + 1j]) + math.inf, id="complex add computes a + alpha * b (inf+nanj)"
    ),
    pytest.param(
        lambda L: L.abs(L.ones(2, dtype=L.bool), out=L.empty(2)),
        id="abs.out checks the out dtype before bool",
    ),
    pytest.param(
        lambda L: L.ones(2, dtype=L.uint8).masked_fill(L.ones(2, dtype=L.bool), 300),
        id="masked_fill checks the value's range",
    ),
    pytest.param(
        lambda L: L.zeros(1, dtype=L.float16).fill_(1e6),
        id="a one-element float16 fill overflows to inf",
    ),
    pytest.param(
        lambda L: L.amax(L.zeros(0, 3, dtype=L.complex64), 1),
        id="amax of complex with an empty result returns it",
    ),
    pytest.param(
        lambda L: L.var(L.full((2, 13), 1e38), 1),
        id="var of large equal values is 0 (no overflow)",
    ),
    pytest.param(
        lambda L: 2 ** L.ones(3, 2, dtype=L.bool).t(),
        id="__rpow__ is pow(number, self): contiguous",
    ),
    pytest.param(
        lambda L: 2 / L.ones(3, 1).t(),
        id="__rtruediv__ is self.reciprocal() * other: contiguous",
    ),
    pytest.param(
        lambda L: f"{L.tensor(3)}|{L.tensor(2.5)}",
        id="format of a 0-dim tensor is its item's",
    ),
    pytest.param(
        lambda L: format(L.ones(2), ".2f"),
        id="format spec on a tensor with dims is a TypeError",
    ),
]


def _exact(expected: Any, got: Any) -> None:
    """compare(), plus bit-equal values (the float32-vs-float64 cases differ in the last bits)."""
    compare(expected, got, "case")
    if isinstance(expected, torch.Tensor):
        np.testing.assert_array_equal(np.asarray(got.numpy()), expected.numpy())


@pytest.mark.parametrize("call", OTHERS)
def test_cases_other_layers_own(call: Callable[[Any], Any]) -> None:
    _exact(*run(call))


# -- out= resize warnings: torch's deprecation warning when an out= tensor with elements is
# resized, none for the factories' out= (they call resize_) ---------------------------------

OUT_WARNINGS: list[Any] = [
    pytest.param(lambda L: L.add(L.ones(2, 3), 1, out=L.empty(5)), id="add"),
    pytest.param(lambda L: L.add(L.ones(2, 3), 1, out=L.empty(0)), id="add into empty"),
    pytest.param(lambda L: L.sum(L.ones(2, 3), 1, out=L.empty(5)), id="sum"),
    pytest.param(lambda L: L.mean(L.ones(2, 3), 1, out=L.empty(5)), id="mean"),
    pytest.param(lambda L: L.argmax(L.ones(2, 3), 1, out=L.empty(5, dtype=L.int64)), id="argmax"),
    pytest.param(lambda L: L.exp(L.ones(2, 3), out=L.empty(5)), id="exp"),
    pytest.param(
        lambda L: L.abs(L.ones(2, 3, dtype=L.complex64), out=L.empty(5)), id="abs complex"
    ),
    pytest.param(lambda L: L.clamp(L.ones(2, 3), 0, out=L.empty(5)), id="clamp"),
    pytest.param(lambda L: L.norm(L.ones(2, 3), 2, 1, out=L.empty(5)), id="norm"),
    pytest.param(lambda L: L.pow(2, L.ones(2, 3), out=L.empty(5)), id="pow number base"),
    pytest.param(
        lambda L: L.max(L.ones(2, 3), 1, out=(L.empty(5), L.empty(5, dtype=L.int64))), id="max.dim"
    ),
    pytest.param(lambda L: L.full((2,), 1.0, out=L.empty(5)), id="full"),
    pytest.param(lambda L: L.zeros(2, out=L.empty(5)), id="zeros"),
    pytest.param(lambda L: L.ones(2, 3, out=L.empty(3, 2).t()), id="ones keeps strides"),
    pytest.param(lambda L: L.nonzero(L.ones(2, 3), out=L.empty(5, dtype=L.int64)), id="nonzero"),
    pytest.param(lambda L: L.arange(3, out=L.empty(5, dtype=L.int64)), id="arange"),
]


def _warned(lib: Any, call: Callable[[Any], Any]) -> tuple[Any, list[str]]:
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call(lib)
    return result, sorted(f"{w.category.__name__}: {str(w.message)[:60]}" for w in caught)


@pytest.mark.parametrize("call", OUT_WARNINGS)
def test_out_resize_warnings_match_torch(call: Callable[[Any], Any]) -> None:
    (expected, torch_warnings), (got, our_warnings) = _warned(torch, call), _warned(TD, call)
    assert our_warnings == torch_warnings
    compare(expected, got, "out=")
