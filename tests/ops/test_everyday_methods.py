"""M1's everyday operators against torch 2.13: new_* factories, *_as, float classification
(isnan ... signbit), square, nan_to_num, positive, and the alias operators (absolute,
multiply, divide, clip, greater, ...): values, dtypes, shapes, strides, aliasing, autograd
nodes, gradients and error texts."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
import torch

import tensordispatch as td
from tensordispatch.ops.decompositions_aliases import ALIAS_OVERLOADS

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

NAN, INF = math.nan, math.inf
SPECIAL = [1.5, NAN, INF, -INF, -0.0, 0.0, -2.0]


def _name(dtype: Any) -> str:
    return str(dtype).split(".")[-1]


def _both(make: Callable[[Any], Any]) -> tuple[Any, Any]:
    return make(torch), make(td)


def _same(expected: Any, got: Any) -> None:
    assert isinstance(got, td.Tensor)
    assert _name(got.dtype) == _name(expected.dtype)
    assert tuple(got.shape) == tuple(expected.shape)
    assert got.stride() == expected.stride()
    assert got.device.type == expected.device.type
    if got.device.type != "meta":
        e, g = expected.tolist(), got.tolist()
        assert str(g) == str(e)  # str: nan equals nan, -0.0 differs from 0.0


# -- new_* -----------------------------------------------------------------------------------

NEW_CALLS: dict[str, Callable[[Any, Any], Any]] = {
    "new_zeros": lambda m, x: x.new_zeros(2, 3),
    "new_zeros tuple": lambda m, x: x.new_zeros((2,)),
    "new_zeros dtype": lambda m, x: x.new_zeros([3], dtype=m.int8),
    "new_ones": lambda m, x: x.new_ones((2, 1)),
    "new_ones meta": lambda m, x: x.new_ones(2, device="meta"),
    "new_full": lambda m, x: x.new_full((2,), 7),
    "new_full float value": lambda m, x: x.new_full((2,), 2.5),
    "new_full dtype": lambda m, x: x.new_full((2,), 3, dtype=m.float64),
    "new_empty shape": lambda m, x: x.new_empty((2, 3)).fill_(1),
    "new_empty_strided": lambda m, x: x.new_empty_strided((2, 3), (1, 2)).fill_(1),
}


@pytest.mark.parametrize("source", ["float32", "int32", "bool"])
@pytest.mark.parametrize("case", sorted(NEW_CALLS))
def test_new_factories_match_torch(case: str, source: str) -> None:
    t, d = _both(lambda m: m.ones(2, requires_grad=False).to(getattr(m, source)).t())
    _same(NEW_CALLS[case](torch, t), NEW_CALLS[case](td, d))


def test_new_factories_do_not_require_grad_unless_asked() -> None:
    x = td.ones(2, requires_grad=True)
    assert not x.new_zeros(2).requires_grad
    assert x.new_ones(2, requires_grad=True).requires_grad
    assert x.new_full((2,), 1.0).grad_fn is None


def test_new_tensor_default_dtype_is_selfs() -> None:
    got = td.ones(1, dtype=td.float64).new_full((1,), 1)
    assert got.dtype == td.float64


# -- *_as ------------------------------------------------------------------------------------


def test_view_as_is_a_view() -> None:
    x = td.arange(6.0)
    v = x.view_as(td.ones(2, 3))
    assert v.shape == (2, 3)
    assert v._base is x
    v[0, 0] = 5.0
    assert x[0].item() == 5.0


def test_expand_as_and_reshape_as_match_torch() -> None:
    for make in (
        lambda m: m.arange(3.0).expand_as(m.ones(2, 3)),
        lambda m: m.arange(6.0).reshape(2, 3).t().reshape_as(m.ones(6)),
        lambda m: m.arange(6.0).reshape_as(m.ones(3, 2)),
    ):
        _same(*_both(make))


def test_as_grad_nodes_match_torch() -> None:
    for name, other in (("view_as", (6,)), ("expand_as", (2, 2, 3)), ("reshape_as", (3, 2))):
        a = torch.ones(2, 3, requires_grad=True)
        b = td.ones(2, 3, requires_grad=True)
        expected = getattr(a, name)(torch.ones(other)).grad_fn.name()
        assert type(getattr(b, name)(td.ones(other)).grad_fn).__name__ == expected


@pytest.mark.parametrize("target", ["int8", "float64", "float32", "complex64"])
def test_type_as_matches_torch(target: str) -> None:
    t, d = _both(lambda m: m.tensor([1.5, -2.0]))
    expected = t.type_as(torch.ones(1, dtype=getattr(torch, target)))
    got = d.type_as(td.ones(1, dtype=getattr(td, target)))
    _same(expected, got)
    assert (got is d) == (expected is t)


AS_ERRORS: dict[str, Callable[[Any], Any]] = {
    "view_as size": lambda m: m.ones(4).view_as(m.ones(3)),
    "expand_as size": lambda m: m.ones(4).expand_as(m.ones(3)),
    "type_as number": lambda m: m.ones(2).type_as(3),
}


@pytest.mark.parametrize("case", sorted(AS_ERRORS))
def test_as_errors_match_torch(case: str) -> None:
    with pytest.raises(Exception) as expected:
        AS_ERRORS[case](torch)
    with pytest.raises(Exception) as got:
        AS_ERRORS[case](td)
    assert type(got.value).__name__ == type(expected.value).__name__
    assert str(got.value) == str(expected.value)


# -- classification, square, nan_to_num ------------------------------------------------------

UNARY = ["isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "signbit", "square",
         "nan_to_num", "positive"]  # fmt: skip
DTYPES = ["float32", "float64", "float16", "int64", "int8", "uint8", "bool", "complex64"]


def _special(m: Any, dtype: str, finite: bool = False) -> Any:
    values = SPECIAL if dtype in ("float32", "float64", "float16") else [1.0, 0.0, 3.0, 2.0]
    if dtype == "complex64":  # pow's complex infinities differ from torch's (not M1's kernel)
        values = [1 + 2j, 2j, 1.5] if finite else [complex(1, NAN), complex(INF, 0), 2j, 1.5]
    return m.tensor(values).to(getattr(m, dtype)).reshape(1, -1).expand(2, -1)


def _outcome(fn: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - the error is the outcome compared
        return type(e).__name__, str(e)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", UNARY)
def test_unary_matches_torch(name: str, dtype: str) -> None:
    finite = name == "square"
    for call in (lambda m, x: getattr(m, name)(x), lambda m, x: getattr(x, name)()):
        kind, expected = _outcome(lambda c=call: c(torch, _special(torch, dtype, finite)))
        got_kind, got = _outcome(lambda c=call: c(td, _special(td, dtype, finite)))
        assert got_kind == kind, (got, expected)
        if kind == "ok":
            _same(expected, got)
        else:
            assert got == expected


@pytest.mark.parametrize("name", ["isposinf", "isneginf", "signbit", "isnan", "nan_to_num"])
def test_unary_on_meta_matches_torch(name: str) -> None:
    t, d = _both(lambda m: m.ones(2, 3, device="meta").t())
    _same(getattr(torch, name)(t), getattr(td, name)(d))


@pytest.mark.parametrize(
    "kwargs", [{}, {"nan": 2.0}, {"posinf": 1e300, "neginf": -5.0}, {"nan": 1, "posinf": 3}]
)
@pytest.mark.parametrize("dtype", ["float32", "float16", "complex64", "int32"])
def test_nan_to_num_values_match_torch(dtype: str, kwargs: dict[str, Any]) -> None:
    expected = torch.nan_to_num(_special(torch, dtype), **kwargs)
    _same(expected, td.nan_to_num(_special(td, dtype), **kwargs))


def test_nan_to_num_in_place_and_out() -> None:
    t, d = _both(lambda m: m.tensor(SPECIAL))
    assert d.nan_to_num_(nan=1.0) is d
    _same(t.nan_to_num_(nan=1.0), d)
    out_t, out_d = torch.empty(0), td.empty(0)
    torch.nan_to_num(torch.tensor(SPECIAL), out=out_t)
    assert td.nan_to_num(td.tensor(SPECIAL), out=out_d) is out_d
    _same(out_t, out_d)


def test_nan_to_num_gradient_matches_torch() -> None:
    values = [1.0, 2.0, -3.0, 4.0]
    a = torch.tensor(values, requires_grad=True)
    b = td.tensor(values, requires_grad=True)
    scale = [1.0, INF, -INF, NAN]
    ra = torch.nan_to_num(a * torch.tensor(scale), posinf=9.0)
    rb = td.nan_to_num(b * td.tensor(scale), posinf=9.0)
    assert type(rb.grad_fn).__name__ == ra.grad_fn.name() == "NanToNumBackward0"
    ra.sum().backward()
    rb.sum().backward()
    assert str(b.grad.tolist()) == str(a.grad.tolist())


def test_square_gradient_matches_torch() -> None:
    a = torch.tensor([1.5, -2.0], requires_grad=True)
    b = td.tensor([1.5, -2.0], requires_grad=True)
    a.square().sum().backward()
    b.square().sum().backward()
    assert b.grad.tolist() == a.grad.tolist()


ERRORS: dict[str, Callable[[Any], Any]] = {
    "nan_to_num out dtype": lambda m: m.nan_to_num(m.ones(2), out=m.empty(2, dtype=m.float64)),
    "signbit complex": lambda m: m.signbit(m.ones(1, dtype=m.complex64)),
    "signbit out": lambda m: m.signbit(m.ones(2), out=m.empty(2)),
    "isposinf complex": lambda m: m.isposinf(m.ones(1, dtype=m.complex64)),
    "isneginf out": lambda m: m.isneginf(m.ones(2), out=m.empty(2)),
    "positive bool": lambda m: m.positive(m.ones(1, dtype=m.bool)),
    "square_ int of float": lambda m: m.ones(2, dtype=m.int64).square_().add_(0.5),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_torch(case: str) -> None:
    kind, expected = _outcome(lambda: ERRORS[case](torch))
    got_kind, got = _outcome(lambda: ERRORS[case](td))
    assert kind != "ok"
    assert (got_kind, got) == (kind, expected)


def test_error_texts_golden() -> None:
    with pytest.raises(RuntimeError) as e:
        td.nan_to_num(td.ones(2), out=td.empty(2, dtype=td.float64))
    assert str(e.value) == "nan_to_num: dtype of out: Double should be same as input: Float"
    with pytest.raises(RuntimeError) as e:
        td.isposinf(td.ones(1, dtype=td.complex64))
    assert str(e.value) == "isposinf does not support complex inputs."
    with pytest.raises(RuntimeError) as e:
        td.signbit(td.ones(2), out=td.empty(2))
    assert str(e.value) == "signbit does not support non-boolean outputs."


# -- aliases ---------------------------------------------------------------------------------

ALIAS_CALLS: dict[str, Callable[[Any, Any], Any]] = {
    "absolute": lambda m, a: m.absolute(a - 1),
    "absolute method": lambda m, a: (a - 1).absolute(),
    "negative": lambda m, a: m.negative(a),
    "multiply number": lambda m, a: a.multiply(2),
    "multiply tensor": lambda m, a: m.multiply(a, a),
    "divide number": lambda m, a: a.divide(2),
    "divide mode": lambda m, a: a.divide(2, rounding_mode="floor"),
    "divide tensor mode None": lambda m, a: m.divide(a, a + 1, rounding_mode=None),
    "true_divide": lambda m, a: m.true_divide(a, 3),
    "subtract alpha": lambda m, a: a.subtract(2, alpha=3),
    "subtract tensor": lambda m, a: m.subtract(a, a * 2),
    "clip numbers": lambda m, a: a.clip(0.5, 2),
    "clip tensors": lambda m, a: m.clip(a, max=a * 0 + 1),
    "clip min only": lambda m, a: a.clip(min=1.5),
    "greater": lambda m, a: a.greater(1.5),
    "less tensor": lambda m, a: m.less(a, a.flip(0)),
    "greater_equal": lambda m, a: m.greater_equal(a, 2),
    "less_equal": lambda m, a: a.less_equal(a),
    "not_equal": lambda m, a: a.not_equal(2),
}


@pytest.mark.parametrize("case", sorted(ALIAS_CALLS))
def test_alias_matches_torch(case: str) -> None:
    a = torch.tensor([0.5, 1.5, 2.5, -1.0], requires_grad=True)
    b = td.tensor([0.5, 1.5, 2.5, -1.0], requires_grad=True)
    expected, got = ALIAS_CALLS[case](torch, a), ALIAS_CALLS[case](td, b)
    _same(expected.detach(), got.detach())
    node = None if expected.grad_fn is None else expected.grad_fn.name()
    assert (None if got.grad_fn is None else type(got.grad_fn).__name__) == node


INPLACE_CALLS: dict[str, Callable[[Any], Any]] = {
    "absolute_": lambda x: x.absolute_(),
    "negative_": lambda x: x.negative_(),
    "multiply_": lambda x: x.multiply_(3),
    "divide_": lambda x: x.divide_(2, rounding_mode="trunc"),
    "true_divide_": lambda x: x.true_divide_(4),
    "subtract_": lambda x: x.subtract_(1, alpha=2),
    "clip_": lambda x: x.clip_(-1, 1),
    "greater_": lambda x: x.greater_(0),
    "less_equal_": lambda x: x.less_equal_(x.flip(0)),
    "square_": lambda x: x.square_(),
}


@pytest.mark.parametrize("case", sorted(INPLACE_CALLS))
def test_inplace_alias_matches_torch(case: str) -> None:
    t, d = _both(lambda m: m.tensor([-1.5, 0.5, 2.5, -3.0]))
    assert INPLACE_CALLS[case](d) is d
    _same(INPLACE_CALLS[case](t), d)


def test_out_aliases_match_torch() -> None:
    for name, args in (("multiply", (2.0,)), ("clip", (0.0, 1.0)), ("greater", (0.0,)),
                       ("absolute", ()), ("divide", (4.0,)), ("square", ())):  # fmt: skip
        t, d = _both(lambda m: m.tensor([-1.5, 0.5, 2.5]))
        dtype = "bool" if name == "greater" else "float32"
        out_t, out_d = (
            torch.empty(3, dtype=getattr(torch, dtype)),
            td.empty(3, dtype=getattr(td, dtype)),
        )
        targs = tuple(torch.tensor(v) if name in ("multiply", "divide") else v for v in args)
        dargs = tuple(td.tensor(v) if name in ("multiply", "divide") else v for v in args)
        getattr(torch, name)(t, *targs, out=out_t)
        assert getattr(td, name)(d, *dargs, out=out_d) is out_d
        _same(out_t, out_d)


def test_aliases_are_operators_of_their_own() -> None:
    assert len(ALIAS_OVERLOADS) == 91
    for alias in ALIAS_OVERLOADS:
        name, _, overload = alias.partition(".")
        ours = getattr(getattr(td.ops.aten, name), overload or "default")
        theirs = getattr(getattr(torch.ops.aten, name), overload or "default")
        assert str(ours._schema) == str(theirs._schema)


def test_alias_error_text_matches_torch() -> None:
    with pytest.raises(TypeError) as expected:
        torch.clip(torch.ones(2), "x")
    with pytest.raises(TypeError) as got:
        td.clip(td.ones(2), "x")
    assert str(got.value) == str(expected.value)
