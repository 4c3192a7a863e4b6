"""The one-hop path of basic indexing (ops/indexing_fast.py, Note [Basic indexing in one hop]):
the same views as torch for random keys over bases of every layout, and the general path
whenever a layer could see the skipped hops (grad, modes, traces, user kernels)."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import tensordispatch as td
from tensordispatch.dispatch import dispatch_trace
from tensordispatch.dispatch.library import Library
from tensordispatch.ops import indexing_fast

# name -> builder over a library: the bases' layouts (contiguous, transposed, with a storage
# offset, a stride-0 dim, an empty dim)
BASES = {
    "contiguous": lambda L: L.arange(60.0).view(3, 4, 5),
    "transposed": lambda L: L.arange(60.0).view(3, 4, 5).transpose(0, 2),
    "offset": lambda L: L.arange(80.0).view(4, 4, 5)[1:],
    "stepped": lambda L: L.arange(120.0).view(6, 4, 5)[::2, :, 1:],
    "expanded": lambda L: L.arange(5.0).expand(3, 4, 5),
    "empty": lambda L: L.zeros(3, 0, 5),
    "vector": lambda L: L.arange(7.0),
}


def _item(kind: str, value: Any) -> Any:
    if kind == "int":
        return value
    if kind == "slice":
        return slice(*value)
    return None if kind == "none" else Ellipsis


@st.composite
def _key(draw: Any) -> tuple[bool, list[tuple[str, Any]]]:
    """(as a tuple?, parts): ints in range of a size-3 dim or beyond, slices with steps."""
    parts: list[tuple[str, Any]] = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["int", "slice", "slice", "none", "ellipsis"]))
        if kind == "ellipsis" and ("ellipsis", None) in parts:
            continue  # two: torch reads sizes past the end (test_two_ellipses_match_torch)
        if kind == "int":
            parts.append(("int", draw(st.integers(-4, 3))))
        elif kind == "slice":
            bound = st.one_of(st.none(), st.integers(-8, 8))
            step = st.sampled_from([None, 1, 2, 3])
            parts.append(("slice", (draw(bound), draw(bound), draw(step))))
        else:
            parts.append((kind, None))
    single = len(parts) == 1 and draw(st.booleans())
    return not single, parts


def _outcome(base: Any, key: Any) -> Any:
    try:
        r = base[key]
    except Exception as e:  # noqa: BLE001 - the exception is compared
        return (type(e).__name__, str(e))
    return (
        r.tolist(), tuple(r.shape), r.stride(), r.storage_offset(), r.is_contiguous(),
        r._base is base or (r._base is not None and r._base is base._base),
    )  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(BASES)), _key())
def test_basic_keys_match_torch(base_name: str, key_parts: Any) -> None:
    as_tuple, parts = key_parts
    items = [_item(k, v) for k, v in parts]
    key = tuple(items) if as_tuple else items[0]
    theirs = _outcome(BASES[base_name](torch), key)
    ours = _outcome(BASES[base_name](td), key)
    assert ours == theirs


@pytest.mark.parametrize(
    "key",
    [
        (..., ...), (0, ..., ...), (..., 0, ...), (..., None, ...), (None, ..., ...),
        (..., ..., slice(1, 2)), (..., ..., slice(None)), (..., ..., None),
    ],
)  # fmt: skip
def test_two_ellipses_match_torch(key: Any) -> None:
    """Each Ellipsis skips the dims the key does not name (torch's applySlicing). An int
    past the end after two is left out: torch reads a size out of bounds there."""
    assert _outcome(BASES["contiguous"](td), key) == _outcome(BASES["contiguous"](torch), key)


@pytest.mark.parametrize("key", [(..., 5), (None, 7), (None, None, 9), (0, ..., 9), (1, None, 4)])
def test_int_out_of_range_names_the_key_position(key: Any) -> None:
    """torch's message names the item's position in the key, not the dim it selects."""
    with pytest.raises(IndexError) as theirs:
        BASES["contiguous"](torch)[key]
    with pytest.raises(IndexError) as ours:
        BASES["contiguous"](td)[key]
    assert str(ours.value) == str(theirs.value)


def test_view_shares_storage_and_version_counter() -> None:
    x = td.arange(12.0).view(3, 4).clone()
    y = x[1:3]
    y.fill_(-1.0)
    assert x[1].tolist() == [-1.0] * 4
    assert x._version == y._version == 1
    assert y._base is x and y.is_contiguous() and y.storage_offset() == 4


def test_column_view_is_not_contiguous_like_torch() -> None:
    got, expected = td.arange(12.0).view(3, 4)[:, 1], torch.arange(12.0).view(3, 4)[:, 1]
    assert (got.stride(), got.is_contiguous()) == (expected.stride(), expected.is_contiguous())


def test_out_of_range_int_raises_torchs_message() -> None:
    with pytest.raises(IndexError) as ours:
        td.zeros(3, 4)[:, 4]
    with pytest.raises(IndexError) as theirs:
        torch.zeros(3, 4)[:, 4]
    assert (
        str(ours.value)
        == str(theirs.value)
        == ("index 4 is out of bounds for dimension 1 with size 4")
    )


def test_requires_grad_takes_the_recorded_path() -> None:
    x = td.arange(6.0).view(2, 3).clone().requires_grad_()
    y = x[1, ::2]
    assert type(y.grad_fn).__name__ == "SliceBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 0.0], [1.0, 0.0, 1.0]]


def test_a_trace_sees_every_hop() -> None:
    x = td.zeros(3, 4)
    with dispatch_trace() as trace:
        x[1:3, 0]
    ops = [h.op for h in trace.hops]
    assert ops == ["aten::slice.Tensor"] * 2 + ["aten::select.int"] * 2


def test_a_user_cpu_kernel_is_called_and_its_removal_restores_the_view() -> None:
    seen: list[Any] = []

    def my_select(self: Any, dim: int, index: int) -> Any:
        seen.append((dim, index))
        return td.ops.aten.alias.default(self)

    x = td.arange(6.0).view(2, 3)
    lib = Library("aten", "IMPL")
    lib.impl("select.int", my_select, "CPU")
    try:
        y = x[1]
    finally:
        lib._destroy()
    assert seen == [(0, 1)] and y.shape == (2, 3)
    z = x[1]
    assert seen == [(0, 1)] and z.tolist() == [3.0, 4.0, 5.0]


def test_guard_declines_a_kernel_it_does_not_know() -> None:
    guard = indexing_fast.ViewGuard("select.int", "slice")  # select's kernel is not slice
    assert guard.recheck() is False
    assert guard.recheck() is False  # the same state: known bad, not checked again
    assert indexing_fast.ViewGuard("select.int", "select").recheck() is True


def test_plain_cpu_declines_meta_and_grad() -> None:
    assert indexing_fast.plain_cpu(td.zeros(2))
    assert not indexing_fast.plain_cpu(td.zeros(2, device="meta"))
    assert not indexing_fast.plain_cpu(td.zeros(2, requires_grad=True))
    with td.no_grad():
        assert not indexing_fast.plain_cpu(td.zeros(2))  # views made here are marked
    with td.no_grad():
        v = td.ones(3).requires_grad_()[:2]
    assert not indexing_fast.plain_cpu(v)  # the creation meta passes on to its views


# -- assignment (Note [Assignment in one hop]) -------------------------------------------------

VALUES = {
    "float": lambda L: 2.5,
    "int": lambda L: 7,
    "bool": lambda L: True,
    "row": lambda L: L.arange(5.0),
    "int64-row": lambda L: L.arange(5),
    "column": lambda L: L.arange(4.0).view(4, 1),
    "leading-ones": lambda L: L.ones(1, 1, 5),
    "zero-dim": lambda L: L.tensor(3.0),
}
ASSIGN_KEYS = [1, slice(1, 3), (slice(None), 2), (0, slice(None, None, 2)), (Ellipsis, 1), None]


@pytest.mark.parametrize("value", sorted(VALUES))
@pytest.mark.parametrize("key", range(len(ASSIGN_KEYS)))
def test_assignment_matches_torch(key: int, value: str) -> None:
    outcomes = []
    for L in (torch, td):
        base = BASES["contiguous"](L).clone()
        try:
            base[ASSIGN_KEYS[key]] = VALUES[value](L)
            outcomes.append((base.tolist(), base._version))
        except Exception as e:  # noqa: BLE001 - the exception is compared
            outcomes.append((type(e).__name__, str(e)))
    assert outcomes[1] == outcomes[0]


def test_assignment_bumps_the_version_seen_by_views() -> None:
    x = td.zeros(3, 4)
    row = x[1]
    x[1:3] = td.ones(2, 4)
    x[0, 1] = 5.0
    assert (x._version, row._version) == (2, 2)
    assert row.tolist() == [1.0] * 4


def test_assignment_of_a_value_requiring_grad_is_recorded() -> None:
    x = td.zeros(2, 3)
    v = td.ones(3, requires_grad=True)
    x[1] = v
    assert type(x.grad_fn).__name__ == "CopySlices"
    x.sum().backward()
    assert v.grad.tolist() == [1.0, 1.0, 1.0]


def test_assignment_calls_a_user_copy_kernel() -> None:
    seen: list[str] = []

    def my_copy(self: Any, src: Any, non_blocking: bool = False) -> Any:
        seen.append("mine")
        return self

    x = td.zeros(2, 3)
    lib = Library("aten", "IMPL")
    lib.impl("copy_", my_copy, "CPU")
    try:
        x[0] = td.ones(3)
    finally:
        lib._destroy()
    assert seen == ["mine"] and x.tolist() == [[0.0] * 3] * 2
    x[0] = td.ones(3)
    assert seen == ["mine"] and x.tolist()[0] == [1.0] * 3


def test_assignment_under_a_trace_shows_the_inplace_hops() -> None:
    x = td.zeros(2, 3)
    with dispatch_trace() as trace:
        x[0] = 1.0
    assert [h.op for h in trace.hops] == ["aten::select.int"] * 2 + ["aten::fill_.Scalar"] * 3


def test_every_guard_is_plain_by_default() -> None:
    """The one-hop paths are on for a fresh process's tables: the autograd and
    ADInplaceOrView kernels they skip carry their markers (Note [Plain kernel markers])."""
    from tensordispatch.ops import indexing_advanced

    guards = [
        indexing_fast.SELECT, indexing_fast.SLICE, indexing_fast.UNSQUEEZE, indexing_fast.COPY_,
        indexing_fast.FILL_, indexing_advanced.INDEX, indexing_advanced.INDEX_PUT_,
        indexing_advanced.INDEX_PUT_IMPL_,
    ]  # fmt: skip
    assert [g.name for g in guards if not g.recheck()] == []


def test_a_tuple_plan_serves_another_tensor_of_the_same_geometry() -> None:
    """Note [Tuple keys by plan]: the plan holds geometry only; offsets and data are each
    call's own."""
    key = (slice(1, None), None, 2)
    first = td.arange(60.0).view(3, 4, 5)[1:]  # offset 20
    second = td.arange(100.0, 180.0).view(4, 4, 5)[2:]  # same shape and strides, offset 40
    tfirst = torch.arange(60.0).view(3, 4, 5)[1:]
    tsecond = torch.arange(100.0, 180.0).view(4, 4, 5)[2:]
    for ours, theirs in ((first, tfirst), (second, tsecond), (first, tfirst)):
        assert _outcome(ours, key) == _outcome(theirs, key)


def test_an_inserted_dim_plan_checks_the_arrays_byte_strides() -> None:
    """A plan that reshapes NumPy's data is used only for arrays with the byte strides it
    was checked for; any other array takes the view from the storage."""
    import numpy as np

    key = (slice(None), None)
    x = td.arange(3.0).view(3, 1)
    expected = x[key]
    y = td.arange(3.0).view(3, 1)
    # the same elements, another byte stride for the size-1 dim: not the plan's, so its view
    # is built over the storage from the tensor's geometry
    y._data = np.lib.stride_tricks.as_strided(y._data, strides=(4, 400))
    got = y[key]
    assert got.tolist() == expected.tolist() == [[[0.0]], [[1.0]], [[2.0]]]
    assert got.stride() == expected.stride() == torch.arange(3.0).view(3, 1)[key].stride()
    assert got._data.strides == expected._data.strides == (4, 4, 4)


def test_tuple_plans_are_bounded() -> None:
    x = td.zeros(5000, 2)
    for i in range(5000):
        assert x[i, None].shape == (1, 2)
    assert len(indexing_fast._PLANS) <= 4096


def test_a_declined_key_keeps_taking_the_general_path() -> None:
    x = td.arange(6.0).view(2, 3)
    for _ in range(2):  # the second call finds the declined plan
        with pytest.raises(IndexError) as ours:
            x[0, 5]
        with pytest.raises(IndexError) as theirs:
            torch.arange(6.0).view(2, 3)[0, 5]
        assert str(ours.value) == str(theirs.value)
    alias = x[:, :]  # the general path: alias, a new view of the same root
    assert alias is not x and alias._base is x._base and alias.tolist() == x.tolist()


def _user_autograd_kernel_for(name: str, marked: bool) -> Any:
    """A Python kernel at AutogradCPU for ``name`` that redispatches below autograd, with
    or without the plain marker; returns its Library (destroy it after)."""
    import warnings

    from tensordispatch.dispatch.keys import DispatchKey
    from tensordispatch.dispatch.keyset import AFTER_AUTOGRAD_RAW, DispatchKeySet

    below = DispatchKeySet(DispatchKey.CPU).raw & AFTER_AUTOGRAD_RAW
    overload = td.ops.aten.select.int

    def kernel(*args: Any, **kwargs: Any) -> Any:
        return overload.redispatch(below, *args, **kwargs)

    if marked:
        kernel._td_plain_no_grad = True  # type: ignore[attr-defined]
    lib = Library("aten", "IMPL")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lib.impl(name, kernel, "AutogradCPU")
    return lib


@pytest.mark.parametrize("marked", [False, True])
def test_the_guard_trusts_the_marker_not_the_name(marked: bool) -> None:
    """An unmarked autograd kernel (whatever its name) turns the one-hop path off; the same
    kernel marked plain keeps it on (Note [Plain kernel markers])."""
    guard = indexing_fast.ViewGuard("select.int", "select")
    assert guard.recheck() is True
    lib = _user_autograd_kernel_for("select.int", marked)
    try:
        assert guard.recheck() is marked
        assert td.arange(6.0).view(2, 3)[1].tolist() == [3.0, 4.0, 5.0]
    finally:
        lib._destroy()
    assert guard.recheck() is True
