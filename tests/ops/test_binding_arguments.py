"""The Python bindings' argument handling as torch's arg parser: TypeError texts for a wrong
argument type, numbers accepted as tensors by the numbers-as-tensors operators, __rpow__,
Python ints outside int64."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import tensordispatch as td


def _error(fn: Callable[[Any], Any], lib: Any) -> tuple[type, str]:
    with pytest.raises(Exception) as info:
        fn(lib)
    return type(info.value), str(info.value)


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (
            lambda L: L.maximum(L.ones(2), 2),
            "maximum(): argument 'other' (position 2) must be Tensor, not int",
        ),
        (
            lambda L: L.maximum(2, L.ones(2)),
            "maximum(): argument 'input' (position 1) must be Tensor, not int",
        ),
        (
            lambda L: L.ones(2).maximum(2),
            "maximum(): argument 'other' (position 1) must be Tensor, not int",
        ),
        (
            lambda L: L.mm(L.ones(2, 2), [1]),
            "mm(): argument 'mat2' (position 2) must be Tensor, not list",
        ),
        (
            lambda L: L.ones(2, 2).mm(2.5),
            "mm(): argument 'mat2' (position 1) must be Tensor, not float",
        ),
        (
            lambda L: L.dot(L.ones(2), None),
            "dot(): argument 'tensor' (position 2) must be Tensor, not NoneType",
        ),
        (
            lambda L: L.add(L.ones(2), "a"),
            "add(): argument 'other' (position 2) must be Tensor, not str",
        ),
        (
            lambda L: L.maximum(L.ones(2), L.ones(2), out=3),
            "maximum(): argument 'out' must be Tensor, not int",
        ),
    ],
)
def test_wrong_argument_type_is_torchs_type_error(
    call: Callable[[Any], Any], expected: str
) -> None:
    assert _error(call, torch) == (TypeError, expected)
    assert _error(call, td) == (TypeError, expected)


def test_keyword_argument_error_is_a_type_error_naming_it() -> None:
    # torch omits "(position N)" for a keyword argument; ours cannot tell (documented gap).
    kind, text = _error(lambda L: L.maximum(L.ones(2), other=2), td)
    assert kind is TypeError
    assert text.startswith("maximum(): argument 'other'") and text.endswith(
        "must be Tensor, not int"
    )


def test_several_overloads_wrong_type_lists_torchs_signatures() -> None:
    expected = (
        TypeError,
        "sum() received an invalid combination of arguments - got (Tensor, str), but expected "
        "one of:\n"
        " * (Tensor input, *, torch.dtype dtype = None)\n"
        " * (Tensor input, tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None, "
        "Tensor out = None)\n",
    )
    assert _error(lambda L: L.sum(L.ones(2), "a"), td) == expected
    assert _error(lambda L: L.sum(L.ones(2), "a"), torch) == expected


def test_operator_level_keeps_runtime_error() -> None:
    kind, text = _error(lambda L: L.ops.aten.maximum(L.ones(2), 2), td)
    assert issubclass(kind, RuntimeError) and not issubclass(kind, TypeError)
    assert "Expected a value of type 'Tensor' for argument 'other'" in text


def test_error_from_a_nested_operator_is_not_renamed() -> None:
    from tensordispatch.dispatch.errors import ArgumentTypeError, binding_argument_error

    e = ArgumentTypeError(
        "aten::mm() Expected a value of type 'Tensor' for argument 'mat2' but instead found "
        "type 'int'."
    )
    assert binding_argument_error("matmul", e, ("input", "other"), False) is e


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "floor_divide"])
@pytest.mark.parametrize("first", [2, 2.5, -3])
def test_number_as_tensor_for_input(name: str, first: Any) -> None:
    want = getattr(torch, name)(first, torch.tensor([1, 3], dtype=torch.int32))
    got = getattr(td, name)(first, td.tensor([1, 3], dtype=td.int32))
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "floor_divide"])
def test_two_numbers_make_a_default_dtype_result(name: str) -> None:
    want = getattr(torch, name)(7, 2)
    got = getattr(td, name)(7, 2)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert got.tolist() == pytest.approx(want.tolist())


@pytest.mark.parametrize("name", ["maximum", "eq", "pow", "remainder"])
def test_operators_outside_the_list_reject_two_numbers(name: str) -> None:
    assert _error(lambda L: getattr(L, name)(7, 2), torch)[0] is TypeError
    assert _error(lambda L: getattr(L, name)(7, 2), td)[0] is TypeError


def test_rpow_is_pow_of_number_and_tensor() -> None:
    want = 2 ** torch.ones(3, 2, dtype=torch.bool).t()
    got = 2 ** td.ones(3, 2, dtype=td.bool).t()
    assert (str(got.dtype), got.stride(), got.tolist()) == (
        "tensordispatch.int64",
        want.stride(),
        want.tolist(),
    )
    assert str(want.dtype) == "torch.int64"


@pytest.mark.parametrize(
    ("value", "expected"),
    [(2**64, "int too big to convert"), (-(2**63) - 1, "can't convert negative int to unsigned")],
)
def test_int_outside_64_bits_is_torchs_overflow_error(value: int, expected: str) -> None:
    assert _error(lambda L: L.add(L.tensor([1]), value), torch) == (OverflowError, expected)
    assert _error(lambda L: L.add(L.tensor([1]), value), td) == (OverflowError, expected)


def test_uint64_range_int_names_the_missing_dtype() -> None:
    assert _error(lambda L: L.add(L.tensor([1]), 2**63), td) == (
        OverflowError,
        (
            "Python int 9223372036854775808 is in [2**63, 2**64): torch takes it as a uint64 "
            "scalar, and tensordispatch has no uint64 dtype; pass it as a float, or reduce it "
            "below 2**63"
        ),
    )
