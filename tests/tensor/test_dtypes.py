"""dtypes and type promotion against torch 2.13."""

from __future__ import annotations

import pickle
import threading
import warnings

import numpy as np
import pytest
import torch
from hypothesis import assume, given
from hypothesis import strategies as st

import tensordispatch.tensor as tdt
from tensordispatch.tensor import dtypes

ALL = dtypes.ALL_DTYPES


def torch_dtype(d: dtypes.dtype) -> torch.dtype:
    return getattr(torch, d.name)


def test_the_fourteen_dtypes_in_order() -> None:
    names = [d.name for d in ALL]
    expected = ["bool", "uint8", "int8", "int16", "int32", "int64"]
    expected += ["float16", "float32", "float64", "complex64", "complex128"]
    expected += ["uint16", "uint32", "uint64"]
    assert names == expected


@pytest.mark.parametrize("d", ALL, ids=str)
def test_dtype_attributes_match_torch(d: dtypes.dtype) -> None:
    t = torch_dtype(d)
    got = (d.is_floating_point, d.is_complex, d.is_signed, d.itemsize)
    assert got == (t.is_floating_point, t.is_complex, t.is_signed, t.itemsize)


@pytest.mark.parametrize("d", ALL, ids=str)
def test_dtype_repr_uses_our_module_name(d: dtypes.dtype) -> None:
    assert repr(d) == repr(torch_dtype(d)).replace("torch.", "tensordispatch.")


@pytest.mark.parametrize("d", ALL, ids=str)
def test_to_real_matches_torch(d: dtypes.dtype) -> None:
    assert d.to_real().name == str(torch_dtype(d).to_real()).removeprefix("torch.")


@pytest.mark.parametrize("d", [dtypes.float32, dtypes.float64, dtypes.complex64], ids=str)
def test_to_complex_matches_torch(d: dtypes.dtype) -> None:
    assert d.to_complex().name == str(torch_dtype(d).to_complex()).removeprefix("torch.")


@pytest.mark.parametrize(
    "d", [dtypes.bool, dtypes.uint8, dtypes.int32, dtypes.uint16, dtypes.uint64], ids=str
)
def test_to_complex_of_integral_dtype_is_torchs_error(d: dtypes.dtype) -> None:
    with pytest.raises(RuntimeError) as expected:
        torch_dtype(d).to_complex()
    with pytest.raises(RuntimeError) as info:
        d.to_complex()
    assert str(info.value) == str(expected.value)
    if d is dtypes.int32:
        assert str(info.value) == "Unknown Complex ScalarType for Int"


def test_to_complex_of_float16_names_the_missing_complex32() -> None:
    with pytest.raises(RuntimeError) as info:
        dtypes.float16.to_complex()
    assert str(info.value) == (
        "tensordispatch.float16.to_complex(): float16's complex counterpart is complex32, which "
        "tensordispatch does not have; use a float32 or float64 dtype"
    )


def test_torch_alias_names_are_the_same_objects() -> None:
    pairs = [("half", "float16"), ("float", "float32"), ("double", "float64")]
    pairs += [("cfloat", "complex64"), ("cdouble", "complex128"), ("short", "int16")]
    pairs += [("int", "int32"), ("long", "int64")]
    for alias, name in pairs:
        assert getattr(tdt, alias) is getattr(tdt, name)
        assert getattr(torch, alias) is getattr(torch, name)


@pytest.mark.parametrize("d", ALL, ids=str)
def test_numpy_dtype_round_trip(d: dtypes.dtype) -> None:
    assert dtypes.from_numpy_dtype(d.numpy_dtype) is d
    assert torch.from_numpy(np.zeros(1, d.numpy_dtype)).dtype == torch_dtype(d)


def test_numpy_dtype_spelled_longlong_maps_to_int64() -> None:
    assert dtypes.from_numpy_dtype(np.dtype("q")) is dtypes.int64


def test_dtype_pickles_to_the_same_object() -> None:
    assert pickle.loads(pickle.dumps(dtypes.complex64)) is dtypes.complex64


