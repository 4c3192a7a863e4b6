"""The speed paths of vmap (issue 7's speed work): the direct reduction kernels, the
pointwise kernel's inline cases, the matmul rule with an unbatched right operand, the vmap
frame's shortcuts and grad's tensor-argument path. Each is checked against torch.func on
the same inputs, including the calls that must leave the fast path."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import torch
import torch.func as tf

import tensordispatch as td
from tensordispatch.dispatch import tls_is_pristine
from tensordispatch.transforms.vmap import (
    RULES,
    grad,
    reset_vmap_fallback_counts,
    vmap,
    vmap_fallback_counts,
)


@pytest.fixture(autouse=True)
def _fresh_counts() -> Iterator[None]:
    reset_vmap_fallback_counts()
    yield
    reset_vmap_fallback_counts()


def _pair(shape: tuple[int, ...], seed: int = 0) -> tuple[td.Tensor, torch.Tensor]:
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return td.from_numpy(a.copy()), torch.from_numpy(a.copy())


def _same(ours: Any, theirs: Any) -> None:
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple)
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs, strict=True):
            _same(o, t)
        return
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)


def _both(fn: Callable[[Any, Any], Any], *shapes: tuple[int, ...], **vmap_kw: Any) -> None:
    pairs = [_pair(s, k) for k, s in enumerate(shapes)]
    ours = vmap(lambda *a: fn(td, *a), **vmap_kw)(*(p[0] for p in pairs))
    theirs = tf.vmap(lambda *a: fn(torch, *a), **vmap_kw)(*(p[1] for p in pairs))
    _same(ours, theirs)


# -- direct reduction kernels -----------------------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: x.sum(0),
        lambda lib, x: x.sum(-1, keepdim=True),
        lambda lib, x: x.sum([0, -1]),
        lambda lib, x: x.sum((1,)),
        lambda lib, x: x.mean(1),
        lambda lib, x: x.amax(-2),
        lambda lib, x: x.softmax(-1),
        lambda lib, x: x.log_softmax(0),
        lambda lib, x: x.max(1),
        lambda lib, x: x.var(1),
        lambda lib, x: x.std(0, keepdim=True),
        lambda lib, x: x.cumsum(1),
        lambda lib, x: lib.logsumexp(x, 1),
        lambda lib, x: x.sum(dim=1),  # keyword dim: the general kernel
        lambda lib, x: x.sum(),  # no dim: the full reduction rule
    ],
)
@pytest.mark.parametrize("in_dim", [0, 1, -1])
def test_reductions_match_torch_func(fn: Callable[[Any, Any], Any], in_dim: int) -> None:
    _both(fn, (3, 4, 5), in_dims=in_dim)


def test_reduction_over_zero_dim_samples_matches_torch_func() -> None:
    _both(lambda lib, x: x.sum(0), (4,))
    _both(lambda lib, x: x.softmax(-1), (4,))


def test_reduction_dim_out_of_range_is_torchs_error() -> None:
    with pytest.raises(IndexError) as ours:
        vmap(lambda r: r.sum(2))(td.ones(3, 4))
    with pytest.raises(IndexError) as theirs:
        tf.vmap(lambda r: r.sum(2))(torch.ones(3, 4))
    assert str(ours.value) == str(theirs.value)
    assert (
        str(ours.value) == "Dimension out of range (expected to be in range of [-1, 0], but got 2)"
    )


def test_reduction_follows_an_edited_rule_table() -> None:
    vmap(td.sin)(td.ones(2))  # installs the table
    saved = RULES.pop("aten::sum.dim_IntList")
    try:
        with pytest.warns(UserWarning, match="sum.dim_IntList"):
            out = vmap(lambda r: r.sum(0))(td.ones(3, 4))
    finally:
        RULES["aten::sum.dim_IntList"] = saved
    assert out.tolist() == [4.0, 4.0, 4.0]
    assert vmap_fallback_counts() == {"aten::sum.dim_IntList": 1}


def test_reduction_in_nested_vmap_matches_torch_func() -> None:
    _both(lambda lib, x: x.sum(0), (2, 3, 4), in_dims=0)
    x, tx = _pair((2, 3, 4))
    ours = vmap(vmap(lambda r: r.mean(-1), in_dims=1))(x)
    theirs = tf.vmap(tf.vmap(lambda r: r.mean(-1), in_dims=1))(tx)
    _same(ours, theirs)


# -- pointwise kernel's inline cases ------------------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x, y: lib.sin(x),
        lambda lib, x, y: x * 2.0,
        lambda lib, x, y: 3 - x,
        lambda lib, x, y: x + y,  # both batched
        lambda lib, x, y: x + y[0],  # batched and a batched 0-dim
        lambda lib, x, y: x[0] * y,  # a batched 0-dim on the left
        lambda lib, x, y: x.sum() * y,
    ],
)
def test_pointwise_calls_match_torch_func(fn: Callable[..., Any]) -> None:
    _both(fn, (5, 3), (5, 3))


def test_pointwise_with_an_unbatched_tensor_of_higher_rank_matches_torch_func() -> None:
    x, tx = _pair((5, 3))
    w, tw = _pair((2, 3), 1)
    _same(vmap(lambda r: r * w)(x), tf.vmap(lambda r: r * tw)(tx))
    _same(vmap(lambda r: w - r)(x), tf.vmap(lambda r: tw - r)(tx))


# -- matmul with an unbatched right operand -----------------------------------------------------


@pytest.mark.parametrize(
    ("sample", "right"),
    [((4,), (4, 3)), ((4,), (4,)), ((2, 4), (4, 3)), ((2, 4), (4,)), ((2, 2, 4), (4, 3))],
)
def test_matmul_with_unbatched_right_matches_torch_func(
    sample: tuple[int, ...], right: tuple[int, ...]
) -> None:
    x, tx = _pair((5, *sample))
    w, tw = _pair(right, 1)
    _same(vmap(lambda r: r @ w)(x), tf.vmap(lambda r: r @ tw)(tx))
    assert vmap_fallback_counts() == {}


def test_matmul_with_unbatched_right_of_higher_rank_matches_torch_func() -> None:
    x, tx = _pair((5, 4))
    w, tw = _pair((2, 4, 3), 1)
    _same(vmap(lambda r: r @ w)(x), tf.vmap(lambda r: r @ tw)(tx))


def test_matmul_shape_mismatch_is_torchs_error() -> None:
    with pytest.raises(RuntimeError) as ours:
        vmap(lambda r: r @ td.ones(15, 32))(td.ones(4, 16))
    with pytest.raises(RuntimeError) as theirs:
        tf.vmap(lambda r: r @ torch.ones(15, 32))(torch.ones(4, 16))
    assert str(ours.value) == str(theirs.value)
    assert str(ours.value) == "mat1 and mat2 shapes cannot be multiplied (4x16 and 15x32)"


def test_matmul_dtype_mismatch_is_torchs_error() -> None:
    with pytest.raises(RuntimeError) as ours:
        vmap(lambda r: r @ td.ones(16, 32, dtype=td.float64))(td.ones(4, 16))
    with pytest.raises(RuntimeError) as theirs:
        tf.vmap(lambda r: r @ torch.ones(16, 32, dtype=torch.float64))(torch.ones(4, 16))
    assert str(ours.value) == str(theirs.value)
    assert str(ours.value) == "expected m1 and m2 to have the same dtype, but got: float != double"


def test_per_sample_grads_through_unbatched_matmul_match_torch_func() -> None:
    w, tw = _pair((4, 3))
    x, tx = _pair((6, 4), 1)

    def loss(lib: Any) -> Callable[[Any, Any], Any]:
        return lambda x, w: lib.tanh(x @ w).sum()

    ours = vmap(grad(loss(td), argnums=1), in_dims=(0, None))(x, w)
    theirs = tf.vmap(tf.grad(loss(torch), argnums=1), in_dims=(0, None))(tx, tw)
    _same(ours, theirs)
    # grad with respect to the batched input through the same mm
    _same(
        vmap(grad(loss(td)), in_dims=(0, None))(x, w),
        tf.vmap(tf.grad(loss(torch)), in_dims=(0, None))(tx, tw),
    )


# -- the vmap frame -----------------------------------------------------------------------------


@pytest.mark.parametrize("out_dims", [0, 1, -1, (0, 1)])
def test_tuple_outputs_match_torch_func(out_dims: Any) -> None:
    _both(lambda lib, x: (x * 2, x.sum(0)), (3, 4, 2), out_dims=out_dims)


def test_single_argument_with_negative_in_dim_matches_torch_func() -> None:
    _both(lambda lib, x: x * 2, (3, 4), in_dims=-1)
    _both(lambda lib, x: x.sum(0), (3, 4, 2), in_dims=-2)


def test_output_at_out_dims_zero_is_the_inner_tensor_itself() -> None:
    seen: dict[str, Any] = {}

    def f(r: td.Tensor) -> td.Tensor:
        y = r * 2
        seen["inner"] = y.value
        return y

    out = vmap(f)(td.ones(3, 4))
    assert out is seen["inner"]  # batch dim already first: no movedim view
    assert out.tolist() == [[2.0] * 4] * 3


def test_the_frame_restores_thread_state_after_an_error() -> None:
    def boom(r: td.Tensor) -> td.Tensor:
        raise KeyError("inside")

    with pytest.raises(KeyError):
        vmap(boom)(td.ones(3))
    assert tls_is_pristine()
    vmap(lambda r: r)(td.ones(3))
    assert tls_is_pristine()


def test_unmapped_output_with_out_dims_zero_is_expanded_as_torch() -> None:
    w, tw = _pair((4,))
    ours = vmap(lambda r: w * 2)(td.ones(3))
    theirs = tf.vmap(lambda r: tw * 2)(torch.ones(3))
    _same(ours, theirs)


# -- grad's tensor-argument path ------------------------------------------------------------------


def test_grad_mixing_tensor_and_pytree_argnums_matches_torch_func() -> None:
    def loss(lib: Any) -> Callable[..., Any]:
        return lambda a, pair, x: ((a * x).sum() + (pair[0] * pair[1] * x).sum()) ** 2

    a, ta = _pair((3,))
    p, tp = _pair((3,), 1)
    q, tq = _pair((3,), 2)
    x, tx = _pair((4, 3), 3)
    dims = (None, None, 0)
    ours = vmap(grad(loss(td), argnums=(0, 1)), in_dims=dims)(a, (p, q), x)
    theirs = tf.vmap(tf.grad(loss(torch), argnums=(0, 1)), in_dims=dims)(ta, (tp, tq), tx)
    _same(ours[0], theirs[0])
    _same(ours[1], theirs[1])


def test_grad_of_a_non_tensor_argument_is_torchs_error() -> None:
    with pytest.raises(ValueError, match="must be Tensor") as ours:
        grad(lambda a: a)(2.0)
    with pytest.raises(ValueError, match="must be Tensor") as theirs:
        tf.grad(lambda a: a)(2.0)
    assert str(ours.value) == str(theirs.value)
    assert str(ours.value) == ("Thing passed to transform API must be Tensor, got <class 'float'>")
