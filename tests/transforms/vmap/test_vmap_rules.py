"""The batching kernel: rules vs the for-loop fallback, in-place rules, counters, warnings,
strict mode, promotion with batched scalars."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import numpy as np
import pytest
import torch
import torch.func as tf

import tensordispatch as td
from tensordispatch.transforms.vmap import (
    RULES,
    VmapFallbackStrictError,
    reset_vmap_fallback_counts,
    strict_vmap_fallback,
    vmap,
    vmap_fallback_counts,
)


@pytest.fixture(autouse=True)
def _fresh_counts() -> Iterator[None]:
    reset_vmap_fallback_counts()
    yield
    reset_vmap_fallback_counts()


def no_rule(a: td.Tensor) -> td.Tensor:  # an operator with no batching rule
    return td.ops.aten._index_put_impl.default(a, [td.tensor([0])], td.tensor(5.0))


def test_rule_table_covers_the_issue_families() -> None:
    vmap(td.sin)(td.ones(2))  # installs the table
    for name in (
        "aten::add.Tensor",
        "aten::sum.dim_IntList",
        "aten::view",
        "aten::mm",
        "aten::cat",
        "aten::index_select",
        "aten::gather",
        "aten::_softmax",
        "aten::mul_.Tensor",
        "aten::diagonal",
        "aten::unsqueeze",
    ):
        assert name in RULES, name


def test_operators_with_rules_do_not_fall_back() -> None:
    x = td.ones(3, 4)
    vmap(lambda r: (r.sin() * 2 + r).softmax(0).sum(0).unsqueeze(0) @ td.ones(1, 2))(x)
    assert vmap_fallback_counts() == {}


def test_fallback_counts_calls_per_operator() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        vmap(no_rule)(td.ones(5, 2, 4))
        vmap(no_rule)(td.ones(5, 2, 4))
    assert vmap_fallback_counts() == {"aten::_index_put_impl": 2}


def test_fallback_result_equals_loop() -> None:
    x = td.from_numpy(np.arange(24, dtype=np.float32).reshape(3, 2, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = vmap(no_rule)(x)
    expected = td.stack([no_rule(x[i]) for i in range(3)], 0)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_fallback_warns_once_per_operator() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        vmap(no_rule)(td.ones(5, 2, 4))
        vmap(no_rule)(td.ones(5, 2, 4))
    messages = [str(w.message) for w in caught]
    expected = (
        "There is a performance drop because we have not yet implemented the batching rule for "
        "aten::_index_put_impl. The operator runs once per batch entry (the vmap for-loop "
        "fallback); this warning is given once per operator."
    )
    assert messages == [expected]


def test_fallback_with_several_returns() -> None:
    a = np.random.default_rng(3).standard_normal((4, 1, 3, 2, 2)).astype(np.float32)
    target = np.array([[[0, 2], [1, 1]]])
    vmap(td.sin)(td.ones(2))  # installs the table
    saved = RULES.pop("aten::nll_loss2d_forward")  # the fallback, for an op with two returns
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out, total = vmap(
                lambda r: td.ops.aten.nll_loss2d_forward(r, td.from_numpy(target), None, 1, -100)
            )(td.from_numpy(a.copy()))
    finally:
        RULES["aten::nll_loss2d_forward"] = saved
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = tf.vmap(
            lambda r: torch.ops.aten.nll_loss2d_forward(r, torch.from_numpy(target), None, 1, -100)
        )(torch.from_numpy(a))
    assert vmap_fallback_counts() == {"aten::nll_loss2d_forward": 1}
    for o, r in zip((out, total), ref, strict=True):
        np.testing.assert_allclose(o.numpy(), r.numpy(), rtol=1e-5, atol=1e-6)


def test_strict_mode_refuses_the_fallback() -> None:
    with strict_vmap_fallback(), pytest.raises(VmapFallbackStrictError) as info:
        vmap(no_rule)(td.ones(5, 2, 4))
    assert str(info.value) == (
        "aten::_index_put_impl: there is no batching rule for this operator and the vmap "
        "for-loop "
        "fallback is in strict mode, so it was not run once per batch entry. Add a batching "
        "rule (tensordispatch.transforms.vmap.rules) or leave strict_vmap_fallback()."
    )


def test_inplace_on_unbatched_self_with_rule_matches_torch() -> None:
    with pytest.raises(RuntimeError) as ours:
        vmap(lambda a, b: a.mul_(b), in_dims=(None, 0))(td.ones(4), td.ones(3, 4))
    with pytest.raises(RuntimeError) as ref:
        tf.vmap(lambda a, b: a.mul_(b), in_dims=(None, 0))(torch.ones(4), torch.ones(3, 4))
    assert str(ours.value) == str(ref.value)
    assert str(ours.value).startswith(
        "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a "
        "Tensor `other` in extra_args that has more elements than `self`."
    )


def test_inplace_on_unbatched_self_in_fallback() -> None:
    index = td.tensor([0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError) as info:
            vmap(
                lambda a, b: td.ops.aten._index_put_impl_.default(a, [index], b), in_dims=(None, 0)
            )(td.ones(2, 4), td.ones(3, 2, 4))
    assert str(info.value) == (
        "vmap: aten::_index_put_impl_(self, *extra_args) is not possible because there exists a "
        "Tensor `other` in extra_args that has more elements than `self`. This happened due to "
        "`other` being vmapped over but `self` not being vmapped over at level 1. Please try to "
        "use out-of-place operators instead of aten::_index_put_impl_. If said operator is being "
        "called inside the PyTorch framework, please file a bug report instead."
    )


def test_inplace_on_batched_self_writes_through() -> None:
    x = td.ones(3, 4)
    out = vmap(lambda a, b: a.add_(b), in_dims=(0, None))(x, td.tensor([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_array_equal(x.numpy(), np.tile([2.0, 3.0, 4.0, 5.0], (3, 1)))
    assert out._is_alias_of(x)


def test_inplace_broadcast_past_self_is_refused() -> None:
    with pytest.raises(RuntimeError) as info:
        vmap(lambda a, b: a.add_(b), in_dims=(0, None))(td.ones(3, 4), td.ones(3, 4))
    assert str(info.value) == "output with shape [4] doesn't match the broadcast shape [3, 4]"


def test_promotion_with_batched_zero_dim_tensor() -> None:
    x = td.ones(3, dtype=td.float32)
    s = td.tensor([1.0, 2.0], dtype=td.float64)
    got = vmap(lambda b: x + b)(s)
    ref = tf.vmap(lambda b: torch.ones(3) + b)(torch.tensor([1.0, 2.0], dtype=torch.float64))
    assert got.dtype.name == str(ref.dtype).split(".")[-1] == "float32"
    np.testing.assert_array_equal(got.numpy(), ref.numpy())


def test_composite_operator_decomposes_without_fallback() -> None:
    a, b = td.ones(3, 2, 4), td.ones(4, 5)
    got = vmap(td.matmul, in_dims=(0, None))(a, b)
    assert tuple(got.shape) == (3, 2, 5) and vmap_fallback_counts() == {}


@pytest.mark.parametrize(
    "fn",
    [
        lambda r: r.unsqueeze_(0) * 1,
        lambda r: r.transpose_(0, 1) + 0,
        lambda r: r.t_() + 0,
        lambda r: r[:1].squeeze_(0) + 0,
    ],
    ids=["unsqueeze_", "transpose_", "t_", "squeeze_"],
)
def test_inplace_view_changes_the_batched_tensor(fn: object) -> None:
    a = np.arange(24.0).reshape(2, 3, 4)
    got = vmap(fn)(td.from_numpy(a.copy()))
    ref = tf.vmap(fn)(torch.from_numpy(a.copy()))
    assert tuple(got.shape) == tuple(ref.shape)
    np.testing.assert_array_equal(got.numpy(), ref.numpy())
    assert vmap_fallback_counts() == {}


@pytest.mark.parametrize("in_dim", [1, 2, -1])
@pytest.mark.parametrize(
    ("label", "shape", "fn"),
    [
        ("unsqueeze_(0)", (2, 3, 4), lambda r: r.unsqueeze_(0)),
        ("unsqueeze_(1)", (2, 3, 4), lambda r: r.unsqueeze_(1)),
        ("unsqueeze_(-1)", (2, 3, 4), lambda r: r.unsqueeze_(-1)),
        ("transpose_(0, 1)", (2, 3, 4), lambda r: r.transpose_(0, 1)),
        ("t_()", (2, 3, 4), lambda r: r.t_()),
        ("squeeze_(-1)", (2, 1, 3, 1), lambda r: r.squeeze_(-1)),
        ("squeeze_(0)", (1, 2, 3, 4), lambda r: r.squeeze_(0)),
    ],
)
def test_inplace_view_with_in_dim_changes_the_callers_tensor_as_torch(
    label: str, shape: tuple[int, ...], fn: object, in_dim: int
) -> None:
    a = np.arange(float(np.prod(shape))).reshape(shape)
    if a.shape[in_dim] == 1:  # a batch of one: torch's squeeze_() quirks are not the point
        a = np.concatenate([a, a + 100], axis=in_dim)
    ours, theirs = td.from_numpy(a.copy()), torch.from_numpy(a.copy())
    got = vmap(fn, in_dims=in_dim)(ours)
    ref = tf.vmap(fn, in_dims=in_dim)(theirs)
    assert tuple(got.shape) == tuple(ref.shape), label
    np.testing.assert_array_equal(got.numpy(), ref.numpy())
    assert tuple(ours.shape) == tuple(theirs.shape), f"{label}: the caller's tensor"
    assert ours.stride() == theirs.stride(), f"{label}: the caller's tensor"
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_flatten_of_a_scalar_sample_is_one_dim() -> None:
    got = vmap(lambda r: r.sum().flatten())(td.ones(3, 2))
    ref = tf.vmap(lambda r: r.sum().flatten())(torch.ones(3, 2))
    assert tuple(got.shape) == tuple(ref.shape) == (3, 1)