def _outcome(fn: object, *args: object) -> str:
    """The dtype name a call gives, or its RuntimeError's type and text (torch's promotion
    error for the limited dtypes)."""
    try:
        return str(fn(*args)).removeprefix("torch.").removeprefix("tensordispatch.")  # type: ignore[operator]
    except RuntimeError as error:
        return f"RuntimeError: {error}"


def test_promote_types_over_all_pairs_matches_torch() -> None:
    mismatches = []
    for a in ALL:
        for b in ALL:
            ours = _outcome(tdt.promote_types, a, b)
            theirs = _outcome(torch.promote_types, torch_dtype(a), torch_dtype(b))
            if ours != theirs:
                mismatches.append((a.name, b.name, ours, theirs))
    assert mismatches == []


def test_can_cast_over_all_pairs_matches_torch() -> None:
    mismatches = []
    for a in ALL:
        for b in ALL:
            if tdt.can_cast(a, b) != torch.can_cast(torch_dtype(a), torch_dtype(b)):
                mismatches.append((a.name, b.name))
    assert mismatches == []


# -- result_type -------------------------------------------------------------------------------

SCALARS: list[object] = [True, 3, 2.5, 1 + 2j]


def operands() -> list[tuple[str, object, object]]:
    """(id, ours, torch's) for 0-dim and 1-dim tensors of every dtype and Python scalars."""
    out: list[tuple[str, object, object]] = []
    for d in ALL:
        for shape in [(), (2,)]:
            ours = tdt.tensor(np.ones(shape, d.numpy_dtype))
            theirs = torch.ones(shape, dtype=torch_dtype(d))
            out.append((f"{d.name}{list(shape)}", ours, theirs))
    out += [(repr(s), s, s) for s in SCALARS]
    return out


OPERANDS = operands()


def ours_or_complex32(a: object, b: object) -> str:
    """Our result type's name, or torch.complex32 where we raise because we lack it, or the
    promotion error's text (the limited dtypes)."""
    try:
        return "torch." + tdt.result_type(a, b).name
    except TypeError as error:
        assert "complex32" in str(error)
        return "torch.complex32"
    except RuntimeError as error:
        return f"RuntimeError: {error}"


def torch_result_type(a: object, b: object) -> str:
    try:
        return str(torch.result_type(a, b))  # type: ignore[arg-type]
    except RuntimeError as error:
        return f"RuntimeError: {error}"


def test_result_type_over_all_operand_pairs_matches_torch() -> None:
    mismatches = []
    for id_a, ours_a, torch_a in OPERANDS:
        for id_b, ours_b, torch_b in OPERANDS:
            ours = ours_or_complex32(ours_a, ours_b)
            theirs = torch_result_type(torch_a, torch_b)
            if ours != theirs:
                mismatches.append((id_a, id_b, ours, theirs))
    assert mismatches == []


def test_result_type_under_float64_default_matches_torch() -> None:
    mismatches = []
    with tdt.default_dtype_guard(tdt.float64):
        torch.set_default_dtype(torch.float64)
        try:
            for id_a, ours_a, torch_a in OPERANDS:
                for scalar in SCALARS:
                    ours = ours_or_complex32(ours_a, scalar)
                    theirs = torch_result_type(torch_a, scalar)
                    if ours != theirs:
                        mismatches.append((id_a, scalar, ours, theirs))
        finally:
            torch.set_default_dtype(torch.float32)
    assert mismatches == []


NUMPY_SCALARS = [np.float64(1.5), np.float32(1.5), np.int32(2), np.bool_(True), np.complex64(1j)]


@pytest.mark.parametrize("scalar", NUMPY_SCALARS, ids=repr)
def test_numpy_scalars_count_as_python_numbers_like_torch(scalar: object) -> None:
    mismatches = []
    for id_a, ours_a, torch_a in OPERANDS:
        ours = ours_or_complex32(ours_a, scalar)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch reads np.complex64 as a float, warning
            theirs = torch_result_type(torch_a, scalar)
        if ours != theirs:
            mismatches.append((id_a, ours, theirs))
    assert mismatches == []


