"""Tensor metadata, views over shared storage, version counters, scalar access, against torch."""

from __future__ import annotations

import weakref

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import tensordispatch as td
import tensordispatch.tensor as tdt
from tensordispatch.tensor.tensor import (
    Tensor,
    VersionCounter,
)


def pair(values: list[float] | np.ndarray, dtype: str = "float32") -> tuple[Tensor, torch.Tensor]:
    array = np.asarray(values, dtype=dtype)
    return tdt.tensor(array), torch.tensor(array)


# -- metadata --------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3), (2, 1, 4), (3, 0, 2)])
def test_fresh_tensor_metadata_matches_torch(shape: tuple[int, ...]) -> None:
    ours, theirs = pair(np.zeros(shape))
    assert ours.shape == theirs.shape and ours.size() == theirs.size()
    assert ours.stride() == theirs.stride()
    assert ours.storage_offset() == theirs.storage_offset()
    assert (ours.dim(), ours.ndim, ours.numel()) == (theirs.dim(), theirs.ndim, theirs.numel())
    assert ours.is_contiguous() == theirs.is_contiguous()
    assert (ours.element_size(), ours.itemsize, ours.nbytes) == (
        theirs.element_size(),
        theirs.itemsize,
        theirs.nbytes,
    )


def test_size_and_stride_of_one_dim_wrap_negative_dims() -> None:
    ours, theirs = pair(np.zeros((2, 3, 4)))
    for d in range(-3, 3):
        assert ours.size(d) == theirs.size(d)
        assert ours.stride(d) == theirs.stride(d)


def test_size_dim_out_of_range_error() -> None:
    t = tdt.tensor([1.0, 2.0])
    with pytest.raises(IndexError) as info:
        t.size(2)
    assert str(info.value) == (
        "size(2): dimension out of range (expected to be in range of [-1, 0], but got 2); "
        "pass a dim in that range"
    )
    with pytest.raises(IndexError):
        torch.zeros(2).size(2)


def test_stride_of_zero_dim_tensor_error() -> None:
    with pytest.raises(IndexError) as info:
        tdt.tensor(1.0).stride(0)
    assert str(info.value) == (
        "stride(0): dimension specified as 0 but the tensor has no dimensions; a 0-dim "
        "tensor has no sizes or strides to ask for"
    )
    with pytest.raises(IndexError):
        torch.tensor(1.0).stride(0)


def test_dtype_predicates_and_device_flags() -> None:
    t = tdt.tensor([1 + 1j])
    assert t.is_complex() and not t.is_floating_point() and t.is_signed()
    assert t.is_cpu and not t.is_meta and not t.is_cuda
    m = tdt.Tensor._make_meta((2,), None, tdt.float32)
    assert m.is_meta and not m.is_cpu and m.device == tdt.device("meta")


def test_tensor_class_is_not_called_directly() -> None:
    with pytest.raises(TypeError) as info:
        Tensor([1.0])
    assert str(info.value) == (
        "Tensor(...): tensors are not built by calling the class; use "
        "tensordispatch.tensor(data), from_numpy(array) or from_dlpack(obj)"
    )


def test_key_set_is_the_devices() -> None:
    assert tdt.tensor([1.0])._key_set == tdt.device("cpu")._key_set
    meta = Tensor._make_meta((1,), None, tdt.int64)
    assert meta._key_set == tdt.device("meta")._key_set


def test_tensors_hash_by_identity_and_take_weak_references() -> None:
    a, b = tdt.tensor([1.0]), tdt.tensor([1.0])
    assert len({a, b, a}) == 2
    assert weakref.ref(a)() is a


def test_autograd_placeholders() -> None:
    t = tdt.tensor([1.0])
    assert (t.grad, t.grad_fn, t.requires_grad, t._base) == (None, None, False, None)


# -- views (Note [Views share the root]) ------------------------------------------------------


@st.composite
def view_geometry(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=ndim, max_size=ndim)))
    strides = tuple(draw(st.lists(st.integers(0, 6), min_size=ndim, max_size=ndim)))
    offset = draw(st.integers(0, 5))
    return shape, strides, offset


def storage_size(shape: tuple[int, ...], strides: tuple[int, ...], offset: int) -> int:
    return offset + 1 + sum((s - 1) * st for s, st in zip(shape, strides, strict=True) if s)


