"""Tensor.__getitem__ / __setitem__ against torch 2.13: ints, slices with steps, None,
Ellipsis, Python bools, bool masks, integer tensors and lists, in combinations; results
compared for values, shape, strides, storage offset and whether they are views of the base
(basic indexing) or copies (advanced indexing); assignments compared on the whole base.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch

import tensordispatch as td
from tests.ops.conftest import assert_same_result


def _base(L: Any, device: str = "cpu") -> Any:
    return L.arange(24.0, device=device).view(2, 3, 4)


def _keys(L: Any) -> list[Any]:
    return [
        0,
        -1,
        (1, 2),
        (1, 2, 3),
        slice(None),
        slice(1, None),
        (slice(None), slice(None, None, 2)),
        (slice(None, None, 3), 1, slice(-3, -1)),
        (slice(5, 9),),
        None,
        (None, 0, None),
        Ellipsis,
        (Ellipsis, 1),
        (0, Ellipsis, None, slice(1, 3)),
        (),
        True,
        False,
        L.tensor([1, 0]),
        [1, 0, 1],
        (L.tensor([[0], [1]]), slice(None), L.tensor([1, 3])),
        (slice(None), L.tensor([2, 0]), L.tensor([1, 3])),
        (0, slice(None), [1, 2]),
        (L.tensor([0, 1]), 0),
        (Ellipsis, L.tensor([0, 3])),
        (None, L.tensor([1])),
        L.tensor(1),
        L.tensor([True, False]),
        (slice(None), L.tensor([True, False, True])),
        _base(L) > 10,
        (0, _base(L)[0] > 5),
        (L.tensor([1, 0]), None, L.tensor([0, 1])),
        (L.tensor([0]), L.tensor([True, False, True])),
    ]


KEY_COUNT = len(_keys(torch))


def _flat_result(x: Any) -> tuple[Any, ...]:
    return (x.tolist(), tuple(x.shape), x.stride(), x.storage_offset())


@pytest.mark.parametrize("i", range(KEY_COUNT))
def test_getitem_matches_torch(i: int) -> None:
    tb, ob = _base(torch), _base(td)
    expected, got = tb[_keys(torch)[i]], ob[_keys(td)[i]]
    assert_same_result(expected, got)
    assert got.storage_offset() == expected.storage_offset()
    if i != 25:  # torch's select by a 0-dim tensor is a view whose _base is not the base
        assert (got._base is ob) == (expected._base is tb)


@pytest.mark.parametrize("i", [k for k in range(KEY_COUNT) if k not in (25, 26, 27, 28, 29, 31)])
def test_getitem_on_meta_matches_torch(i: int) -> None:
    expected = _base(torch, "meta")[_meta_key(torch, i)]
    got = _base(td, "meta")[_meta_key(td, i)]
    assert_same_result(expected, got, values=False)


def _meta_key(L: Any, i: int) -> Any:
    key = _keys(L)[i]
    if isinstance(key, tuple):
        return tuple(k.to("meta") if isinstance(k, L.Tensor) else k for k in key)
    return key.to("meta") if isinstance(key, L.Tensor) else key


def test_boolean_mask_on_meta_raises_like_torch() -> None:
    with pytest.raises(NotImplementedError):
        _base(torch, "meta")[_base(torch, "meta") > 3]
    with pytest.raises(NotImplementedError):
        _base(td, "meta")[_base(td, "meta") > 3]


def _values(L: Any) -> list[Any]:
    return [
        -1.0,
        7,
        L.tensor(5.0),
        L.tensor([1.0, 2.0, 3.0, 4.0]),
        L.ones(1, 4),
        L.tensor([1, 2, 3, 4], dtype=L.int64),
    ]


@pytest.mark.parametrize("v", range(6))
@pytest.mark.parametrize("i", [0, 2, 3, 6, 9, 11, 12, 13, 17, 18, 20, 22, 26, 28, 29])
def test_setitem_matches_torch(i: int, v: int) -> None:
    outcomes = []
    for L in (torch, td):
        base = _base(L)
        try:
            base[_keys(L)[i]] = _values(L)[v]
            outcomes.append(base.tolist())
        except Exception as e:  # noqa: BLE001 - the exception type is compared
            outcomes.append(type(e).__name__)
    assert outcomes[1] == outcomes[0]


def test_getitem_basic_is_a_view_and_writes_reach_the_base() -> None:
    x = td.zeros(3, 4)
    row = x[1, ::2]
    row.fill_(5.0)
    assert x.tolist()[1] == [5.0, 0.0, 5.0, 0.0]
    assert row._base is x and row.stride() == (2,) and row.storage_offset() == 4


def test_getitem_advanced_is_a_copy() -> None:
    x = td.zeros(3)
    y = x[td.tensor([0, 1])]
    y.fill_(1.0)
    assert x.tolist() == [0.0, 0.0, 0.0] and y._base is None


def test_getitem_ellipsis_alone_is_an_alias_view() -> None:
    x = td.zeros(2)
    assert x[...] is not x and x[...]._base is x


INDEX_ERRORS: list[tuple[str, Any]] = [
    ("int-range", lambda L: _base(L)[5]),
    ("too-many", lambda L: _base(L)[0, 0, 0, 0]),
    ("step", lambda L: _base(L)[::-1]),
    ("float", lambda L: _base(L)[1.5]),
    ("float-tensor", lambda L: _base(L)[L.tensor([0.5])]),
    ("tensor-range", lambda L: _base(L)[L.tensor([4])]),
    ("mask-shape", lambda L: _base(L)[L.tensor([True, False, True])]),
]


@pytest.mark.parametrize(("case", "fn"), INDEX_ERRORS, ids=[c for c, _ in INDEX_ERRORS])
def test_index_error_matches_torch(case: str, fn: Any) -> None:
    with pytest.raises(Exception) as theirs:
        fn(torch)
    with pytest.raises(type(theirs.value)) as ours:
        fn(td)
    assert str(ours.value) == str(theirs.value)
