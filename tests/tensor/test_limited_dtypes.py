"""The limited dtypes uint16, uint32, uint64 against torch 2.13: making, converting, copying,
printing and reading tensors of them, and the errors torch gives (Note [Limited unsigned
dtypes] in tensor/dtypes.py). Operators on them: test_limited_dtypes_ops.py."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
import tensordispatch.tensor as tdt
from tensordispatch.dispatch.value_types import SCALAR_TYPE_CODES
from tensordispatch.tensor import dtypes

LIMITED = [dtypes.uint16, dtypes.uint32, dtypes.uint64]
IDS = [d.name for d in LIMITED]


def theirs(d: dtypes.dtype) -> torch.dtype:
    return getattr(torch, d.name)  # type: ignore[no-any-return]


@pytest.mark.parametrize("d", LIMITED, ids=IDS)
def test_dtype_facts_match_torch(d: dtypes.dtype) -> None:
    t = theirs(d)
    assert repr(d) == repr(t).replace("torch.", "tensordispatch.")
    assert (d.itemsize, d.is_signed, d.is_floating_point, d.is_complex) == (
        t.itemsize, t.is_signed, t.is_floating_point, t.is_complex
    )  # fmt: skip
    assert d.to_real() is d and t.to_real() is t
    assert getattr(tdt, d.name) is d
    assert pickle.loads(pickle.dumps(d)) is d


def test_torch_has_no_alias_names_for_them() -> None:
    aliases = {
        n for n in dir(torch) if getattr(torch, n) in (torch.uint16, torch.uint32, torch.uint64)
    }
    assert aliases == {"uint16", "uint32", "uint64"}
    assert dtypes.LIMITED_DTYPES == {dtypes.uint16, dtypes.uint32, dtypes.uint64}


def test_scalar_type_codes_match_torchscript() -> None:
    @torch.jit.script
    def code(x: torch.Tensor) -> int:
        return x.dtype  # a dtype is its ScalarType code in TorchScript

    for d in LIMITED:
        assert SCALAR_TYPE_CODES[d.name] == code(torch.empty(1, dtype=theirs(d)))


@pytest.mark.parametrize("d", LIMITED, ids=IDS)
def test_numpy_round_trip(d: dtypes.dtype) -> None:
    top = int(np.iinfo(d.numpy_dtype).max)
    array = np.array([0, 1, top], d.numpy_dtype)
    ours = tdt.from_numpy(array)
    assert ours.dtype is d and dtypes.from_numpy_dtype(array.dtype) is d
    assert torch.from_numpy(array).dtype == theirs(d)
    back = ours.numpy()
    assert back.dtype == array.dtype and back.tolist() == [0, 1, top]
    assert np.shares_memory(back, array)


def test_uint64_values_above_int64_like_torch() -> None:
    values = [2**64 - 1, 2**63, 2**63 - 1, 0]
    ours = td.tensor(values, dtype=dtypes.uint64)
    expected = torch.tensor(values, dtype=torch.uint64)
    assert ours.tolist() == expected.tolist() == values
    assert ours[0].item() == expected[0].item() == 2**64 - 1
    assert type(ours[1].item()) is int
    assert td.tensor(2**63, dtype=dtypes.uint64).item() == 2**63


@pytest.mark.parametrize("d", LIMITED, ids=IDS)
def test_printing_matches_torch(d: dtypes.dtype) -> None:
    cases: list[Any] = [[1, 2, 3], [[1, 2], [3, 4]], 5, []]
    for data in cases:
        ours = repr(td.tensor(data, dtype=d))
        assert ours == repr(torch.tensor(data, dtype=theirs(d))).replace(
            "torch.", "tensordispatch."
        )


def test_printing_wide_uint64_values() -> None:
    ours = td.tensor([2**64 - 1, 1], dtype=dtypes.uint64)
    assert repr(ours) == (
        "tensor([18446744073709551615,                    1],\n       dtype=tensordispatch.uint64)"
    )


FACTORIES: dict[str, Callable[[Any, Any], Any]] = {
    "zeros": lambda m, d: m.zeros(2, 3, dtype=d),
    "ones": lambda m, d: m.ones(4, dtype=d),
    "full": lambda m, d: m.full((2,), 7, dtype=d),
    "full -1": lambda m, d: m.full((2,), -1, dtype=d),
    "zeros_like": lambda m, d: m.zeros_like(m.ones(3, dtype=d)),
    "full_like": lambda m, d: m.full_like(m.ones(3, dtype=d), 9),
    "empty shape": lambda m, d: m.empty(2, 2, dtype=d).shape,
}


@pytest.mark.parametrize("d", LIMITED, ids=IDS)
@pytest.mark.parametrize("name", FACTORIES)
def test_factories_match_torch(name: str, d: dtypes.dtype) -> None:
    ours, expected = FACTORIES[name](td, d), FACTORIES[name](torch, theirs(d))
    if isinstance(expected, torch.Size):
        assert tuple(ours) == tuple(expected)
        return
    assert ours.dtype is d and ours.tolist() == expected.tolist()


FILL_VALUES = [-1, 65536, -65536, 2**32, 2**63, 2**64 - 1, -(2**63), 2.7, -1.5, 70000.0]


def _fill(module: Any, d: Any, value: Any) -> Any:
    try:
        return module.zeros(2, dtype=d).fill_(value).tolist()
    except RuntimeError as error:
        return str(error)


@pytest.mark.parametrize("d", LIMITED, ids=IDS)
def test_fill_wraps_and_overflows_like_torch(d: dtypes.dtype) -> None:
    for value in FILL_VALUES:
        assert _fill(td, d, value) == _fill(torch, theirs(d), value), value


def test_fill_overflow_message_is_torchs() -> None:
    with pytest.raises(RuntimeError) as info:
        td.zeros(2, dtype=dtypes.uint16).fill_(65536)
    assert str(info.value) == "value cannot be converted to type uint16_t without overflow"


CONVERSIONS: list[tuple[str, Any, str]] = [
    ("int64 -1", [-1, 5], "int64"),
    ("float 1.5", [1.5, 2.5], "float32"),
    ("float -3", [-3.0, 0.0], "float64"),
    ("bool", [True, False], "bool"),
]


@pytest.mark.parametrize("d", LIMITED, ids=IDS)
@pytest.mark.parametrize(("label", "data", "source"), CONVERSIONS, ids=[c[0] for c in CONVERSIONS])
def test_to_limited_dtype_matches_torch(
    label: str, data: Any, source: str, d: dtypes.dtype
) -> None:
    ours = td.tensor(data, dtype=getattr(dtypes, source)).to(d)
    expected = torch.tensor(data, dtype=getattr(torch, source)).to(theirs(d))
    assert ours.dtype is d and ours.tolist() == expected.tolist()


@pytest.mark.parametrize("d", LIMITED, ids=IDS)
@pytest.mark.parametrize("target", ["int64", "int8", "float32", "float64", "bool", "uint8"])
def test_from_limited_dtype_matches_torch(d: dtypes.dtype, target: str) -> None:
    top = int(np.iinfo(d.numpy_dtype).max)
    data = [0, 1, 200, top]
    ours = td.tensor(data, dtype=d).to(getattr(dtypes, target))
    expected = torch.tensor(data, dtype=theirs(d)).to(getattr(torch, target))
    assert ours.tolist() == expected.tolist()


@pytest.mark.parametrize("d", LIMITED, ids=IDS)
def test_copy_between_dtypes_matches_torch(d: dtypes.dtype) -> None:
    ours = td.zeros(3, dtype=d).copy_(td.tensor([1.0, 2.0, 3.0]))
    expected = torch.zeros(3, dtype=theirs(d)).copy_(torch.tensor([1.0, 2.0, 3.0]))
    assert ours.tolist() == expected.tolist()
    back = td.zeros(3).copy_(td.tensor([4, 5, 6], dtype=d))
    assert back.dtype is dtypes.float32 and back.tolist() == [4.0, 5.0, 6.0]


@pytest.mark.parametrize("d", LIMITED, ids=IDS)
def test_views_and_clone_keep_the_dtype(d: dtypes.dtype) -> None:
    x = td.tensor([[1, 2], [3, 4]], dtype=d)
    for y in (x.t(), x[1:], x.reshape(4), x.clone(), x.to("meta")):
        assert y.dtype is d
    assert x.t().contiguous().tolist() == [[1, 3], [2, 4]]


def _tensor_error(module: Any, data: Any, d: Any) -> tuple[type, Any]:
    try:
        return type(None), module.tensor(data, dtype=d).tolist()
    except Exception as error:  # noqa: BLE001 - the error type is compared
        return type(error), None


@pytest.mark.parametrize("data", [[-1], [2**64], [1.5], [70000], [-70000], [2**63]], ids=str)
@pytest.mark.parametrize("d", LIMITED, ids=IDS)
def test_tensor_from_python_errors_match_torch_types(data: Any, d: dtypes.dtype) -> None:
    assert _tensor_error(td, data, d) == _tensor_error(torch, data, theirs(d))


def test_uint64_from_python_error_messages() -> None:
    with pytest.raises(OverflowError) as info:
        td.tensor([-1], dtype=dtypes.uint64)
    assert str(info.value) == (
        "tensor(): -1 does not fit in uint64 (it can't convert negative ints and ints of "
        "2**64 or more); pass values between 0 and 2**64 - 1"
    )
    with pytest.raises(TypeError) as type_info:
        td.tensor([1, 2.5], dtype=dtypes.uint64)
    assert str(type_info.value) == (
        "tensor(): uint64 data must be Python ints (given float 2.5); convert the values "
        "with int() first"
    )


def test_promotion_error_is_torchs_text() -> None:
    with pytest.raises(RuntimeError) as info:
        td.tensor([1], dtype=dtypes.uint32) + td.tensor([1])
    assert str(info.value) == (
        "Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
        "UInt32 and Long"
    )


def test_not_implemented_error_is_torchs_text() -> None:
    x = td.tensor([1, 2], dtype=dtypes.uint64)
    with pytest.raises(NotImplementedError) as info:
        x + x
    assert str(info.value) == "\"add_stub\" not implemented for 'UInt64'"


def test_meta_tensors_take_every_operator_as_in_torch() -> None:
    x = td.ones(2, dtype=dtypes.uint16, device="meta")
    expected = torch.ones(2, dtype=torch.uint16, device="meta")
    assert (x + x).dtype is dtypes.uint16 and (expected + expected).dtype == torch.uint16
    y = x.clone()
    assert (x < y).dtype is dtypes.bool and x.abs().dtype is dtypes.uint16


def test_every_other_dtype_keeps_its_promotion() -> None:
    for a in dtypes.ALL_DTYPES:
        for b in dtypes.ALL_DTYPES:
            if {a, b} & dtypes.LIMITED_DTYPES:
                continue
            assert tdt.promote_types(a, b).name == str(
                torch.promote_types(theirs(a), theirs(b))
            ).removeprefix("torch.")


@pytest.mark.parametrize("d", LIMITED, ids=IDS)
def test_pickle_and_deepcopy_keep_values_and_dtype(d: dtypes.dtype) -> None:
    import copy

    top = int(np.iinfo(d.numpy_dtype).max)
    x = td.tensor([top, 0, 7], dtype=d)
    for y in (pickle.loads(pickle.dumps(x)), copy.deepcopy(x)):
        assert y.dtype is d and y.tolist() == [top, 0, 7]


@pytest.mark.parametrize("d", LIMITED, ids=IDS)
def test_dlpack_shares_memory_like_torch(d: dtypes.dtype) -> None:
    array = np.array([1, 2, 3], d.numpy_dtype)
    ours = tdt.from_dlpack(array)
    assert ours.dtype is d and torch.from_dlpack(array).dtype == theirs(d)
    array[0] = 9
    assert ours.tolist() == [9, 2, 3]


@pytest.mark.parametrize("d", LIMITED, ids=IDS)
def test_requires_grad_is_refused_like_torch(d: dtypes.dtype) -> None:
    with pytest.raises(RuntimeError):
        torch.ones(2, dtype=theirs(d)).requires_grad_()
    with pytest.raises(RuntimeError):
        td.ones(2, dtype=d).requires_grad_()
