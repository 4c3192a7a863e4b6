"""Meta functions and Meta kernels of the nn operators (F2): nll_loss_forward (structured),
nll_loss2d_forward and convolution (plain kernels whose ``*_spec`` checks the CPU kernels
share), so both devices raise the same errors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensordispatch.backends.common import scalar_type_name, shape_text
from tensordispatch.backends.meta.iterator import Spec
from tensordispatch.backends.structured import alloc_meta, prepare_out
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.tensor import Tensor

__all__ = ["NN_META_FUNCTIONS", "NN_META_KERNELS", "conv_spec", "nll_loss2d_spec"]

MetaResult = tuple[tuple[Spec, ...], Any]


def check_target_dtype(target: Any) -> None:
    if target.dtype is not _dt.int64 and target.dtype is not _dt.uint8:
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {scalar_type_name(target.dtype)}"
        )


def _check_weight(weight: Any, n_classes: int) -> None:
    if weight is not None and (weight.dim() != 1 or weight.numel() != n_classes):
        raise RuntimeError(
            f"weight tensor should be defined either for all {n_classes} classes or no classes "
            f"but got weight tensor of shape: {shape_text(weight._shape)}"
        )


def nll_loss_forward(
    outs: Any, self: Any, target: Any, weight: Any, reduction: int, ignore_index: int
) -> MetaResult:
    """1-d or 2-d input, class-index target; a per-sample loss for reduction None."""
    if not 0 < self.dim() <= 2:
        raise RuntimeError("input tensor should be 1D or 2D")
    if target.dim() > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    no_batch = self.dim() == 1 and target.dim() == 0
    if not no_batch and self._shape[0] != target._shape[0]:
        raise RuntimeError(
            f"size mismatch (got input: {shape_text(self._shape)}, target: "
            f"{shape_text(target._shape)})"
        )
    _check_weight(weight, self._shape[-1])
    check_target_dtype(target)
    shape = (self._shape[0],) if reduction == 0 and self.dim() == 2 else ()
    return ((shape, None, self.dtype), ((), None, self.dtype)), None


def nll_loss2d_spec(self: Any, target: Any, weight: Any, reduction: int) -> tuple[Spec, Spec]:
    """nll_loss2d_forward: (N, C, H, W) input, (N, H, W) target.

    >>> from tensordispatch import ones, zeros, int64
    >>> nll_loss2d_spec(ones(2, 3, 4, 5), zeros(2, 4, 5, dtype=int64), None, 0)[0][0]
    (2, 4, 5)
    """
    if self.dim() != 4:
        raise RuntimeError(
            "only batches of spatial inputs supported (4D tensors), but got input of "
            f"dimension: {self.dim()}"
        )
    if target.dim() != 3:
        raise RuntimeError(
            "only batches of spatial targets supported (3D tensors) but got targets of "
            f"dimension: {target.dim()}"
        )
    n, _, h, w = self._shape
    if target._shape != (n, h, w):
        raise RuntimeError(
            f"size mismatch (got input: {shape_text(self._shape)} , target: "
            f"{shape_text(target._shape)}"
        )
    _check_weight(weight, self._shape[1])
    check_target_dtype(target)
    shape = (n, h, w) if reduction == 0 else ()
    return (shape, None, self.dtype), ((), None, self.dtype)


def _expand(values: Any, k: int) -> tuple[int, ...]:
    values = tuple(values)
    return values * k if len(values) == 1 else values


_PYTHON_TENSOR_TYPES = {"float16": "Half", "float32": "Float", "float64": "Double",
                        "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                        "uint8": "Byte"}  # fmt: skip


def legacy_type_name(d: Any, python: bool = False) -> str:
    """A CPU tensor type as torch's legacy messages print it: ``torch.HalfTensor`` where a
    Python tensor type exists (``python``), else ``CPUComplexFloatType``."""
    if python and d.name in _PYTHON_TENSOR_TYPES:
        return f"torch.{_PYTHON_TENSOR_TYPES[d.name]}Tensor"
    return f"CPU{scalar_type_name(d)}Type"


def conv_spec(
    input: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any,
    transposed: bool, groups: int,
) -> tuple[Spec, tuple[tuple[int, ...], ...]]:  # fmt: skip
    """convolution's checks and output; also returns (stride, padding, dilation) expanded.

    >>> from tensordispatch import ones
    >>> conv_spec(ones(1, 3, 5, 5), ones(4, 3, 3, 3), None, [2], [1], [1], False, 1)[0][0]
    (1, 4, 3, 3)
    """
    k = weight.dim() - 2
    if input.dim() != weight.dim():
        raise RuntimeError(
            f"Expected {weight.dim()}-dimensional input for {weight.dim()}-dimensional weight "
            f"{shape_text(weight._shape)}, but got {input.dim()}-dimensional input of size "
            f"{shape_text(input._shape)} instead"
        )
    stride, padding, dilation = (_expand(v, k) for v in (stride, padding, dilation))
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got {shape_text(dilation)}")
    if transposed:
        raise NotImplementedError("convolution: transposed convolution is not implemented")
    if weight._shape[0] % groups != 0:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension "
            f"0, but got weight of size [{shape_text(weight._shape)}] instead"  # sic, torch's
        )
    if input._shape[1] != weight._shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {shape_text(weight._shape)}, expected "
            f"input{shape_text(input._shape)} to have {weight._shape[1] * groups} channels, but "
            f"got {input._shape[1]} channels instead"
        )
    if bias is not None and (bias.dim() != 1 or bias._shape[0] != weight._shape[0]):
        raise RuntimeError(
            f"Given weight of size {shape_text(weight._shape)}, expected bias to be "
            f"1-dimensional with {weight._shape[0]} elements, but got bias of size "
            f"{shape_text(bias._shape)} instead"
        )
    if input.dtype is not weight.dtype:
        if input.dtype is _dt.bool and input.device.type == "cpu":
            raise NotImplementedError("\"slow_conv2d_cpu\" not implemented for 'Bool'")
        if input.dtype.is_complex:  # torch's complex path checks with legacy type names
            raise RuntimeError(
                f"Input type ({legacy_type_name(input.dtype)}) and weight type "
                f"({legacy_type_name(weight.dtype, python=True)}) should be the same"
            )
        raise RuntimeError(
            f"expected scalar type {scalar_type_name(input.dtype)} but found "
            f"{scalar_type_name(weight.dtype)}"
        )
    padded = [input._shape[2 + i] + 2 * padding[i] for i in range(k)]
    extent = [dilation[i] * (weight._shape[2 + i] - 1) + 1 for i in range(k)]
    if any(e > p for e, p in zip(extent, padded)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
            f"Kernel size: ({' x '.join(map(str, extent))}). Kernel size can't be greater than "
            "actual input size"
        )
    spatial = tuple((p - e) // s + 1 for p, e, s in zip(padded, extent, stride))
    shape = (input._shape[0], weight._shape[0], *spatial)
    return (shape, _conv_strides(input, shape), input.dtype), (stride, padding, dilation)


def _conv_strides(input: Any, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """channels_last output for a 4-d channels_last (not also contiguous) input."""
    if len(shape) != 4 or input.is_contiguous():
        return None
    from tensordispatch.backends.cpu.kernels import channels_last_strides

    if input._strides != channels_last_strides(input._shape):
        return None
    return channels_last_strides(shape)


def nll_loss2d_forward_meta(
    self: Tensor, target: Tensor, weight: Any, reduction: int, ignore_index: int
) -> tuple[Tensor, Tensor]:
    out, total = nll_loss2d_spec(self, target, weight, reduction)
    return alloc_meta(out, self.device), alloc_meta(total, self.device)


def nll_loss2d_forward_out_meta(
    self: Tensor, target: Tensor, weight: Any, reduction: int, ignore_index: int, *,
    output: Tensor, total_weight: Tensor,
) -> tuple[Tensor, Tensor]:  # fmt: skip
    out, total = nll_loss2d_spec(self, target, weight, reduction)
    prepare_out(output, out)
    prepare_out(total_weight, total)
    return output, total_weight


def convolution_meta(
    input: Tensor, weight: Tensor, bias: Any, stride: Any, padding: Any, dilation: Any,
    transposed: bool, output_padding: Any, groups: int,
) -> Tensor:  # fmt: skip
    return alloc_meta(
        conv_spec(input, weight, bias, stride, padding, dilation, transposed, groups)[0],
        input.device,
    )


def layer_norm_specs(
    input: Any, normalized_shape: Any, weight: Any, bias: Any
) -> tuple[Spec, Spec, Spec]:
    """native_layer_norm: (output, mean, rstd); mean/rstd keep the normalized dims as 1s and
    are float32 for float16 input."""
    shape = tuple(int(s) for s in normalized_shape)
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
    axis = input.dim() - len(shape)
    if axis < 0 or input._shape[axis:] != shape:
        raise RuntimeError(
            f"Given normalized_shape={shape_text(shape)}, expected input with shape "
            f"[*, {', '.join(map(str, shape))}], but got input of size{shape_text(input._shape)}"
        )
    stat = (*input._shape[:axis], *(1,) * len(shape))
    stat_dtype = _dt.float32 if input.dtype is _dt.float16 else input.dtype
    return (input._shape, None, input.dtype), (stat, None, stat_dtype), (stat, None, stat_dtype)


def native_layer_norm_meta(
    input: Tensor, normalized_shape: Any, weight: Any, bias: Any, eps: float
) -> tuple[Tensor, Tensor, Tensor]:
    specs = layer_norm_specs(input, normalized_shape, weight, bias)
    out, mean, rstd = (alloc_meta(s, input.device) for s in specs)
    return out, mean, rstd


def dropout_specs(input: Any, p: float, train: Any) -> tuple[Spec, Spec]:
    """native_dropout: (output like input, bool mask)."""
    if train is not False and not 0 <= 1 - p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={1 - p}")
    return (input._shape, None, input.dtype), (input._shape, None, _dt.bool)


def native_dropout_meta(input: Tensor, p: float, train: Any) -> tuple[Tensor, Tensor]:
    out, mask = dropout_specs(input, p, train)
    return alloc_meta(out, input.device), alloc_meta(mask, input.device)


NN_META_FUNCTIONS: dict[str, Callable[..., MetaResult]] = {
    "nll_loss_forward": nll_loss_forward,
}


def embedding_renorm_check(self: Tensor, indices: Tensor) -> None:
    """ATen's argument checks of ``embedding_renorm_`` (its CPU kernel's; torch's meta path
    makes none, so the Meta kernel below does not call this)."""
    if self.dim() != 2:
        raise RuntimeError(
            f"Expected 2-dimensional tensor, but got {self.dim()}-dimensional tensor for "
            "argument #1 'self' (while checking arguments for embedding_renorm_)"
        )
    if indices.dtype is not _dt.int64 and indices.dtype is not _dt.int32:
        raise RuntimeError(
            "Expected tensor for argument #2 'indices' to have one of the following scalar "
            f"types: Long, Int; but got {legacy_type_name(indices.dtype, python=True)} instead "
            "(while checking arguments for embedding_renorm_)"
        )


def embedding_renorm_meta_(
    self: Tensor, indices: Tensor, max_norm: float, norm_type: float
) -> Tensor:
    """``self`` unchanged: values are unknown on meta (torch's meta kernel checks nothing)."""
    return self


NN_META_KERNELS: dict[str, Any] = {
    "embedding_renorm_meta_": embedding_renorm_meta_,
    "nll_loss2d_forward_meta": nll_loss2d_forward_meta,
    "nll_loss2d_forward_out_meta": nll_loss2d_forward_out_meta,
    "convolution_meta": convolution_meta,
    "native_layer_norm_meta": native_layer_norm_meta,
    "native_dropout_meta": native_dropout_meta,
}
