"""Tensor.float() / double() / ... / type() (ops/bindings_dtype.py) against torch: result
dtype, strides (preserve_format), identity when nothing changes, autograd node, type strings,
error texts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import tensordispatch as td

SHORTCUTS = {
    "float": "float32", "double": "float64", "half": "float16", "long": "int64",
    "int": "int32", "short": "int16", "char": "int8", "byte": "uint8", "bool": "bool",
    "cfloat": "complex64", "cdouble": "complex128",
}  # fmt: skip
pytestmark = pytest.mark.filterwarnings("ignore:Casting complex values:UserWarning")

SOURCES = ("float32", "int64", "bool", "complex64")


def _pair(dtype: str) -> tuple[Any, Any]:
    values = [[0.0, 1.5, -2.0], [3.0, 0.25, 7.0]]
    return (
        torch.tensor(values).to(getattr(torch, dtype)).t(),
        td.tensor(values).to(getattr(td, dtype)).t(),
    )


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", sorted(SHORTCUTS))
def test_shortcut_matches_torch(name: str, source: str) -> None:
    t, d = _pair(source)
    expected, got = getattr(t, name)(), getattr(d, name)()
    assert got.dtype.name == SHORTCUTS[name] == str(expected.dtype).split(".")[-1]
    assert got.stride() == expected.stride()
    assert got.tolist() == expected.tolist()
    assert (got is d) == (expected is t)


def test_shortcut_memory_format_contiguous() -> None:
    t, d = _pair("float32")
    assert d.double(memory_format=td.contiguous_format).stride() == (
        t.double(memory_format=torch.contiguous_format).stride()
    )


def test_shortcut_records_to_copy_node() -> None:
    a = td.ones(2, requires_grad=True)
    b = a.double()
    assert type(b.grad_fn).__name__ == "ToCopyBackward0"
    b.sum().backward()
    assert a.grad is not None
    assert a.grad.dtype == td.float32
    assert a.grad.tolist() == [1.0, 1.0]


@pytest.mark.parametrize(
    ("dtype", "device"),
    [("float32", "cpu"), ("bool", "cpu"), ("complex64", "cpu"), ("int8", "meta"),
     ("uint16", "cpu"), ("float16", "meta"), ("complex128", "cpu")],
)  # fmt: skip
def test_type_string_matches_torch(dtype: str, device: str) -> None:
    expected = torch.ones(1, dtype=getattr(torch, dtype), device=device).type()
    assert td.ones(1, dtype=getattr(td, dtype), device=device).type() == expected


@pytest.mark.parametrize(
    "target", ["torch.LongTensor", "torch.DoubleTensor", "torch.BoolTensor", "torch.FloatTensor"]
)
def test_type_by_string_matches_torch(target: str) -> None:
    t, d = _pair("float32")
    expected, got = t.type(target), d.type(target)
    assert got.dtype.name == str(expected.dtype).split(".")[-1]
    assert got.tolist() == expected.tolist()
    assert (got is d) == (expected is t)


def test_type_by_dtype_and_keywords() -> None:
    x = td.ones(2)
    assert x.type(td.float32) is x
    assert x.type(dtype=td.int32).dtype == td.int32
    assert x.type(td.int32, True).dtype == td.int32
    assert x.type(non_blocking=True) == "torch.FloatTensor"


ERRORS: dict[str, Callable[[Any, Any], Any]] = {
    "float positional": lambda m, x: x.float(1),
    "float two positional": lambda m, x: x.float(1, 2),
    "float keyword": lambda m, x: x.float(foo=1),
    "long memory_format": lambda m, x: x.long(memory_format=1),
    "int channels_last": lambda m, x: x.int(memory_format=m.channels_last),
    "type bad string": lambda m, x: x.type("foo"),
    "type short string": lambda m, x: x.type("FloatTensor"),
    "type int": lambda m, x: x.type(3),
    "type three positional": lambda m, x: x.type(m.float32, 1, 2),
    "type keyword": lambda m, x: x.type(m.float32, foo=2),
    "type non_blocking int": lambda m, x: x.type(m.float32, 1, foo=2),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_torch(case: str) -> None:
    with pytest.raises(Exception) as expected:
        ERRORS[case](torch, torch.ones(2, 3))
    with pytest.raises(Exception) as got:
        ERRORS[case](td, td.ones(2, 3))
    assert type(got.value).__name__ == type(expected.value).__name__
    assert str(got.value) == str(expected.value)


def test_error_texts_golden() -> None:
    x = td.ones(2)
    with pytest.raises(TypeError) as e:
        x.half(3)
    assert str(e.value) == "half() takes 0 positional arguments but 1 was given"
    with pytest.raises(ValueError, match="^invalid type: 'torch.Nope'$"):
        x.type("torch.Nope")


NEW_TENSOR: dict[str, Callable[[Any, Any], Any]] = {
    "list to int32": lambda m, x: x.new_tensor([1.7, 2.0]),
    "scalar": lambda m, x: x.new_tensor(3),
    "dtype": lambda m, x: x.new_tensor([1.5], dtype=m.float64),
    "nested": lambda m, x: x.new_tensor([[1, 2], [3, 4]]),
    "meta": lambda m, x: x.new_tensor([1, 2], device="meta"),
}


@pytest.mark.parametrize("case", sorted(NEW_TENSOR))
def test_new_tensor_matches_torch(case: str) -> None:
    expected = NEW_TENSOR[case](torch, torch.ones(2, dtype=torch.int32))
    got = NEW_TENSOR[case](td, td.ones(2, dtype=td.int32))
    assert got.dtype.name == str(expected.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(expected.shape)
    assert got.device.type == expected.device.type
    if got.device.type == "cpu":
        assert got.tolist() == expected.tolist()


def test_new_tensor_from_tensor_copies_without_history() -> None:
    source = td.tensor([1.5, 2.5], requires_grad=True)
    with pytest.warns(UserWarning, match="^To copy construct from a tensor, it is recommended"):
        copy = td.ones(1).new_tensor(source)
    assert not copy.requires_grad
    copy[0] = 9.0
    assert source[0].item() == 1.5
    assert td.ones(1).new_tensor([1.0], requires_grad=True).requires_grad


NEW_TENSOR_ERRORS: dict[str, Callable[[Any], Any]] = {
    "missing": lambda x: x.new_tensor(),
    "keyword": lambda x: x.new_tensor([1], foo=1),
    "two positional": lambda x: x.new_tensor([1], 2),
}


@pytest.mark.parametrize("case", sorted(NEW_TENSOR_ERRORS))
def test_new_tensor_errors_match_torch(case: str) -> None:
    with pytest.raises(TypeError) as expected:
        NEW_TENSOR_ERRORS[case](torch.ones(2))
    with pytest.raises(TypeError) as got:
        NEW_TENSOR_ERRORS[case](td.ones(2))
    assert str(got.value) == str(expected.value)
