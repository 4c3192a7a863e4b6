"""Copying, layout and indexing operators against torch 2.13 on 'cpu' and 'meta': contiguous,
to / _to_copy, cat, stack, flip, roll, repeat, tril / triu, index_select, gather, scatter (src,
value, reduce forms), scatter_add, index.Tensor, index_put(_), masked_fill, masked_select,
nonzero, sort, topk. Values, dtype, shape, strides, out= results and exception types.

"cpu-only": data-dependent operators that torch refuses on meta (nonzero, masked_select,
boolean-mask indexing); on meta both must raise NotImplementedError.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch

import tensordispatch as td
from tests.ops.conftest import assert_same_result, run_both, sample_ids

Sample = tuple[str, Callable[[Any, str], Any], str]
SAMPLES: list[Sample] = []


def sample(op: str, flags: str = "") -> Callable[[Callable[[Any, str], Any]], None]:
    def register(fn: Callable[[Any, str], Any]) -> None:
        SAMPLES.append((op, fn, flags))

    return register


def T(L: Any, data: Any, dtype: str = "float32", device: str = "cpu") -> Any:
    return L.tensor(data, dtype=getattr(L, dtype), device=device)


def A(L: Any, d: str, *shape: int, dtype: str = "float32") -> Any:
    n = 1
    for s in shape:
        n *= s
    return L.arange(n, dtype=L.float64, device=d).to(getattr(L, dtype)).view(*shape)


def I(L: Any, data: Any, d: str, dtype: str = "int64") -> Any:
    return T(L, data, dtype, d)


def O(L: Any, d: str, dtype: str = "float32") -> Any:
    return L.empty(0, dtype=getattr(L, dtype), device=d)


M23 = [[1.0, -2.0, 3.5], [0.25, 5.0, -6.0]]

# -- contiguous / to ---------------------------------------------------------------------------
sample("contiguous")(lambda L, d: A(L, d, 2, 3).t().contiguous())
sample("contiguous")(lambda L, d: A(L, d, 2, 3).contiguous())
sample("to")(lambda L, d: A(L, d, 2, 3).t().to(L.float64))
sample("to")(lambda L, d: A(L, d, 2, 3).to(L.int32, copy=True))
sample("to")(lambda L, d: A(L, d, 2, 3).to(dtype=L.float16))
sample("to")(lambda L, d: A(L, d, 2, 3).to(d, L.int64))
sample("to")(lambda L, d: A(L, d, 2, 3).t().to(A(L, d, 1, dtype="float64")))
sample("to")(lambda L, d: T(L, [1.5, -2.7], device=d).to(L.int64))
sample("to")(lambda L, d: A(L, d, 2, 2).t().to(memory_format=L.contiguous_format))
sample("_to_copy")(lambda L, d: L.ops.aten._to_copy(A(L, d, 2, 3).t(), dtype=L.float64))
sample("_to_copy")(lambda L, d: L.ops.aten._to_copy(A(L, d, 2, 3)[:, ::2]))
# -- cat / stack -------------------------------------------------------------------------------
sample("cat")(lambda L, d: L.cat([A(L, d, 2, 3), A(L, d, 1, 3)]))
sample("cat")(lambda L, d: L.cat([A(L, d, 2, 3), A(L, d, 2, 2, dtype="int64")], 1))
sample("cat")(lambda L, d: L.cat([A(L, d, 2, 3).t(), A(L, d, 3, 1)], -1))
sample("cat")(lambda L, d: L.cat([A(L, d, 2, 3), L.ones(0, device=d)], 1))
sample("cat")(lambda L, d: L.cat((A(L, d, 2), A(L, d, 3, dtype="float64"))))
sample("cat")(lambda L, d: L.cat([A(L, d, 2, 3), A(L, d, 2, 3)], out=O(L, d, "float64")))
sample("cat", "meta-differs")(lambda L, d: L.cat([A(L, d, 2, 3)], out=O(L, d, "int64")))
sample("cat")(lambda L, d: L.cat([]))
sample("cat")(lambda L, d: L.cat([A(L, d, 2, 3), A(L, d, 2, 2)]))
sample("cat")(lambda L, d: L.cat([A(L, d, 2, 3), A(L, d, 3)]))
sample("cat", "meta-differs")(lambda L, d: L.cat([L.tensor(1.0, device=d)]))
sample("cat")(lambda L, d: L.cat([A(L, d, 2, 3)], 2))
sample("stack")(lambda L, d: L.stack([A(L, d, 2, 3), A(L, d, 2, 3)]))
sample("stack")(lambda L, d: L.stack([A(L, d, 2, 3), A(L, d, 2, 3).t().t()], 2))
sample("stack")(lambda L, d: L.stack([A(L, d, 2, 3), A(L, d, 2, 3)], -1, out=O(L, d)))
sample("stack")(lambda L, d: L.stack([A(L, d, 2, 3), A(L, d, 2, 2)]))
sample("stack")(lambda L, d: L.stack([]))
# -- flip / roll / repeat / tril / triu --------------------------------------------------------
sample("flip")(lambda L, d: A(L, d, 2, 3).flip(0))
sample("flip")(lambda L, d: A(L, d, 2, 3, 4).permute(2, 0, 1).flip(0, -1))
sample("flip")(lambda L, d: A(L, d, 2, 3).flip(0, 0))
sample("flip")(lambda L, d: L.flip(A(L, d, 2, 3), []))
sample("roll")(lambda L, d: A(L, d, 2, 3).roll(1))
sample("roll")(lambda L, d: A(L, d, 2, 3).roll(-1, 1))
sample("roll")(lambda L, d: A(L, d, 2, 3).t().roll((1, 2), (0, 1)))
sample("roll")(lambda L, d: A(L, d, 2, 3).roll((1, 1), (0,)))
sample("roll")(lambda L, d: A(L, d, 2, 3).roll(1, 5))
sample("repeat")(lambda L, d: A(L, d, 2, 3).repeat(2, 1))
sample("repeat")(lambda L, d: A(L, d, 2, 3).t().repeat(1, 2, 3))
sample("repeat")(lambda L, d: A(L, d, 3).repeat(0, 2))
sample("repeat")(lambda L, d: A(L, d, 2, 3).repeat(2))
sample("tril")(lambda L, d: A(L, d, 3, 4).tril())
sample("tril")(lambda L, d: A(L, d, 2, 3, 4).tril(-1))
sample("tril")(lambda L, d: L.tril(A(L, d, 3, 4).t(), 1, out=O(L, d)))
sample("tril")(lambda L, d: A(L, d, 3, 4).tril_(1))
sample("tril")(lambda L, d: A(L, d, 3).tril())
sample("triu")(lambda L, d: A(L, d, 3, 4).triu(2))
sample("triu")(lambda L, d: A(L, d, 3, 4, dtype="int64").t().triu())
sample("triu")(lambda L, d: A(L, d, 3, 4).triu_(-1))
# -- index_select / gather / scatter ----------------------------------------------------------
sample("index_select")(lambda L, d: A(L, d, 3, 4).index_select(0, I(L, [2, 0, 2], d)))
sample("index_select")(lambda L, d: A(L, d, 3, 4).t().index_select(-1, I(L, [1], d, "int32")))
sample("index_select")(lambda L, d: L.index_select(A(L, d, 3, 4), 1, I(L, [3, 0], d), out=O(L, d)))
sample("index_select", "meta-differs")(lambda L, d: A(L, d, 3, 4).index_select(0, I(L, [[0]], d)))
sample("index_select", "meta-differs")(
    lambda L, d: A(L, d, 3, 4).index_select(0, T(L, [0.0], device=d))
)
sample("index_select", "cpu-errors")(lambda L, d: A(L, d, 3, 4).index_select(0, I(L, [5], d)))
G = [[0, 1], [2, 0]]
sample("gather")(lambda L, d: A(L, d, 3, 4).gather(1, I(L, G, d)))
sample("gather")(lambda L, d: A(L, d, 3, 4).gather(0, I(L, [[2, 1, 0, 1]], d)))
sample("gather")(lambda L, d: L.gather(A(L, d, 3, 4).t(), 0, I(L, G, d), out=O(L, d)))
sample("gather")(lambda L, d: A(L, d, 3, 4).gather(1, I(L, [[0]], d).expand(3, 2)))
sample("gather")(lambda L, d: A(L, d, 3, 4).gather(1, I(L, [[1, 1, 1, 1, 1]], d)))
sample("gather")(lambda L, d: A(L, d, 3, 4).gather(1, I(L, [[[0]]], d)))
sample("gather", "cpu-errors")(lambda L, d: A(L, d, 3, 4).gather(1, I(L, [[5]], d)))
sample("scatter")(lambda L, d: A(L, d, 3, 4).scatter(1, I(L, G, d), -A(L, d, 2, 2)))
sample("scatter")(lambda L, d: A(L, d, 3, 4).scatter(0, I(L, [[2, 1, 0]], d), -A(L, d, 2, 3)))
sample("scatter")(lambda L, d: A(L, d, 3, 4).scatter(1, I(L, G, d), 7.5))
sample("scatter")(lambda L, d: A(L, d, 3, 4).scatter(1, I(L, G, d), value=2))


def _src_reduce(L: Any, d: str, reduce: str) -> Any:
    # The Tensor-src reduce form warns once per process in torch and in ours; an earlier test
    # in the same process may have used up either side's warning, so spend both first (the
    # warning itself is checked by test_scatter_reduce_form_warns_deprecated_once).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        A(L, d, 1).scatter(0, I(L, [0], d), A(L, d, 1), reduce="add")
    return A(L, d, 3, 4).scatter(1, I(L, G, d), A(L, d, 2, 2), reduce=reduce)


sample("scatter")(lambda L, d: _src_reduce(L, d, "add"))
sample("scatter")(lambda L, d: _src_reduce(L, d, "multiply"))
sample("scatter")(lambda L, d: A(L, d, 3, 4).scatter(1, I(L, G, d), 3.0, reduce="multiply"))
sample("scatter")(lambda L, d: A(L, d, 3, 4).scatter(1, I(L, G, d), 3.0, reduce="foo"))
sample("scatter")(lambda L, d: A(L, d, 3, 4).scatter(1, I(L, G, d, "int32"), 1.0))
sample("scatter")(lambda L, d: A(L, d, 3, 4).scatter(1, I(L, G, d), A(L, d, 2, 2, dtype="float64")))
sample("scatter")(lambda L, d: A(L, d, 3, 4).scatter_(1, I(L, G, d), -A(L, d, 2, 2)))
sample("scatter")(lambda L, d: A(L, d, 3, 4).t().scatter_(0, I(L, G, d), 9.0))
sample("scatter")(lambda L, d: L.scatter(A(L, d, 3, 4), 1, I(L, G, d), 1.0, out=O(L, d)))
sample("scatter")(lambda L, d: A(L, d, 3, 4).t().scatter(0, I(L, G, d), 1.0))
sample("scatter", "cpu-errors")(lambda L, d: A(L, d, 3, 4).scatter(1, I(L, [[9]], d), 1.0))
sample("scatter_add")(
    lambda L, d: A(L, d, 3, 4).scatter_add(1, I(L, [[0, 0], [1, 1]], d), A(L, d, 2, 2))
)
sample("scatter_add")(
    lambda L, d: A(L, d, 3, 4).scatter_add_(0, I(L, [[2, 2, 2, 2]], d), A(L, d, 1, 4))
)
sample("scatter_add")(
    lambda L, d: L.scatter_add(A(L, d, 3), 0, I(L, [0, 0], d), A(L, d, 2), out=O(L, d))
)
# -- index / index_put -------------------------------------------------------------------------
sample("index")(lambda L, d: L.ops.aten.index.Tensor(A(L, d, 3, 4), [I(L, [2, 0], d)]))
sample("index")(lambda L, d: L.ops.aten.index.Tensor(A(L, d, 3, 4), [None, I(L, [[3], [1]], d)]))
sample("index")(
    lambda L, d: L.ops.aten.index.Tensor(A(L, d, 2, 3, 4), [I(L, [1, 0], d), None, I(L, [1, 2], d)])
)
sample("index")(
    lambda L, d: L.ops.aten.index.Tensor(
        A(L, d, 2, 3, 4).t(), [None, I(L, [1], d), I(L, [0, 3], d)]
    )
)
sample("index")(
    lambda L, d: L.ops.aten.index.Tensor(A(L, d, 3, 4), [I(L, [0], d), I(L, [1, 2, 3], d)])
)
sample("index", "meta-differs")(
    lambda L, d: L.ops.aten.index.Tensor(A(L, d, 3, 4), [I(L, [0, 1], d), I(L, [1, 2, 3], d)])
)
sample("index", "meta-differs")(
    lambda L, d: L.ops.aten.index.Tensor(A(L, d, 3, 4), [T(L, [0.0], device=d)])
)
sample("index", "meta-differs")(
    lambda L, d: L.ops.aten.index.Tensor(A(L, d, 3, 4), [None, None, I(L, [0], d)])
)
sample("index", "cpu-only")(
    lambda L, d: L.ops.aten.index.Tensor(A(L, d, 3, 4), [A(L, d, 3, 4) > 4])
)
sample("index", "cpu-errors")(lambda L, d: L.ops.aten.index.Tensor(A(L, d, 3, 4), [I(L, [3], d)]))
sample("index_put")(lambda L, d: A(L, d, 3, 4).index_put([I(L, [2, 0], d)], -A(L, d, 4)))
sample("index_put")(
    lambda L, d: A(L, d, 3, 4).index_put_(
        [I(L, [0, 0], d), I(L, [1, 1], d)], T(L, [1.0, 2.0], device=d), True
    )
)
sample("index_put")(lambda L, d: A(L, d, 3, 4).t().index_put_((I(L, [1], d),), T(L, 5.0, device=d)))
sample("index_put", "meta-differs")(
    lambda L, d: A(L, d, 3, 4).index_put([I(L, [2, 0], d)], A(L, d, 4, dtype="float64"))
)
sample("index_put", "meta-differs")(
    lambda L, d: A(L, d, 3, 4).index_put([I(L, [2, 0], d)], A(L, d, 3))
)
sample("index_put")(
    lambda L, d: A(L, d, 3, 4).index_put_((A(L, d, 3, 4) > 5,), T(L, 0.0, device=d))
)
# -- masked_fill / masked_select / nonzero -----------------------------------------------------
sample("masked_fill")(lambda L, d: A(L, d, 2, 3).masked_fill(A(L, d, 2, 3) > 2, -1.0))
sample("masked_fill")(lambda L, d: A(L, d, 2, 3).t().masked_fill(T(L, [True, False], "bool", d), 9))
sample("masked_fill")(lambda L, d: A(L, d, 3).masked_fill(T(L, [[True], [False]], "bool", d), 2))
sample("masked_fill")(lambda L, d: A(L, d, 2, 3, dtype="int64").masked_fill(A(L, d, 2, 3) > 2, 1.7))
sample("masked_fill")(
    lambda L, d: A(L, d, 2, 3).masked_fill(A(L, d, 2, 3) > 2, T(L, 4.0, device=d))
)
sample("masked_fill")(lambda L, d: A(L, d, 2, 3).masked_fill_(A(L, d, 3) > 0, 0.5))
sample("masked_fill")(lambda L, d: A(L, d, 2, 3).masked_fill(A(L, d, 2, 3), 1.0))
sample("masked_fill")(
    lambda L, d: A(L, d, 2, 3).masked_fill(A(L, d, 2, 3) > 2, T(L, [1.0], device=d))
)
sample("masked_fill")(lambda L, d: A(L, d, 3).masked_fill_(T(L, [[True], [False]], "bool", d), 2))
sample("masked_select", "cpu-only")(lambda L, d: A(L, d, 2, 3).masked_select(A(L, d, 2, 3) > 2))
sample("masked_select", "cpu-only")(
    lambda L, d: A(L, d, 2, 3).t().masked_select(T(L, [True, False], "bool", d))
)
sample("masked_select", "cpu-only")(
    lambda L, d: L.masked_select(A(L, d, 3), A(L, d, 2, 3) > 2, out=O(L, d))
)
sample("nonzero", "cpu-only")(lambda L, d: (A(L, d, 2, 3) % 2).nonzero())
sample("nonzero", "cpu-only")(lambda L, d: L.nonzero(T(L, 3.0, device=d)))
sample("nonzero", "cpu-only")(lambda L, d: L.nonzero(A(L, d, 2, 3).t() > 1, out=O(L, d, "int64")))
# -- sort / topk -------------------------------------------------------------------------------
S = [[3.0, 1.0, 2.0, 1.0], [float("nan"), -1.0, 5.0, 0.0]]
sample("sort")(lambda L, d: T(L, S, device=d).sort())
sample("sort")(lambda L, d: T(L, S, device=d).sort(0, True))
sample("sort")(lambda L, d: T(L, S, device=d).sort(descending=True, stable=True))
sample("sort")(lambda L, d: T(L, S, device=d).t().sort(stable=True, dim=0))
sample("sort")(
    lambda L, d: L.sort(T(L, [[3, 1, 2]], "int64", d), out=(O(L, d, "int64"), O(L, d, "int64")))
)
sample("sort")(lambda L, d: T(L, 2.0, device=d).sort())
sample("topk")(lambda L, d: T(L, [[3.0, 1.0, 2.0, 4.0], [0.0, -1.0, 5.0, 7.0]], device=d).topk(2))
sample("topk")(
    lambda L, d: T(L, [[3.0, 1.0, 2.0, 4.0], [0.0, -1.0, 5.0, 7.0]], device=d).topk(
        1, 0, largest=False
    )
)
sample("topk")(lambda L, d: A(L, d, 3, 4).t().topk(3, 1))
sample("topk")(lambda L, d: A(L, d, 3, 4).topk(5))
sample("topk")(lambda L, d: L.topk(A(L, d, 5), 2, out=(O(L, d), O(L, d, "int64"))))
# -- generated (autogen) out= and functional variants -------------------------------------------
sample("flip.out")(lambda L, d: L.ops.aten.flip.out(A(L, d, 2, 3), [0], out=O(L, d)))
sample("roll.out")(lambda L, d: L.ops.aten.roll.out(A(L, d, 2, 3), [1], [1], out=O(L, d)))
sample("repeat.out")(lambda L, d: L.ops.aten.repeat.out(A(L, d, 2), [2, 2], out=O(L, d)))
sample("_to_copy.out")(
    lambda L, d: L.ops.aten._to_copy.out(A(L, d, 2, 3).t(), out=O(L, d, "float32"))
)
sample("masked_fill.Scalar_out")(
    lambda L, d: L.ops.aten.masked_fill.Scalar_out(A(L, d, 3), A(L, d, 3) > 0, 2.0, out=O(L, d))
)
sample("index_put.out")(
    lambda L, d: L.ops.aten.index_put.out(
        A(L, d, 3), [I(L, [1], d)], T(L, 7.0, device=d), out=O(L, d)
    )
)
sample("_index_put_impl")(
    lambda L, d: L.ops.aten._index_put_impl(A(L, d, 3), [I(L, [1], d)], T(L, 7.0, device=d))
)
sample("permute_copy.out")(
    lambda L, d: L.ops.aten.permute_copy.out(A(L, d, 2, 3), [1, 0], out=O(L, d))
)


def _check(fn: Callable[[Any, str], Any], device: str, values: bool) -> None:
    expected, got = run_both(fn, device)
    if isinstance(expected, BaseException):
        assert isinstance(got, type(expected)), f"torch raised {expected!r}; we gave {got!r}"
        return
    if isinstance(got, BaseException):
        raise got
    assert_same_result(expected, got, values=values)


@pytest.mark.parametrize(("op", "fn", "flags"), SAMPLES, ids=sample_ids(SAMPLES))
def test_cpu_matches_torch(op: str, fn: Any, flags: str, coverage: Any) -> None:
    coverage[op][1] += 1
    _check(fn, "cpu", True)
    coverage[op][0] += 1


@pytest.mark.parametrize(("op", "fn", "flags"), SAMPLES, ids=sample_ids(SAMPLES))
def test_meta_matches_torch(op: str, fn: Any, flags: str, coverage: Any) -> None:
    coverage[op + "[meta]"][1] += 1
    if "cpu-only" in flags:
        with pytest.raises(NotImplementedError):
            fn(torch, "meta")
        with pytest.raises(NotImplementedError):
            fn(td, "meta")
    elif "cpu-errors" in flags:  # an index value out of range: data, unseen on meta
        fn(td, "meta")
    elif "meta-differs" in flags:
        # torch's meta path (Python meta registrations) checks differently from its CPU
        # kernels; ours runs the CPU checks on meta too, so torch on CPU is the oracle
        expected, got = run_both(fn, "meta", "cpu")
        assert isinstance(expected, BaseException) and isinstance(got, type(expected))
    else:
        _check(fn, "meta", False)
    coverage[op + "[meta]"][0] += 1


# -- semantics beyond one result ---------------------------------------------------------------


def test_contiguous_returns_self_when_already_contiguous() -> None:
    x = td.ones(2, 3)
    assert x.contiguous() is x and x.t().contiguous() is not x


def test_to_returns_self_unless_something_changes() -> None:
    x = td.ones(2)
    assert x.to(td.float32) is x and x.to("cpu") is x
    assert x.to(td.float32, copy=True) is not x


def test_to_meta_and_back_raises_like_torch() -> None:
    m = td.ones(2).to("meta")
    assert m.device.type == "meta" and m.shape == (2,)
    with pytest.raises(NotImplementedError) as ours:
        m.to("cpu")
    with pytest.raises(NotImplementedError) as theirs:
        torch.ones(2).to("meta").to("cpu")
    assert str(ours.value) == str(theirs.value)


def test_sort_descending_is_stable_and_puts_nan_first() -> None:
    data = [2.0, float("nan"), 1.0, 2.0, 1.0]
    ours = td.tensor(data).sort(descending=True, stable=True)
    theirs = torch.tensor(data).sort(descending=True, stable=True)
    assert ours[1].tolist() == theirs[1].tolist()


def test_index_put_accumulate_adds_repeated_indices() -> None:
    x = td.zeros(3)
    x.index_put_((td.tensor([0, 0, 2]),), td.tensor([1.0, 2.0, 3.0]), accumulate=True)
    assert x.tolist() == [3.0, 0.0, 3.0]


def test_scatter_reduce_form_warns_deprecated_once() -> None:
    from tensordispatch.backends.meta.layout import WARNED

    WARNED.discard("scatter_reduce_src")
    with pytest.warns(UserWarning, match="deprecated"):
        td.zeros(2).scatter(0, td.tensor([0]), td.ones(1), reduce="add")


ERRORS: list[tuple[str, Callable[[Any], Any]]] = [
    ("cat-empty", lambda L: L.cat([])),
    ("cat-sizes", lambda L: L.cat([L.ones(2, 3), L.ones(2, 2)])),
    ("cat-ndim", lambda L: L.cat([L.ones(2, 3), L.ones(3)])),
    ("cat-0d", lambda L: L.cat([L.tensor(1.0)])),
    ("cat-out-cast", lambda L: L.cat([L.ones(2)], out=L.empty(0, dtype=L.int64))),
    ("stack-sizes", lambda L: L.stack([L.ones(2, 3), L.ones(2, 2)])),
    ("stack-empty", lambda L: L.stack([])),
    ("repeat-dims", lambda L: L.ones(2, 3).repeat(2)),
    ("flip-dup", lambda L: L.ones(2, 3).flip(0, 0)),
    ("roll-align", lambda L: L.ones(2, 3).roll([1, 1], [0])),
    ("tril-1d", lambda L: L.ones(3).tril()),
    ("gather-bounds", lambda L: L.ones(3, 4).gather(1, L.tensor([[5]]))),
    ("gather-ndim", lambda L: L.ones(3, 4).gather(1, L.ones(1, 1, 1, dtype=L.int64))),
    ("gather-size", lambda L: L.ones(3, 4).gather(1, L.ones(4, 1, dtype=L.int64))),
    ("scatter-reduce", lambda L: L.ones(3, 4).scatter(1, L.tensor([[0]]), 1.0, reduce="foo")),
    ("scatter-dtype", lambda L: L.ones(2).scatter(0, L.tensor([0]), L.ones(1, dtype=L.float64))),
    ("index_select-bounds", lambda L: L.ones(3).index_select(0, L.tensor([5]))),
    ("index_select-vector", lambda L: L.ones(3).index_select(0, L.tensor([[0]]))),
    ("index_select-dtype", lambda L: L.ones(3).index_select(0, L.tensor([0.0]))),
    ("masked_fill-mask", lambda L: L.ones(3).masked_fill(L.ones(3), 1.0)),
    ("masked_fill-value", lambda L: L.ones(3).masked_fill(L.ones(3) > 0, L.ones(2))),
    ("topk-k", lambda L: L.ones(3).topk(4)),
    ("index-bounds", lambda L: L.ones(3)[L.tensor([3])]),
    ("index-dtype", lambda L: L.ones(3)[L.tensor([0.0])]),
    ("masked_select-mask", lambda L: L.ones(3).masked_select(L.ones(3))),
    ("nonzero-out", lambda L: L.nonzero(L.ones(3), out=L.empty(0))),
    ("sort-complex", lambda L: L.ones(3, dtype=L.complex64).sort()),
    ("sort-dim", lambda L: L.ones(3).sort(dim=3)),
    ("index-mask-shape", lambda L: L.ones(2, 3)[L.ones(3) > 0]),
    ("index_put-shape", lambda L: L.ones(3).index_put_((L.tensor([0]),), L.ones(2))),
    ("masked_fill-complex", lambda L: L.ones(3).masked_fill(L.ones(3) > 0, 1j)),
    ("repeat-negative", lambda L: L.ones(2).repeat(-1, 2)),
]


def test_meta_boolean_index_message() -> None:
    m = td.ones(2, device="meta")
    with pytest.raises(NotImplementedError) as e:
        td.ops.aten.index.Tensor(m, [m > 0])
    assert str(e.value) == (
        "aten::index.Tensor: indexing a meta tensor with a boolean mask has a data-dependent "
        "shape; there is no Meta kernel for it"
    )


def test_scatter_binding_needs_exactly_one_source() -> None:
    # torch's parser: no signature takes neither (tests/ops/test_binding_argument_counts.py
    # compares the whole text with torch's)
    with pytest.raises(TypeError) as e:
        td.ones(2).scatter(0, td.tensor([0]))
    assert str(e.value).startswith(
        "scatter() received an invalid combination of arguments - got (int, Tensor), but "
        "expected one of:\n * (int dim, Tensor index, Tensor src)\n"
    )


@pytest.mark.parametrize(("case", "fn"), ERRORS, ids=[c for c, _ in ERRORS])
def test_error_message_is_torchs(case: str, fn: Any) -> None:
    with pytest.raises(Exception) as theirs:
        fn(torch)
    with pytest.raises(type(theirs.value)) as ours:
        fn(td)
    assert str(ours.value) == str(theirs.value)
