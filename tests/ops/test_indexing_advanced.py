"""The one-hop path of advanced keys (ops/indexing_advanced.py, Note [Advanced indexing in one
hop]): lists, int and bool tensors on dim 0, read and assigned, against torch for random
indices over bases of every layout (errors included), and the general path whenever a layer
could see the skipped hops."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import tensordispatch as td
from tensordispatch.dispatch import dispatch_trace
from tensordispatch.dispatch.library import Library
from tests.ops.test_indexing_fast import BASES


def _index(L: Any, kind: str, items: list[int], base: Any) -> Any:
    if kind == "list":
        return items
    if kind in ("int64", "int32"):
        return L.tensor(items, dtype=getattr(L, kind))
    n = base.shape[0]
    mask = [bool(i % 2) for i in items[:n]] + [False] * (n - len(items[:n]))
    return L.tensor(mask if kind == "mask" else mask[:-1] if n else [True])  # "bad-mask"


def _outcome(fn: Any, strides: bool = True) -> Any:
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - the exception is compared
        return (type(e).__name__, str(e))
    stride = r.stride() if strides else None
    return (r.tolist(), tuple(r.shape), stride, r.storage_offset(), r._base is None)


KINDS = ["list", "int64", "int32", "mask", "bad-mask"]


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(sorted(BASES)),
    st.sampled_from(KINDS),
    st.lists(st.integers(-5, 4), min_size=1, max_size=4),
)
def test_advanced_keys_match_torch(base_name: str, kind: str, items: list[int]) -> None:
    outcomes = []
    for L in (torch, td):
        base = BASES[base_name](L)
        key = _index(L, kind, items, base)
        outcomes.append(_outcome(lambda: base[key]))  # noqa: B023
    assert outcomes[1] == outcomes[0]


def test_index_output_follows_the_input_layout() -> None:
    expected = BASES["transposed"](torch)[[0, 1]].stride()
    assert BASES["transposed"](td)[[0, 1]].stride() == expected


VALUES = {
    "float": lambda L, shape: 2.5,
    "int": lambda L, shape: -3,
    "bool": lambda L, shape: True,
    "same-shape": lambda L, shape: L.arange(float(shape[-1])).expand(shape).clone(),
    "row": lambda L, shape: L.arange(float(shape[-1])),
    "zero-dim": lambda L, shape: L.tensor(7.0),
    "int64-row": lambda L, shape: L.arange(shape[-1]),
    "too-long": lambda L, shape: L.ones(shape[-1] + 1),
    "leading-ones": lambda L, shape: L.ones(1, 1, shape[-1]),
}


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["contiguous", "transposed", "offset", "stepped", "vector"]),
    st.sampled_from(["list", "int64", "mask"]),
    st.lists(st.integers(-4, 3), min_size=1, max_size=3),
    st.sampled_from(sorted(VALUES)),
)
def test_advanced_assignment_matches_torch(
    base_name: str, kind: str, items: list[int], value: str
) -> None:
    outcomes = []
    for L in (torch, td):
        base = BASES[base_name](L).clone()
        try:
            index = _index(L, kind, items, base)
            shape = tuple(base[index].shape)
            base[index] = VALUES[value](L, shape or (1,))
            outcomes.append((base.tolist(), base._version))
        except Exception as e:  # noqa: BLE001 - the exception is compared
            outcomes.append((type(e).__name__, str(e)))
    assert outcomes[1] == outcomes[0]


@pytest.mark.filterwarnings("ignore:Use of index_put_ on expanded tensors")
def test_assignment_through_an_expanded_base_matches_torch() -> None:
    """A stride-0 base takes the general path (torch warns there; writes still happen)."""
    outcomes = []
    for L in (torch, td):
        root = L.zeros(3)
        root.expand(2, 3)[[1]] = L.arange(3.0)
        outcomes.append(root.tolist())
    assert outcomes[1] == outcomes[0] == [0.0, 1.0, 2.0]


SAME_STORAGE = [
    "x[[0, 1]] = x[1:3]", "x[[0]] = x[2]", "x[x > 2] = x[0]", "x[x > 2] = x[0, 0]",
    "x[[0, 1]] = x[0, 0]", "x[x[:, 0] > 2] = x[0]", "x[:, x[0] > 0] = x[0, 0]",
    "x[x > 20] = x[0, 0].clone()", "x.index_put_([L.tensor([0])], x[2], accumulate=True)",
]  # fmt: skip


@pytest.mark.parametrize("code", SAME_STORAGE)
def test_assignment_from_the_same_storage_matches_torch(code: str) -> None:
    """torch's index_put_ refuses a value (or index) over the written storage, except where
    it hands the call to masked_fill_ (one-element value, one bool mask)."""
    outcomes = []
    for L in (torch, td):
        x = L.arange(6.0).view(3, 2).clone()
        try:
            exec(code, {"x": x, "L": L})  # noqa: S102 - the statements above
            outcomes.append(x.tolist())
        except RuntimeError as e:
            outcomes.append(str(e))
    assert outcomes[1] == outcomes[0]


def test_a_user_index_kernel_is_called() -> None:
    seen: list[str] = []

    def my_index(self: Any, indices: Any) -> Any:
        seen.append("mine")
        return td.ops.aten.clone.default(self)

    x = td.arange(4.0)
    lib = Library("aten", "IMPL")
    lib.impl("index.Tensor", my_index, "CPU")
    try:
        y = x[[0, 1]]
    finally:
        lib._destroy()
    assert seen == ["mine"] and y.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert x[[0, 1]].tolist() == [0.0, 1.0] and seen == ["mine"]


def test_a_trace_sees_index_put_hops() -> None:
    x = td.zeros(3)
    with dispatch_trace() as trace:
        x[x == 0] = 1.0
    assert "aten::index_put_" in [h.op for h in trace.hops]
    assert x.tolist() == [1.0, 1.0, 1.0]


def test_index_requiring_grad_is_recorded() -> None:
    x = td.arange(4.0).requires_grad_()
    y = x[[0, 0, 3]]
    assert type(y.grad_fn).__name__ == "IndexBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 0.0, 0.0, 1.0]


HAND_OFF = [
    "x[m] = L.arange(1)", "x[m] = L.tensor(True)", "x[m] = L.arange(2)", "x[[1]] = L.tensor(2)",
    "y[m] = L.tensor(2.7)", "y[[1]] = L.tensor(2.7)", "x[m] = L.tensor([[2.5]])",
]  # fmt: skip


@pytest.mark.parametrize("code", HAND_OFF)
def test_masked_fill_hand_off_matches_torch(code: str) -> None:
    """One bool mask and a one-element value: torch fills the value's item in (any dtype);
    otherwise the shape is checked before the dtype."""
    outcomes = []
    for L in (torch, td):
        x, y = L.arange(4.0), L.arange(4)
        m = L.tensor([False, True, False, True])
        try:
            exec(code, {"x": x, "y": y, "m": m, "L": L})  # noqa: S102 - the statements above
            outcomes.append((x.tolist(), y.tolist()))
        except RuntimeError as e:
            outcomes.append(str(e))
    assert outcomes[1] == outcomes[0]
