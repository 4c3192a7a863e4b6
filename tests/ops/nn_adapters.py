"""torch.nn.functional-style callables over our aten operators, for torch's OpInfo samples.

An OpInfo calls `op(*sample.args, **sample.kwargs)` with nn.functional's signature; these
adapters take that signature and call the aten operator torch's Python function lowers to.
Shared by the forward conformance (tests/ops) and the gradient conformance (tests/autograd).
"""

from __future__ import annotations

from typing import Any

import tensordispatch as td

A = td.ops.aten
REDUCTION = {"none": 0, "mean": 1, "sum": 2}


def nll_loss(input: Any, target: Any, weight: Any = None, ignore_index: int = -100,
             reduction: str = "mean") -> Any:  # fmt: skip
    return A.nll_loss_nd(input, target, weight, REDUCTION[reduction], ignore_index)


def cross_entropy(input: Any, target: Any, weight: Any = None, ignore_index: int = -100,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Any:  # fmt: skip
    return A.cross_entropy_loss(
        input, target, weight, REDUCTION[reduction], ignore_index, label_smoothing
    )


def layer_norm(input: Any, normalized_shape: Any, weight: Any = None, bias: Any = None,
               eps: float = 1e-5) -> Any:  # fmt: skip
    return A.layer_norm(input, list(normalized_shape), weight, bias, eps)


def embedding(weight: Any, input: Any, padding_idx: Any = None, max_norm: Any = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Any:  # fmt: skip
    # the OpInfo's op is (weight, indices) -> F.embedding(indices, weight)
    if max_norm is not None:  # torch renormalises the weight's rows in place, without grad
        with td.no_grad():
            A.embedding_renorm_(weight.detach(), input.contiguous(), max_norm, norm_type)
    return A.embedding(weight, input, -1 if padding_idx is None else padding_idx,
                       scale_grad_by_freq)  # fmt: skip