@given(view_geometry())
def test_view_values_strides_contiguity_match_torch_as_strided(
    geometry: tuple[tuple[int, ...], tuple[int, ...], int],
) -> None:
    shape, strides, offset = geometry
    n = storage_size(shape, strides, offset)
    ours_base, torch_base = pair(np.arange(n, dtype=np.float64), "float64")
    view = ours_base._make_view(shape, strides, offset)
    expected = torch.as_strided(torch_base, shape, strides, offset)
    assert view.tolist() == expected.tolist()
    assert view.stride() == expected.stride() and view.shape == expected.shape
    assert view.storage_offset() == expected.storage_offset()
    assert view.is_contiguous() == expected.is_contiguous()


def test_write_through_view_is_seen_in_base_and_back() -> None:
    base = tdt.tensor(np.zeros(12, np.float32))
    view = base._make_view((3, 2), (4, 1), 1)
    view.numpy()[1, 1] = 7.0
    assert base.tolist()[6] == 7.0
    base.numpy()[9] = 3.0
    assert view.tolist() == [[0.0, 0.0], [0.0, 7.0], [3.0, 0.0]]


def test_view_of_view_has_root_base_shared_storage_and_version() -> None:
    base = tdt.tensor(np.arange(12.0))
    v1 = base._make_view((2, 6), (6, 1), 0)
    v2 = v1._make_view((2, 2), (6, 2), 1)
    assert v1._base is base and v2._base is base
    assert v2._vc is base._vc
    assert v2.tolist() == [[1.0, 3.0], [7.0, 9.0]]
    tv1 = torch.arange(12.0).as_strided((2, 6), (6, 1), 0)
    assert tv1.as_strided((2, 2), (6, 2), 1)._base is tv1._base


def test_version_counter_is_shared_by_all_views() -> None:
    base = tdt.tensor(np.arange(4.0))
    view = base._make_view((2,), (2,), 0)
    assert (base._version, view._version) == (0, 0)
    view._bump_version()
    assert (base._version, view._version) == (1, 1)
    base._bump_version()
    assert view._version == 2


def test_version_counter_of_torch_views_is_shared_too() -> None:
    base = torch.arange(4.0)
    view = base.as_strided((2,), (2,), 0)
    view.add_(1)
    assert base._version == view._version == 1


def test_view_reinterprets_storage_bytes_as_another_dtype() -> None:
    base = tdt.tensor(np.array([1.0, 2.0], np.float32))
    as_int = base._make_view((2,), (1,), 0, dtype=tdt.int32)
    assert as_int.tolist() == torch.tensor([1.0, 2.0]).view(torch.int32).tolist()


def test_view_out_of_storage_bounds_error() -> None:
    base = tdt.tensor(np.zeros(4, np.float32))
    with pytest.raises(RuntimeError) as info:
        base._make_view((2, 3), (3, 1), 0)
    assert str(info.value) == (
        "as_strided: sizes [2, 3], strides [3, 1], storage offset 0 and itemsize 4 need 24 "
        "bytes of storage, but the storage has 16 (strides and offset must be >= 0); "
        "pick a view that fits in the storage"
    )
    with pytest.raises(RuntimeError):
        torch.zeros(4).as_strided((2, 3), (3, 1), 0)


def test_empty_view_may_start_past_the_end_like_torch() -> None:
    base = tdt.tensor(np.zeros(2, np.float32))
    view = base._make_view((0,), (1,), 5)
    expected = torch.zeros(2).as_strided((0,), (1,), 5)
    assert (view.shape, view.storage_offset()) == (expected.shape, expected.storage_offset())


def test_meta_view_shares_version_and_is_not_bounds_checked_like_torch() -> None:
    base = Tensor._make_meta((2, 3), None, tdt.float32)
    view = base._make_view((3,), (2,), 1)
    assert view._data is None and view._base is base and view._vc is base._vc
    big = base._make_view((7,), (1,), 0)
    expected = torch.empty(2, 3, device="meta").as_strided((7,), (1,), 0)
    assert (big.shape, big.stride()) == (expected.shape, expected.stride())


def test_make_view_accepts_a_ready_numpy_view() -> None:
    base = tdt.tensor(np.arange(6.0).reshape(2, 3))
    transposed = base._make_view((3, 2), (1, 3), 0, data=base._data.T)
    assert transposed.tolist() == torch.arange(6.0).reshape(2, 3).t().tolist()
    assert not transposed.is_contiguous()