def test_wrapped_number_tensor_counts_as_a_scalar() -> None:
    wrapped = tdt.tensor(2.5, dtype=tdt.float64)
    wrapped._wrapped_number = True
    x = tdt.tensor([1, 2], dtype=tdt.int32)
    # torch: int32 tensor + Python float -> the default dtype, not float64
    assert tdt.result_type(x, wrapped) is tdt.float32
    assert dtypes._result_type_of((tdt.tensor([1], dtype=tdt.float16), wrapped)) is tdt.float16


def test_float16_with_complex_scalar_is_an_error_not_complex32() -> None:
    half = tdt.tensor([1.0], dtype=tdt.float16)
    assert torch.result_type(torch.ones(1, dtype=torch.float16), 1j) == torch.complex32
    with pytest.raises(TypeError) as info:
        tdt.result_type(half, 1j)
    assert str(info.value) == (
        "result_type: a float16 tensor with a complex scalar or zero-dim tensor computes in "
        "complex32 in torch, which tensordispatch does not have; convert the float16 operand "
        "to float32 first"
    )


def test_result_type_rejects_other_objects() -> None:
    with pytest.raises(TypeError):
        tdt.result_type(np.str_("a"), 1)
    with pytest.raises(TypeError) as info:
        tdt.result_type("a", 1)
    assert str(info.value) == (
        "result_type: expected a Tensor or a Python number (bool, int, float, complex), "
        "given str; convert the value to a Tensor or a Python number"
    )


TENSOR_OPERANDS = [op for op in OPERANDS if isinstance(op[1], tdt.Tensor)]


@given(st.lists(st.sampled_from(range(len(TENSOR_OPERANDS))), min_size=3, max_size=3))
def test_result_type_of_three_tensors_matches_torch_addcmul(picks: list[int]) -> None:
    # torch.addcmul(a, b, c) computes in the result type of its three operands, so it
    # checks the tiers (n-dim over 0-dim) with more than two operands.
    chosen = [TENSOR_OPERANDS[i] for i in picks]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch: "ComplexHalf support is experimental"
            expected = torch.addcmul(*(op[2] for op in chosen)).dtype  # type: ignore[misc]
    except (NotImplementedError, RuntimeError):
        assume(False)  # torch has no kernel for that dtype (bool)
        return
    assume(expected != torch.complex32)  # tensordispatch has no complex32
    ours = dtypes._result_type_of(tuple(op[1] for op in chosen))
    assert "torch." + ours.name == str(expected)


# -- default dtype -----------------------------------------------------------------------------


def test_default_dtype_is_float32() -> None:
    assert tdt.get_default_dtype() is tdt.float32
    assert str(torch.get_default_dtype()) == "torch.float32"


def test_set_default_dtype_rejects_non_float_dtypes() -> None:
    with pytest.raises(TypeError) as info:
        tdt.set_default_dtype(tdt.int32)
    assert str(info.value) == (
        "set_default_dtype: the default dtype must be tensordispatch.float32 or "
        "tensordispatch.float64 (given tensordispatch.int32); pass one of those"
    )
    with pytest.raises(TypeError):
        torch.set_default_dtype(torch.int32)


def test_default_dtype_is_process_global_like_torch() -> None:
    seen = []
    with tdt.default_dtype_guard(tdt.float64):
        thread = threading.Thread(target=lambda: seen.append(tdt.get_default_dtype()))
        thread.start()
        thread.join()
    assert seen == [tdt.float64]
    assert tdt.get_default_dtype() is tdt.float32


def test_default_dtype_guard_restores_after_an_error() -> None:
    with pytest.raises(KeyError), tdt.default_dtype_guard(tdt.float64):
        raise KeyError
    assert tdt.get_default_dtype() is tdt.float32
