"""Property: vmap of a random chain of operators equals the Python loop over the batch, for
any batch size, sample shape and in_dim (Hypothesis, derandomized in CI)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tensordispatch as td
from tensordispatch.transforms.vmap import vmap


def _if(cond: Callable[[Any], bool], fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda x: fn(x) if cond(x) else x


def _has_dim(x: Any) -> bool:
    return bool(x.dim())


def _matrix(x: Any) -> bool:
    return bool(x.dim() >= 2)


UNARY: list[Callable[[Any], Any]] = [
    lambda x: x.sin(),
    lambda x: x * 2,
    lambda x: x + x,
    _if(_has_dim, lambda x: x.sum(-1)),
    lambda x: x.unsqueeze(0),
    _if(_has_dim, lambda x: x.transpose(0, -1)),
    lambda x: x.flatten(),
    _if(_has_dim, lambda x: x.softmax(-1)),
    lambda x: x.mean(),
    lambda x: x.exp().log1p(),
    _if(_has_dim, lambda x: x[..., :1]),
    lambda x: x.reshape(-1),
    lambda x: td.cat([x.flatten(), x.flatten()]),
    lambda x: td.stack([x, x], -1),
    _if(_has_dim, lambda x: x.amax(0)),
    lambda x: x.clone().add_(1.0),
    lambda x: td.where(x > 0, x, -x),
    _if(_has_dim, lambda x: x.cumsum(0)),
    _if(lambda x: x.dim() == 2, lambda x: x @ x.t()),
    _if(_has_dim, lambda x: x.max(0)[0]),
    lambda x: x.expand(2, *x.shape),
    lambda x: x.permute(tuple(reversed(range(x.dim())))),  # a tuple: 0-dim takes (), as torch
    _if(_has_dim, lambda x: x.flip(0)),
    _if(_has_dim, lambda x: x.roll(1, 0)),
    _if(_matrix, lambda x: x.diagonal()),
    _if(_has_dim, lambda x: x.index_select(0, td.tensor([0, 0]))),
    lambda x: x.squeeze(),
    _if(_matrix, lambda x: x.tril()),
]


@settings(max_examples=80, deadline=None)
@given(
    shape=st.lists(st.integers(1, 3), min_size=0, max_size=3),
    batch=st.integers(1, 3),
    position=st.integers(0, 3),
    chain=st.lists(st.integers(0, len(UNARY) - 1), min_size=1, max_size=5),
)
def test_vmap_of_an_operator_chain_equals_the_loop(
    shape: list[int], batch: int, position: int, chain: list[int]
) -> None:
    def f(x: Any) -> Any:
        for i in chain:
            x = UNARY[i](x)
        return x

    a = np.random.default_rng(len(chain)).standard_normal((batch, *shape)).astype(np.float32)
    expected = np.stack([f(td.from_numpy(np.array(a[i]))).numpy() for i in range(batch)])
    dim = min(position, len(shape))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = vmap(f, in_dims=dim)(td.from_numpy(np.moveaxis(a, 0, dim).copy())).numpy()
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
