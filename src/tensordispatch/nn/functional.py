"""Functional forms of the nn layers (torch.nn.functional's names)."""

from __future__ import annotations

from typing import Any

import numpy as np

import tensordispatch.autograd  # noqa: F401 - autograd kernels
from tensordispatch.autograd.function import Function
from tensordispatch.backends.aten import op
from tensordispatch.tensor import Tensor

__all__ = ["cross_entropy", "linear", "relu"]

_addmm = op("addmm")
_matmul = op("matmul")
_relu = op("relu")


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias`` (addmm for 2-D input, as torch).

    >>> import tensordispatch as td
    >>> linear(td.ones(1, 2), td.ones(3, 2), td.zeros(3))
    tensor([[2., 2., 2.]])
    """
    if bias is not None and input.dim() == 2:
        result: Tensor = _addmm(bias, input, weight.t())
        return result
    out: Tensor = _matmul(input, weight.t())
    return out if bias is None else out + bias


def relu(input: Tensor) -> Tensor:
    """max(input, 0).

    >>> import tensordispatch as td
    >>> relu(td.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """
    result: Tensor = _relu(input)
    return result


class _CrossEntropy(Function):
    """Mean of -log_softmax(input)[target] over the batch (class-index targets)."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, target: Tensor) -> Tensor:
        logits = np.asarray(x._data)
        shifted = logits - logits.max(axis=1, keepdims=True)
        lse = np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        log_probs = shifted - lse
        idx = np.asarray(target._data).astype(np.int64)
        n = logits.shape[0]
        loss = -log_probs[np.arange(n), idx].sum(dtype=logits.dtype) / logits.dtype.type(n)
        ctx.log_probs, ctx.idx = log_probs, idx
        return Tensor._wrap_numpy(np.asarray(loss, dtype=logits.dtype), x.dtype)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None]:
        probs = np.exp(ctx.log_probs)
        n = probs.shape[0]
        probs[np.arange(n), ctx.idx] -= 1
        g = probs / probs.dtype.type(n)
        gx = Tensor._wrap_numpy(g.astype(probs.dtype), grad.dtype)
        return gx * grad, None


def cross_entropy(input: Tensor, target: Tensor) -> Tensor:
    """Cross entropy of logits ``input`` (N, C) and class indices ``target`` (N), mean over N.

    >>> import tensordispatch as td
    >>> cross_entropy(td.tensor([[0.0, 0.0]]), td.tensor([1]))
    tensor(0.6931)
    """
    result: Tensor = _CrossEntropy.apply(input, target)
    return result