def test_views_of_from_numpy_tensor_share_the_arrays_memory() -> None:
    full = np.arange(10.0)
    t = tdt.from_numpy(full[::2])  # non-contiguous, positive stride
    assert t.stride() == torch.from_numpy(full[::2]).stride() == (2,)
    view = t._make_view((2,), (2,), 1)  # storage elements 1 and 3: between t's elements
    view.numpy()[1] = -1.0
    assert full.tolist()[3] == -1.0


def test_data_ptr_offsets_by_storage_offset() -> None:
    base = tdt.tensor(np.zeros(8, np.float64))
    view = base._make_view((2,), (1,), 3)
    assert view.data_ptr() - base.data_ptr() == 3 * 8
    assert Tensor._make_meta((2,), None, tdt.float32).data_ptr() == 0
    assert tdt.tensor([]).data_ptr() == torch.tensor([]).data_ptr() == 0


def test_version_counter_repr() -> None:
    assert repr(VersionCounter(3)) == "VersionCounter(3)"


# -- values --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "values",
    [[True, False], [1, -2], [1.5, 2.0], [1 + 2j], [[1.0, 2.0], [3.0, 4.0]], 3.25, 7, True],
    ids=str,
)
def test_item_and_tolist_match_torch(values: object) -> None:
    ours, theirs = tdt.tensor(values), torch.tensor(values)
    assert ours.tolist() == theirs.tolist()
    assert type(ours.tolist()) is type(theirs.tolist())
    if theirs.numel() == 1:
        assert ours.item() == theirs.item() and type(ours.item()) is type(theirs.item())


def test_float16_values_convert_to_python_floats_exactly() -> None:
    ours = tdt.tensor([0.1, 3.3], dtype=tdt.float16)
    assert ours.tolist() == torch.tensor([0.1, 3.3], dtype=torch.float16).tolist()


def test_item_of_many_elements_error() -> None:
    with pytest.raises(RuntimeError) as info:
        tdt.tensor([1.0, 2.0]).item()
    assert str(info.value) == "a Tensor with 2 elements cannot be converted to Scalar"
    with pytest.raises(RuntimeError) as expected:
        torch.tensor([1.0, 2.0]).item()
    assert str(info.value) == str(expected.value)


def test_item_of_meta_tensor_error() -> None:
    with pytest.raises(RuntimeError) as info:
        Tensor._make_meta((), None, tdt.float32).item()
    assert str(info.value) == (
        "item(): cannot be called on a tensor on device 'meta', which has no data; "
        "compute on device='cpu' for values"
    )
    with pytest.raises(RuntimeError):
        torch.empty((), device="meta").item()


def test_tolist_of_meta_tensor_error() -> None:
    with pytest.raises(NotImplementedError) as info:
        Tensor._make_meta((2,), None, tdt.float32).tolist()
    assert str(info.value) == (
        "tolist(): cannot read the values of a tensor on device 'meta', which has no data; "
        "compute on device='cpu' for values"
    )
    with pytest.raises(NotImplementedError):
        torch.empty(2, device="meta").tolist()


def test_python_number_conversions_match_torch() -> None:
    for values in [[2.5], [3], [True]]:
        ours, theirs = tdt.tensor(values), torch.tensor(values)
        assert (float(ours), int(ours), bool(ours)) == (float(theirs), int(theirs), bool(theirs))
        assert complex(ours) == complex(theirs)
    assert [1, 2, 3][tdt.tensor([1])] == 2


@pytest.mark.parametrize("convert", [int, float], ids=["int", "float"])
def test_real_number_of_a_complex_tensor_is_torchs_overflow_error(convert: type) -> None:
    with pytest.raises(RuntimeError) as expected:
        convert(torch.tensor(1 + 1j))
    with pytest.raises(RuntimeError) as info:
        convert(tdt.tensor(1 + 1j))
    assert str(info.value) == str(expected.value)
    target = "int64_t" if convert is int else "double"
    assert str(info.value) == f"value cannot be converted to type {target} without overflow"


def test_bool_of_many_values_error() -> None:
    with pytest.raises(RuntimeError) as info:
        bool(tdt.tensor([1.0, 2.0]))
    assert str(info.value) == "Boolean value of Tensor with more than one value is ambiguous"
    with pytest.raises(RuntimeError) as expected:
        bool(torch.tensor([1.0, 2.0]))
    assert str(info.value) == str(expected.value)


