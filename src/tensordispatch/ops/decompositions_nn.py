"""CompositeImplicitAutograd decompositions of the nn operators (F2): losses, dropout,
layer_norm, one_hot and conv2d, written over other operators (ATen's CIA structure: nll_loss
-> nll_loss_forward, nll_loss_nd -> nll_loss / nll_loss2d, cross_entropy_loss -> log_softmax +
nll_loss_nd, conv2d -> convolution). Merged into ``DECOMPOSITIONS`` by ops/decompositions.py.

layer_norm decomposes over mean/var/sub/div here instead of calling native_layer_norm as ATen
does: native_layer_norm is declared (CPU/Meta kernels, generated out=) but has no autograd
formula yet, so a layer_norm over it would not be differentiable. dropout draws its mask with
uniform_ (ATen's CPU dropout uses bernoulli_; only fused-kernel devices call native_dropout).
"""

from __future__ import annotations

import warnings
from typing import Any

from tensordispatch.backends.aten import op, wrap_number
from tensordispatch.backends.common import contiguous_format, scalar_type_name, shape_text
from tensordispatch.backends.composite_reductions import cast
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.tensor import Tensor

__all__ = ["NN_DECOMPOSITIONS"]

_NONE, _MEAN, _SUM = 0, 1, 2


# -- losses ------------------------------------------------------------------------------------


def nll_loss(self: Tensor, target: Tensor, weight: Any = None, reduction: int = _MEAN,
             ignore_index: int = -100) -> Tensor:  # fmt: skip
    return op("nll_loss_forward")(self, target, weight, reduction, ignore_index)[0]


def nll_loss_out(self: Tensor, target: Tensor, weight: Any = None, reduction: int = _MEAN,
                 ignore_index: int = -100, *, out: Tensor) -> Tensor:  # fmt: skip
    total = op("empty.memory_format")([0], dtype=self.dtype, device=self.device)
    op("nll_loss_forward.output")(
        self, target, weight, reduction, ignore_index, output=out, total_weight=total
    )
    return out


def nll_loss2d(self: Tensor, target: Tensor, weight: Any = None, reduction: int = _MEAN,
               ignore_index: int = -100) -> Tensor:  # fmt: skip
    return op("nll_loss2d_forward")(self, target, weight, reduction, ignore_index)[0]


def nll_loss2d_out(self: Tensor, target: Tensor, weight: Any = None, reduction: int = _MEAN,
                   ignore_index: int = -100, *, out: Tensor) -> Tensor:  # fmt: skip
    total = op("empty.memory_format")([0], dtype=self.dtype, device=self.device)
    op("nll_loss2d_forward.output")(
        self, target, weight, reduction, ignore_index, output=out, total_weight=total
    )
    return out


def nll_loss_nd(self: Tensor, target: Tensor, weight: Any = None, reduction: int = _MEAN,
                ignore_index: int = -100) -> Tensor:  # fmt: skip
    """Any number of spatial dims: 1-2 dims -> nll_loss, 4 -> nll_loss2d, else reshaped."""
    if self.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {self.dim()})")
    if self.dim() != 1 and self._shape[0] != target._shape[0]:
        raise ValueError(
            f"Expected input batch_size ({self._shape[0]}) to match target batch_size "
            f"({target._shape[0]})."
        )
    if self.dim() <= 2:
        return nll_loss(self, target, weight, reduction, ignore_index)
    if self.dim() == 4:
        return nll_loss2d(self, target, weight, reduction, ignore_index)
    n, c = self._shape[:2]
    out_size = (n, *self._shape[2:])
    if target._shape[1:] != self._shape[2:]:
        raise RuntimeError(
            f"Expected target size {shape_text(out_size)}, got {shape_text(target._shape)}"
        )
    flat_in = op("reshape")(self, [n, c, 1, -1] if self.numel() else [n, c, 0, 0])
    flat_t = op("reshape")(target, [n, 1, -1] if target.numel() else [n, 0, 0])
    result = nll_loss2d(flat_in, flat_t, weight, reduction, ignore_index)
    return op("reshape")(result, list(out_size)) if reduction == _NONE else result


def _class_broadcast(weight: Tensor, input: Tensor) -> Tensor:
    if input.dim() <= 1:
        return weight
    shape = [1] * input.dim()
    shape[1] = weight._shape[0]
    return op("view")(weight, shape)


