"""vmap's front end: pytrees, in_dims/out_dims, nesting, chunks, randomness, BatchedTensor,
and torch's error messages (golden, checked against torch.func.vmap's own)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import torch.func as tf

import tensordispatch as td
from tensordispatch.transforms.vmap import BatchedTensor, vmap

A = np.arange(12, dtype=np.float32).reshape(3, 4) / 7.0


def x_pair() -> tuple[Any, torch.Tensor]:
    return td.from_numpy(A.copy()), torch.from_numpy(A.copy())


def same(ours: Any, ref: torch.Tensor) -> None:
    assert tuple(ours.shape) == tuple(ref.shape)
    np.testing.assert_allclose(np.asarray(ours.numpy()), ref.numpy(), rtol=1e-6, atol=1e-6)


def both_raise(ours: Any, theirs: Any) -> str:
    with pytest.raises(Exception) as mine:
        ours()
    with pytest.raises(Exception) as ref:
        theirs()
    assert type(mine.value) is type(ref.value)
    assert str(mine.value) == str(ref.value)
    return str(mine.value)


def test_in_dims_per_argument_and_none() -> None:
    (x, tx) = x_pair()
    v, tv = td.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0, 3.0])
    same(vmap(td.mul, in_dims=(1, None))(x, v), tf.vmap(torch.mul, in_dims=(1, None))(tx, tv))


def test_negative_in_dim() -> None:
    x, tx = x_pair()
    same(vmap(lambda r: r * 2, in_dims=-1)(x), tf.vmap(lambda r: r * 2, in_dims=-1)(tx))


def test_dict_input_with_nested_in_dims() -> None:
    x, tx = x_pair()
    f = lambda d: d["a"] + d["b"]
    ours = vmap(f, in_dims=({"a": 0, "b": 1},))({"a": x, "b": x.t()})
    same(ours, tf.vmap(f, in_dims=({"a": 0, "b": 1},))({"a": tx, "b": tx.t()}))


def test_tuple_output_with_out_dims() -> None:
    x, tx = x_pair()
    f = lambda r: (r.sin(), r.sum())
    ours = vmap(f, out_dims=(1, 0))(x)
    ref = tf.vmap(f, out_dims=(1, 0))(tx)
    same(ours[0], ref[0]), same(ours[1], ref[1])


def test_out_dims_none_passes_non_tensors_through() -> None:
    x, _ = x_pair()
    out = vmap(lambda r: (r, None), out_dims=(0, None))(x)
    assert out[1] is None


def test_unbatched_output_is_expanded() -> None:
    x, tx = x_pair()
    same(vmap(lambda r: td.ones(2))(x), tf.vmap(lambda r: torch.ones(2))(tx))


def test_keyword_arguments_are_not_mapped() -> None:
    x, tx = x_pair()
    same(vmap(lambda r, *, k: r * k)(x, k=3), tf.vmap(lambda r, *, k: r * k)(tx, k=3))


def test_nested_vmap() -> None:
    x, tx = x_pair()
    f = lambda a, b: a * b
    v, tv = td.tensor([1.0, 2.0, 3.0, 4.0]), torch.tensor([1.0, 2.0, 3.0, 4.0])
    same(
        vmap(vmap(f, in_dims=(0, None)), in_dims=(None, 0))(v, x.t()),
        tf.vmap(tf.vmap(f, in_dims=(0, None)), in_dims=(None, 0))(tv, tx.t()),
    )


def test_nested_levels_are_seen_by_the_function() -> None:
    levels = []

    def inner(r: Any) -> Any:
        levels.append((r.level, r.value.level))
        return r

    vmap(vmap(inner))(td.ones(2, 3))
    assert levels == [(2, 1)]


def test_chunk_size_gives_the_same_result() -> None:
    x, _ = x_pair()
    whole = vmap(lambda r: r.exp().sum())(x)
    chunked = vmap(lambda r: r.exp().sum(), chunk_size=2)(x)
    np.testing.assert_allclose(whole.numpy(), chunked.numpy())


def test_batched_tensor_repr_matches_torch() -> None:
    seen: list[str] = []
    vmap(lambda r: seen.append(repr(r)) or r)(td.tensor([[1.0, 2.0], [3.0, 4.0]]))
    ref: list[str] = []
    tf.vmap(lambda r: ref.append(repr(r)) or r)(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert seen == ref


def test_logical_shape_hides_the_batch_dim() -> None:
    shapes = []
    vmap(lambda r: shapes.append((type(r), tuple(r.shape), r.dim())) or r, in_dims=1)(td.ones(2, 5))
    assert shapes == [(BatchedTensor, (2,), 1)]


def test_randomness_same_and_different() -> None:
    x = td.zeros(4, 3)
    same_rows = vmap(lambda r: r + td.rand(3), randomness="same")(x)
    diff_rows = vmap(lambda r: r + td.rand(3), randomness="different")(x)
    assert np.allclose(same_rows.numpy(), same_rows.numpy()[0])
    assert not np.allclose(diff_rows.numpy(), diff_rows.numpy()[0])


def test_randomness_like_op_and_inplace() -> None:
    x = td.zeros(4, 3)
    diff = vmap(lambda r: td.rand_like(r), randomness="different")(x)
    assert not np.allclose(diff.numpy(), diff.numpy()[0])
    filled = vmap(lambda r: r.uniform_(), randomness="same")(x.clone())
    assert np.allclose(filled.numpy(), filled.numpy()[0])


# -- errors: same type and text as torch.func.vmap ---------------------------------------------


def test_error_random_in_error_mode() -> None:
    x, tx = x_pair()
    msg = both_raise(
        lambda: vmap(lambda r: td.rand(2))(x), lambda: tf.vmap(lambda r: torch.rand(2))(tx)
    )
    assert msg == (
        "vmap: called random operation while in randomness error mode. Please either use the "
        "'same' or 'different' randomness flags on vmap or perform the randomness operation "
        "out of vmap"
    )


def test_error_in_dim_out_of_range() -> None:
    x, tx = x_pair()
    msg = both_raise(lambda: vmap(td.sin, in_dims=2)(x), lambda: tf.vmap(torch.sin, in_dims=2)(tx))
    assert msg == (
        "vmap(sin, in_dims=2, ...)(<inputs>): Got in_dim=2 for some input, but that input is a "
        "Tensor of dimensionality 2 so expected in_dim to satisfy -2 <= in_dim < 2."
    )


def test_error_in_dims_structure() -> None:
    x, tx = x_pair()
    msg = both_raise(
        lambda: vmap(td.sin, in_dims=(0, 1))(x), lambda: tf.vmap(torch.sin, in_dims=(0, 1))(tx)
    )
    assert msg == (
        "vmap(sin, in_dims=(0, 1), ...)(<inputs>): in_dims is not compatible with the structure "
        "of `inputs`. in_dims has structure TreeSpec(tuple, None, [*,\n  *]) but inputs has "
        "structure TreeSpec(tuple, None, [*])."
    )


def test_error_in_dims_type() -> None:
    x, tx = x_pair()
    msg = both_raise(
        lambda: vmap(td.sin, in_dims=[0])(x), lambda: tf.vmap(torch.sin, in_dims=[0])(tx)
    )
    assert msg == (
        "vmap(sin, in_dims=[0], ...)(<inputs>): expected `in_dims` to be int or a (potentially "
        "nested) tuple matching the structure of inputs, got: <class 'list'>."
    )


def test_error_in_dim_leaf_type() -> None:
    x, tx = x_pair()
    msg = both_raise(
        lambda: vmap(lambda r: r, in_dims=(0.5,))(x),
        lambda: tf.vmap(lambda r: r, in_dims=(0.5,))(tx),
    )
    assert msg == (
        "vmap(<lambda>, in_dims=(0.5,), ...)(<inputs>): Got in_dim=0.5 for an input but in_dim "
        "must be either an integer dimension or None."
    )


def test_error_no_tensor_to_map() -> None:
    x, tx = x_pair()
    msg = both_raise(
        lambda: vmap(td.sin, in_dims=(None,))(x), lambda: tf.vmap(torch.sin, in_dims=(None,))(tx)
    )
    assert msg == "vmap: Expected at least one Tensor to vmap over"


def test_error_batch_sizes_differ() -> None:
    x, tx = x_pair()
    msg = both_raise(
        lambda: vmap(td.add)(x, td.ones(4, 4)), lambda: tf.vmap(torch.add)(tx, torch.ones(4, 4))
    )
    assert msg == (
        "vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
        "[3, 4] for the mapped dimension"
    )


def test_error_non_tensor_mapped_input() -> None:
    msg = both_raise(lambda: vmap(lambda r: r)(1.0), lambda: tf.vmap(lambda r: r)(1.0))
    assert msg == (
        "vmap(<lambda>, in_dims=0, ...)(<inputs>): Got in_dim=0 for an input but the input is "
        "of type <class 'float'>. We cannot vmap over non-Tensor arguments, please use None as "
        "the respective in_dim"
    )


def test_error_no_inputs() -> None:
    msg = both_raise(lambda: vmap(lambda: 1)(), lambda: tf.vmap(lambda: 1)())
    assert msg == (
        "vmap(<lambda>)(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
        "trying to vmap over a function with no inputs. The latter is unsupported."
    )


def test_error_non_tensor_output() -> None:
    x, tx = x_pair()
    msg = both_raise(lambda: vmap(lambda r: 1.0)(x), lambda: tf.vmap(lambda r: 1.0)(tx))
    assert msg == (
        "vmap(<lambda>, ...): `<lambda>` must only return Tensors, got type <class 'float'>. "
        "Did you mean to set out_dims= to None for output?"
    )


def test_error_batched_output_with_out_dim_none() -> None:
    x, tx = x_pair()
    msg = both_raise(
        lambda: vmap(lambda r: r, out_dims=None)(x), lambda: tf.vmap(lambda r: r, out_dims=None)(tx)
    )
    assert (
        msg == "vmap(<lambda>, ...): `<lambda>` can not return a BatchedTensor when out_dim is None"
    )


def test_error_out_dims_structure() -> None:
    x, tx = x_pair()
    msg = both_raise(
        lambda: vmap(td.sin, out_dims=(0, 1))(x), lambda: tf.vmap(torch.sin, out_dims=(0, 1))(tx)
    )
    assert msg == (
        "vmap(sin, ..., out_dims=(0, 1))(<inputs>): out_dims is not compatible with the "
        "structure of `outputs`. out_dims has structure TreeSpec(tuple, None, [*,\n  *]) but "
        "outputs has structure *."
    )


def test_error_out_dim_out_of_range() -> None:
    x, tx = x_pair()
    msg = both_raise(
        lambda: vmap(td.sin, out_dims=2)(x), lambda: tf.vmap(torch.sin, out_dims=2)(tx)
    )
    assert msg == "Dimension out of range (expected to be in range of [-2, 1], but got 2)"


def test_error_item_inside_vmap() -> None:
    x, tx = x_pair()
    msg = both_raise(lambda: vmap(lambda r: r.item())(x), lambda: tf.vmap(lambda r: r.item())(tx))
    assert msg.startswith("vmap: It looks like you're calling .item() on a Tensor.")


def test_error_chunk_size() -> None:
    msg = both_raise(lambda: vmap(td.sin, chunk_size=0), lambda: tf.vmap(torch.sin, chunk_size=0))
    assert msg == "vmap: chunk_size should be None or greater than 0. (got 0)"


def test_error_randomness_value() -> None:
    msg = both_raise(
        lambda: vmap(td.sin, randomness="foo"), lambda: tf.vmap(torch.sin, randomness="foo")
    )
    assert msg == "Only allowed values for randomness are 'error', 'different', or 'same'. Got foo"


def test_error_data_dependent_control_flow() -> None:
    x, tx = x_pair()
    msg = both_raise(
        lambda: vmap(lambda r: bool(r.sum()))(x), lambda: tf.vmap(lambda r: bool(r.sum()))(tx)
    )
    assert msg == (
        "vmap: It looks like you're attempting to use a Tensor in some data-dependent control "
        "flow. We don't support that yet, please file an issue at "
        "https://github.com/pytorch/pytorch/issues ."
    )


def test_float_of_batched_tensor_is_the_item_error() -> None:
    x, tx = x_pair()
    msg = both_raise(
        lambda: vmap(lambda r: float(r.sum()))(x), lambda: tf.vmap(lambda r: float(r.sum()))(tx)
    )
    assert msg.startswith("vmap: It looks like you're calling .item() on a Tensor.")


def test_numpy_of_batched_tensor_is_refused() -> None:
    with pytest.raises(RuntimeError, match="numpy\\(\\) is not supported on a BatchedTensor"):
        vmap(lambda r: r.numpy())(td.ones(2, 3))


def test_dropout_randomness_same_and_different() -> None:
    x = td.ones(6, 50)
    same_rows = vmap(lambda r: td.dropout(r, 0.5, True), randomness="same")(x)
    diff_rows = vmap(lambda r: td.dropout(r, 0.5, True), randomness="different")(x)
    assert np.array_equal(same_rows.numpy(), np.tile(same_rows.numpy()[0], (6, 1)))
    assert not np.array_equal(diff_rows.numpy(), np.tile(diff_rows.numpy()[0], (6, 1)))
    assert set(np.unique(diff_rows.numpy())) <= {0.0, 2.0}


def test_nested_randomness_levels() -> None:
    x = td.zeros(3, 4)
    inner = vmap(lambda a: a + td.rand(()), randomness="different")
    both = vmap(inner, randomness="different")(x).numpy()
    outer_same = vmap(inner, randomness="same")(x).numpy()
    assert len(np.unique(both)) == 12
    assert np.array_equal(outer_same, np.tile(outer_same[0], (3, 1)))
    assert len(np.unique(outer_same[0])) == 4


def test_nested_randomness_error_at_any_level() -> None:
    inner = vmap(lambda a: a + td.rand(()), randomness="different")
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(inner)(td.zeros(3, 4))