def test_float_of_many_values_error() -> None:
    with pytest.raises(ValueError) as info:
        float(tdt.tensor([1.0, 2.0]))
    assert str(info.value) == "only one element tensors can be converted to Python scalars"
    with pytest.raises(ValueError) as expected:
        float(torch.tensor([1.0, 2.0]))
    assert str(info.value) == str(expected.value)


def test_index_of_float_tensor_error() -> None:
    with pytest.raises(TypeError) as info:
        tdt.tensor([1.5]).__index__()
    assert str(info.value) == "only integer tensors of a single element can be converted to an index"
    with pytest.raises(TypeError) as expected:
        torch.tensor([1.5]).__index__()
    assert str(info.value) == str(expected.value)


def test_len_matches_torch_and_zero_dim_error() -> None:
    assert len(tdt.tensor([[1, 2]] * 3)) == len(torch.tensor([[1, 2]] * 3)) == 3
    with pytest.raises(TypeError) as info:
        len(tdt.tensor(1.0))
    assert str(info.value) == "len() of a 0-d tensor"


def test_requires_grad_on_integer_tensor_error() -> None:
    with pytest.raises(RuntimeError) as info:
        tdt.tensor([1, 2]).requires_grad_()
    assert str(info.value) == (
        "requires_grad: only Tensors of floating point and complex dtype can require "
        "gradients (given dtype tensordispatch.int64); convert to a floating dtype first"
    )
    with pytest.raises(RuntimeError):
        torch.tensor([1, 2]).requires_grad_()


def test_requires_grad_on_complex_is_allowed() -> None:
    assert tdt.tensor([1j]).requires_grad_().requires_grad
    assert torch.tensor([1j]).requires_grad_().requires_grad


def test_format_of_zero_dim_tensor_formats_the_value() -> None:
    assert f"{tdt.tensor(2.5):.2f}" == f"{torch.tensor(2.5):.2f}" == "2.50"


# -- numpy() ---------------------------------------------------------------------------------


def test_numpy_shares_memory_without_copy() -> None:
    t = tdt.tensor([1.0, 2.0, 3.0])
    array = t.numpy()
    array[0] = 10.0
    assert t.tolist() == [10.0, 2.0, 3.0]
    assert np.shares_memory(array, t.numpy())
    assert array is not t._data  # reshaping the returned array cannot corrupt the tensor


def test_numpy_of_view_has_its_strides() -> None:
    base = tdt.tensor(np.arange(12, dtype=np.int32))
    view = base._make_view((3, 2), (1, 3), 2)
    expected = torch.arange(12, dtype=torch.int32).as_strided((3, 2), (1, 3), 2).numpy()
    assert view.numpy().strides == expected.strides
    assert view.numpy().tolist() == expected.tolist()


def test_numpy_of_requires_grad_tensor_error() -> None:
    t = tdt.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        t.numpy()
    assert str(info.value) == (
        "numpy(): can't call numpy() on a Tensor that requires grad; "
        "use tensor.detach().numpy() instead"
    )
    with pytest.raises(RuntimeError):
        torch.tensor([1.0], requires_grad=True).numpy()
    assert t.numpy(force=True).tolist() == [1.0]


def test_numpy_of_meta_tensor_error() -> None:
    with pytest.raises(TypeError) as info:
        Tensor._make_meta((2,), None, tdt.float32).numpy()
    assert str(info.value) == (
        "numpy(): cannot convert a tensor on device 'meta' to NumPy; only CPU tensors "
        "share memory with NumPy arrays"
    )
    with pytest.raises(TypeError):
        torch.empty(2, device="meta").numpy()


def test_array_protocol_matches_torch() -> None:
    ours, theirs = pair([1.5, 2.5])
    assert np.asarray(ours).tolist() == np.asarray(theirs).tolist()
    assert np.asarray(ours, dtype=np.int64).tolist() == [1, 2]


def test_fresh_tensor_has_no_version_counter_until_needed() -> None:
    t = tdt.tensor([1.0, 2.0])
    assert t._vc is None and t._version == 0
    t._bump_version()
    assert t._version == 1
    view = t._make_view((1,), (1,), 1)
    assert view._vc is t._vc and view._version == 1


def test_first_view_creates_the_shared_counter() -> None:
    t = tdt.tensor([1.0, 2.0])
    view = t._make_view((1,), (1,), 0)
    assert view._vc is t._vc and t._vc is not None
    view._bump_version()
    assert t._version == 1


