"""Error messages, warnings and Python-level behaviour of the pointwise family F1 against
torch 2.13: the message text of every error our kernels raise (same type, same words),
where's one-argument form and uint8 condition warning, ``~`` on floats, operator aliasing."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch.backends.meta import pointwise as meta_pointwise

Case = Callable[[Any], Any]

# Each case runs with torch and with tensordispatch; both must raise the same type with the
# same message.
MESSAGES: dict[str, Case] = {
    "remainder by zero": lambda L: L.remainder(L.tensor([3, 4]), 0),
    "remainder bool": lambda L: L.remainder(L.tensor([True]), L.tensor([True])),
    "remainder complex": lambda L: L.remainder(L.tensor([1j]), 2),
    "floor_divide by zero": lambda L: L.tensor([3, 4]) // 0,
    "floor_divide bool": lambda L: L.floor_divide(L.tensor([True]), L.tensor([True])),
    "div trunc complex": lambda L: L.div(L.tensor([1j]), 2, rounding_mode="trunc"),
    "div floor bool": lambda L: L.div(L.tensor([True]), L.tensor([True]), rounding_mode="floor"),
    "pow negative int": lambda L: L.pow(L.tensor([2, 3]), -2),
    "pow bool": lambda L: L.pow(L.tensor([True]), L.tensor([True])),
    "pow bool base": lambda L: L.pow(True, L.tensor([True, False])),
    "pow out cast": lambda L: L.pow(L.tensor([2]), 0.5, out=L.empty(1, dtype=L.int64)),
    "erf complex": lambda L: L.erf(L.tensor([1j])),
    "silu int": lambda L: L.ops.aten.silu.default(L.tensor([1])),
    "gelu int": lambda L: L.ops.aten.gelu.default(L.tensor([1])),
    "gelu approximate": lambda L: L.ops.aten.gelu.default(L.tensor([1.0]), approximate="x"),
    "relu bool": lambda L: L.relu(L.tensor([True])),
    "relu complex": lambda L: L.relu(L.tensor([1j])),
    "floor complex": lambda L: L.floor(L.tensor([1j])),
    "ceil bool": lambda L: L.ceil(L.tensor([True])),
    "round complex": lambda L: L.round(L.tensor([1j])),
    "round decimals int": lambda L: L.round(L.tensor([1]), decimals=1),
    "sign complex": lambda L: L.sign(L.tensor([1j])),
    "floor out dtype": lambda L: L.floor(L.tensor([1.0]), out=L.empty(1, dtype=L.float64)),
    "clamp no bounds": lambda L: L.clamp(L.tensor([1.0])),
    "clamp complex": lambda L: L.clamp(L.tensor([1j]), 0),
    "clamp bool numbers": lambda L: L.clamp(L.tensor([True]), False, True),
    "clamp complex min tensor": lambda L: L.clamp(L.tensor([1.0]), min=L.tensor([1j])),
    "clamp complex tensors": lambda L: L.clamp(L.tensor([1.0]), L.tensor([1j]), L.tensor([1j])),
    "clamp_max complex": lambda L: L.clamp_max(L.tensor([1j]), L.tensor([1.0])),
    "clamp complex self tensor": lambda L: L.clamp(L.tensor([1j]), L.tensor([1.0])),
    "clamp bool min number": lambda L: L.clamp(L.tensor([True]), min=False),
    "clamp_max bool number": lambda L: L.clamp_max(L.tensor([True]), True),
    "clamp bool tensors": lambda L: L.clamp(L.tensor([True]), L.tensor([True]), L.tensor([True])),
    "clamp_ promotes": lambda L: L.tensor([1, 2]).clamp_(0.5),
    "clamp_min_ promotes": lambda L: L.tensor([1, 2]).clamp_min_(0.5),
    "maximum complex": lambda L: L.maximum(L.tensor([1j]), L.tensor([1j])),
    "where condition": lambda L: L.where(L.tensor([1.0]), L.tensor([1.0]), 0.0),
    "where out dtype": lambda L: L.where(
        L.tensor([True]), L.tensor([1.0]), L.tensor([0.0]), out=L.empty(1, dtype=L.float64)
    ),
    "where out number": lambda L: L.where(
        L.tensor([True]), L.tensor([1.0]), 0.0, out=L.empty(1, dtype=L.float64)
    ),
    "logical_and_ broadcast": lambda L: L.tensor([1.0]).logical_and_(L.tensor([1.0, 0.0])),
    "bitwise float": lambda L: L.bitwise_and(L.tensor([1.0]), L.tensor([1.0])),
    "bitwise float number": lambda L: L.tensor([1, 2]) | 1.5,
    "bitwise_not float": lambda L: L.bitwise_not(L.tensor([1.0])),
    "invert float": lambda L: ~L.tensor([1.0]),
    "lerp end dtype": lambda L: L.lerp(L.tensor([1.0]), L.tensor([1.0], dtype=L.float64), 0.5),
    "lerp weight dtype": lambda L: L.lerp(
        L.tensor([1.0]), L.tensor([1.0]), L.tensor([0.5], dtype=L.float64)
    ),
    "lerp int": lambda L: L.lerp(L.tensor([1]), L.tensor([2]), 0.5),
    "lerp int tensor weight": lambda L: L.lerp(L.tensor([1]), L.tensor([2]), L.tensor([1])),
    "lerp complex weight": lambda L: L.lerp(L.tensor([1.0]), L.tensor([2.0]), 0.5j),
    "addcmul bool": lambda L: L.addcmul(L.tensor([True]), L.tensor([True]), L.tensor([True])),
    "addcmul value overflow": lambda L: L.addcmul(*(L.tensor([1], dtype=L.uint8),) * 3, value=-1.5),
    "clamp bound overflow int8": lambda L: L.clamp(L.tensor([1], dtype=L.int8), 1000),
    "clamp bound overflow uint8": lambda L: L.clamp(L.tensor([1], dtype=L.uint8), -300),
    "clamp bound overflow half": lambda L: L.clamp(L.tensor([1.0], dtype=L.float16), 1e6),
    "lerp weight overflow": lambda L: L.lerp(L.tensor([1.0]), L.tensor([1.0]), 1e300),
    "pow exponent overflow": lambda L: L.pow(L.tensor([1], dtype=L.int8), 300),
    "addcmul complex value": lambda L: L.addcmul(
        L.tensor([1.0], dtype=L.float64), L.tensor([1.0]), L.tensor([1.0]), value=1j
    ),
    "addcdiv complex value int": lambda L: L.addcmul(
        L.tensor([1]), L.tensor([1]), L.tensor([1]), value=1j
    ),
    "lerp complex weight half": lambda L: L.lerp(
        L.tensor([1.0], dtype=L.float16), L.tensor([2.0], dtype=L.float16), 0.5j
    ),
    "addcdiv int": lambda L: L.addcdiv(L.tensor([1.0]), L.tensor([1]), L.tensor([2])),
    "inplace cast": lambda L: L.tensor([1, 2]).pow_(L.tensor([0.5])),
    "broadcast": lambda L: L.maximum(L.tensor([1.0, 2.0]), L.tensor([1.0, 2.0, 3.0])),
}


def _raised(fn: Case, lib: Any) -> BaseException:
    with pytest.raises(Exception) as info:
        fn(lib)
    return info.value


@pytest.mark.parametrize("name", list(MESSAGES))
def test_error_message_matches_torch(name: str) -> None:
    expected = _raised(MESSAGES[name], torch)
    got = _raised(MESSAGES[name], td)
    assert type(got) is type(expected) or isinstance(got, type(expected)), (expected, got)
    assert str(got) == str(expected)


def test_addcdiv_integer_message_golden() -> None:
    with pytest.raises(RuntimeError) as info:
        td.addcdiv(td.tensor([1]), td.tensor([1]), td.tensor([2]))
    assert str(info.value).startswith(
        "Integer division with addcdiv is no longer supported, and in a future  release "
        "addcdiv will perform a true division of tensor1 and tensor2."
    )


def test_clamp_inplace_promotion_message_golden() -> None:
    with pytest.raises(RuntimeError) as info:
        td.tensor([1, 2]).clamp_(0.5)
    assert str(info.value) == "result type Float can't be cast to the desired output type long int"


def test_where_condition_alone_is_nonzero_as_tuple() -> None:
    data = [[True, False, True], [False, True, False]]
    got = td.where(td.tensor(data))
    expected = torch.where(torch.tensor(data))
    assert isinstance(got, tuple) and len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.tolist() == e.tolist() and g.dtype.name == "int64"


def test_where_uint8_condition_warns_once_and_selects() -> None:
    meta_pointwise._WARNED_UINT8[0] = False
    cond = [1, 0, 2]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = td.where(td.tensor(cond, dtype=td.uint8), td.tensor([1.0, 2.0, 3.0]), 0.0)
        td.where(td.tensor(cond, dtype=td.uint8), td.tensor([1.0, 2.0, 3.0]), 0.0)
    assert [str(w.message)[:40] for w in caught] == ["where received a uint8 condition tensor."]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = torch.where(
            torch.tensor(cond, dtype=torch.uint8), torch.tensor([1.0, 2.0, 3.0]), 0.0
        )
    assert first.tolist() == expected.tolist()


@pytest.mark.parametrize(
    ("expr", "dtype"),
    [("x %= 3", "int64"), ("x **= 2", "float32"), ("x //= 2", "float32"), ("x &= 6", "int64"),
     ("x |= 1", "int64"), ("x ^= 5", "int64")],
)  # fmt: skip
def test_inplace_operators_return_the_same_tensor_and_match_torch(expr: str, dtype: str) -> None:
    results = []
    for lib in (torch, td):
        x = lib.tensor([[7, -3, 2], [-8, 5, 4]], dtype=getattr(lib, dtype))
        view = x[0] if lib is torch else x.select(0, 0)
        ns = {"x": x}
        exec(expr, ns)  # noqa: S102 - the operator under test
        assert ns["x"] is x
        results.append((x.tolist(), view.tolist()))
    assert results[0] == results[1]


def test_reflected_operators_match_torch() -> None:
    for expr in ("5 % x", "2 ** x", "7 // x", "6 & x", "6 | x", "6 ^ x", "2.5 % x"):
        got = eval(expr, {"x": td.tensor([3, -2, 5])})
        expected = eval(expr, {"x": torch.tensor([3, -2, 5])})
        assert got.dtype.name == str(expected.dtype).split(".")[-1], expr
        np.testing.assert_array_equal(got.numpy(), expected.numpy(), err_msg=expr)
