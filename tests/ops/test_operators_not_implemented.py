"""Tensor's Python operators with an operand of an unsupported type return NotImplemented, as
torch's (Note [Operators return NotImplemented] in codegen/gen_python.py), so Python raises its
own "unsupported operand type(s)" TypeError; __rtruediv__ is torch's self.reciprocal() * other
and __rmatmul__ is matmul(other, self)."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import pytest
import torch

import tensordispatch as td

BINARY = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and_", "or_",
          "xor", "lshift", "rshift", "eq", "ne", "lt", "le", "gt", "ge"]  # fmt: skip
IN_PLACE = ["iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow", "imatmul", "iand",
            "ior", "ixor", "ilshift", "irshift"]  # fmt: skip
OTHERS = ["a", None, [1, 2], object()]


def _outcome(fn: Callable[[], Any]) -> tuple[str, str]:
    try:
        return "value", repr(fn())
    except Exception as e:  # noqa: BLE001 - the outcome is compared with torch's
        return type(e).__name__, str(e).split(" at 0x")[0]


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("other", OTHERS, ids=lambda o: type(o).__name__)
def test_binary_operator_with_other_type_matches_torch(name: str, other: Any) -> None:
    f = getattr(operator, name)
    expected = _outcome(lambda: f(torch.ones(2), other))
    assert _outcome(lambda: f(td.ones(2), other)) == expected


@pytest.mark.parametrize("name", BINARY)
def test_reflected_operator_with_str_matches_torch(name: str) -> None:
    f = getattr(operator, name)
    expected = _outcome(lambda: f("a", torch.ones(2)))
    assert _outcome(lambda: f("a", td.ones(2))) == expected


@pytest.mark.parametrize("name", IN_PLACE)
def test_in_place_operator_with_str_matches_torch(name: str) -> None:
    f = getattr(operator, name)
    expected = _outcome(lambda: f(torch.ones(2), "a"))
    assert _outcome(lambda: f(td.ones(2), "a")) == expected


def test_add_with_str_message_is_pythons() -> None:
    with pytest.raises(TypeError) as info:
        td.ones(2) + "a"  # type: ignore[operator]
    assert str(info.value) == "unsupported operand type(s) for +: 'Tensor' and 'str'"


def test_in_place_add_with_str_message_is_pythons() -> None:
    t = td.ones(2)
    with pytest.raises(TypeError) as info:
        t += "a"  # type: ignore[operator]
    assert str(info.value) == "unsupported operand type(s) for +=: 'Tensor' and 'str'"


def test_reflected_division_by_tensor_with_str_message_is_pythons() -> None:
    with pytest.raises(TypeError) as info:
        "a" / td.ones(2)  # type: ignore[operator]
    assert str(info.value) == "unsupported operand type(s) for /: 'str' and 'Tensor'"


def test_comparison_with_str_message_is_pythons() -> None:
    with pytest.raises(TypeError) as info:
        _ = td.ones(2) < "a"  # type: ignore[operator]
    assert str(info.value) == "'<' not supported between instances of 'Tensor' and 'str'"


@pytest.mark.parametrize(
    "dunder",
    [
        "__add__",
        "__radd__",
        "__iadd__",
        "__rtruediv__",
        "__rdiv__",
        "__eq__",
        "__rpow__",
        "__rsub__",
        "__rmod__",
        "__rfloordiv__",
        "__rmatmul__",
        "__rand__",
        "__rlshift__",
        "__irshift__",
        "__div__",
        "__idiv__",
    ],
)
def test_dunder_called_with_str_returns_not_implemented(dunder: str) -> None:
    assert getattr(torch.ones(2), dunder)("a") is NotImplemented  # the oracle agrees
    assert getattr(td.ones(2), dunder)("a") is NotImplemented


def test_tensor_equals_str_is_false_as_torch() -> None:
    assert (torch.ones(2) == "a") is False
    assert (td.ones(2) == "a") is False


def test_dunder_keeps_keyword_arguments_as_torch() -> None:
    assert td.ones(2).__add__(2, alpha=3).tolist() == torch.ones(2).__add__(2, alpha=3).tolist()


def test_runtime_errors_still_raise_from_operators() -> None:
    with pytest.raises(RuntimeError) as info:
        td.ones(2) + td.ones(3)
    assert str(info.value) == (
        "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"
    )


def test_rtruediv_is_reciprocal_times_other() -> None:
    t = td.tensor([2.0, 4.0], requires_grad=True)
    r = 3 / t
    assert r.tolist() == [1.5, 0.75]
    assert r.grad_fn.name() == (3 / torch.ones(1, requires_grad=True)).grad_fn.name()


def test_rtruediv_of_an_integer_tensor_is_float_as_torch() -> None:
    expected = 1 / torch.tensor([1, 2, 4])
    got = 1 / td.tensor([1, 2, 4])
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    assert got.tolist() == expected.tolist()


def test_rdiv_and_div_are_defined_as_torch() -> None:
    t, u = td.tensor([2.0, 4.0]), torch.tensor([2.0, 4.0])
    assert t.__rdiv__(2).tolist() == u.__rdiv__(2).tolist()
    assert t.__div__(2).tolist() == u.__div__(2).tolist()
    assert t.clone().__idiv__(2).tolist() == u.clone().__idiv__(2).tolist()


def test_rmatmul_is_matmul_of_other_and_self() -> None:
    a, b = [[1.0, 2.0], [3.0, 4.0]], [[0.0, 1.0], [1.0, 0.0]]
    expected = torch.tensor(b).__rmatmul__(torch.tensor(a))
    assert td.tensor(b).__rmatmul__(td.tensor(a)).tolist() == expected.tolist()
