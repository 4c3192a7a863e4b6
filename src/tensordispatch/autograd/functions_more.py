"""The backward helpers of the pointwise, trace and cumprod formulas added in session 8
(torch's FunctionsManual names), written with aten operators so they are differentiable.

Owns isfinite (nan_to_num's formula), atan2_backward, trace_backward, cumprod_backward
(exact with zeros in the input) and deg2rad / rad2deg_backward; the older helpers are in
functions_manual.py and functions_nn.py. Must not build graphs or know about the engine.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from tensordispatch.autograd.formulas import register_helpers
from tensordispatch.backends.aten import op
from tensordispatch.tensor import Tensor

__all__ = [
    "atan2_backward",
    "cumprod_backward",
    "deg2rad_backward",
    "isfinite",
    "rad2deg_backward",
    "trace_backward",
]


def isfinite(x: Tensor) -> Tensor:  # at::isfinite in nan_to_num's formula
    return op("isfinite")(x)  # type: ignore[no-any-return]


def atan2_backward(
    grad: Tensor, self: Tensor, other: Tensor, grad_input_mask: Sequence[bool]
) -> tuple[Tensor | None, Tensor | None]:
    """d atan2(y, x) = (x dy - y dx) / (x^2 + y^2)."""
    scale = (self * self + other * other).reciprocal()
    return (
        grad * other * scale if grad_input_mask[0] else None,
        grad * -self * scale if grad_input_mask[1] else None,
    )


def trace_backward(grad: Tensor, sizes: Any) -> Tensor:
    """The gradient of trace: ``grad`` on the main diagonal of a ``sizes`` matrix."""
    rows, cols = (int(s) for s in sizes)
    return op("eye.m")(rows, cols, dtype=grad.dtype, device=grad.device) * grad  # type: ignore[no-any-return]


def cumprod_backward(grad: Tensor, input: Tensor, dim: int, output: Tensor) -> Tensor:
    """The gradient of cumprod along ``dim``, exact with zeros in ``input`` (no division):
    d out_j / d x_k = prod(x_i, i < k) * prod(x_i, k < i <= j) for j >= k. Along the dim
    (length n) the second factor is the running product of a (n, n) matrix holding x_i
    strictly right of the diagonal and 1 elsewhere, so memory is O(n^2) per slice; it is
    written with operators, so it is differentiable itself. Complex inputs use conj(x)
    (the gradient of a holomorphic function)."""
    if input.dim() == 0 or input.numel() == 0:
        return grad.clone() if input.dim() == 0 else op("zeros_like")(input)  # type: ignore[no-any-return]
    x = input.conj() if input.dtype.is_complex else input
    x, g = x.movedim(dim, -1), grad.movedim(dim, -1)
    n = x.shape[-1]
    first = op("ones_like")(op("slice.Tensor")(x, -1, 0, 1))
    before = op("cat")([first, op("slice.Tensor")(x, -1, 0, n - 1).cumprod(-1)], -1)
    square = op("ones")([n, n], dtype=_dt_bool(), device=x.device)
    right = op("triu")(square, 1)  # [k, i]: i > k
    running = op("where.self")(right, x.unsqueeze(-2), op("ones_like")(x).unsqueeze(-2))
    products = running.cumprod(-1)
    after = op("where.self")(op("triu")(square, 0), products, op("zeros_like")(products))
    inner = (after * g.unsqueeze(-2)).sum(-1)
    return (before * inner).movedim(-1, dim)  # type: ignore[no-any-return]


def _dt_bool() -> Any:
    from tensordispatch.tensor.dtypes import bool as bool_

    return bool_


def deg2rad_backward(grad: Tensor) -> Tensor:
    return grad * (math.pi / 180)


def rad2deg_backward(grad: Tensor) -> Tensor:
    return grad * (180 / math.pi)


register_helpers(globals())  # last: HELPERS gets every helper above (formulas.py)
