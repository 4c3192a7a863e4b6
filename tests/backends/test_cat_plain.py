"""cat's plain case (Note [cat's plain case first] in backends/meta/layout.py) and its CPU
kernel's copy straight into the result (backends/cpu/layout.py ``cat_out``).

Oracle: torch 2.13's cat on the same inputs: values, dtype, shape, strides, errors.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import tensordispatch as td
from tensordispatch.backends.meta.layout import _cat_plain

from .overrides import impl_quietly


def _pair(data: np.ndarray[Any, Any]) -> tuple[td.Tensor, torch.Tensor]:
    return td.from_numpy(data.copy()), torch.from_numpy(data.copy())


def _same(ours: td.Tensor, theirs: torch.Tensor) -> None:
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.stride() == theirs.stride()
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@st.composite
def _cat_calls(draw: Any) -> tuple[list[np.ndarray[Any, Any]], int, list[str]]:
    ndim = draw(st.integers(1, 4))
    base = draw(st.lists(st.integers(0, 3), min_size=ndim, max_size=ndim))
    d = draw(st.integers(-ndim, ndim - 1))
    count = draw(st.integers(1, 4))
    arrays, layouts = [], []
    for i in range(count):
        shape = list(base)
        shape[d] = draw(st.integers(0, 3))
        arrays.append(np.arange(np.prod(shape), dtype=np.float32).reshape(shape) + 10 * i)
        layouts.append(draw(st.sampled_from(["contiguous", "transposed", "sliced"])))
    return arrays, d, layouts


def _laid_out(lib: Any, a: np.ndarray[Any, Any], layout: str) -> Any:
    """``a``'s values as a tensor of ``lib`` (td or torch) in another memory layout."""
    if layout == "transposed" and a.ndim >= 2:
        return lib.from_numpy(np.ascontiguousarray(a.swapaxes(0, -1))).transpose(0, -1)
    if layout == "sliced":  # every other element of a wider tensor
        wide = np.zeros((*a.shape[:-1], 2 * a.shape[-1]), a.dtype)
        wide[..., ::2] = a
        return lib.from_numpy(wide)[..., ::2]
    return lib.from_numpy(a.copy())


@settings(max_examples=100, deadline=None)
@given(_cat_calls())
def test_cat_matches_torch(call: tuple[list[np.ndarray[Any, Any]], int, list[str]]) -> None:
    arrays, d, layouts = call
    ours = [_laid_out(td, a, k) for a, k in zip(arrays, layouts, strict=True)]
    theirs = [_laid_out(torch, a, k) for a, k in zip(arrays, layouts, strict=True)]
    assert [t.stride() for t in ours] == [tuple(t.stride()) for t in theirs]
    assert _cat_plain(ours, d) is not None  # one dtype and rank: the plain case
    _same(td.cat(ours, d), torch.cat(theirs, d))


@pytest.mark.parametrize(
    ("a", "b"),
    [("int32", "float32"), ("bool", "int64"), ("float16", "float64"), ("uint8", "int8"),
     ("int64", "float32"), ("complex64", "float64")],
)  # fmt: skip
def test_mixed_dtypes_promote_as_torch(a: str, b: str) -> None:
    x = np.array([[1, 0], [2**40 + 1 if a == "int64" else 1, 1]]).astype(a)
    y = np.array([[3, 1]]).astype(b)
    (tx, px), (ty, py) = _pair(x), _pair(y)
    assert _cat_plain([tx, ty], 0) is None  # the general checks decide
    _same(td.cat([tx, ty]), torch.cat([px, py]))


def test_channels_last_inputs_give_a_channels_last_result_as_torch() -> None:
    data = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    t, p = _pair(data)
    tcl, pcl = (
        t.contiguous(memory_format=td.channels_last),
        p.contiguous(memory_format=torch.channels_last),
    )
    for dim in (0, 1, 3):
        _same(td.cat([tcl, tcl], dim), torch.cat([pcl, pcl], dim))
        _same(td.cat([tcl, t], dim), torch.cat([pcl, p], dim))


