"""The backward helpers of the nn operators (torch's FunctionsManual names): layer norm,
nll_loss, convolution, written with aten operators so they are differentiable.

Owns native_layer_norm_backward, nll_loss_backward / nll_loss2d_backward and
convolution_backward (non-transposed). The nll coefficients (a constant: the loss is linear
in its input) are computed with NumPy. Must not build graphs or know about the engine.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

# the module, not its names: when functions_manual is imported first, it is half-defined here
from tensordispatch.autograd import functions_manual as _fm
from tensordispatch.autograd.formulas import numpy_ok, register_helpers
from tensordispatch.ops.deferred import deferred_op as _deferred_op
from tensordispatch.tensor import Tensor

__all__ = ["convolution_backward", "native_layer_norm_backward", "nll_loss_backward"]

_sum_dim = _deferred_op(globals(), "_sum_dim", "sum.dim_IntList")
_conv = _deferred_op(globals(), "_conv", "convolution")
_slice = _deferred_op(globals(), "_slice", "slice.Tensor")
_copy_ = _deferred_op(globals(), "_copy_", "copy_")
_narrow = _deferred_op(globals(), "_narrow", "narrow")
_flip = _deferred_op(globals(), "_flip", "flip")
_cat = _deferred_op(globals(), "_cat", "cat")


def native_layer_norm_backward(
    grad: Tensor | None,
    input: Tensor,
    normalized_shape: Any,
    mean: Tensor,
    rstd: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    grad_input_mask: Sequence[bool],
) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    """Recomputes mean and rstd from ``input`` (eps read back from the saved rstd) so the
    result is differentiable in ``input`` (torch's layer_norm_double_backward)."""
    k = len(normalized_shape)
    axis = input.dim() - k
    norm_dims = list(range(axis, input.dim()))
    lead = list(range(axis))
    mu = _sum_dim(input, norm_dims, True) / max(1, math.prod(normalized_shape))
    centered = input - mu
    var = _sum_dim(centered * centered, norm_dims, True) / max(1, math.prod(normalized_shape))
    eps = _fm._const(1.0 / (rstd._data**2) - var._data, input)
    r = (var + eps).rsqrt()
    x_hat = centered * r
    gi = gw = gb = None
    g = grad if weight is None else grad * weight
    if grad_input_mask[0]:
        n = max(1, math.prod(normalized_shape))
        mean_g = _sum_dim(g, norm_dims, True) / n
        mean_gx = _sum_dim(g * x_hat, norm_dims, True) / n
        gi = r * (g - mean_g - x_hat * mean_gx)
    if weight is not None and grad_input_mask[1]:
        gw = _sum_dim(grad * x_hat, lead, False) if lead else grad * x_hat
    if bias is not None and grad_input_mask[2]:
        gb = _sum_dim(grad, lead, False) if lead else grad
    return gi, gw, gb


def _nll_coefficients(
    self: Tensor, target: Tensor, weight: Tensor | None, reduction: int, ignore_index: int,
    total_weight: Tensor,
) -> Tensor:  # fmt: skip
    """d(loss)/d(self) per element, before the incoming gradient: -w[t] at the target."""
    x = self._data
    plain = _plain_coefficients(x, target._data, weight, reduction, ignore_index, total_weight)
    if plain is not None:
        return Tensor._wrap_numpy(plain, self.dtype)
    axis = 0 if x.ndim == 1 else 1
    t = target._data.astype(np.int64)
    keep = t != ignore_index
    safe = np.where(keep, t, 0)
    w = np.ones(x.shape[axis]) if weight is None else np.asarray(weight._data, np.float64)
    coef = np.zeros(x.shape)
    values = np.where(keep, -w[safe], 0.0)
    if x.ndim == 1:
        coef[safe] = values
    else:
        np.put_along_axis(coef, np.expand_dims(safe, axis), np.expand_dims(values, axis), axis)
    if reduction == 1:
        coef = coef / float(np.asarray(total_weight._data))
    return _fm._const(coef, self)


_UINT64 = np.dtype(np.uint64)
_max_reduce = np.maximum.reduce
# dtypes whose mul kernel computes in the dtype itself (float16 goes through float32)
_EXACT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _plain_coefficients(
    x: Any, t: Any, weight: Any, reduction: int, ignore_index: int, total_weight: Tensor
) -> Any:
    """_nll_coefficients of the common case, (N, C) scores without weights whose targets are
    all in range and none ignored, in x's dtype: -1 (or -1 / total weight, computed in
    float64 as the general path does) at the targets; None when it does not apply."""
    if weight is not None or x.ndim != 2 or t.dtype != np.int64 or t.ndim != 1:
        return None
    n, c = x.shape
    if not n or 0 <= ignore_index < c or _max_reduce(t.view(_UINT64)) >= c:
        return None
    value = -1.0
    if reduction == 1:
        value = value / float(np.asarray(total_weight._data))
    coef = np.zeros(x.shape, x.dtype)
    coef[np.arange(n), t] = value
    return coef


def nll_loss_backward(
    grad: Tensor, self: Tensor, target: Tensor, weight: Tensor | None, reduction: int,
    ignore_index: int, total_weight: Tensor,
) -> Tensor:  # fmt: skip
    if reduction and grad.dtype is self.dtype and numpy_ok(grad, self, target):
        x = self._data
        if x.dtype in _EXACT_DTYPES:
            plain = _plain_coefficients(x, target._data, weight, reduction, ignore_index,
                                        total_weight)  # fmt: skip
            if plain is not None:  # ``grad * coef`` below, the CPU kernel's NumPy call
                r = np.multiply(grad._data, plain)
                return Tensor._wrap_numpy(r if type(r) is np.ndarray else np.asarray(r), self.dtype)
    coef = _nll_coefficients(self, target, weight, reduction, ignore_index, total_weight)
    if reduction == 0 and self.dim() > 1:
        return grad.unsqueeze(1) * coef
    return grad * coef


nll_loss2d_backward = nll_loss_backward


def convolution_backward(
    grad: Tensor, input: Tensor, weight: Tensor, bias_sizes: Any, stride: Any, padding: Any,
    dilation: Any, transposed: bool, output_padding: Any, groups: int,
    grad_input_mask: Sequence[bool],
) -> tuple[Tensor | None, Tensor | None, Tensor | None]:  # fmt: skip
    """Gradients of a (non-transposed) convolution, written as convolutions."""
    if transposed:
        raise RuntimeError(
            "the derivative for 'convolution' with transposed=True is not implemented."
        )
    k = input.dim() - 2
    spatial = list(range(2, 2 + k))
    gi = gw = gb = None
    if bias_sizes is not None and grad_input_mask[2]:
        gb = _sum_dim(grad, [0, *spatial], False)
    if grad_input_mask[0]:
        gi = _conv_input_grad(grad, input, weight, stride, padding, dilation, groups)
    if grad_input_mask[1]:
        gw = _conv_weight_grad(grad, input, weight, stride, padding, dilation, groups)
    return gi, gw, gb


def _conv_input_grad(
    grad: Tensor, input: Tensor, weight: Tensor, stride: Any, padding: Any, dilation: Any,
    groups: int,
) -> Tensor:  # fmt: skip
    k = input.dim() - 2
    n, o = grad._shape[0], grad._shape[1]
    kernel = weight._shape[2:]
    extra = [  # input rows after the last window's reach (read by no window) or inside it
        input._shape[2 + i] + 2 * padding[i] - dilation[i] * (kernel[i] - 1) - 1
        - (grad._shape[2 + i] - 1) * stride[i]
        for i in range(k)
    ]  # fmt: skip
    up_shape = [n, o] + [(grad._shape[2 + i] - 1) * stride[i] + 1 + extra[i] for i in range(k)]
    up = _fm.new_zeros(grad, up_shape)
    view = up
    for i in range(k):
        view = _slice(view, 2 + i, 0, (grad._shape[2 + i] - 1) * stride[i] + 1, stride[i])
    _copy_(view, grad)
    c_g, o_g = weight._shape[1], o // groups
    w = weight.reshape([groups, o_g, c_g, *kernel]).transpose(1, 2)
    w = _flip(w.reshape([groups * c_g, o_g, *kernel]), list(range(2, 2 + k)))
    pads = [dilation[i] * (kernel[i] - 1) - padding[i] for i in range(k)]
    x = up
    for i in range(k):  # a negative pad crops instead
        if pads[i] < 0:
            x = _narrow(x, 2 + i, -pads[i], x._shape[2 + i] + 2 * pads[i])
    zero = [0] * k
    pos = [max(p, 0) for p in pads]
    out: Tensor = _conv(x, w, None, [1] * k, pos, list(dilation), False, zero, groups)
    return out


def _conv_weight_grad(
    grad: Tensor, input: Tensor, weight: Tensor, stride: Any, padding: Any, dilation: Any,
    groups: int,
) -> Tensor:  # fmt: skip
    k = input.dim() - 2
    c_g, o_g = weight._shape[1], weight._shape[0] // groups
    parts = []
    for g in range(groups):
        x = _narrow(input, 1, g * c_g, c_g).transpose(0, 1)  # (C/g, N, ...)
        gg = _narrow(grad, 1, g * o_g, o_g).transpose(0, 1)  # (O/g, N, ...)
        w = _conv(x, gg, None, list(dilation), list(padding), list(stride), False, [0] * k, 1)
        for i in range(k):
            w = _narrow(w, 2 + i, 0, weight._shape[2 + i])
        parts.append(w.transpose(0, 1))  # (O/g, C/g, K...)
    out: Tensor = _cat(parts, 0) if groups > 1 else parts[0]
    return out


register_helpers(globals())  # last: HELPERS gets every helper above (formulas.py)

# the SVD's helper registers itself the same way (importing it here puts it in HELPERS before
# derivatives.yaml is compiled)
from tensordispatch.autograd import functions_linalg  # noqa: F401
