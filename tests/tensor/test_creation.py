"""tensor(), from_numpy and DLPack exchange against torch."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import tensordispatch.tensor as tdt
from tensordispatch.tensor.dtypes import ALL_DTYPES

DATA: list[object] = [
    1,
    2.5,
    True,
    1 + 2j,
    [],
    [[], []],
    [1, 2, 3],
    [True, False],
    [True, 2],
    [1, 2.5],
    [1, 2.5, 3j],
    [[1, 2], [3, 4]],
    ((1.0, 2.0), (3.0, 4.0)),
    range(4),
    np.float64(1.5),
    np.float32(1.5),
    np.int32(3),
    np.bool_(True),
    [np.float64(1.0), 2.0],
    [np.float32(1.0), 2.0],
    [np.int32(1), 2],
    [np.int8(1), np.uint8(2)],
    np.arange(6, dtype=np.int16).reshape(2, 3),
    np.array(2.5, dtype=np.float16),
    [np.array([1, 2], np.int32), np.array([3, 4], np.int32)],
    [[np.float32(1.0)], [np.float64(2.0)]],
]


def torch_of(name: str) -> str:
    return "torch." + name


@pytest.mark.parametrize("data", DATA, ids=repr)
def test_inferred_dtype_shape_values_match_torch(data: object) -> None:
    ours = tdt.tensor(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns about lists of arrays
        theirs = torch.tensor(data)
    assert torch_of(ours.dtype.name) == str(theirs.dtype)
    assert ours.shape == theirs.shape
    assert ours.tolist() == theirs.tolist()


@pytest.mark.parametrize("data", [[1.5, 2.5], 1.0, [1, 2], [1j]], ids=repr)
def test_inferred_dtype_under_float64_default_matches_torch(data: object) -> None:
    with tdt.default_dtype_guard(tdt.float64):
        ours = tdt.tensor(data)
    torch.set_default_dtype(torch.float64)
    try:
        theirs = torch.tensor(data)
    finally:
        torch.set_default_dtype(torch.float32)
    assert torch_of(ours.dtype.name) == str(theirs.dtype)


@pytest.mark.parametrize(
    ("data", "name"),
    [([1.7, -2.2], "int64"), ([1, 0, 2], "bool"), ([1, 2], "float16"), (3.5, "complex128")],
)
def test_explicit_dtype_converts_like_torch(data: object, name: str) -> None:
    ours = tdt.tensor(data, dtype=getattr(tdt, name))
    theirs = torch.tensor(data, dtype=getattr(torch, name))
    assert ours.dtype.name == name
    assert ours.tolist() == theirs.tolist()


def test_tensor_copies_its_input() -> None:
    array = np.zeros(3)
    t = tdt.tensor(array)
    array[0] = 1.0
    assert t.tolist() == [0.0, 0.0, 0.0]
    assert t.is_contiguous() and t._base is None


@pytest.mark.parametrize(
    "make",
    [
        lambda: np.arange(6.0).reshape(2, 3).T,
        lambda: np.arange(12.0).reshape(3, 4)[:, 1:3],
        lambda: np.arange(24.0).reshape(2, 3, 4).transpose(2, 0, 1)[::2],
        lambda: np.broadcast_to(np.arange(3.0), (2, 3)),
    ],
)
def test_tensor_of_array_keeps_its_layout_like_torch(make: object) -> None:
    array = make()  # type: ignore[operator]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.tensor(array)
    ours = tdt.tensor(array)
    assert ours.stride() == theirs.stride()
    assert ours.tolist() == theirs.tolist()


def test_tensor_from_tensor_copies_and_warns_like_torch() -> None:
    source = tdt.tensor([1.0, 2.0])
    with pytest.warns(UserWarning, match="sourceTensor.detach"):
        copy = tdt.tensor(source)
    with pytest.warns(UserWarning, match="sourceTensor.detach"):
        torch.tensor(torch.tensor([1.0, 2.0]))
    copy.numpy()[0] = 9.0
    assert source.tolist() == [1.0, 2.0]


def test_tensor_with_requires_grad() -> None:
    t = tdt.tensor([1.0], requires_grad=True)
    assert t.requires_grad and repr(t) == repr(torch.tensor([1.0], requires_grad=True))


def test_tensor_on_meta_has_shape_and_dtype_only() -> None:
    t = tdt.tensor([[1, 2, 3]], device="meta")
    theirs = torch.tensor([[1, 2, 3]], device="meta")
    assert (t.shape, t.stride(), torch_of(t.dtype.name)) == (
        theirs.shape,
        theirs.stride(),
        str(theirs.dtype),
    )
    assert t._data is None and t.device == tdt.device("meta")


def test_ragged_list_error() -> None:
    with pytest.raises(ValueError) as info:
        tdt.tensor([[1, 2], [3]])
    assert str(info.value) == (
        "tensor(): expected sequence of length 2 at dim 1 (got 1); nested lists must be rectangular"
    )
    with pytest.raises(ValueError):
        torch.tensor([[1, 2], [3]])


def test_number_where_a_sequence_is_expected_error() -> None:
    with pytest.raises(TypeError) as info:
        tdt.tensor([[1, 2], 3])
    assert str(info.value) == (
        "tensor(): expected a sequence at dim 1 (got int); nested lists must be rectangular"
    )
    with pytest.raises(TypeError):
        torch.tensor([[1, 2], 3])


def test_sequence_where_a_number_is_expected_error() -> None:
    with pytest.raises(TypeError) as info:
        tdt.tensor([1, [2, 3]])
    assert str(info.value) == (
        "tensor(): expected a number at dim 1 (got a sequence); nested lists must be rectangular"
    )
    with pytest.raises(TypeError):
        torch.tensor([1, [2, 3]])


def test_invalid_element_type_error() -> None:
    with pytest.raises(TypeError) as info:
        tdt.tensor([1, "a"])
    assert str(info.value) == (
        "tensor(): invalid data type 'str'; data must be numbers (bool, int, float, "
        "complex), nested sequences of them, or arrays"
    )
    with pytest.raises(TypeError):
        torch.tensor([1, "a"])


def test_multi_element_tensor_inside_a_list_error() -> None:
    with pytest.raises(ValueError) as info:
        tdt.tensor([tdt.tensor([1.0, 2.0])])
    assert str(info.value) == (
        "tensor(): only one-element tensors can be converted to Python scalars (given a "
        "tensor with 2 elements inside a sequence)"
    )
    with pytest.raises(ValueError):
        torch.tensor([torch.tensor([1.0, 2.0])])


def test_one_element_tensors_inside_a_list_like_torch() -> None:
    ours = tdt.tensor([tdt.tensor(1, dtype=tdt.int32), tdt.tensor(2, dtype=tdt.int32)])
    theirs = torch.tensor([torch.tensor(1, dtype=torch.int32), torch.tensor(2, dtype=torch.int32)])
    assert torch_of(ours.dtype.name) == str(theirs.dtype)
    assert ours.tolist() == theirs.tolist()


def test_device_without_a_backend_error() -> None:
    # built on the CPU and moved, as torch: the missing kernel is the move's allocation
    with pytest.raises(NotImplementedError) as info:
        tdt.tensor([1.0], device="xla")
    assert str(info.value).startswith(
        "Could not run 'aten::empty_strided' with arguments from the 'XLA' backend."
    )


def test_cpu_of_a_cpu_tensor_is_itself() -> None:
    t = tdt.tensor([1.0, 2.0])
    assert t.cpu() is t and torch.tensor([1.0]).cpu() is not None


def test_cpu_of_a_meta_tensor_is_refused_like_torch() -> None:
    with pytest.raises(NotImplementedError) as ours:
        tdt.tensor([1.0], device="meta").cpu()
    with pytest.raises(NotImplementedError) as theirs:
        torch.tensor([1.0], device="meta").cpu()
    assert str(ours.value) == str(theirs.value)


# -- from_numpy --------------------------------------------------------------------------------


@pytest.mark.parametrize("d", ALL_DTYPES, ids=str)
def test_from_numpy_every_dtype(d: tdt.dtype) -> None:
    array = np.arange(4).astype(d.numpy_dtype)
    assert tdt.from_numpy(array).dtype is d


def test_from_numpy_shares_memory_both_ways() -> None:
    array = np.zeros((2, 3), np.float32)
    t = tdt.from_numpy(array)
    array[1, 2] = 5.0
    t.numpy()[0, 0] = -1.0
    assert t.tolist() == [[-1.0, 0.0, 0.0], [0.0, 0.0, 5.0]]
    assert array[0, 0] == -1.0
    assert t.data_ptr() == array.ctypes.data


@pytest.mark.parametrize(
    "make",
    [
        lambda: np.arange(12.0).reshape(3, 4)[:, 1:3],
        lambda: np.arange(12.0).reshape(3, 4).T,
        lambda: np.arange(12.0)[2::3],
        lambda: np.zeros((2, 0, 3)),
        lambda: np.array(4.0),
        lambda: np.broadcast_to(np.arange(3.0), (2, 3)),
    ],
)
def test_from_numpy_geometry_matches_torch(make: object) -> None:
    array = make()  # type: ignore[operator]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # broadcast_to arrays are read-only
        ours, theirs = tdt.from_numpy(array), torch.from_numpy(array)
    assert ours.shape == theirs.shape and ours.stride() == theirs.stride()
    assert ours.storage_offset() == theirs.storage_offset() == 0
    assert ours.is_contiguous() == theirs.is_contiguous()
    assert ours.tolist() == theirs.tolist()
    assert ours.data_ptr() == theirs.data_ptr()


def test_from_numpy_negative_strides_error() -> None:
    array = np.arange(4)[::-1]
    with pytest.raises(ValueError) as info:
        tdt.from_numpy(array)
    assert str(info.value) == (
        "from_numpy: at least one stride of the numpy array is negative (strides (-8,)), "
        "and tensors with negative strides are not supported; make a copy first with "
        "array.copy()"
    )
    with pytest.raises(ValueError):
        torch.from_numpy(array)


def test_from_numpy_unsupported_dtype_error() -> None:
    array = np.array(["a"])
    with pytest.raises(TypeError) as info:
        tdt.from_numpy(array)
    assert str(info.value) == (
        "from_numpy: can't convert np.ndarray of type numpy.str_; the supported types are: "
        "uint64, uint32, uint16, complex128, complex64, float64, float32, float16, int64, "
        "int32, int16, int8, uint8, bool"
    )
    with pytest.raises(TypeError):
        torch.from_numpy(array)


def test_from_numpy_float128_is_unsupported_as_in_torch() -> None:
    with pytest.raises(TypeError, match="numpy.longdouble"):
        tdt.from_numpy(np.zeros(2, np.longdouble))
    with pytest.raises(TypeError):
        torch.from_numpy(np.zeros(2, np.longdouble))


def test_from_numpy_byte_order_error() -> None:
    array = np.arange(3, dtype=">i4")
    with pytest.raises(ValueError) as info:
        tdt.from_numpy(array)
    assert str(info.value) == (
        "from_numpy: the numpy array's byte order (>i4) differs from the native byte order, "
        "and conversion between byte orders is not supported; convert it first with "
        "array.astype(array.dtype.newbyteorder('='))"
    )
    with pytest.raises(ValueError):
        torch.from_numpy(array)


def test_from_numpy_strides_not_multiple_of_itemsize_error() -> None:
    array = np.zeros(3, dtype=[("a", "i4"), ("b", "i1")])["a"]
    with pytest.raises(ValueError) as info:
        tdt.from_numpy(array)
    assert str(info.value) == (
        "from_numpy: the numpy array's strides (5,) are not a multiple of the element size "
        "(4 bytes); make a copy first with array.copy()"
    )
    with pytest.raises(ValueError):
        torch.from_numpy(array)


def test_from_numpy_read_only_array_warns_and_shares() -> None:
    array = np.arange(3.0)
    array.flags.writeable = False
    with pytest.warns(UserWarning) as ours:
        t = tdt.from_numpy(array)
    assert str(ours[0].message) == (
        "from_numpy: the given NumPy array is not writable; the tensor shares its memory, "
        "and writing to the tensor will fail. Copy the array or make it writable first to "
        "avoid this."
    )
    assert t.data_ptr() == array.ctypes.data


def test_from_numpy_non_array_error() -> None:
    with pytest.raises(TypeError) as info:
        tdt.from_numpy([1, 2])  # type: ignore[arg-type]
    assert str(info.value) == (
        "from_numpy: expected np.ndarray (got list); use tensordispatch.tensor(data) to copy "
        "other data"
    )
    with pytest.raises(TypeError):
        torch.from_numpy([1, 2])  # type: ignore[arg-type]


# -- DLPack ------------------------------------------------------------------------------------


def test_dlpack_to_numpy_shares_memory() -> None:
    t = tdt.tensor([1.0, 2.0, 3.0])
    array = np.from_dlpack(t)
    array[1] = 20.0
    assert t.tolist() == [1.0, 20.0, 3.0]


def test_dlpack_from_numpy_shares_memory() -> None:
    array = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = tdt.from_dlpack(array)
    array[0, 0] = 100
    assert t.tolist() == [[100, 1, 2], [3, 4, 5]] and t.dtype is tdt.int32


@pytest.mark.parametrize("name", ["float32", "float64", "int64", "uint8", "bool", "complex64"])
def test_dlpack_to_torch_shares_memory(name: str) -> None:
    t = tdt.tensor([1, 0, 1], dtype=getattr(tdt, name))
    theirs = torch.from_dlpack(t)
    assert str(theirs.dtype) == "torch." + name
    assert theirs.data_ptr() == t.data_ptr()
    assert theirs.tolist() == t.tolist()


def test_dlpack_from_torch_shares_memory_and_keeps_strides() -> None:
    theirs = torch.arange(12.0).reshape(3, 4).t()
    ours = tdt.from_dlpack(theirs)
    assert ours.stride() == theirs.stride() and ours.shape == theirs.shape
    theirs[0, 1] = -5.0
    assert ours.tolist() == theirs.tolist()
    assert ours.data_ptr() == theirs.data_ptr()


def test_dlpack_writes_from_torch_are_seen_in_views() -> None:
    base = tdt.tensor(np.zeros(6, np.float32))
    view = base._make_view((2,), (3,), 1)
    theirs = torch.from_dlpack(view)
    theirs[1] = 4.0
    assert base.tolist() == [0.0, 0.0, 0.0, 0.0, 4.0, 0.0]


def test_dlpack_between_our_tensors_shares_memory() -> None:
    t = tdt.tensor([1, 2])
    u = tdt.from_dlpack(t)
    u.numpy()[0] = 7
    assert t.tolist() == [7, 2]


def test_dlpack_device_is_cpu() -> None:
    assert tuple(tdt.tensor([1.0]).__dlpack_device__()) == tuple(
        torch.tensor([1.0]).__dlpack_device__()
    )


def test_dlpack_of_meta_tensor_errors() -> None:
    meta = tdt.tensor([1.0], device="meta")
    with pytest.raises(BufferError) as info:
        meta.__dlpack__()
    assert str(info.value) == (
        "__dlpack__: cannot export a tensor on device 'meta' through DLPack; only CPU "
        "tensors can be exported"
    )
    with pytest.raises(ValueError) as device_info:
        meta.__dlpack_device__()
    assert str(device_info.value) == (
        "__dlpack_device__: device type 'meta' has no DLPack device; only CPU tensors can "
        "be exchanged"
    )
    with pytest.raises(BufferError):
        torch.empty(1, device="meta").__dlpack__()


def test_dlpack_of_requires_grad_tensor_error() -> None:
    with pytest.raises(BufferError) as info:
        tdt.tensor([1.0], requires_grad=True).__dlpack__()
    assert str(info.value) == (
        "__dlpack__: can't export a tensor that requires grad; use tensor.detach()"
    )
    with pytest.raises(BufferError):
        torch.tensor([1.0], requires_grad=True).__dlpack__()


def test_from_dlpack_without_protocol_error() -> None:
    with pytest.raises(TypeError) as info:
        tdt.from_dlpack([1, 2])
    assert str(info.value) == (
        "from_dlpack: expected an object implementing __dlpack__ (given list); pass an "
        "array or tensor, not a capsule"
    )


def test_the_tensor_package_is_callable_as_the_factory() -> None:
    import tensordispatch

    package = tensordispatch.tensor
    assert isinstance(package, type(np))  # still the package: submodules import normally
    made = package([1, 2], dtype=tdt.int32)
    assert made.tolist() == [1, 2] and made.dtype is tdt.int32


def test_submodules_import_by_dotted_name() -> None:
    import tensordispatch.tensor.printing as printing  # noqa: PLR0402 - the form under test

    assert printing.tensor_repr(tdt.tensor([1.0])) == "tensor([1.])"


@pytest.mark.parametrize(
    ("data", "name"),
    [
        ([1e40], "float16"),
        ([-1, -200, 255], "uint8"),
        ([3.9, -3.9], "int8"),
        ([True, 2, 0], "bool"),
        ([1e300], "float32"),
        (1.5, "uint8"),
        ([2**63 - 1, -(2**63)], "int64"),
    ],
    ids=str,
)
def test_conversions_that_torch_allows(data: object, name: str) -> None:
    ours = tdt.tensor(data, dtype=getattr(tdt, name))
    theirs = torch.tensor(data, dtype=getattr(torch, name))
    assert ours.tolist() == theirs.tolist()


@pytest.mark.parametrize(
    ("data", "name", "shown"),
    [
        ([300], "uint8", "300"),
        ([-256], "uint8", "-256"),
        ([1.5e10], "int32", "15000000000.0"),
        ([math.nan], "int32", "nan"),
        ([math.inf], "int64", "inf"),
    ],
)
def test_value_out_of_range_error(data: object, name: str, shown: str) -> None:
    with pytest.raises(RuntimeError) as info:
        tdt.tensor(data, dtype=getattr(tdt, name))
    assert str(info.value) == (
        f"tensor(): value {shown} cannot be converted to tensordispatch.{name} without "
        "overflow; use a wider dtype"
    )
    with pytest.raises(RuntimeError, match="without overflow"):
        torch.tensor(data, dtype=getattr(torch, name))


@pytest.mark.parametrize("data", [2**63, [1, 2**64], [-(2**63) - 1]], ids=str)
def test_python_int_beyond_int64_error(data: object) -> None:
    with pytest.raises(ValueError) as info:
        tdt.tensor(data)
    assert str(info.value) == (
        "tensor(): overflow when unpacking a Python int: it does not fit in int64; "
        "pass values between -2**63 and 2**63 - 1"
    )
    with pytest.raises(ValueError, match="Overflow"):
        torch.tensor(data)


def test_complex_value_into_real_dtype_error() -> None:
    with pytest.raises(TypeError) as info:
        tdt.tensor([1 + 1j], dtype=tdt.float32)
    assert str(info.value) == (
        "tensor(): a complex value cannot be converted to tensordispatch.float32 (must be a "
        "real number); pass dtype=tensordispatch.complex64 or drop the imaginary parts"
    )
    with pytest.raises(TypeError):
        torch.tensor([1 + 1j], dtype=torch.float32)


SCALARS = st.one_of(
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.complex_numbers(allow_nan=False, allow_infinity=False, max_magnitude=1e6),
    st.sampled_from([np.float64(0.5), np.float32(1.5), np.int32(3), np.int8(-2)]),
)


@given(st.lists(st.lists(SCALARS, min_size=2, max_size=2), min_size=1, max_size=3))
def test_random_nested_lists_infer_like_torch(data: list[list[object]]) -> None:
    ours, theirs = tdt.tensor(data), torch.tensor(data)
    assert torch_of(ours.dtype.name) == str(theirs.dtype)
    assert ours.shape == theirs.shape
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
