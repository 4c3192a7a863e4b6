"""View operators (as_strided, permute, narrow, diagonal, unfold, split, chunk, unbind, alias,
detach, flatten, view_as_real / view_as_complex) and their *_copy twins against torch 2.13 on
'cpu' and 'meta': shape, strides, dtype, values, exception types; then aliasing (writes
through a view reach the base and back), ``_base``, storage offsets, and error messages.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tests.ops.conftest import assert_same_result, run_both

Sample = tuple[str, Callable[[Any, str], Any]]
SAMPLES: list[Sample] = []


def sample(op: str) -> Callable[[Callable[[Any, str], Any]], None]:
    def register(fn: Callable[[Any, str], Any]) -> None:
        SAMPLES.append((op, fn))

    return register


def A(L: Any, d: str, *shape: int, dtype: str = "float32") -> Any:
    """arange(numel) viewed as ``shape``: distinct values show wrong offsets."""
    n = int(np.prod(shape)) if shape else 1
    return L.arange(n, dtype=L.float64, device=d).to(getattr(L, dtype)).view(*shape)


sample("as_strided")(lambda L, d: A(L, d, 3, 4).as_strided((2, 2), (1, 4)))
sample("as_strided")(lambda L, d: A(L, d, 3, 4).as_strided((2, 2), (4, 1), 5))
sample("as_strided")(lambda L, d: A(L, d, 3, 4)[1].as_strided((3,), (2,)))
sample("as_strided")(lambda L, d: L.as_strided(A(L, d, 12), (3, 2), (0, 1)))
sample("as_strided")(lambda L, d: A(L, d, 3, 4).as_strided((2,), (1, 1)))
sample("as_strided")(lambda L, d: A(L, d, 3, 4).as_strided((2,), (-1,)))
sample("as_strided_copy")(lambda L, d: L.as_strided_copy(A(L, d, 3, 4), (2, 2), (1, 4)))
sample("permute")(lambda L, d: A(L, d, 2, 3, 4).permute(2, 0, 1))
sample("permute")(lambda L, d: L.permute(A(L, d, 2, 3, 4), (-1, 1, 0)))
sample("permute")(lambda L, d: A(L, d, 2, 3).t().permute(1, 0))
sample("permute")(lambda L, d: A(L, d, 2, 3).permute(0))
sample("permute")(lambda L, d: A(L, d, 2, 3).permute(0, 0))
sample("permute")(lambda L, d: A(L, d, 2, 3).permute(0, 2))
sample("permute_copy")(lambda L, d: L.permute_copy(A(L, d, 2, 3, 4), (2, 0, 1)))
sample("narrow")(lambda L, d: A(L, d, 3, 4).narrow(1, 1, 2))
sample("narrow")(lambda L, d: A(L, d, 3, 4).narrow(0, -2, 2))
sample("narrow")(lambda L, d: A(L, d, 3, 4).narrow(-1, 0, 0))
sample("narrow")(lambda L, d: L.narrow(A(L, d, 3, 4), 0, L.tensor(1), 2))
sample("narrow")(lambda L, d: A(L, d, 3, 4).narrow(0, 2, 2))
sample("narrow")(lambda L, d: A(L, d, 3, 4).narrow(0, 4, 0))
sample("narrow_copy")(lambda L, d: L.narrow_copy(A(L, d, 3, 4).t(), 0, 1, 2))
sample("narrow_copy")(lambda L, d: A(L, d, 3, 4).narrow_copy(1, 1, 1))
sample("narrow_copy")(lambda L, d: L.narrow_copy(A(L, d, 3, 4), 0, 1, 2, out=L.empty(0, device=d)))
sample("diagonal")(lambda L, d: A(L, d, 3, 4).diagonal())
sample("diagonal")(lambda L, d: A(L, d, 3, 4).diagonal(1))
sample("diagonal")(lambda L, d: A(L, d, 3, 4).diagonal(-1))
sample("diagonal")(lambda L, d: A(L, d, 3, 4).diagonal(5))
sample("diagonal")(lambda L, d: A(L, d, 2, 3, 4).diagonal(0, 2, 0))
sample("diagonal")(lambda L, d: L.diagonal(A(L, d, 2, 3, 4), offset=1, dim1=-1, dim2=1))
sample("diagonal")(lambda L, d: A(L, d, 3, 4).diagonal(0, 1, 1))
sample("diagonal_copy")(lambda L, d: L.diagonal_copy(A(L, d, 3, 4), 1))
sample("unfold")(lambda L, d: A(L, d, 3, 5).unfold(1, 2, 1))
sample("unfold")(lambda L, d: A(L, d, 3, 5).unfold(1, 2, 2))
sample("unfold")(lambda L, d: A(L, d, 3, 5).t().unfold(0, 3, 1))
sample("unfold")(lambda L, d: A(L, d, 3, 5).unfold(0, 4, 1))
sample("unfold")(lambda L, d: A(L, d, 3, 5).unfold(0, 1, 0))
sample("unfold_copy")(lambda L, d: L.unfold_copy(A(L, d, 3, 5), 1, 2, 1))
sample("split")(lambda L, d: A(L, d, 5, 2).split(2))
sample("split")(lambda L, d: A(L, d, 5, 2).split(1, 1))
sample("split")(lambda L, d: A(L, d, 5, 2).split([1, 4]))
sample("split")(lambda L, d: L.split(A(L, d, 5, 2), [2, 0, 3], dim=0))
sample("split")(lambda L, d: A(L, d, 5, 2).split(-1))
sample("split")(lambda L, d: A(L, d, 5, 2).split([1, 1]))
sample("split")(lambda L, d: A(L, d, 5, 2).split([-1, 6]))
sample("split")(lambda L, d: A(L, d, 0, 2).split(0))
sample("split_with_sizes")(lambda L, d: A(L, d, 5, 2).split_with_sizes([3, 2]))
sample("split_copy")(lambda L, d: L.split_copy(A(L, d, 5, 2).t(), 1, 0))
sample("split_with_sizes_copy")(lambda L, d: L.split_with_sizes_copy(A(L, d, 5, 2), [3, 2]))
sample("chunk")(lambda L, d: A(L, d, 5, 2).chunk(2))
sample("chunk")(lambda L, d: A(L, d, 5, 2).chunk(3, 1))
sample("chunk")(lambda L, d: A(L, d, 0, 2).chunk(3))
sample("chunk")(lambda L, d: A(L, d, 5, 2).chunk(0))
sample("chunk")(lambda L, d: L.tensor(1.0, device=d).chunk(1))
sample("unbind")(lambda L, d: A(L, d, 2, 3).unbind())
sample("unbind")(lambda L, d: L.unbind(A(L, d, 2, 3), 1))
sample("unbind")(lambda L, d: L.tensor(1.0, device=d).unbind())
sample("unbind_copy")(lambda L, d: L.unbind_copy(A(L, d, 2, 3).t(), 0))
sample("alias")(lambda L, d: L.ops.aten.alias(A(L, d, 2, 3).t()))
sample("alias_copy")(lambda L, d: L.alias_copy(A(L, d, 2, 3).t()))
sample("detach")(lambda L, d: A(L, d, 2, 3).t().detach())
sample("detach_copy")(lambda L, d: L.detach_copy(A(L, d, 2, 3).t()))
sample("flatten")(lambda L, d: A(L, d, 2, 3, 4).flatten())
sample("flatten")(lambda L, d: A(L, d, 2, 3, 4).flatten(1))
sample("flatten")(lambda L, d: A(L, d, 2, 3, 4).permute(2, 0, 1).flatten(0, 1))
sample("flatten")(lambda L, d: L.tensor(3.0, device=d).flatten())
sample("flatten")(lambda L, d: A(L, d, 2, 3, 4).flatten(2, 1))
sample("view_as_real")(lambda L, d: L.view_as_real(A(L, d, 2, 3, dtype="complex64")))
sample("view_as_real")(lambda L, d: L.view_as_real(A(L, d, 2, 3, dtype="complex128").t()[1]))
sample("view_as_real")(lambda L, d: L.view_as_real(A(L, d, 2, 3)))
sample("view_as_complex")(lambda L, d: L.view_as_complex(A(L, d, 3, 2)))
sample("view_as_complex")(lambda L, d: L.view_as_complex(A(L, d, 2, 3, 2, dtype="float64")[1]))
sample("view_as_complex")(lambda L, d: L.view_as_complex(A(L, d, 2, 3)))
sample("view_as_complex")(lambda L, d: L.view_as_complex(A(L, d, 2, 2).t()))
sample("view_as_complex")(lambda L, d: L.view_as_complex(A(L, d, 3, 2, dtype="int32")))
sample("view_as_real_copy")(lambda L, d: L.view_as_real_copy(A(L, d, 2, dtype="complex64")))
sample("view_as_complex_copy")(lambda L, d: L.view_as_complex_copy(A(L, d, 2, 2)))


def _ids() -> list[str]:
    seen: dict[str, int] = {}
    ids = []
    for op, _ in SAMPLES:
        seen[op] = seen.get(op, 0) + 1
        ids.append(f"{op}-{seen[op]}")
    return ids


def _check(fn: Callable[[Any, str], Any], device: str) -> None:
    expected, got = run_both(fn, device)
    if isinstance(expected, BaseException):
        assert isinstance(got, type(expected)), f"torch raised {expected!r}; we gave {got!r}"
        return
    if isinstance(got, BaseException):
        raise got
    assert_same_result(expected, got, values=device == "cpu")
    for e, g in zip(_flat(expected), _flat(got), strict=True):
        assert g.storage_offset() == e.storage_offset()
        if device == "cpu":
            assert g._is_view() == e._is_view()
        else:  # a meta reshape that copies returns a view of the copy here (docs/CODEGEN.md)
            assert g._is_view() or not e._is_view()


def _flat(x: Any) -> list[Any]:
    return list(x) if isinstance(x, (tuple, list)) else [x]


@pytest.mark.parametrize(("op", "fn"), SAMPLES, ids=_ids())
def test_view_cpu_matches_torch(op: str, fn: Any, coverage: Any) -> None:
    coverage[op][1] += 1
    _check(fn, "cpu")
    coverage[op][0] += 1


@pytest.mark.parametrize(("op", "fn"), SAMPLES, ids=_ids())
def test_view_meta_matches_torch(op: str, fn: Any, coverage: Any) -> None:
    coverage[op + "[meta]"][1] += 1
    _check(fn, "meta")
    coverage[op + "[meta]"][0] += 1


# -- aliasing ----------------------------------------------------------------------------------

VIEWS: list[tuple[str, Callable[[Any], Any]]] = [
    ("as_strided", lambda x: x.as_strided((2, 2), (1, 4), 1)),
    ("permute", lambda x: x.permute(1, 0)),
    ("narrow", lambda x: x.narrow(1, 1, 2)),
    ("diagonal", lambda x: x.diagonal(1)),
    ("unfold", lambda x: x.unfold(1, 2, 2)),
    ("split", lambda x: x.split(2)[1]),
    ("chunk", lambda x: x.chunk(2, 1)[1]),
    ("unbind", lambda x: x.unbind(1)[2]),
    ("alias", lambda x: _alias(x)),
    ("flatten", lambda x: x.flatten()),
]


def _alias(x: Any) -> Any:
    lib = torch if isinstance(x, torch.Tensor) else td
    return lib.ops.aten.alias(x)


@pytest.mark.parametrize(("name", "make"), VIEWS, ids=[n for n, _ in VIEWS])
def test_writes_through_a_view_reach_the_base_and_back(name: str, make: Any) -> None:
    results = []
    for lib in (torch, td):
        base = lib.arange(12.0).view(3, 4)
        v = make(base)
        v.mul_(-1)  # view -> base
        base.add_(100)  # base -> view
        results.append((base.tolist(), v.tolist(), v._base is base, v.stride()))
    assert results[1] == results[0]


def test_view_as_real_writes_reach_the_complex_base() -> None:
    z = td.zeros(2, dtype=td.complex64)
    td.view_as_real(z)[1, 1] = 3.0
    assert z.tolist() == [0j, 3j]
    assert td.view_as_real(z)._base is z


def test_detach_shares_storage_and_version_but_is_not_a_view() -> None:
    x = td.arange(4.0)
    y = x.detach()
    y[0] = 7.0
    x.add_(1)
    assert (x.tolist(), y.tolist()) == ([8.0, 2.0, 3.0, 4.0], [8.0, 2.0, 3.0, 4.0])
    assert y._base is None and not y._is_view() and y._is_alias_of(x)


def test_split_returns_views_of_the_same_base() -> None:
    x = td.arange(6.0)
    parts = x.split(2)
    assert isinstance(parts, tuple)
    assert all(p._base is x for p in parts)
    assert [p.storage_offset() for p in parts] == [0, 2, 4]


def test_copy_variants_do_not_alias() -> None:
    x = td.arange(6.0).view(2, 3)
    y = td.permute_copy(x, (1, 0))
    y[0, 0] = 99.0
    assert x[0, 0].item() == 0.0 and y._base is None and y.is_contiguous()


def test_split_copy_out_fills_each_out_tensor() -> None:
    x = td.arange(5.0)
    outs = [td.empty(2), td.empty(2), td.empty(1)]  # torch copies, never resizes them
    td.ops.aten.split_copy.Tensor_out(x, 2, out=outs)
    assert [o.tolist() for o in outs] == [[0.0, 1.0], [2.0, 3.0], [4.0]]


# -- messages (torch's own text) ---------------------------------------------------------------

ERRORS: list[tuple[str, Callable[[Any], Any]]] = [
    ("permute-length", lambda L: L.ones(2, 3).permute(0)),
    ("permute-dup", lambda L: L.ones(2, 3).permute(0, 0)),
    ("diagonal-same", lambda L: L.ones(2, 3).diagonal(0, 0, 0)),
    ("unfold-size", lambda L: L.ones(2, 3).unfold(0, 5, 1)),
    ("unfold-step", lambda L: L.ones(2, 3).unfold(0, 1, 0)),
    ("split-negative", lambda L: L.ones(2, 3).split(-1)),
    ("split-sum", lambda L: L.ones(3, 3).split([1, 1])),
    ("split-entries", lambda L: L.ones(3, 3).split([-1, 4])),
    ("split-zero", lambda L: L.ones(2, 3).split(0)),
    ("chunk-zero", lambda L: L.ones(2, 3).chunk(0)),
    ("chunk-0d", lambda L: L.ones(()).chunk(1)),
    ("unbind-0d", lambda L: L.ones(()).unbind()),
    ("narrow-length", lambda L: L.ones(3).narrow(0, 2, 2)),
    ("view_as_real", lambda L: L.view_as_real(L.ones(2))),
    ("view_as_complex-last", lambda L: L.view_as_complex(L.ones(3))),
    ("as_strided-negative", lambda L: L.ones(3).as_strided((2,), (-1,))),
    ("as_strided-length", lambda L: L.ones(3).as_strided((2,), (1, 1))),
    ("flatten-order", lambda L: L.ones(2, 3).flatten(1, 0)),
]


@pytest.mark.parametrize(("case", "fn"), ERRORS, ids=[c for c, _ in ERRORS])
def test_error_message_is_torchs(case: str, fn: Any) -> None:
    with pytest.raises(Exception) as theirs:
        fn(torch)
    with pytest.raises(type(theirs.value)) as ours:
        fn(td)
    assert str(ours.value) == str(theirs.value)


def test_view_as_complex_of_half_is_refused_with_our_message() -> None:
    with pytest.raises(RuntimeError) as e:
        td.view_as_complex(td.ones(3, 2, dtype=td.float16))
    assert str(e.value) == "view_as_complex: complex32 has no NumPy equivalent here"


LIST_RETURNING: list[tuple[str, Callable[[Any], Any]]] = [
    ("unbind", lambda L: L.ones(2, 3).unbind()),
    ("chunk", lambda L: L.chunk(L.ones(4), 2)),
    ("split", lambda L: L.ones(4).split(2)),
    ("split_with_sizes", lambda L: L.ones(4).split_with_sizes([1, 3])),
    ("split_copy", lambda L: L.split_copy(L.ones(4), 2)),
    ("unbind_copy", lambda L: L.unbind_copy(L.ones(2, 3))),
]


@pytest.mark.parametrize(("name", "fn"), LIST_RETURNING, ids=[n for n, _ in LIST_RETURNING])
def test_python_binding_returns_the_type_torch_returns(name: str, fn: Any) -> None:
    assert type(fn(td)) is type(fn(torch))


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.ones(3),
        lambda m: m.arange(4.0),
        lambda m: m.tensor([1.0, 2.0]),
        lambda m: m.zeros(2, 3).t(),
        lambda m: m.ones(3, requires_grad=True),
    ],
)
def test_detach_is_an_alias_of_its_source_as_torch(make: Any) -> None:
    x, tx = make(td), make(torch)
    y, ty = x.detach(), tx.detach()
    torch_alias = ty.untyped_storage().data_ptr() == tx.untyped_storage().data_ptr()
    assert (y._is_alias_of(x), y._base is None) == (torch_alias, ty._base is None)
    assert torch_alias