def test_autograd_meta_is_allocated_only_when_used() -> None:
    t = tdt.tensor([1.0])
    assert t._autograd_meta is None
    t.requires_grad_()
    assert t._autograd_meta is not None and t.requires_grad
    u = tdt.tensor([1.0])
    u.grad = tdt.tensor([2.0])
    assert u.grad is not None and u.grad.tolist() == [2.0] and not u.requires_grad


def test_view_with_negative_stride_error() -> None:
    base = tdt.tensor(np.zeros(4, np.float32))
    with pytest.raises(RuntimeError, match="strides and offset must be >= 0"):
        base._make_view((2,), (-1,), 3)
    with pytest.raises(RuntimeError):
        torch.zeros(4).as_strided((2,), (-1,), 3)


def test_is_alias_of_matches_torch_for_views_and_distinct_tensors() -> None:
    base = tdt.tensor(np.arange(6.0))
    view = base._make_view((2,), (2,), 1)
    other_view = base._make_view((3,), (1,), 3)
    torch_base = torch.arange(6.0)
    torch_view = torch_base.as_strided((2,), (2,), 1)
    torch_other = torch_base.as_strided((3,), (1,), 3)
    assert view._is_alias_of(other_view) == torch._C._is_alias_of(torch_view, torch_other) is True
    assert view._is_alias_of(tdt.tensor([1.0])) == torch._C._is_alias_of(torch_view, torch.ones(1))


def test_roots_made_over_one_storage_alias() -> None:
    base = tdt.tensor(np.arange(4.0))
    twin = Tensor._make(
        base._data, (4,), (1,), 0, base.dtype, base.device, storage=base._storage_bytes()
    )
    assert twin._is_alias_of(base) and twin._base is None


def test_deepcopy_copies_values_and_metadata_like_torch() -> None:
    import copy

    base = tdt.tensor(np.arange(6.0).reshape(2, 3))
    view = base._make_view((3, 2), (1, 3), 0)
    copied = copy.deepcopy(view)
    theirs = copy.deepcopy(torch.arange(6.0).reshape(2, 3).t())
    assert copied.tolist() == theirs.tolist() and copied.stride() == theirs.stride()
    assert copied._base is None and not copied._is_alias_of(base)
    copied.numpy()[0, 0] = 99.0
    assert base.tolist()[0][0] == 0.0


def test_pickle_round_trip_keeps_dtype_device_requires_grad() -> None:
    import pickle

    t = tdt.tensor([1.5, 2.5], dtype=tdt.float64, requires_grad=True)
    back = pickle.loads(pickle.dumps(t))
    assert (back.tolist(), back.dtype, back.requires_grad) == ([1.5, 2.5], tdt.float64, True)
    meta = pickle.loads(pickle.dumps(Tensor._make_meta((2, 3), None, tdt.int32)))
    assert (meta.shape, meta.dtype, meta.device) == ((2, 3), tdt.int32, tdt.device("meta"))


def test_new_cpu_tensor_matches_make() -> None:
    from tensordispatch.tensor.device import CPU
    from tensordispatch.tensor.tensor import new_cpu_tensor

    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    fast = new_cpu_tensor(data, (2, 3), (3, 1), tdt.float32)
    slow = Tensor._make(data, (2, 3), (3, 1), 0, tdt.float32, CPU)
    for slot in Tensor.__slots__:
        if slot != "__weakref__":
            assert slot == "_data" or getattr(fast, slot) == getattr(slow, slot), slot
    assert fast._data is data
    assert type(fast) is Tensor
    assert fast._version == 0 and not fast.requires_grad


@pytest.mark.parametrize("shape", [(3,), (2, 3), (0, 2), (2, 0), (1, 1, 1)])
def test_iteration_gives_the_rows_as_torch(shape: tuple[int, ...]) -> None:
    values = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    ours = [r.tolist() for r in td.from_numpy(values.copy())]
    theirs = [r.tolist() for r in torch.from_numpy(values.copy())]
    assert ours == theirs


def test_iterating_a_0_dim_tensor_is_refused_as_torch() -> None:
    with pytest.raises(TypeError) as ours:
        list(td.tensor(2))
    with pytest.raises(TypeError) as theirs:
        list(torch.tensor(2))
    assert str(ours.value) == str(theirs.value) == "iteration over a 0-d tensor"
    assert td.zeros(td.tensor(2)).shape == tuple(torch.zeros(torch.tensor(2)).shape) == (2,)
