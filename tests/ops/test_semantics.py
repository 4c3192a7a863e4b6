"""Structured-kernel semantics, aliasing, messages and dispatch paths, against torch."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import torch

import tensordispatch._api as td
import tensordispatch.ops as tdops
import tensordispatch.tensor as tdt
from tensordispatch.dispatch.dispatcher import DISPATCHER
from tensordispatch.dispatch.keys import DispatchKey


def _message(fn: Any) -> tuple[type[BaseException], str]:
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the exception is the result compared
        return type(e), str(e).split(" (Triggered internally")[0]
    raise AssertionError("no exception")


def _both(build: Any) -> tuple[tuple[type[BaseException], str], tuple[type[BaseException], str]]:
    return _message(lambda: build(torch)), _message(lambda: build(td))


LIB = {torch: torch}


def _dtype(lib: Any, name: str) -> Any:
    return getattr(torch if lib is torch else tdt, name)


def _t(lib: Any, data: Any, dtype: str = "float32") -> Any:
    mod = torch if lib is torch else tdt
    return mod.tensor(data, dtype=getattr(mod, dtype))


@pytest.mark.parametrize(
    "build",
    [
        lambda L: _t(L, [1.0, 2.0]).addmm_(_t(L, [[1.0, 2.0]] * 2), _t(L, [[1.0, 2.0]] * 2)),
        lambda L: L.mm(_t(L, [[1.0]]), _t(L, [[1.0]]), out=_t(L, [[1]], "int64")),
        lambda L: L.add(_t(L, [1.0, 2.0]), 1, out=_t(L, [1, 2], "int64")),
        lambda L: _t(L, [1.0, 2.0]).add_(_t(L, [[1.0, 2.0]] * 2)),
        lambda L: L.add(_t(L, [1.0, 2.0]), _t(L, [1.0, 2.0, 3.0])),
        lambda L: L.mm(_t(L, [[1.0, 2.0]]), _t(L, [[1.0, 2.0]])),
        lambda L: L.mm(_t(L, [[1.0, 2.0]]), _t(L, [[1.0], [2.0]], "float64")),
        lambda L: L.addmm(_t(L, [1.0]), _t(L, [[1.0]]), _t(L, [[1.0]], "float64")),
        lambda L: L.mean(_t(L, [1, 2], "int64")),
        lambda L: L.mean(_t(L, [1.0, 2.0]), 0, dtype=_dtype(L, "int32")),
        lambda L: L.sum(_t(L, [[1.0]]), [0, 0]),
        lambda L: -_t(L, [True], "bool"),
        lambda L: _t(L, [True], "bool") - _t(L, [True], "bool"),
        lambda L: L.add(_t(L, [1], "int64"), 1, alpha=0.5),
        lambda L: L.abs(_t(L, [True], "bool")),
        lambda L: _t(L, [[1.0, 2.0], [3.0, 4.0]]).t().view(4),
        lambda L: _t(L, [1.0, 2.0]).view(3),
        lambda L: _t(L, [1.0, 2.0]).expand(2, 3),
        lambda L: _t(L, [[1.0, 2.0]]).select(0, 3),
        lambda L: L.matmul(_t(L, 1.0), _t(L, [1.0])),
        lambda L: L.zeros(2, -3),
        lambda L: L.ones(2, -3),
        lambda L: L.empty_strided((2, -3), (1, 1)),
        lambda L: L.dot(_t(L, [1.0]), _t(L, [1.0, 2.0])),
    ],
)
def test_error_messages_match_torch(build: Any) -> None:
    expected, got = _both(build)
    assert got == expected


def test_resize_warning_matches_torch() -> None:
    texts = []
    for lib in (torch, td):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.add(_t(lib, [1.0, 2.0, 3.0]), 1, out=_t(lib, [0.0, 0.0]))
        assert [w.category for w in caught] == [UserWarning]
        texts.append(str(caught[0].message).split(" (Triggered internally")[0])
    assert texts[1] == texts[0]


def test_out_result_is_the_out_tensor_and_resized_like_torch() -> None:
    out = td.empty(0)
    result = td.add(td.ones(2, 3), 1, out=out)
    assert result is out
    assert (out.shape, out.stride(), out.tolist()) == ((2, 3), (3, 1), [[2.0] * 3] * 2)


def test_out_with_other_strides_keeps_them_and_gets_values() -> None:
    out = td.zeros(3, 2).t()
    td.mul(td.ones(2, 3), 3, out=out)
    assert out.stride() == (1, 2) and out.tolist() == [[3.0] * 3] * 2


def test_inplace_returns_self_and_writes_through_views() -> None:
    base = td.zeros(2, 3)
    row = base.select(0, 1)
    assert row.add_(5) is row
    assert base.tolist() == [[0.0] * 3, [5.0] * 3]


@pytest.mark.parametrize(
    "make_view",
    [
        lambda x: x.view(6),
        lambda x: x.t(),
        lambda x: x.transpose(0, 1),
        lambda x: x.unsqueeze(0),
        lambda x: x.select(1, 2),
        lambda x: tdops.aten.slice.Tensor(x, 1, 1, None, 1),
        lambda x: x.squeeze(0),
        lambda x: td.reshape(x, (3, 2)),
    ],
)
def test_write_through_a_view_is_visible_in_its_base(make_view: Any) -> None:
    base = td.zeros(2, 3)
    view = make_view(base)
    view.fill_(7.0)
    assert view._base is base
    assert sum(base.view(6).tolist()) == 7.0 * view.numel()


def test_expand_shares_memory_with_zero_strides() -> None:
    base = tdt.tensor([1.0, 2.0, 3.0])
    wide = base.expand(2, 3)
    assert wide.stride() == (0, 1) and wide._base is base
    base.fill_(4.0)
    assert wide.tolist() == [[4.0] * 3] * 2


def test_factory_on_meta_goes_through_backend_select_to_meta() -> None:
    entry = DISPATCHER.find("aten::empty", "memory_format")
    assert entry is not None
    assert {DispatchKey.BackendSelect, DispatchKey.CPU, DispatchKey.Meta} <= set(entry.kernels)
    t = td.empty(2, 3, device="meta")
    assert (t.device.type, t.shape, t.stride()) == ("meta", (2, 3), (3, 1))
    assert td.zeros(2, device="meta").device.type == "meta"


def test_structured_kernels_are_registered_for_cpu_and_meta() -> None:
    for name, overload in (("add", "Tensor"), ("add_", "Tensor"), ("add", "out")):
        entry = DISPATCHER.find(f"aten::{name}", overload)
        assert entry is not None
        assert {DispatchKey.CPU, DispatchKey.Meta} <= set(entry.kernels), name


def test_meta_kernels_run_without_data() -> None:
    x = td.ones(2, 3, device="meta")
    y = td.mm(x, td.ones(3, 4, device="meta"))
    assert (y.shape, y.dtype, y._data) == ((2, 4), tdt.float32, None)


def test_python_operators_match_torch() -> None:
    def program(lib: Any) -> Any:
        a = _t(lib, [[1.0, 2.0], [3.0, 4.0]])
        b = _t(lib, [0.5, -1.0])
        c = (a + b) * 2 - 1 / (a + 3) + (1 - b) + 2 * a
        c = -c @ a + abs(-a)
        c += 1
        c -= b
        c *= 2
        c /= 4
        return c

    got, expected = program(td), program(torch)
    flat = [v for row in got.tolist() for v in row]
    assert flat == pytest.approx([v for row in expected.tolist() for v in row], rel=1e-6)


def test_inplace_operator_keeps_identity() -> None:
    a = td.ones(2)
    b = a
    a += 1
    assert a is b and a.tolist() == [2.0, 2.0]


def test_requires_grad_flag_of_factories() -> None:
    assert td.zeros(2, requires_grad=True).requires_grad
    assert not td.ones(2).requires_grad


def test_python_numbers_become_wrapped_tensors_for_add() -> None:
    out = td.add(td.ones(2, dtype=tdt.int32), 2)
    assert out.dtype is tdt.int32 and out.tolist() == [3, 3]
    assert td.mul(td.ones(2, dtype=tdt.float16), 2.5).dtype is tdt.float16


def test_methods_do_not_replace_tensor_attributes() -> None:
    from tensordispatch.tensor.metadata import TensorMetadata

    # the hand-written metadata method (a mixin of Tensor), not a generated operator method
    assert tdt.Tensor.size is TensorMetadata.size
    assert not getattr(tdt.Tensor.size, "_td_generated", False)
    assert getattr(tdt.Tensor.add, "_td_generated", False)


def test_non_number_where_a_tensor_is_expected_is_a_type_error() -> None:
    with pytest.raises(TypeError) as info:
        td.add(td.ones(2), "x")
    assert str(info.value) == "add(): argument 'other' (position 2) must be Tensor, not str"  # torch's


def test_copy_from_meta_into_cpu_names_the_device() -> None:
    with pytest.raises(NotImplementedError) as info:
        td.zeros(2).copy_(td.zeros(2, device="meta"))
    assert (
        str(info.value) == _message(lambda: torch.zeros(2).copy_(torch.zeros(2, device="meta")))[1]
    )


def test_unsupported_layout_and_memory_format_are_rejected() -> None:
    # a str is not a Layout: refused by the argument check, as torch's OpOverload refuses it
    with pytest.raises(TypeError) as info:  # torch's binding: a TypeError
        td.empty(2, layout="sparse")
    assert str(info.value) == "empty(): argument 'layout' must be torch.layout, not str"
    with pytest.raises(RuntimeError) as info:
        tdops.aten.empty.memory_format([2], layout="sparse")
    assert str(info.value) == (
        "aten::empty() Expected a value of type 'Optional[int]' for argument 'layout' but "
        "instead found type 'str'.\nPosition: 2\nValue: 'sparse'\nDeclaration: "
        "aten::empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? "
        "layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? "
        "memory_format=None) -> Tensor"
    )
    with pytest.raises(RuntimeError) as info:
        td.empty(2, 3, memory_format=td.channels_last)
    assert str(info.value) == "required rank 4 tensor to use channels_last format"
