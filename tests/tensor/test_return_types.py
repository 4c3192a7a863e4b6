"""Named-tuple results (torch.return_types): the type, fields, tuple behaviour and printing
of what max/min(dim), sort, topk and aminmax return, against torch's."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

import pytest
import torch

import tensordispatch as td
from tensordispatch.generated import return_types
from tensordispatch.tensor.return_types import structseq

X = [[1.0, 5.0, 2.0], [3.0, 0.0, 4.0]]

CALLS: dict[str, Callable[[Any], Any]] = {
    "max.dim": lambda m: m.max(m.tensor(X), 1),
    "max.dim keepdim": lambda m: m.max(m.tensor(X), 0, keepdim=True),
    "min.dim": lambda m: m.min(m.tensor(X), 1),
    "sort": lambda m: m.sort(m.tensor(X)),
    "sort stable": lambda m: m.sort(m.tensor(X), stable=True, dim=0),
    "topk": lambda m: m.topk(m.tensor(X), 2),
    "aminmax": lambda m: m.aminmax(m.tensor(X)),
    "method max": lambda m: m.tensor(X).max(1),
    "method sort": lambda m: m.tensor(X).sort(descending=True),
    "method topk": lambda m: m.tensor(X).topk(1, dim=0),
    "max out": lambda m: m.max(m.tensor(X), 1, out=(m.empty(0), m.empty(0, dtype=m.long))),
    "sort out": lambda m: m.sort(m.tensor(X), out=(m.empty(0), m.empty(0, dtype=m.long))),
    "topk out": lambda m: m.topk(m.tensor(X), 1, out=(m.empty(0), m.empty(0, dtype=m.long))),
    "aminmax out": lambda m: m.aminmax(m.tensor(X), out=(m.empty(0), m.empty(0))),
}


@pytest.mark.parametrize("call", CALLS)
def test_named_tuple_matches_torch(call: str) -> None:
    expected = CALLS[call](torch)
    got = CALLS[call](td)
    assert type(got).__name__ == type(expected).__name__
    assert type(got).__match_args__ == type(expected).__match_args__
    assert isinstance(got, tuple) and len(got) == len(expected)
    for field, want in zip(type(expected).__match_args__, expected, strict=True):
        value = getattr(got, field)
        assert value is got[type(expected).__match_args__.index(field)]
        assert value.tolist() == want.tolist()


def test_out_variant_returns_the_out_tensors() -> None:
    values, indices = td.empty(0), td.empty(0, dtype=td.long)
    r = td.max(td.tensor(X), 1, out=(values, indices))
    assert r.values is values and r.indices is indices


def test_every_return_type_is_torchs() -> None:
    for name in return_types.__all__:
        ours, theirs = getattr(return_types, name), getattr(torch.return_types, name)
        assert ours.__match_args__ == theirs.__match_args__, name
        assert (ours.n_fields, ours.n_sequence_fields, ours.n_unnamed_fields) == (
            theirs.n_fields, theirs.n_sequence_fields, theirs.n_unnamed_fields,
        )  # fmt: skip


def test_generated_types_cover_the_named_python_results() -> None:
    assert return_types.__all__ == [
        "aminmax", "aminmax_out", "max", "max_out", "min", "min_out", "sort", "sort_out",
        "topk", "topk_out",
    ]  # fmt: skip


def test_operator_overload_returns_a_plain_tuple() -> None:
    r = td.ops.aten.max.dim(td.tensor(X), 1)
    assert type(r) is tuple
    assert type(torch.ops.aten.max.dim(torch.tensor(X), 1)) is tuple


def test_unpacking_and_slicing() -> None:
    values, indices = td.min(td.tensor(X), 0)
    assert values.tolist() == [1.0, 0.0, 2.0] and indices.tolist() == [0, 1, 0]
    r = td.min(td.tensor(X), 0)
    assert type(r[:1]) is tuple and r[:1][0] is r.values
    assert r == (r.values, r.indices)


def test_repr() -> None:
    r = td.max(td.tensor([[1.0, 3.0]]), 1)
    assert repr(r) == "tensordispatch.return_types.max(\nvalues=tensor([3.]),\nindices=tensor([1]))"
    assert str(r) == repr(r)
    t = torch.max(torch.tensor([[1.0, 3.0]]), 1)
    assert repr(t) == repr(r).replace("tensordispatch.", "torch.")


def test_pickle_round_trip() -> None:
    r = td.sort(td.tensor([2, 1]))
    back = pickle.loads(pickle.dumps(r))
    assert type(back) is type(r)
    assert back.values.tolist() == [1, 2] and back.indices.tolist() == [1, 0]


def test_constructor_takes_one_sequence() -> None:
    assert tuple(return_types.max((1, 2))) == tuple(torch.return_types.max((1, 2)))
    assert return_types.max([1, 2], {}).indices == 2


def test_constructor_wrong_length_message() -> None:
    with pytest.raises(TypeError) as ours:
        return_types.max((1, 2, 3))
    with pytest.raises(TypeError) as theirs:
        torch.return_types.max((1, 2, 3))
    assert (
        str(ours.value) == "tensordispatch.return_types.max() takes a 2-sequence (3-sequence given)"
    )
    assert str(ours.value) == str(theirs.value).replace("torch.", "tensordispatch.")


def test_constructor_not_a_sequence_message() -> None:
    with pytest.raises(TypeError, match="^constructor requires a sequence$"):
        return_types.max(1)
    with pytest.raises(TypeError, match="^constructor requires a sequence$"):
        torch.return_types.max(1)


def test_fields_are_read_only() -> None:
    r = return_types.max((1, 2))
    with pytest.raises(AttributeError):
        r.values = 3  # type: ignore[misc]
    with pytest.raises(AttributeError):
        r.other = 3  # type: ignore[attr-defined]


def test_structseq_class_attributes() -> None:
    t = structseq("pair", ("first", "second"), "somewhere")
    assert (t.__module__, t.__name__, t.__match_args__, t.n_fields) == (
        "somewhere", "pair", ("first", "second"), 2,
    )  # fmt: skip
    assert t((1, 2)) == (1, 2)