def _prob_target(
    self: Tensor, target: Tensor, weight: Any, reduction: int, smoothing: float
) -> Tensor:
    class_dim = 0 if self.dim() == 1 else 1
    n_classes = self._shape[class_dim]
    if weight is not None and (weight.dim() != 1 or weight.numel() != n_classes):
        raise RuntimeError(
            f"cross_entropy: weight tensor should be defined either for all {n_classes} "
            f"classes or no classes but got weight tensor of shape: {shape_text(weight._shape)}"
        )
    logp = op("log_softmax.int")(self, class_dim, self.dtype)
    if smoothing > 0:
        target = op("add.Tensor")(
            op("mul.Tensor")(target, wrap_number(1 - smoothing)), wrap_number(smoothing / n_classes)
        )
    loss = op("mul.Tensor")(logp, target)
    if weight is not None:
        loss = op("mul.Tensor")(loss, _class_broadcast(weight, logp))
    loss = op("neg")(loss)
    if reduction == _SUM:
        return op("sum")(loss)
    if reduction == _NONE:
        return op("sum.dim_IntList")(loss, [class_dim])
    if logp.numel() == 0:
        return op("fill_.Scalar")(op("sum")(loss), float("nan"))
    return op("div.Tensor")(op("sum")(loss), wrap_number(logp.numel() // n_classes))


def _label_smoothing(self: Tensor, target: Tensor, weight: Any, reduction: int,
                     ignore_index: int, smoothing: float) -> Tensor:  # fmt: skip
    class_dim = 0 if self.dim() == 1 else 1
    logp = op("log_softmax.int")(self, class_dim, self.dtype)
    nll = nll_loss_nd(logp, target, weight, reduction, ignore_index)
    n_classes = logp._shape[class_dim]
    scaled = logp if weight is None else op("mul.Tensor")(logp, _class_broadcast(weight, logp))
    smooth = op("neg")(op("sum.dim_IntList")(scaled, [class_dim]))
    keep = op("ne.Scalar")(target, ignore_index)
    smooth = op("mul.Tensor")(smooth, keep)
    if reduction == _MEAN:
        if weight is None:
            denominator = op("sum")(keep)
        else:
            safe = op("mul.Tensor")(target, keep)
            picked = op("index_select")(weight, 0, op("reshape")(safe, [-1]))
            denominator = op("sum")(op("mul.Tensor")(picked, op("reshape")(keep, [-1])))
        smooth = op("div.Tensor")(op("sum")(smooth), denominator)
    elif reduction == _SUM:
        smooth = op("sum")(smooth)
    return op("add.Tensor")(
        op("mul.Tensor")(nll, wrap_number(1 - smoothing)),
        op("mul.Tensor")(smooth, wrap_number(smoothing / n_classes)),
    )


def cross_entropy_loss(self: Tensor, target: Tensor, weight: Any = None, reduction: int = _MEAN,
                       ignore_index: int = -100, label_smoothing: float = 0.0) -> Tensor:  # fmt: skip
    """Class-index targets: log_softmax + nll_loss_nd; same-shape targets: probabilities."""
    if self._shape == target._shape:
        if not target.dtype.is_floating_point:
            raise RuntimeError(
                "Expected floating point type for target with class probabilities, got "
                f"{scalar_type_name(target.dtype)}"
            )
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _prob_target(self, target, weight, reduction, label_smoothing)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(
                f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}"
            )
        return _label_smoothing(self, target, weight, reduction, ignore_index, label_smoothing)
    class_dim = 0 if self.dim() == 1 else 1
    # ATen calls log_softmax.int(self, class_dim, self.dtype), whose decomposition is
    # _log_softmax(self, class_dim, False) (the cast to its own dtype is the identity):
    # called directly, one dispatcher entry less (same graph, LogSoftmaxBackward0).
    logp = op("_log_softmax")(self, class_dim, False)
    if self.dim() == 2 and self._shape[0] == target._shape[0]:  # nll_loss_nd's checks pass
        return op("nll_loss_forward")(logp, target, weight, reduction, ignore_index)[0]
    return nll_loss_nd(logp, target, weight, reduction, ignore_index)


# -- dropout, layer_norm, one_hot --------------------------------------------------------------


def _dropout_mask(input: Tensor, p: float) -> Tensor:
    """Bernoulli(1 - p) noise scaled by 1 / (1 - p), in input's dtype (uniform_ draws)."""
    draws = op("uniform_")(op("empty_like")(input, dtype=_dt.float64), 0.0, 1.0)
    noise = cast(op("lt.Scalar")(draws, 1.0 - p), input.dtype)
    return op("div_.Scalar")(noise, 1.0 - p)


def _dropout_check(p: float) -> None:
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """input itself when not training, p == 0 or empty; zeros (times input) when p == 1."""
    _dropout_check(p)
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        return op("mul.Tensor")(input, op("zeros")([], dtype=input.dtype, device=input.device))
    return op("mul.Tensor")(input, _dropout_mask(input, p))


def dropout_(self: Tensor, p: float, train: bool) -> Tensor:
    _dropout_check(p)
    if p == 0 or not train or self.numel() == 0:
        return self
    if p == 1:
        return op("mul_.Tensor")(self, op("zeros")([], dtype=self.dtype, device=self.device))
    return op("mul_.Tensor")(self, _dropout_mask(self, p))


def _check_layer_norm(input: Tensor, shape: tuple[int, ...], weight: Any, bias: Any) -> None:
    if input.device.type == "cpu":  # torch's CPU kernel checks the dtypes before the shapes
        from tensordispatch.backends.cpu.nn import check_mixed_dtype

        check_mixed_dtype(input, weight, bias)
    if not shape:
        raise RuntimeError(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at "
            "least one element, but got normalized_shape = []"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t._shape != shape:
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but got {name} of "
                f"shape {shape_text(t._shape)} and normalized_shape = {shape_text(shape)}"
            )
    if input._shape[input.dim() - len(shape) :] != shape or input.dim() < len(shape):
        raise RuntimeError(
            f"Given normalized_shape={shape_text(shape)}, expected input with shape "
            f"[*, {', '.join(map(str, shape))}], but got input of size{shape_text(input._shape)}"
        )


def layer_norm(input: Tensor, normalized_shape: Any, weight: Any = None, bias: Any = None,
               eps: float = 1e-05, cudnn_enable: bool = True) -> Tensor:  # fmt: skip
    """(x - mean) / sqrt(var + eps) over the trailing normalized dims, then * weight + bias:
    the first output of native_layer_norm on the contiguous input, as torch's decomposition
    (so autograd records one NativeLayerNormBackward0 node)."""
    shape = [int(s) for s in normalized_shape]
    _check_layer_norm(input, tuple(shape), weight, bias)
    result: Tensor = op("native_layer_norm")(op("contiguous")(input), shape, weight, bias, eps)[0]
    return result


def one_hot(self: Tensor, num_classes: int = -1) -> Tensor:
    if self.dtype is not _dt.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if self.device.type == "meta":
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from meta tensor.")
    elif self.numel() == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    else:
        if op("min")(self).item() < 0:
            raise RuntimeError("Class values must be non-negative.")
        top = op("max")(self).item()
        if num_classes == -1:
            num_classes = top + 1
        elif top >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    classes = op("arange")(num_classes, dtype=_dt.int64, device=self.device)
    return cast(op("eq.Tensor")(op("unsqueeze")(self, -1), classes), _dt.int64)


# -- conv1d / conv2d ---------------------------------------------------------------------------


def _expand(value: Any, k: int) -> list[int]:
    if isinstance(value, int):
        return [value] * k
    value = [int(v) for v in value]
    return value * k if len(value) == 1 else value


def _batchify(input: Tensor, weight: Tensor, bias: Any, k: int = 2) -> tuple[Tensor, bool]:
    """``input`` with a batch dim (added to a ``k``-D convolution's unbatched input) and
    whether it had one, after torch's conv{k}d checks of the bias dtype and input rank."""
    if bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(
            f"Input type ({_c_name(input.dtype)}) "
            f"and bias type ({_c_name(bias.dtype)}) should be the same"
        )
    if input.dim() not in (k + 1, k + 2):
        raise RuntimeError(
            f"Expected {k + 1}D (unbatched) or {k + 2}D (batched) input to conv{k}d, but got "
            f"input of size: {shape_text(input._shape)}"
        )
    if input.dim() == k + 1:
        return op("unsqueeze")(input, 0), False
    return input, True


def _c_name(d: Any) -> str:
    from tensordispatch.backends.common import type_meta_name

    return type_meta_name(d).replace("c10::", "")


def _conv_nd(k: int, input: Tensor, weight: Tensor, bias: Any, stride: Any, padding: Any,
             dilation: Any, groups: int) -> Tensor:  # fmt: skip
    batched, was = _batchify(input, weight, bias, k)
    out = op("convolution")(
        batched, weight, bias, _expand(stride, k), _expand(padding, k), _expand(dilation, k),
        False, [0] * k, groups,
    )  # fmt: skip
    return out if was else op("squeeze.dim")(out, 0)


def conv1d_symint(input: Tensor, weight: Tensor, bias: Any = None, stride: Any = 1,
                  padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:  # fmt: skip
    """aten::conv1d: ``convolution`` over (N, C, L) or unbatched (C, L) input.

    >>> import tensordispatch as td
    >>> td.conv1d(td.ones(2, 5), td.ones(3, 2, 2)).shape
    tensordispatch.Size([3, 4])
    """
    return _conv_nd(1, input, weight, bias, stride, padding, dilation, groups)


def conv2d_symint(input: Tensor, weight: Tensor, bias: Any = None, stride: Any = 1,
                  padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:  # fmt: skip
    return _conv_nd(2, input, weight, bias, stride, padding, dilation, groups)


_WARNED: list[bool] = []


def _conv_padding(k: int, input: Tensor, weight: Tensor, bias: Any, stride: Any, padding: str,
                  dilation: Any, groups: int) -> Tensor:  # fmt: skip
    """padding="valid" (none) or "same" (output size = input size, stride 1 only)."""
    if padding == "valid":
        return _conv_nd(k, input, weight, bias, stride, 0, dilation, groups)
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    if any(s != 1 for s in _expand(stride, k)):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    dil = _expand(dilation, k)
    totals = [dil[i] * (weight._shape[2 + i] - 1) for i in range(k)]
    if all(t % 2 == 0 for t in totals):
        return _conv_nd(k, input, weight, bias, 1, [t // 2 for t in totals], dilation, groups)
    if not _WARNED:  # torch warns once per process (TORCH_WARN_ONCE)
        _WARNED.append(True)
        warnings.warn(
            "Using padding='same' with even kernel lengths and odd dilation may require a "
            "zero-padded copy of the input be created",
            UserWarning,
            stacklevel=3,
        )
    # Pad symmetrically by the larger half, then drop the extra leading output position.
    out = _conv_nd(k, input, weight, bias, 1, [(t + 1) // 2 for t in totals], dilation, groups)
    for i, t in enumerate(totals):
        if t % 2:
            out = op("slice.Tensor")(out, out.dim() - k + i, 1)
    return op("clone")(out, memory_format=contiguous_format)


def conv1d_padding_symint(input: Tensor, weight: Tensor, bias: Any = None, stride: Any = 1,
                          padding: str = "valid", dilation: Any = 1, groups: int = 1) -> Tensor:  # fmt: skip
    """padding="valid" (none) or "same" (output length = input length, stride 1 only)."""
    return _conv_padding(1, input, weight, bias, stride, padding, dilation, groups)


def conv2d_padding_symint(input: Tensor, weight: Tensor, bias: Any = None, stride: Any = 1,
                          padding: str = "valid", dilation: Any = 1, groups: int = 1) -> Tensor:  # fmt: skip
    """padding="valid" (none) or "same" (output size = input size, stride 1 only)."""
    return _conv_padding(2, input, weight, bias, stride, padding, dilation, groups)


NN_DECOMPOSITIONS: dict[str, Any] = {
    "nll_loss": nll_loss,
    "nll_loss_out": nll_loss_out,
    "nll_loss2d": nll_loss2d,
    "nll_loss2d_out": nll_loss2d_out,
    "nll_loss_nd": nll_loss_nd,
    "cross_entropy_loss": cross_entropy_loss,
    "dropout": dropout,
    "dropout_": dropout_,
    "layer_norm": layer_norm,
    "one_hot": one_hot,
    "conv1d_symint": conv1d_symint,
    "conv1d_padding_symint": conv1d_padding_symint,
    "conv2d_symint": conv2d_symint,
    "conv2d_padding_symint": conv2d_padding_symint,
}
