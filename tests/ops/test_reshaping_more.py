"""M1's shape helpers and comparisons against torch 2.13: movedim / moveaxis, swapaxes /
swapdims, ravel, unflatten, tile, broadcast_to, flipud / fliplr, diag / diag_embed, trace,
count_nonzero, equal, isclose / allclose, argsort: values, shapes, strides, aliasing,
autograd nodes, gradients, error texts."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td


def _grid(m: Any) -> Any:
    return m.arange(24.0).reshape(2, 3, 4)


CALLS: dict[str, Callable[[Any], Any]] = {
    "movedim int": lambda m: _grid(m).movedim(0, -1),
    "movedim lists": lambda m: m.movedim(_grid(m), (0, 1), (2, 0)),
    "movedim same": lambda m: _grid(m).movedim(1, 1),
    "moveaxis": lambda m: m.moveaxis(_grid(m), [2], [0]),
    "swapaxes": lambda m: _grid(m).swapaxes(0, 2),
    "swapdims": lambda m: m.swapdims(_grid(m), -1, 1),
    "ravel contiguous": lambda m: _grid(m).ravel(),
    "ravel transposed": lambda m: m.ravel(_grid(m).transpose(0, 2)),
    "unflatten": lambda m: _grid(m).unflatten(2, (2, 2)),
    "unflatten -1": lambda m: m.unflatten(_grid(m), -1, (-1, 2)),
    "tile short": lambda m: _grid(m).tile((2,)),
    "tile long": lambda m: m.tile(m.tensor([1, 2]), (2, 1, 2)),
    "broadcast_to": lambda m: m.broadcast_to(m.tensor([1.0, 2.0]), (3, 2)),
    "flipud": lambda m: _grid(m).flipud(),
    "fliplr": lambda m: m.fliplr(_grid(m)),
    "diag 1-d": lambda m: m.diag(m.tensor([1, 2, 3])),
    "diag 1-d offset": lambda m: m.tensor([1.0, 2.0]).diag(-2),
    "diag 2-d": lambda m: m.diag(_grid(m)[0], 1),
    "diag_embed": lambda m: m.diag_embed(_grid(m), 1, 0, 2),
    "trace": lambda m: m.trace(_grid(m)[1]),
    "trace int": lambda m: m.arange(9, dtype=m.int32).reshape(3, 3).trace(),
    "count_nonzero": lambda m: m.count_nonzero(m.tensor([[0, 1], [2, 0]])),
    "count_nonzero dim": lambda m: m.tensor([[0, 1], [2, 0.5]]).count_nonzero(dim=1),
    "count_nonzero dims": lambda m: m.count_nonzero(_grid(m) % 3, (0, 2)),
    "argsort": lambda m: m.argsort(m.tensor([3.0, 1.0, 2.0, 1.0])),
    "argsort dim descending": lambda m: _grid(m).argsort(1, True),
    "argsort stable": lambda m: m.argsort(m.tensor([2, 1, 2, 1]), stable=True, descending=True),
    "isclose": lambda m: m.isclose(
        m.tensor([1.0, math.nan, math.inf, 2.0]), m.tensor([1.0 + 1e-9, math.nan, math.inf, 2.1])
    ),
    "isclose equal_nan": lambda m: m.tensor([math.nan, 1.0]).isclose(
        m.tensor([math.nan, 1.2]), 0.1, 0.1, True
    ),
    "isclose ints": lambda m: m.isclose(m.tensor([1, 2, 100]), m.tensor([1, 3, 101]), rtol=0.01),
    "isclose uint8 no wrap": lambda m: m.isclose(
        m.tensor([5], dtype=m.uint8), m.tensor([7], dtype=m.uint8), 0, 3
    ),
    "isclose int64 in float": lambda m: m.isclose(m.tensor([2**40 + 1]), m.tensor([2**40]), 0, 0.5),
    "isclose bool": lambda m: m.isclose(m.tensor([True, False]), m.tensor([True, True])),
    "isclose zero tolerance": lambda m: m.isclose(m.tensor([1.0]), m.tensor([1.0]), 0.0, 0.0),
}


@pytest.mark.parametrize("case", sorted(CALLS))
def test_matches_torch(case: str) -> None:
    expected, got = CALLS[case](torch), CALLS[case](td)
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(expected.shape)
    assert got.stride() == expected.stride()
    assert got.tolist() == expected.tolist()


VIEWS = ["movedim int", "swapaxes", "ravel contiguous", "unflatten", "broadcast_to"]


@pytest.mark.parametrize("case", VIEWS)
def test_views_share_storage(case: str) -> None:
    result = CALLS[case](td)
    assert result._base is not None


BOOLS: dict[str, Callable[[Any], Any]] = {
    "equal": lambda m: m.equal(m.tensor([1, 2]), m.tensor([1, 2])),
    "equal dtypes": lambda m: m.equal(m.tensor([1, 2]), m.tensor([1.0, 2.0])),
    "equal shapes": lambda m: m.equal(m.ones(2), m.ones(3)),
    "equal nan": lambda m: m.tensor([math.nan]).equal(m.tensor([math.nan])),
    "allclose": lambda m: m.allclose(m.tensor([1.0, 2.0]), m.tensor([1.0, 2.0 + 1e-7])),
    "allclose far": lambda m: m.tensor([1.0, 2.0]).allclose(m.tensor([1.0, 2.5]), atol=0.1),
    "allclose nan": lambda m: m.allclose(
        m.tensor([math.nan]), m.tensor([math.nan]), equal_nan=True
    ),
}


@pytest.mark.parametrize("case", sorted(BOOLS))
def test_bool_results_match_torch(case: str) -> None:
    expected, got = BOOLS[case](torch), BOOLS[case](td)
    assert type(got) is bool
    assert got == expected


NODES: dict[str, Callable[[Any, Any], Any]] = {
    "movedim": lambda m, a: a.movedim(0, 2),
    "swapaxes": lambda m, a: a.swapaxes(0, 1),
    "ravel": lambda m, a: a.ravel(),
    "unflatten": lambda m, a: a.unflatten(2, (2, 2)),
    "tile": lambda m, a: a.tile((2,)),
    "broadcast_to": lambda m, a: a.broadcast_to((2, 2, 3, 4)),
    "flipud": lambda m, a: a.flipud(),
    "diag 1-d": lambda m, a: a[0, 0].diag(1),
    "diag_embed": lambda m, a: m.diag_embed(a),
    "trace": lambda m, a: a[1].trace(),
}


@pytest.mark.parametrize("case", sorted(NODES))
def test_gradients_match_torch(case: str) -> None:
    values = np.arange(24.0).reshape(2, 3, 4) / 7
    a = torch.tensor(values, requires_grad=True)
    b = td.tensor(values.tolist(), dtype=td.float64, requires_grad=True)
    ra, rb = NODES[case](torch, a), NODES[case](td, b)
    assert type(rb.grad_fn).__name__ == ra.grad_fn.name()
    weights = np.arange(1.0, ra.numel() + 1).reshape(tuple(ra.shape))
    (ra * torch.tensor(weights)).sum().backward()
    (rb * td.tensor(weights.tolist(), dtype=td.float64)).sum().backward()
    np.testing.assert_allclose(np.array(b.grad.tolist()), a.grad.numpy())


def test_count_nonzero_does_not_require_grad() -> None:
    assert not td.count_nonzero(td.ones(2, requires_grad=True)).requires_grad


ERRORS: dict[str, Callable[[Any], Any]] = {
    "movedim counts": lambda m: _grid(m).movedim((0, 1), (0,)),
    "movedim repeated": lambda m: _grid(m).movedim((0, 0), (1, 2)),
    "movedim range": lambda m: _grid(m).movedim(5, 0),
    "unflatten product": lambda m: _grid(m).unflatten(2, (3, 2)),
    "unflatten empty": lambda m: _grid(m).unflatten(2, ()),
    "fliplr 1-d": lambda m: m.ones(3).fliplr(),
    "flipud 0-d": lambda m: m.ones(()).flipud(),
    "diag 3-d": lambda m: _grid(m).diag(),
    "trace 3-d": lambda m: _grid(m).trace(),
    "isclose dtypes": lambda m: m.isclose(m.ones(2), m.ones(2, dtype=m.float64)),
    "isclose rtol": lambda m: m.isclose(m.ones(2), m.ones(2), rtol=-1),
    "isclose atol": lambda m: m.isclose(m.ones(2), m.ones(2), atol=-1),
    "count_nonzero repeated": lambda m: m.count_nonzero(m.ones(2, 3), (0, 0)),
    "tile missing": lambda m: m.ones(2).tile(),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_torch(case: str) -> None:
    with pytest.raises(Exception) as expected:
        ERRORS[case](torch)
    with pytest.raises(Exception) as got:
        ERRORS[case](td)
    assert type(got.value).__name__ == type(expected.value).__name__
    assert str(got.value).replace("tensordispatch", "torch") == str(expected.value)


def test_movedim_mixed_arguments_type_error() -> None:
    with pytest.raises(TypeError) as e:
        td.ones(2, 3).movedim(0, (1,))
    lines = str(e.value).splitlines()
    assert lines[0] == (
        "movedim() received an invalid combination of arguments - got (int, tuple), but "
        "expected one of:"
    )
    assert " * (int source, int destination)" in lines
    assert " * (tuple of ints source, tuple of ints destination)" in lines


def test_error_texts_golden() -> None:
    with pytest.raises(RuntimeError) as e:
        td.ones(2, 3).movedim((0, 1), (0,))
    assert str(e.value) == (
        "movedim: Invalid source or destination dims: source ([0, 1] dims) should contain the "
        "same number of dims as destination ([0] dims)"
    )
    with pytest.raises(RuntimeError) as e:
        td.ones(4).unflatten(0, (3, 2))
    assert str(e.value) == (
        "unflatten: Provided sizes [3, 2] don't multiply up to the size of dim 0 (4) in the "
        "input tensor"
    )


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_trace_on_meta_matches_torch(dtype: str) -> None:
    """(On lazy, trace falls back to the CPU: the lazy OpInfo sweep checks it.)"""
    expected = torch.ones(3, 3, device="meta", dtype=getattr(torch, dtype)).trace()
    got = td.ones(3, 3, device="meta", dtype=getattr(td, dtype)).trace()
    assert (got.device.type, got.dtype.name, tuple(got.shape)) == (
        "meta",
        str(expected.dtype).split(".")[-1],
        (),
    )