def test_legacy_empty_inputs_as_torch() -> None:
    m, pm = _pair(np.ones((2, 3), np.float32))
    e, pe = td.zeros(0), torch.zeros(0)
    _same(td.cat([e, m, e], 1), torch.cat([pe, pm, pe], 1))
    v, pv = _pair(np.arange(3.0))
    e64, pe64 = td.zeros(0, dtype=td.float64), torch.zeros(0, dtype=torch.float64)
    _same(td.cat([e64, v, e64]), torch.cat([pe64, pv, pe64]))
    _same(td.cat([e, e]), torch.cat([pe, pe]))


def test_expanded_and_tuple_inputs_as_torch() -> None:
    row, prow = _pair(np.arange(3, dtype=np.int64))
    _same(td.cat((row.expand(2, 3), row[None])), torch.cat((prow.expand(2, 3), prow[None])))


def test_meta_cat_uses_the_same_shapes() -> None:
    a, b = td.empty(2, 3, device="meta"), td.empty(2, 5, device="meta")
    r = td.cat([a, b], -1)
    assert r.device.type == "meta" and tuple(r.shape) == (2, 8) and r.stride() == (8, 1)


def _errors(ours: Any, theirs: Any) -> tuple[BaseException, BaseException]:
    with pytest.raises(Exception) as t:
        theirs()
    with pytest.raises(Exception) as o:
        ours()
    assert type(o.value).__name__ == type(t.value).__name__
    return o.value, t.value


def test_error_texts_are_torchs() -> None:
    a, pa = _pair(np.ones((2, 3), np.float32))
    b, pb = _pair(np.ones((3, 2), np.float32))
    o, t = _errors(lambda: td.cat([a, b]), lambda: torch.cat([pa, pb]))
    assert (
        str(o)
        == str(t)
        == (
            "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 2 "
            "for tensor number 1 in the list."
        )
    )
    o, t = _errors(lambda: td.cat([a, a[0]]), lambda: torch.cat([pa, pa[0]]))
    assert str(o) == str(t) == "Tensors must have same number of dimensions: got 2 and 1"
    o, t = _errors(lambda: td.cat([a, td.tensor(1.0)]), lambda: torch.cat([pa, torch.tensor(1.0)]))
    assert str(o) == str(t) == "zero-dimensional tensor (at position 1) cannot be concatenated"
    o, t = _errors(lambda: td.cat([a, a], 2), lambda: torch.cat([pa, pa], 2))
    assert (
        str(o) == str(t) == "Dimension out of range (expected to be in range of [-2, 1], but got 2)"
    )


def test_out_of_another_dtype_as_torch() -> None:
    a, pa = _pair(np.arange(6, dtype=np.int32).reshape(2, 3))
    out, pout = td.empty(0, dtype=td.float64), torch.empty(0, dtype=torch.float64)
    td.cat([a, a], out=out)
    torch.cat([pa, pa], out=pout)
    _same(out, pout)
    bad, pbad = td.empty(0, dtype=td.int32), torch.empty(0, dtype=torch.int32)
    f, pf = _pair(np.ones((1, 3), np.float32))
    o, t = _errors(lambda: td.cat([f, f], out=bad), lambda: torch.cat([pf, pf], out=pbad))
    assert (
        str(o) == str(t) == "torch.cat(): input types can't be cast to the desired output type Int"
    )


def test_gradient_through_cat_is_torchs() -> None:
    x, px = _pair(np.arange(6, dtype=np.float32).reshape(2, 3))
    y, py = _pair(np.ones((1, 3), np.float32))
    x.requires_grad_()
    px.requires_grad_()
    weights = np.arange(9, dtype=np.float32).reshape(3, 3)
    (td.cat([x, y]) * td.from_numpy(weights)).sum().backward()
    (torch.cat([px, py]) * torch.from_numpy(weights)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), px.grad.numpy())


def test_a_cpu_kernel_registered_later_is_called(lib: Any) -> None:
    """cat takes no one hop: a later kernel of ``cat`` at CPU is reached, as in torch."""
    seen: list[int] = []

    def mine(tensors: Any, dim: int = 0) -> Any:
        seen.append(len(tensors))
        return td.zeros(1)

    impl_quietly(lib, "cat", mine, "CPU")
    assert td.cat([td.ones(2), td.ones(3)]).tolist() == [0.0] and seen == [2]
