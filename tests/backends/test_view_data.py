"""CPU views whose NumPy array comes from NumPy's own reshape / swapaxes / indexing (Note
[NumPy-derived view data] in backends/views.py; unsqueeze and expand: `strided_data`, the same
array without the bounds check): the array is exactly the one built over the
storage from the view's geometry (same buffer address, byte strides, shape), values and
metadata equal torch's view, and writes go through to the base."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td

BASES: dict[str, Callable[[Any], Any]] = {
    "1-d": lambda m: m.arange(12.0),
    "2-d": lambda m: m.arange(12.0).reshape(3, 4),
    "3-d": lambda m: m.arange(24.0).reshape(2, 3, 4),
    "size-1 dims": lambda m: m.arange(6.0).reshape(1, 6, 1),
    "transposed": lambda m: m.arange(12.0).reshape(3, 4).t(),
    "offset slice": lambda m: m.arange(24.0).reshape(4, 6)[1:, 2:],
    "empty": lambda m: m.ones(0, 4),
    "int32": lambda m: m.arange(12, dtype=m.int32).reshape(2, 6),
    "odd size-1 strides": lambda m: m.arange(12.0).as_strided((1, 3, 1), (7, 2, 5), 1),
    "0-d": lambda m: m.arange(4.0)[2],
}
VIEWS: dict[str, Callable[[Any], Any]] = {
    "view flat": lambda x: x.view(-1) if x.is_contiguous() else x.transpose(0, -1),
    "view 2 dims": lambda x: x.view(2, -1) if x.is_contiguous() and x.numel() else x.t(),
    "view with 1s": lambda x: x.view(1, -1, 1) if x.is_contiguous() else x.view(x.shape),
    "transpose": lambda x: x.transpose(0, -1),
    "transpose same": lambda x: x.transpose(0, 0),
    "t": lambda x: x.t() if x.dim() <= 2 else x.transpose(1, 2),
    "select 0": lambda x: x.select(0, -1) if x.shape[0] else x,
    "select last": lambda x: x.select(-1, 1),
    "slice 0": lambda x: x[1:3],
    "slice step": lambda x: x[::2],
    "slice last dim": lambda x: x[..., 1::2],
    "slice empty": lambda x: x[5:2],
    "chain": lambda x: x.transpose(0, -1)[1:].select(0, 0),
    "unsqueeze 0": lambda x: x.unsqueeze(0),
    "unsqueeze middle": lambda x: x.unsqueeze(1) if x.dim() else x.unsqueeze(-1),
    "unsqueeze last": lambda x: x.unsqueeze(-1),
    "unsqueeze chain": lambda x: x.unsqueeze(-1).unsqueeze(0).unsqueeze(1),
    "permute reversed": lambda x: x.permute(tuple(range(x.dim() - 1, -1, -1))),
    "permute negative dims": lambda x: x.permute(tuple(range(-1, -x.dim() - 1, -1))),
    "permute identity": lambda x: x.permute(tuple(range(x.dim()))),
    "expand leading": lambda x: x.expand(2, *x.shape),
    "expand leading 1s": lambda x: x.expand(1, 1, *x.shape),
    "expand size-1 dims": lambda x: x.expand(tuple([3 if s == 1 else s for s in x.shape])),
    "expand -1": lambda x: x.expand(1, 2, *([-1] * x.dim())),
    "expand then unsqueeze": lambda x: x.expand(2, *x.shape).unsqueeze(1).permute(1, 0, -1),
}


def _storage_address(t: Any) -> int:
    root = t if t._base is None else t._base
    return int(root._storage_bytes().__array_interface__["data"][0])


def _check_exact_array(v: Any) -> None:
    """v._data is the array _view_array builds from v's geometry."""
    expected = v._view_array(v._shape, v._strides, v._offset, v.dtype)
    assert v._data.shape == expected.shape
    assert v._data.dtype == expected.dtype
    if v._data.size:
        assert v._data.strides == expected.strides
        assert v._data.__array_interface__["data"][0] == (
            _storage_address(v) + v._offset * v.dtype.itemsize
        )


