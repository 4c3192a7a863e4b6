"""grad, grad_and_value, vjp, jacrev and their nesting with vmap, against torch.func."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import torch.func as tf

import tensordispatch as td
from tensordispatch.transforms.vmap import grad, grad_and_value, jacrev, vjp, vmap

RNG = np.random.default_rng(7)


def pair(*shape: int) -> tuple[Any, torch.Tensor]:
    a = RNG.standard_normal(shape).astype(np.float32)
    return td.from_numpy(a.copy()), torch.from_numpy(a.copy())


def close(ours: Any, ref: torch.Tensor, tol: float = 1e-5) -> None:
    assert tuple(ours.shape) == tuple(ref.shape)
    np.testing.assert_allclose(np.asarray(ours.numpy()), ref.detach().numpy(), rtol=tol, atol=tol)


def mlp_loss(lib: Any) -> Any:
    def loss(w1: Any, b1: Any, w2: Any, b2: Any, x: Any, y: Any) -> Any:
        h = lib.tanh(x @ w1 + b1)
        out = h @ w2 + b2
        return ((out - y) ** 2).mean()

    return loss


def test_per_sample_mlp_gradients_equal_torch_func() -> None:
    (w1, tw1), (b1, tb1) = pair(4, 8), pair(8)
    (w2, tw2), (b2, tb2) = pair(8, 3), pair(3)
    (x, tx), (y, ty) = pair(16, 4), pair(16, 3)
    dims = (None, None, None, None, 0, 0)
    ours = vmap(grad(mlp_loss(td), argnums=(0, 1, 2, 3)), in_dims=dims)(w1, b1, w2, b2, x, y)
    ref = tf.vmap(tf.grad(mlp_loss(torch), argnums=(0, 1, 2, 3)), in_dims=dims)(
        tw1, tb1, tw2, tb2, tx, ty
    )
    for o, r in zip(ours, ref, strict=True):
        close(o, r)


def test_grad_of_vmapped_function() -> None:
    (w, tw), (x, tx) = pair(3), pair(5, 3)
    ours = grad(lambda w: vmap(lambda r: (w * r).sum().sin())(x).sum())(w)
    ref = tf.grad(lambda w: tf.vmap(lambda r: (w * r).sum().sin())(tx).sum())(tw)
    close(ours, ref)


def test_second_order_grad() -> None:
    x, tx = pair(4)
    ours = grad(lambda x: grad(lambda y: (y.sin() * y).sum())(x).sum())(x)
    ref = tf.grad(lambda x: tf.grad(lambda y: (y.sin() * y).sum())(x).sum())(tx)
    close(ours, ref)


def test_inner_grad_does_not_confuse_outer_input() -> None:
    x, tx = pair()
    ours = grad(lambda x: grad(lambda y: x * y)(x))(x)
    ref = tf.grad(lambda x: tf.grad(lambda y: x * y)(x))(tx)
    close(ours, ref)


def test_vmap_of_vmap_of_grad() -> None:
    x, tx = pair(2, 3, 4)
    ours = vmap(vmap(grad(lambda r: (r.exp() * r).sum())))(x)
    ref = tf.vmap(tf.vmap(tf.grad(lambda r: (r.exp() * r).sum())))(tx)
    close(ours, ref)


def test_grad_and_value_with_aux() -> None:
    x, tx = pair(3)
    (g, (v, a)) = grad_and_value(lambda x: ((x * x).sum(), x.cos()), has_aux=True)(x)
    (tg, (tv, ta)) = tf.grad_and_value(lambda x: ((x * x).sum(), x.cos()), has_aux=True)(tx)
    close(g, tg), close(v, tv), close(a, ta)
    assert v.grad_fn is None and g.grad_fn is None


def test_vjp_matches_torch() -> None:
    (x, tx), (c, tc) = pair(2, 3), pair(2, 3)
    out, fn = vjp(lambda x: x.tanh() * x, x)
    tout, tfn = tf.vjp(lambda x: x.tanh() * x, tx)
    close(out, tout)
    close(fn(c)[0], tfn(tc)[0])


def test_jacrev_matches_torch() -> None:
    x, tx = pair(3)
    close(jacrev(lambda x: x.sin() * x.sum())(x), tf.jacrev(lambda x: x.sin() * x.sum())(tx))


def test_jacrev_two_argnums() -> None:
    (a, ta), (b, tb) = pair(2), pair(2)
    ours = jacrev(lambda a, b: a * b.exp(), argnums=(0, 1))(a, b)
    ref = tf.jacrev(lambda a, b: a * b.exp(), argnums=(0, 1))(ta, tb)
    for o, r in zip(ours, ref, strict=True):
        close(o, r)


def test_grad_of_unused_input_is_zero() -> None:
    (a, ta), (b, tb) = pair(2), pair(2)
    ours = grad(lambda a, b: a.sum(), argnums=1)(a, b)
    ref = tf.grad(lambda a, b: a.sum(), argnums=1)(ta, tb)
    close(ours, ref)


def _message(fn: Any) -> tuple[type, str]:
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


def test_error_non_scalar_output() -> None:
    x, tx = pair(2, 2)
    ours = _message(lambda: grad(lambda x: x)(x))
    assert ours == _message(lambda: tf.grad(lambda x: x)(tx))
    assert ours[1] == (
        "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
        "with 2 dims. Maybe you wanted to use the vjp or jacrev APIs instead?"
    )


def test_error_non_tensor_output() -> None:
    x, tx = pair(2)
    ours = _message(lambda: grad(lambda x: 3.0)(x))
    assert ours == _message(lambda: tf.grad(lambda x: 3.0)(tx))
    assert ours[1] == (
        "grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got <class 'float'>"
    )


def test_error_non_tensor_input() -> None:
    ours = _message(lambda: grad(lambda x: x)(1.0))
    assert ours == _message(lambda: tf.grad(lambda x: x)(1.0))
    assert ours[1] == "Thing passed to transform API must be Tensor, got <class 'float'>"


def test_error_bad_argnums() -> None:
    x, tx = pair(2)
    ours = _message(lambda: grad(lambda x: x.sum(), argnums=2)(x))
    assert ours == _message(lambda: tf.grad(lambda x: x.sum(), argnums=2)(tx))
    assert ours[1] == "Got argnum=2, but only 1 positional inputs"
    ours = _message(lambda: grad(lambda x: x.sum(), argnums=())(x))
    assert ours == _message(lambda: tf.grad(lambda x: x.sum(), argnums=())(tx))
    assert ours[1] == "argnums must be non-empty"


def test_error_aux_not_tensor() -> None:
    x, tx = pair(2)
    ours = _message(lambda: grad(lambda x: (x.sum(), 1), has_aux=True)(x))
    assert ours == _message(lambda: tf.grad(lambda x: (x.sum(), 1), has_aux=True)(tx))
    assert ours[1] == "Expected tensors, got unsupported type <class 'int'>"


def test_per_sample_classifier_gradients_with_layer_norm_and_cross_entropy() -> None:
    from tensordispatch.transforms.vmap import reset_vmap_fallback_counts, vmap_fallback_counts

    (w1, tw1), (w2, tw2) = pair(5, 6), pair(6, 3)
    (x, tx) = pair(8, 2, 5)
    labels = np.array([[0, 2], [1, 1], [2, 0], [0, 0], [1, 2], [2, 2], [0, 1], [1, 0]])
    y, ty = td.from_numpy(labels.copy()), torch.from_numpy(labels.copy())

    def loss(lib: Any, ce: Any) -> Any:
        def f(w1: Any, w2: Any, x: Any, y: Any) -> Any:
            h = lib.layer_norm((x @ w1).relu(), [6])
            return ce(h @ w2, y)

        return f

    reset_vmap_fallback_counts()
    dims = (None, None, 0, 0)
    ours = vmap(grad(loss(td, td.ops.aten.cross_entropy_loss.default), (0, 1)), in_dims=dims)(
        w1, w2, x, y
    )
    f = torch.nn.functional
    ref = tf.vmap(tf.grad(loss(f, f.cross_entropy), (0, 1)), in_dims=dims)(tw1, tw2, tx, ty)
    for o, r in zip(ours, ref, strict=True):
        close(o, r, tol=1e-4)
    assert vmap_fallback_counts() == {}


def test_backward_through_a_vmapped_function() -> None:
    (w, tw), (x, tx) = pair(3), pair(4, 3)
    w.requires_grad_(), tw.requires_grad_()
    vmap(lambda r: (w * r).sin().sum())(x).sum().backward()
    tf.vmap(lambda r: (tw * r).sin().sum())(tx).sum().backward()
    close(w.grad, tw.grad)
