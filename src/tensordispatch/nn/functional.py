"""Functional forms of the nn layers (torch.nn.functional's names)."""

from __future__ import annotations

from typing import Any

import tensordispatch.autograd  # noqa: F401 - autograd kernels
from tensordispatch.backends.aten import op
from tensordispatch.generated.nn_functions import gelu, one_hot
from tensordispatch.tensor import Tensor

__all__ = ["cross_entropy", "gelu", "layer_norm", "linear", "one_hot", "relu", "silu"]

_addmm = op("addmm")
_matmul = op("matmul")
_relu = op("relu")
_silu = op("silu")
_silu_ = op("silu_")
_layer_norm = op("layer_norm")
_cross_entropy_loss = op("cross_entropy_loss")


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


_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    ignore_index: int = -100,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Cross entropy of logits ``input`` (N, C) and class indices ``target`` (N): torch's
    ``cross_entropy_loss`` (log_softmax, then nll_loss; grad_fn NllLossBackward0).

    >>> import tensordispatch as td
    >>> cross_entropy(td.tensor([[0.0, 0.0]]), td.tensor([1]))
    tensor(0.6931)
    """
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    result: Tensor = _cross_entropy_loss(
        input, target, weight, _REDUCTIONS[reduction], ignore_index, label_smoothing
    )
    return result


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x) (torch.nn.functional.silu, over silu / silu_).

    >>> import tensordispatch as td
    >>> silu(td.tensor([0.0, 1.0]))
    tensor([0.0000, 0.7311])
    """
    result: Tensor = _silu_(input) if inplace else _silu(input)
    return result


def layer_norm(
    input: Tensor,
    normalized_shape: Any,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize over the trailing ``normalized_shape`` dims (aten layer_norm).

    >>> import tensordispatch as td
    >>> layer_norm(td.tensor([[1.0, 3.0]]), [2])
    tensor([[-1.0000,  1.0000]])
    """
    result: Tensor = _layer_norm(input, list(normalized_shape), weight, bias, eps)
    return result
