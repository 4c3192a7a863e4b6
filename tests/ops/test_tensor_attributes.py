"""Tensor attributes defined over operators (ops/bindings_tensor.py): T, mT, H, real, imag,
data and unary +, against torch: values, dtype, strides, aliasing, warnings and errors."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch

import tensordispatch as td

CASES: dict[str, Callable[[Any], Any]] = {
    "+t": lambda m: +m.tensor([1.0, 2.0]),
    "m.T": lambda m: m.arange(6.0).reshape(2, 3).T,
    "1-d T": lambda m: m.tensor([1.0, 2.0]).T,
    "3-d T": lambda m: m.arange(24.0).reshape(2, 3, 4).T,
    "m.mT": lambda m: m.arange(6.0).reshape(2, 3).mT,
    "3-d mT": lambda m: m.arange(24.0).reshape(2, 3, 4).mT,
    "0-d mT": lambda m: m.tensor(1.0).mT,
    "1-d mT": lambda m: m.tensor([1.0, 2.0]).mT,
    "m.H": lambda m: m.arange(6.0).reshape(2, 3).H,
    "1-d H": lambda m: m.tensor([1.0, 2.0]).H,
    "3-d H": lambda m: m.ones(2, 2, 2).H,
    "complex H": lambda m: m.tensor([[1 + 2j, 3j, -1.0], [0.5j, 2.0, 1 - 1j]]).H,
    "complex 0-d H": lambda m: m.tensor(1 + 2j).H,
    "complex mH": lambda m: m.tensor([[[1 + 2j, 3j]], [[0.5j, 2.0]]]).mH,
    "1-d mH": lambda m: m.tensor([1j]).mH,
    "complex adjoint": lambda m: m.tensor([[1 + 2j, 3j]]).adjoint(),
    "1-d adjoint": lambda m: m.tensor([1j]).adjoint(),
    "complex conj": lambda m: m.tensor([[1 + 2j, 3j]]).mT.conj(),
    "complex conj_physical": lambda m: m.conj_physical(m.tensor([[1 + 2j, 3j]]).mT),
    "float conj": lambda m: m.tensor([1.0, -2.0]).conj(),
    "resolve_conj": lambda m: m.tensor([1j]).conj().resolve_conj(),
    "complex real": lambda m: m.tensor([1 + 2j, 3j]).real,
    "complex imag": lambda m: m.tensor([1 + 2j, 3j]).imag,
    "float real": lambda m: m.tensor([1.0, 2.0]).real,
    "float imag": lambda m: m.tensor([1.0, 2.0]).imag,
    "data": lambda m: m.ones(2, requires_grad=True).data,
    "+bool": lambda m: +m.tensor([True]),
}


def _run(fn: Callable[[Any], Any], lib: Any) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result: Any = fn(lib)
        except Exception as e:  # noqa: BLE001 - the exception is the result compared
            result = e
    return result, [str(w.message) for w in caught]


@pytest.mark.parametrize("case", CASES)
def test_attribute_matches_torch(case: str) -> None:
    expected, expected_warnings = _run(CASES[case], torch)
    got, got_warnings = _run(CASES[case], td)
    if expected_warnings or not got_warnings:
        assert [w.split(" (Triggered internally")[0] for w in expected_warnings] == got_warnings
    else:  # torch warns once per process (TORCH_WARN_ONCE): an earlier case took it
        assert all("deprecated" in w for w in got_warnings)
    if isinstance(expected, BaseException):
        assert type(got) is type(expected) and str(got) == str(expected)
        return
    assert got.dtype.name == str(expected.dtype).split(".")[-1]
    assert got.tolist() == expected.tolist() and got.stride() == expected.stride()
    assert got.requires_grad == expected.requires_grad


def test_real_and_imag_are_views() -> None:
    c = td.tensor([1 + 2j, 3j])
    c.real[0] = 7.0
    c.imag[1] = -1.0
    assert c.tolist() == [7 + 2j, -1j]


def test_unary_plus_is_the_tensor_itself() -> None:
    t = td.ones(2)
    assert (+t) is t


def test_conj_of_real_is_the_tensor_itself() -> None:
    t = td.ones(2)
    assert t.conj() is t and td.conj(t) is t and t.resolve_conj() is t


def test_conj_physical_in_place_matches_torch() -> None:
    t = torch.tensor([1 + 2j, -3j])
    x = td.tensor([1 + 2j, -3j])
    assert x.conj_physical_() is x
    assert x.tolist() == t.conj_physical_().tolist()


def test_conj_is_a_lazy_view_as_in_torch() -> None:
    assert torch.tensor([1j]).conj().is_conj()
    x = td.tensor([1j])
    c = x.conj()
    assert c.is_conj() and c._base is x and c.data_ptr() == x.data_ptr()
