"""Batching rules for as_strided and index_put: against torch.func.vmap (as_strided, whose
per-sample offsets follow the batch stride) and against a torch loop over the batch
(index_put, every placement of batched/unbatched self, indices and values), no fallback."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import torch
import torch.func as tf

import tensordispatch as td
from tensordispatch.transforms.vmap import reset_vmap_fallback_counts, vmap, vmap_fallback_counts

RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def _fresh_counts() -> Iterator[None]:
    reset_vmap_fallback_counts()
    yield
    reset_vmap_fallback_counts()


def _f32(*shape: int) -> np.ndarray[Any, Any]:
    return RNG.standard_normal(shape).astype(np.float32)


def _set_cols(s: Any, i: Any, v: Any) -> Any:
    c = s.clone()
    c[:, i] = v
    return c


def _set_separated(s: Any, i: Any, j: Any, v: Any) -> Any:
    c = s.clone()
    c[i, :, j] = v
    return c


def _put(s: Any, i: Any, v: Any) -> Any:
    return s.index_put((i,), v)


def _put_two(s: Any, i: Any, j: Any, v: Any) -> Any:
    return s.index_put((i, j), v, accumulate=True)


INDEX_CASES: list[tuple[str, Callable[..., Any], tuple[Any, ...], list[Any]]] = [
    ("batched self", _put, (0, None, None), [_f32(3, 4, 5), np.array([0, 2]), _f32(2, 5)]),
    ("all batched, slice first", _set_cols, (0, 0, 0), [_f32(3, 4, 5), np.array([[0, 2], [1, 1], [4, 3]]), _f32(3, 4, 2)]),
    ("two indices, accumulate", _put_two, (0, 0, None, 0), [_f32(3, 4, 5), np.array([[0, 2], [1, 1], [3, 3]]), np.array([4, 0]), _f32(3, 2)]),
    ("separated indices", _set_separated, (0, 0, None, 0), [_f32(3, 4, 3, 4), np.array([[0, 2], [1, 1], [3, 3]]), np.array([1, 0]), _f32(3, 2, 3)]),
    ("unbatched self", _put, (None, 0, 0), [_f32(4, 5), np.array([[0, 2], [1, 1], [3, 3]]), _f32(3, 2, 5)]),
    ("batched values only", _put, (None, None, 1), [_f32(4, 5), np.array([1, 3]), _f32(5, 3)]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("label", "fn", "dims", "arrays"), INDEX_CASES, ids=[c[0] for c in INDEX_CASES]
)
def test_index_put_matches_a_torch_loop_without_fallback(
    label: str, fn: Callable[..., Any], dims: tuple[Any, ...], arrays: list[Any]
) -> None:
    theirs = [torch.from_numpy(a.copy()) for a in arrays]
    size = next(t.shape[d] for t, d in zip(theirs, dims, strict=True) if d is not None)
    ref = torch.stack(
        [
            fn(*[t if d is None else t.select(d, k) for t, d in zip(theirs, dims, strict=True)])
            for k in range(size)
        ]
    )
    got = vmap(fn, in_dims=dims)(*[td.from_numpy(a.copy()) for a in arrays])
    assert tuple(got.shape) == tuple(ref.shape), label
    np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-6)
    assert vmap_fallback_counts() == {}


def test_index_put_in_place_writes_the_callers_tensor_as_torch() -> None:
    x, i, v = _f32(3, 4, 5), np.array([0, 2]), _f32(4, 5)

    def fn(s: Any, idx: Any, val: Any) -> Any:
        return s.index_put_((idx,), val)

    ours = [td.from_numpy(a.copy()) for a in (x, i, v)]
    theirs = [torch.from_numpy(a.copy()) for a in (x, i, v)]
    got = vmap(fn, in_dims=(1, None, 0))(*ours)
    ref = tf.vmap(fn, in_dims=(1, None, 0))(*theirs)
    np.testing.assert_array_equal(got.numpy(), ref.numpy())
    np.testing.assert_array_equal(ours[0].numpy(), theirs[0].numpy())
    assert vmap_fallback_counts() == {}


def test_index_put_in_place_on_unbatched_self_is_refused() -> None:
    with pytest.raises(RuntimeError) as info:
        vmap(lambda s, v: s.index_put_((td.tensor([0]),), v), in_dims=(None, 0))(
            td.ones(4, 5), td.ones(3, 5)
        )
    assert str(info.value).startswith(
        "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a "
        "Tensor `other` in extra_args that has more elements than `self`."
    )


def test_index_put_with_a_mask_loops() -> None:
    mask = np.array([True, False, True, False])
    fn = _put
    arrays = [_f32(3, 4), mask, _f32(3, 2)]
    with pytest.warns(UserWarning, match="performance drop"):
        got = vmap(fn, in_dims=(0, None, 0))(*[td.from_numpy(a.copy()) for a in arrays])
    ref = tf.vmap(fn, in_dims=(0, None, 0))(*[torch.from_numpy(a.copy()) for a in arrays])
    np.testing.assert_array_equal(got.numpy(), ref.numpy())


AS_STRIDED = [
    ("(2, 2), (1, 2), 0", (3, 20), 0, ((2, 2), (1, 2), 0)),
    ("offset 1, in_dim 1", (3, 4), 1, ((2,), (1,), 1)),
    ("no offset", (2, 6), 0, ((3, 2), (2, 1))),
]


@pytest.mark.parametrize(("label", "shape", "in_dim", "args"), AS_STRIDED)
def test_as_strided_matches_torch_func(
    label: str, shape: tuple[int, ...], in_dim: int, args: tuple[Any, ...]
) -> None:
    a = np.arange(float(np.prod(shape))).reshape(shape)
    got = vmap(lambda r: r.as_strided(*args), in_dims=in_dim)(td.from_numpy(a.copy()))
    ref = tf.vmap(lambda r: r.as_strided(*args), in_dims=in_dim)(torch.from_numpy(a.copy()))
    assert tuple(got.shape) == tuple(ref.shape), label
    np.testing.assert_array_equal(got.numpy(), ref.numpy())
    assert vmap_fallback_counts() == {}


def test_as_strided_outside_the_sample_is_refused_as_torch() -> None:
    def fn(r: Any) -> Any:
        return r.as_strided((2,), (1,), 1)

    with pytest.raises(RuntimeError) as theirs:
        tf.vmap(fn)(torch.arange(24.0).view(2, 3, 4)[:, 1])
    with pytest.raises(RuntimeError) as ours:
        vmap(fn)(td.arange(24.0).view(2, 3, 4)[:, 1])
    assert (
        str(ours.value)
        == str(theirs.value)
        == (
            "result = tensor.as_strided([2], [1], 1) can access memory outside of `tensor`. "
            "`result` can access some memory in range [1, 3], but `tensor` can only access some "
            "memory in range [4, 8]. This is not supported inside of vmap, please try to rewrite "
            "the `as_strided` call as a sequence of PyTorch view operations"
        )
    )


def test_index_put_with_a_batched_mask_is_refused_as_torch() -> None:
    def fn(s: Any, m: Any, v: Any) -> Any:
        return s.index_put((m,), v)

    mask = np.array([[True, False], [False, True], [True, True]])
    arrays = [_f32(3, 2), mask, np.float32(1.0) * np.ones((), np.float32)]
    with pytest.raises(RuntimeError) as theirs:
        tf.vmap(fn, in_dims=(0, 0, None))(*[torch.from_numpy(np.array(a)) for a in arrays])
    with pytest.raises(RuntimeError) as ours:
        vmap(fn, in_dims=(0, 0, None))(*[td.from_numpy(np.array(a)) for a in arrays])
    assert (
        str(ours.value)
        == str(theirs.value)
        == (
            "vmap: We do not support batching operators that can support dynamic shape. "
            "Attempting to batch over indexing with a boolean mask."
        )
    )


@pytest.mark.parametrize("reduction", [0, 1, 2], ids=["none", "mean", "sum"])
@pytest.mark.parametrize("dims", [(0, 0, None), (0, None, None), (None, 0, None), (1, 0, None)])
def test_nll_loss2d_forward_matches_torch_func_without_fallback(
    reduction: int, dims: tuple[Any, ...]
) -> None:
    batch = 3
    x = _f32(2, 3, 4, 2, 2) if dims[0] == 1 else _f32(batch, 2, 4, 2, 2)
    if dims[0] is None:
        x = x[0]
    t = RNG.integers(0, 4, (batch, 2, 2, 2))
    t[0, 0, 0, 0] = -100  # one ignored position
    if dims[1] is None:
        t = t[0]
    w = np.abs(_f32(4)) + 0.5  # an unbatched class weight

    def call(lib: Any, a: Any, b: Any, c: Any) -> Any:
        return lib.ops.aten.nll_loss2d_forward(a, b, c, reduction, -100)

    got = vmap(lambda a, b, c: call(td, a, b, c), in_dims=dims)(
        *[td.from_numpy(np.array(v)) for v in (x, t, w)]
    )
    ref = tf.vmap(lambda a, b, c: call(torch, a, b, c), in_dims=dims)(
        *[torch.from_numpy(np.array(v)) for v in (x, t, w)]
    )
    for o, r in zip(got, ref, strict=True):
        assert tuple(o.shape) == tuple(r.shape)
        np.testing.assert_allclose(o.numpy(), r.numpy(), rtol=1e-5, atol=1e-6)
    assert vmap_fallback_counts() == {}
