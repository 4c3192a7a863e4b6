"""CPU (NumPy) kernels of the nn operators (F2): nll_loss_forward's structured impl,
nll_loss2d_forward and convolution (im2col by ``sliding_window_view`` + ``tensordot``).
Checks come from ``backends/meta/nn.py`` so CPU and Meta raise alike.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from tensordispatch.backends.common import scalar_type_name
from tensordispatch.backends.cpu.fpstate import QUIET_RUN, quiet_fp, quiet_retry
from tensordispatch.backends.cpu.reductions import unobserved_cpu
from tensordispatch.backends.meta import nn as _m
from tensordispatch.backends.structured import alloc_cpu, prepare_out
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.geometry import contiguous_of
from tensordispatch.tensor.tensor import Tensor, new_cpu_tensor

__all__ = ["NN_CPU_KERNELS", "relu_fast"]


def _nll(
    x: Any, target: Tensor, weight: Any, reduction: int, ignore_index: int, class_axis: int
) -> tuple[Any, Any]:
    """(loss, total weight) of class scores ``x`` (classes on ``class_axis``) and targets."""
    if weight is None and class_axis == 1 and x.ndim == 2 and x.dtype in _EXACT_COUNTS:
        found = _nll_plain(x, target._data, reduction, ignore_index)
        if found is not None:
            return found
    t = target._data.astype(np.int64)
    n_classes = x.shape[class_axis]
    keep = t != ignore_index
    bad = keep & ((t < 0) | (t >= n_classes))
    if bad.any():
        raise IndexError(f"Target {int(t[bad].reshape(-1)[0])} is out of bounds.")
    safe = np.where(keep, t, 0)
    picked = np.take_along_axis(x, np.expand_dims(safe, class_axis), class_axis)
    picked = np.squeeze(picked, class_axis)
    w = np.ones(n_classes, x.dtype) if weight is None else weight._data.astype(x.dtype)
    wt = np.where(keep, w[safe], 0).astype(x.dtype)
    losses = -picked * wt
    total = wt.sum(dtype=x.dtype)
    if reduction == 0:
        return losses, total if losses.ndim == 0 else np.zeros((), x.dtype)
    summed = losses.sum(dtype=x.dtype)
    if reduction == 1:
        with quiet_fp():
            return np.true_divide(summed, total), total
    return summed, total


# Float dtypes whose sum of n ones is exactly n for any realistic batch (n < 2**24).
_EXACT_COUNTS = (np.dtype(np.float32), np.dtype(np.float64))
_UINT64 = np.dtype(np.uint64)
_MAX_REDUCE = np.maximum.reduce  # the ufunc's own method: ndarray.max adds a Python wrapper


def _nll_plain(x: Any, t: Any, reduction: int, ignore_index: int) -> tuple[Any, Any] | None:
    """_nll of the common case, (N, C) scores without weights, in a few NumPy calls; None
    when it does not apply (not int64 targets, a target that is out of range or may be
    ignored, an empty batch). Same values as the general path: the weights are all 1, so
    the losses are -picked and the total weight is N."""
    n, c = x.shape
    if t.dtype != np.int64 or t.ndim != 1 or not n or 0 <= ignore_index < c:
        return None
    if _MAX_REDUCE(t.view(_UINT64)) >= c:  # negative targets turn huge as unsigned
        return None
    losses = np.negative(x[np.arange(n), t])
    total = x.dtype.type(n)
    if reduction == 0:
        return losses, np.zeros((), x.dtype)
    summed = np.add.reduce(losses, dtype=x.dtype)
    if reduction == 1:
        with quiet_fp():
            return np.true_divide(summed, total), total
    return summed, total


def _reduced_plain(x: Any, t: Any, reduction: int, ignore_index: int) -> Any:
    """The mean (``reduction`` 1) or sum (2) loss of _nll_plain's case, or None when it does
    not apply; same NumPy calls and values as _nll_plain, in fewer Python steps."""
    n, c = x.shape
    if t.dtype != np.int64 or t.ndim != 1 or not n or 0 <= ignore_index < c:
        return None
    if _MAX_REDUCE(t.view(_UINT64)) >= c:
        return None
    summed = _ADD_REDUCE(np.negative(x[np.arange(n), t]), dtype=x.dtype)
    if reduction == 2:
        return summed
    try:  # NumPy's FP reports off (Note [Quiet context] in fpstate.py)
        return QUIET_RUN(np.true_divide, summed, x.dtype.type(n))
    except RuntimeError as e:
        return quiet_retry(e, np.true_divide, summed, x.dtype.type(n))


_ADD_REDUCE = np.add.reduce


def nll_loss_forward_out(
    pre: Any, self: Tensor, target: Tensor, weight: Any, reduction: int, ignore_index: int,
    output: Tensor, total_weight: Tensor,
) -> None:  # fmt: skip
    x = self._data
    if weight is None and reduction and x.ndim == 2 and x.dtype in _EXACT_COUNTS:
        # the common case (a classifier's mean loss): 0-dim outputs of x's dtype (meta)
        loss = _reduced_plain(x, target._data, reduction, ignore_index)
        if loss is not None:
            output._data[()] = loss
            total_weight._data[()] = x.shape[0]
            return
    axis = 0 if self.dim() == 1 else 1
    x = self._data
    if self.dim() == 1 and target.dim() == 1:
        x = x.reshape(1, -1)
        axis = 1
    loss, total = _nll(x, target, weight, reduction, ignore_index, axis)
    np.copyto(output._data, np.asarray(loss).reshape(output._shape), casting="unsafe")
    np.copyto(total_weight._data, total, casting="unsafe")


def nll_loss2d_forward_cpu(
    self: Tensor, target: Tensor, weight: Any, reduction: int, ignore_index: int
) -> tuple[Tensor, Tensor]:
    out, total = _m.nll_loss2d_spec(self, target, weight, reduction)
    return nll_loss2d_forward_out_cpu(
        self, target, weight, reduction, ignore_index, output=alloc_cpu(out),
        total_weight=alloc_cpu(total),
    )  # fmt: skip


def nll_loss2d_forward_out_cpu(
    self: Tensor, target: Tensor, weight: Any, reduction: int, ignore_index: int, *,
    output: Tensor, total_weight: Tensor,
) -> tuple[Tensor, Tensor]:  # fmt: skip
    out, total = _m.nll_loss2d_spec(self, target, weight, reduction)
    prepare_out(output, out)
    prepare_out(total_weight, total)
    loss, tw = _nll(self._data, target, weight, reduction, ignore_index, 1)
    np.copyto(output._data, np.asarray(loss).reshape(output._shape), casting="unsafe")
    np.copyto(total_weight._data, tw, casting="unsafe")
    return output, total_weight


def _convolve(x: Any, w: Any, stride: Any, padding: Any, dilation: Any, groups: int) -> Any:
    """N-d cross-correlation of (N, C, *S) by (O, C/groups, *K)."""
    k = w.ndim - 2
    x = np.pad(x, [(0, 0), (0, 0), *[(p, p) for p in padding]])
    extent = [dilation[i] * (w.shape[2 + i] - 1) + 1 for i in range(k)]
    axes = tuple(range(2, 2 + k))
    windows = sliding_window_view(x, extent, axis=axes)
    index = (slice(None), slice(None), *[slice(None, None, s) for s in stride],
             *[slice(None, None, d) for d in dilation])  # fmt: skip
    windows = windows[index]
    cin, cout = w.shape[1], w.shape[0] // groups
    parts = []
    contract = [1, *range(2 + k, 2 + 2 * k)]
    for g in range(groups):
        part = np.tensordot(
            windows[:, g * cin : (g + 1) * cin], w[g * cout : (g + 1) * cout],
            axes=(contract, [1, *range(2, 2 + k)]),
        )  # fmt: skip
        parts.append(np.moveaxis(part, -1, 1))
    return np.concatenate(parts, axis=1) if groups > 1 else parts[0]


def convolution_cpu(
    input: Tensor, weight: Tensor, bias: Any, stride: Any, padding: Any, dilation: Any,
    transposed: bool, output_padding: Any, groups: int,
) -> Tensor:  # fmt: skip
    spec, (s, p, d) = _m.conv_spec(
        input, weight, bias, stride, padding, dilation, transposed, groups
    )
    if input.dtype is _dt.bool:  # complex: NumPy convolves it as torch's complex path does
        raise NotImplementedError(
            f"\"slow_conv2d_cpu\" not implemented for '{scalar_type_name(input.dtype)}'"
        )
    out = alloc_cpu(spec)
    result = _convolve(input._data, weight._data, s, p, d, groups)
    if bias is not None:
        result = result + bias._data.reshape((-1,) + (1,) * (input.dim() - 2))
    np.copyto(out._data, result, casting="unsafe")
    return out


def check_mixed_dtype(input: Tensor, *params: Any) -> None:
    """torch's CPU norms: parameters of another dtype than the input only for a float16 input
    with float32 parameters (the first defined parameter decides whether types mix)."""
    given = next((p.dtype for p in params if p is not None), None)
    if given is None or given is input.dtype:
        return
    if any(p is not None and p.dtype is not _dt.float32 for p in params):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    if input.dtype is not _dt.float16:
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


def native_layer_norm_cpu(
    input: Tensor, normalized_shape: Any, weight: Any, bias: Any, eps: float
) -> tuple[Tensor, Tensor, Tensor]:
    """(normalized output, mean, 1 / sqrt(biased var + eps)) over the trailing dims."""
    check_mixed_dtype(input, weight, bias)
    specs = _m.layer_norm_specs(input, normalized_shape, weight, bias)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"LayerNormKernelImpl\" not implemented for '{scalar_type_name(input.dtype)}'"
        )
    out, mean, rstd = (alloc_cpu(s) for s in specs)
    axes = tuple(range(input.dim() - len(tuple(normalized_shape)), input.dim()))
    x = input._data.astype(mean.dtype._numpy, copy=False)
    with quiet_fp():
        mu = x.mean(axis=axes, keepdims=True)
        r = 1.0 / np.sqrt(((x - mu) ** 2).mean(axis=axes, keepdims=True) + eps)
        y = (x - mu) * r
        if weight is not None:
            y = y * weight._data
        if bias is not None:
            y = y + bias._data
    np.copyto(out._data, y, casting="unsafe")
    np.copyto(mean._data, mu, casting="unsafe")
    np.copyto(rstd._data, r, casting="unsafe")
    return out, mean, rstd


def native_dropout_cpu(input: Tensor, p: float, train: Any) -> tuple[Tensor, Tensor]:
    """Bernoulli(1 - p) mask from the default generator; output = input * mask / (1 - p)."""
    from tensordispatch.backends.generator import resolve

    out_spec, mask_spec = _m.dropout_specs(input, p, train)
    out, mask = alloc_cpu(out_spec), alloc_cpu(mask_spec)
    if train is False or input.numel() == 0:
        np.copyto(mask._data, True)
        np.copyto(out._data, input._data)
        return out, mask
    keep = resolve(None).random(input._shape) < 1 - p
    np.copyto(mask._data, keep)
    scale = 0.0 if p == 1 else 1.0 / (1 - p)
    result = input._data * keep * scale
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(
            f"result type Float can't be cast to the desired output type "
            f"{scalar_type_name(input.dtype)}"
        )
    np.copyto(out._data, result, casting="unsafe")
    return out, mask


def embedding_renorm_cpu_(
    self: Tensor, indices: Tensor, max_norm: float, norm_type: float
) -> Tensor:
    """Rescale in place each row of ``self`` named in ``indices`` (once per distinct index)
    whose ``norm_type``-norm exceeds ``max_norm`` to norm ``max_norm`` (``max_norm / (norm +
    1e-7)``, as ATen's CPU kernel), for ``F.embedding(max_norm=...)``.

    >>> import tensordispatch as td
    >>> w = td.tensor([[3.0, 4.0], [0.3, 0.4]])
    >>> td.embedding_renorm_(w, td.tensor([0, 0, 1]), 1.0, 2.0).round(decimals=4).tolist()
    [[0.6000000238418579, 0.800000011920929], [0.30000001192092896, 0.4000000059604645]]
    """
    from tensordispatch.backends.aten import op

    _m.embedding_renorm_check(self, indices)
    select, norm, mul_ = op("select.int"), op("norm.Scalar"), op("mul_.Scalar")
    for index in sorted(set(indices._data.reshape(-1).tolist())):
        row = select(self, 0, index)
        found = norm(row, norm_type).item()
        if found > max_norm:
            mul_(row, max_norm / (found + 1e-7))
    return self


# relu's kernel is CompositeExplicitAutograd here (clamp_min(self, 0)); torch's is a CPU
# kernel. When the nested clamp_min could only reach its CPU kernel unobserved (reductions.py
# ``unobserved_cpu``), relu_fast runs that kernel's NumPy call itself: np.maximum with a zero
# of the arithmetic dtype (pointwise.py's ``_clamp``), for float32/float64 contiguous input,
# whose result the structured kernel would copy as it is into a contiguous allocation.
_RELU_ZERO = {np.dtype(d): np.asarray(0).astype(d) for d in (np.float32, np.float64)}


def relu_fast(self: Tensor) -> Tensor | None:
    """``clamp_min(self, 0)`` computed directly, or None when the dispatched call must run.

    >>> import tensordispatch as td
    >>> relu_fast(td.tensor([-1.0, 2.0])), relu_fast(td.tensor([-1, 2]))
    (tensor([0., 2.]), None)
    """
    data = self._data
    zero = _RELU_ZERO.get(getattr(data, "dtype", None))
    if zero is None or not unobserved_cpu(self):
        return None
    shape = self._shape
    strides = contiguous_of(shape)
    if self._strides != strides or not data.flags.c_contiguous or not shape:
        return None
    return new_cpu_tensor(np.maximum(data, zero), shape, strides, self.dtype)


NN_CPU_KERNELS: dict[str, Any] = {
    "embedding_renorm_cpu_": embedding_renorm_cpu_,
    "nll_loss_forward_out_cpu": nll_loss_forward_out,
    "nll_loss2d_forward_cpu": nll_loss2d_forward_cpu,
    "nll_loss2d_forward_out_cpu": nll_loss2d_forward_out_cpu,
    "convolution_cpu": convolution_cpu,
    "native_layer_norm_cpu": native_layer_norm_cpu,
    "native_dropout_cpu": native_dropout_cpu,
}
