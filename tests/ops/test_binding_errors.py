"""The bindings' TypeError texts against torch 2.13's arg parser (ops/binding_errors.py): an
argument given by keyword is named without a position, names with several visible signatures
list them ("received an invalid combination of arguments"), copy_'s source is ``other``."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pytest
import torch

import tensordispatch as td
from tensordispatch.ops.binding_errors import PYTHON_SIGNATURES, call_keywords


def _message(fn: Callable[[], Any]) -> tuple[type, str]:
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


CASES: list[Any] = [
    pytest.param(lambda L: L.add(L.ones(2), other="a"), id="add other by keyword"),
    pytest.param(lambda L: L.ones(2).add(other="a"), id="Tensor.add other by keyword"),
    pytest.param(lambda L: L.add(L.ones(2), L.ones(2), alpha="a"), id="add alpha is a Number"),
    pytest.param(lambda L: L.add(L.ones(2), "a"), id="add other by position"),
    pytest.param(lambda L: L.sub(L.ones(2), "a"), id="sub"),
    pytest.param(lambda L: L.mul(L.ones(2), other=None), id="mul other by keyword"),
    pytest.param(lambda L: L.maximum(L.ones(2), other=2), id="maximum other by keyword"),
    pytest.param(lambda L: L.mm(L.ones(2, 2), mat2=2), id="mm mat2 by keyword"),
    pytest.param(lambda L: L.div(L.ones(2), "a"), id="div"),
    pytest.param(
        lambda L: L.div(L.ones(2), L.ones(2), rounding_mode=1), id="div rounding_mode int"
    ),
    pytest.param(lambda L: L.ones(2).div("a", rounding_mode="floor"), id="Tensor.div"),
    pytest.param(lambda L: L.pow(L.ones(2), "a"), id="pow"),
    pytest.param(lambda L: L.pow("a", L.ones(2)), id="pow str base"),
    pytest.param(lambda L: L.pow(L.ones(2), exponent="a"), id="pow exponent by keyword"),
    pytest.param(lambda L: L.ones(2).pow("a"), id="Tensor.pow"),
    pytest.param(lambda L: L.ones(2).pow(None), id="Tensor.pow None"),
    pytest.param(lambda L: L.ones(2).pow(exponent="a"), id="Tensor.pow by keyword"),
    pytest.param(lambda L: L.ones(2).pow_("a"), id="Tensor.pow_"),
    pytest.param(lambda L: L.ones(2).eq("a"), id="Tensor.eq"),
    pytest.param(lambda L: L.ones(2).eq(other="a"), id="Tensor.eq by keyword"),
    pytest.param(lambda L: L.where(L.ones(2) > 0, "a", L.ones(2)), id="where str input"),
    pytest.param(lambda L: L.where("a", L.ones(2), L.ones(2)), id="where str condition"),
    pytest.param(lambda L: L.where(L.ones(2) > 0, L.ones(2)), id="where without other"),
    pytest.param(
        lambda L: L.where(L.ones(2) > 0, L.ones(2), other="a"), id="where other by keyword"
    ),
    pytest.param(lambda L: L.ones(2).where(L.ones(2) > 0, "a"), id="Tensor.where"),
    pytest.param(lambda L: L.clamp(L.ones(2), "a"), id="clamp"),
    pytest.param(lambda L: L.clamp(L.ones(2), min="a"), id="clamp min by keyword"),
    pytest.param(lambda L: L.ones(2).clamp("a"), id="Tensor.clamp"),
    pytest.param(lambda L: L.ones(2).clamp(L.ones(2), "a"), id="Tensor.clamp tensor and str"),
    pytest.param(lambda L: L.clamp(L.ones(2), L.ones(2), 3), id="clamp tensor and number"),
    pytest.param(lambda L: L.clamp_(L.ones(2), "a"), id="clamp_"),
    pytest.param(lambda L: L.ones(2, 2).pow([1, 2]), id="Tensor.pow list"),
    pytest.param(lambda L: L.ones(2, 2).pow((1, "a")), id="Tensor.pow tuple"),
    pytest.param(lambda L: L.ones(2, 2).eq([L.ones(1)]), id="Tensor.eq list of tensors"),
    pytest.param(lambda L: L.ones(2, 2).eq(None), id="Tensor.eq None"),
    pytest.param(lambda L: L.ones(2, 2).sum("a"), id="Tensor.sum str"),
    pytest.param(lambda L: L.ones(2, 2).sum(dim="a"), id="Tensor.sum dim by keyword"),
    pytest.param(lambda L: L.ones(2, 2).sum(0, "a"), id="Tensor.sum keepdim str"),
    pytest.param(lambda L: L.sum(L.ones(2, 2), (0,), "x"), id="sum keepdim str"),
    pytest.param(lambda L: L.ones(2, 2).max("a"), id="Tensor.max str"),
    pytest.param(lambda L: L.ones(2, 2).min(dim="a"), id="Tensor.min dim by keyword"),
    pytest.param(lambda L: L.max(L.ones(2, 2), "a"), id="max str"),
    pytest.param(lambda L: L.ones(2, 2).mean("a"), id="Tensor.mean str"),
    pytest.param(lambda L: L.ones(2, 2).narrow(0, "a", 1), id="Tensor.narrow"),
    pytest.param(lambda L: L.ones(2, 2).masked_fill(L.ones(2, 2) > 0, "a"), id="masked_fill"),
    pytest.param(lambda L: L.ones(2, 2).fill_("a"), id="Tensor.fill_"),
    pytest.param(lambda L: L.ones(2, 2).lerp(L.ones(2, 2), "a"), id="Tensor.lerp"),
    pytest.param(lambda L: L.bitwise_and(L.ones(2, 2), "a"), id="bitwise_and"),
    pytest.param(lambda L: L.floor_divide(L.ones(2, 2), "a"), id="floor_divide"),
    pytest.param(lambda L: L.ones(2, 2).clamp_min("a"), id="Tensor.clamp_min"),
    pytest.param(lambda L: L.clamp_max_(L.ones(2, 2), "a"), id="clamp_max_"),
    pytest.param(lambda L: L.eq(L.ones(2, 2), "a"), id="eq"),
    pytest.param(lambda L: L.remainder(L.ones(2, 2), "a"), id="remainder"),
    pytest.param(lambda L: L.ones(2, 2).prod("a"), id="Tensor.prod"),
    pytest.param(lambda L: L.ones(2, 2).sort("a"), id="Tensor.sort"),
    pytest.param(lambda L: L.mm(L.ones(2, 2), "a"), id="mm"),
    pytest.param(lambda L: L.rsub(L.ones(2, 2), "a"), id="rsub"),
    pytest.param(lambda L: L.ones(2, 2).lt(other="a"), id="Tensor.lt by keyword"),
    pytest.param(lambda L: L.ge(L.ones(2, 2), other="a"), id="ge by keyword"),
    pytest.param(lambda L: L.ones(2, 2).pow(exponent=[True]), id="Tensor.pow list by keyword"),
    pytest.param(lambda L: L.ones(2).maximum(L.float32), id="a dtype is named torch.dtype"),
    pytest.param(lambda L: L.ones(2).maximum(L.strided), id="a layout is named torch.layout"),
    pytest.param(
        lambda L: L.ones(2).maximum(L.contiguous_format), id="a memory format is named as torch"
    ),
    pytest.param(lambda L: L.ones(2).copy_("x"), id="copy_ source by position"),
    pytest.param(lambda L: L.ones(2).copy_(other="x"), id="copy_ source by keyword"),
    pytest.param(lambda L: L.ones(2).copy_(L.ones(2), L.ones(2)), id="copy_ non_blocking"),
]


@pytest.mark.parametrize("call", CASES)
def test_binding_error_matches_torch(call: Callable[[Any], Any]) -> None:
    expected = _message(lambda: call(torch))
    assert _message(lambda: call(td)) == expected


def test_keyword_argument_is_named_without_position() -> None:
    assert _message(lambda: td.add(td.ones(2), other="a")) == (
        TypeError,
        "add(): argument 'other' must be Tensor, not str",
    )


def test_positional_argument_is_named_with_position() -> None:
    assert _message(lambda: td.maximum(td.ones(2), 2)) == (
        TypeError,
        "maximum(): argument 'other' (position 2) must be Tensor, not int",
    )


def test_pow_method_lists_its_signatures() -> None:
    assert _message(lambda: td.ones(2).pow("a")) == (
        TypeError,
        (
            "pow() received an invalid combination of arguments - got (str), but expected one "
            "of:\n"
            " * (Tensor exponent)\n"
            "      didn't match because some of the arguments have invalid types: (!str!)\n"
            " * (Number exponent)\n"
            "      didn't match because some of the arguments have invalid types: (!str!)\n"
        ),
    )


def test_where_with_a_str_input_lists_its_signatures() -> None:
    assert _message(lambda: td.where(td.ones(2) > 0, "a", td.ones(2)))[1] == (
        "where() received an invalid combination of arguments - got (Tensor, str, Tensor), but "
        "expected one of:\n"
        " * (Tensor condition)\n"
        " * (Tensor condition, Tensor input, Tensor other, *, Tensor out = None)\n"
        " * (Tensor condition, Number self, Tensor other)\n"
        "      didn't match because some of the arguments have invalid types: "
        "(Tensor, !str!, Tensor)\n"
        " * (Tensor condition, Tensor input, Number other)\n"
        "      didn't match because some of the arguments have invalid types: "
        "(Tensor, !str!, !Tensor!)\n"
        " * (Tensor condition, Number self, Number other)\n"
        "      didn't match because some of the arguments have invalid types: "
        "(Tensor, !str!, !Tensor!)\n"
    )


def test_clamp_with_a_str_bound_lists_its_signatures() -> None:
    assert _message(lambda: td.clamp(td.ones(2), min="a"))[1] == (
        "clamp() received an invalid combination of arguments - got (Tensor, min=str), but "
        "expected one of:\n"
        " * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)\n"
        " * (Tensor input, Number min = None, Number max = None, *, Tensor out = None)\n"
    )


@pytest.mark.parametrize(("name", "method"), sorted(PYTHON_SIGNATURES))
def test_signature_table_is_torchs(name: str, method: bool) -> None:
    """No argument, or seven objects, match no signature: torch lists every visible one."""
    target = getattr(torch.ones(2), name) if method else getattr(torch, name)
    listed: tuple[str, ...] = ()
    for args in ([], [object()] * 7):
        try:
            target(*args)
        except Exception as e:  # noqa: BLE001 - clamp() raises a RuntimeError
            lines = str(e).splitlines()
            listed = tuple(line[4:-1] for line in lines if line.startswith(" * ("))
        if listed:
            break
    assert listed == PYTHON_SIGNATURES[(name, method)]


def test_copy_takes_its_source_as_other() -> None:
    a, b = td.zeros(2), td.ones(2)
    assert a.copy_(other=b) is a
    assert a.tolist() == torch.zeros(2).copy_(other=torch.ones(2)).tolist()


def test_copy_refuses_src_keyword_as_torch() -> None:
    kind, text = _message(lambda: td.zeros(2).copy_(src=td.ones(2)))
    assert kind is _message(lambda: torch.zeros(2).copy_(src=torch.ones(2)))[0] is TypeError
    assert text == "copy_() got an unexpected keyword argument 'src'"


def test_method_bindings_carry_torch_names() -> None:
    assert td.Tensor.add.__name__ == torch.Tensor.add.__name__ == "add"
    assert _message(lambda: td.ones(2).add(td.ones(2), beta=1)) == (
        TypeError,
        "add() got an unexpected keyword argument 'beta'",
    )


def test_keyword_passed_through_partial_is_named_as_torch() -> None:
    expected = _message(lambda: functools.partial(torch.maximum, torch.ones(2))(other=2))
    assert _message(lambda: functools.partial(td.maximum, td.ones(2))(other=2)) == expected


def test_call_keywords_of_a_plain_call() -> None:
    import sys

    def probe(*args: Any, **kwargs: Any) -> Any:
        return call_keywords(sys._getframe(1))

    assert probe(1, x=2, y=3) == ("x", "y")
    assert probe(1, probe(x=1)) == ()
    kwargs = {"x": 1}
    assert probe(**kwargs) is None