def _cases() -> list[Any]:
    return [pytest.param(b, v, id=f"{b}-{v}") for b in BASES for v in VIEWS]


@pytest.mark.parametrize(("base", "view"), _cases())
def test_view_array_is_exact_and_matches_torch(base: str, view: str) -> None:
    x_t, x_d = BASES[base](torch), BASES[base](td)
    try:
        expected = VIEWS[view](x_t)
    except (RuntimeError, IndexError) as e:
        with pytest.raises(type(e)):
            VIEWS[view](x_d)
        return
    got = VIEWS[view](x_d)
    assert tuple(got.shape) == tuple(expected.shape)
    assert got.stride() == expected.stride()
    assert got.storage_offset() == expected.storage_offset()
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
    _check_exact_array(got)


@pytest.mark.parametrize(
    "view",
    [
        "transpose", "select last", "slice step", "view flat", "unsqueeze middle",
        "permute reversed", "unsqueeze chain",
    ],
)  # fmt: skip
def test_writes_through_a_view_reach_the_base(view: str) -> None:
    x_t, x_d = torch.arange(12.0).reshape(3, 4), td.arange(12.0).reshape(3, 4)
    VIEWS[view](x_t).mul_(-1)
    VIEWS[view](x_d).mul_(-1)
    assert x_d.tolist() == x_t.tolist()


def test_select_of_a_1d_tensor_is_a_0d_view_not_a_copy() -> None:
    x = td.arange(3.0)
    s = x.select(0, 1)
    assert s.shape == () and s._base is x
    s.fill_(7.0)
    assert x.tolist() == [0.0, 7.0, 2.0]


def _shapes(numel: int) -> list[tuple[int, ...]]:
    """Every shape of up to 3 dims (sizes 0..numel) with ``numel`` elements."""
    sizes = range(numel + 1) if numel else range(3)
    out: list[tuple[int, ...]] = [()] if numel == 1 else []
    out += [(a,) for a in sizes if a == numel]
    out += [(a, b) for a in sizes for b in sizes if a * b == numel]
    out += [(a, b, c) for a in sizes for b in sizes for c in sizes if a * b * c == numel]
    return out


@pytest.mark.parametrize("numel", [0, 1, 4, 6])
def test_view_of_a_contiguous_tensor_has_compute_strides_answer(numel: int) -> None:
    # view's shortcut for contiguous tensors (contiguous strides of the new shape) against
    # torch's computeStride algorithm, for every pair of shapes of up to 3 dims.
    from tensordispatch.backends.views import compute_stride
    from tensordispatch.tensor.tensor import contiguous_strides

    shapes = _shapes(numel)
    for old in shapes:
        for new in shapes:
            got = compute_stride(old, contiguous_strides(old), new)
            assert got == contiguous_strides(new), (old, new)


class _Payload(np.ndarray):
    """Stands for another backend's payload: not exactly an ndarray."""


@pytest.mark.parametrize(
    "view",
    [
        "transpose", "transpose same", "view flat", "select 0", "slice 0", "unsqueeze middle",
        "permute reversed", "expand leading", "expand -1",
    ],
)  # fmt: skip
def test_other_payloads_are_not_reused_as_view_data(view: str) -> None:
    # Only a plain NumPy array is reshaped/indexed; any other payload leaves the view to the
    # backend's own construction (Tensor._view_array here), as lazy tensors need.
    x = td.arange(12.0).reshape(3, 4)
    x._storage_bytes()
    x._data = x._data.view(_Payload)
    got = VIEWS[view](x)
    assert type(got._data) is np.ndarray
    np.testing.assert_array_equal(got.numpy(), VIEWS[view](torch.arange(12.0).reshape(3, 4)))
