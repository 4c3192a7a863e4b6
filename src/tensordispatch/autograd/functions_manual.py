"""The backward helpers of the reductions, indexing, nn and multi-output formulas (torch's
FunctionsManual names), written with aten operators so they are differentiable.

Owns the helpers formulas.py does not: prod/var/std/norm/logsumexp, value-selecting
reductions (max.dim, sort, topk, aminmax), indexing and scatter, cat/stack/split/unbind,
pointwise ones (pow, gelu, silu, clamp, dropout); layer norm, nll_loss and convolution are
in functions_nn.py. Constant masks and index arrays are computed
with NumPy (they carry no gradient); everything that depends on a differentiable value goes
through aten operators. Must not build graphs or know about the engine.
"""

from __future__ import annotations

import cmath
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tensordispatch.autograd.formulas import _dims, conj, handle_r_to_c, register_helpers, where
from tensordispatch.backends.aten import op
from tensordispatch.ops.deferred import deferred_op as _deferred_op
from tensordispatch.tensor import Tensor
from tensordispatch.tensor.values import resolved_values

__all__ = ["Options", "options"]

M_PI = math.pi
M_LN2 = math.log(2.0)  # exp2's formula
_zeros = _deferred_op(globals(), "_zeros", "zeros")
_zeros_like = _deferred_op(globals(), "_zeros_like", "zeros_like")
_sum_dim = _deferred_op(globals(), "_sum_dim", "sum.dim_IntList")
_index_put = _deferred_op(globals(), "_index_put", "index_put")
_scatter_src = _deferred_op(globals(), "_scatter_src", "scatter.src")
_scatter_add = _deferred_op(globals(), "_scatter_add", "scatter_add")
_cat = _deferred_op(globals(), "_cat", "cat")
_stack = _deferred_op(globals(), "_stack", "stack")
_narrow = _deferred_op(globals(), "_narrow", "narrow")
_flip = _deferred_op(globals(), "_flip", "flip")
_cumsum = _deferred_op(globals(), "_cumsum", "cumsum")
_erf = _deferred_op(globals(), "_erf", "erf")
_conv = _deferred_op(globals(), "_conv", "convolution")
_slice = _deferred_op(globals(), "_slice", "slice.Tensor")
_copy_ = _deferred_op(globals(), "_copy_", "copy_")
_diagonal = _deferred_op(globals(), "_diagonal", "diagonal")


@dataclass(frozen=True, slots=True)
class Options:
    """A tensor's dtype and device (torch's TensorOptions, as formulas read them)."""

    dtype: Any
    device: Any


def options(t: Tensor) -> Options:
    return Options(t.dtype, t.device)


def _const(array: Any, like: Tensor) -> Tensor:
    return Tensor._wrap_numpy(np.ascontiguousarray(array, like._data.dtype), like.dtype)


def _index(array: Any) -> Tensor:
    from tensordispatch.tensor import dtypes

    return Tensor._wrap_numpy(np.ascontiguousarray(array, np.int64), dtypes.int64)


def is_grad_enabled() -> bool:
    from tensordispatch.autograd.grad_mode import is_grad_enabled as enabled

    return enabled()


def isDifferentiableType(dtype: Any) -> bool:  # torch's name
    return bool(dtype.is_floating_point or getattr(dtype, "is_complex", False))


def sqrt(x: Any) -> Any:
    return math.sqrt(x) if not isinstance(x, Tensor) else x.sqrt()


def exp(x: Any) -> Any:
    return math.exp(x) if not isinstance(x, Tensor) else x.exp()


def fmap(xs: Sequence[Any], fn: Callable[[Any], Any]) -> list[Any]:
    return [fn(x) for x in xs]


def reverse_list(xs: Sequence[Any]) -> list[Any]:
    return list(reversed(list(xs)))


def new_zeros(like: Tensor, sizes: Any, opts: Options | None = None) -> Tensor:
    o = opts or options(like)
    z: Tensor = _zeros(list(sizes), dtype=o.dtype, device=o.device)
    return z


def scalar_tensor(value: Any, opts: Options) -> Tensor:
    z: Tensor = _zeros([], dtype=opts.dtype, device=opts.device)
    return z + value


def _to_copy_backward(grad: Tensor, self_options: Options) -> Tensor:
    return grad.to(self_options.dtype) if grad.dtype != self_options.dtype else grad


def _keep(grad: Tensor, dims: Any, ndim: int, keepdim: bool) -> Tensor:
    """``grad`` with the reduced dims restored as size 1 (unless keepdim already did)."""
    if keepdim or ndim == 0:
        return grad
    for d in _dims(dims, ndim):
        grad = grad.unsqueeze(d)
    return grad


# -- reductions ----------------------------------------------------------------------------


def restore_reduced_dims(output: Tensor, dims: Any, keepdim: bool) -> Tensor:
    if keepdim:
        return output
    ndim = output.dim() + (len(list(dims)) if isinstance(dims, (list, tuple)) else 1)
    return _keep(output, dims, ndim, False)


def scale_grad_by_count(grad: Tensor, mask: Tensor, dims: Any) -> Tensor:
    ndim = mask.dim()
    d = _dims(dims, ndim) if ndim else []
    count = _sum_dim(mask, d, True) if d else mask.sum()
    return (grad / count) * mask


def evenly_distribute_backward(grad: Tensor, input: Tensor, value: Tensor) -> Tensor:
    mask = input == value
    if np.isnan(np.asarray(value._data)).any():
        mask = _const(np.isnan(input._data), input) != 0
    return mask * (grad / mask.sum())


def prod_backward(
    grad: Tensor, input: Tensor, result: Tensor, dim: Any = None, keepdim: bool = False
) -> Tensor:
    if input.dim() == 0:
        return grad
    if dim is None:
        grad = grad.expand(list(input._shape))
        result = result.expand(list(input._shape))
    else:
        grad = _keep(grad, dim, input.dim(), keepdim)
        result = _keep(result, dim, input.dim(), keepdim)
    data = resolved_values(input._data, input._key_set)  # a conjugate / negative view's
    if not (data == 0).any():
        return grad * conj(result / input)
    # Products of the other elements, computed without dividing by zero (a constant).
    axis = None if dim is None else dim % input.dim()
    flat = data.reshape(-1) if axis is None else np.moveaxis(data, axis, -1)
    ones = np.ones_like(flat[..., :1])
    left = np.cumprod(np.concatenate([ones, flat[..., :-1]], -1), -1)
    right = np.flip(np.cumprod(np.concatenate([ones, np.flip(flat, -1)[..., :-1]], -1), -1), -1)
    others = left * right
    others = others.reshape(data.shape) if axis is None else np.moveaxis(others, -1, axis)
    return grad * _const(np.conj(others), input)


def var_backward(grad: Tensor, self: Tensor, dim: Any, correction: Any, keepdim: bool) -> Tensor:
    c = 1 if correction is None else correction
    n = self.numel()
    if dim is not None and not (isinstance(dim, (list, tuple)) and len(dim) == 0):
        n = 1
        for d in _dims(dim, self.dim()):
            n *= self._shape[d]
        grad = _keep(grad, dim, self.dim(), keepdim)
        mean = _sum_dim(self, _dims(dim, self.dim()), True) / n
    else:
        mean = self.mean()
    return (2.0 / (n - c)) * grad * (self - mean)


def std_backward(
    result: Tensor, grad: Tensor, self: Tensor, dim: Any, correction: Any, keepdim: bool
) -> Tensor:
    grad_var = where(result == 0, 0, grad / (result * 2))
    return var_backward(grad_var, self, dim, correction, keepdim)


def norm_backward(
    grad: Tensor, self: Tensor, p: Any, norm: Tensor, dim: Any = None, keepdim: bool = False
) -> Tensor:
    p = 2.0 if p is None else float(p)
    if dim is not None:
        grad = _keep(grad, dim, self.dim(), keepdim)
        norm = _keep(norm, dim, self.dim(), keepdim)
    if p == 0.0:
        return None  # type: ignore[return-value]  # torch: an undefined gradient
    if p == 1.0:
        from tensordispatch.autograd.formulas import sgn

        return sgn(self) * grad
    if p == 2.0:
        return where(norm == 0, 0, self * (grad / norm))
    if math.isinf(p):
        mask = self.abs() == norm
        from tensordispatch.autograd.formulas import sgn

        d = [] if dim is None else _dims(dim, self.dim())
        count = _sum_dim(mask, d, True) if d else mask.sum()
        return sgn(self) * ((grad / count) * mask)
    scale = self * self.abs().pow(p - 2)
    return where(norm == 0, 0, scale * (grad / norm.pow(p - 1)))


def logsumexp_backward(
    grad: Tensor, self: Tensor, result: Tensor, dim: Any, keepdim: bool
) -> Tensor:
    grad = _keep(grad, dim, self.dim(), keepdim)
    result = _keep(result, dim, self.dim(), keepdim)
    return grad * conj((self - result).exp())


def cumsum_backward(grad: Tensor, dim: int) -> Tensor:
    if grad.dim() == 0:
        return grad
    out: Tensor = _flip(_cumsum(_flip(grad, [dim]), dim), [dim])
    return out


def value_selecting_reduction_backward(
    grad: Tensor, dim: int, indices: Tensor, sizes: Any, keepdim: bool
) -> Tensor:
    if not keepdim and len(sizes) > 0:
        grad = grad.unsqueeze(dim)
        indices = indices.unsqueeze(dim)
    out: Tensor = _scatter_src(new_zeros(grad, sizes), dim, indices, grad)
    return out


def aminmax_backward(
    self: Tensor,
    dim: Any,
    keepdim: bool,
    grad_min: Tensor | None,
    grad_max: Tensor | None,
    min: Tensor,
    max: Tensor,
) -> Tensor | None:
    dims = [] if dim is None else [dim]
    result = None
    for g, value in ((grad_min, min), (grad_max, max)):
        if g is not None:
            mask = restore_reduced_dims(value, dims, keepdim) == self
            part = scale_grad_by_count(restore_reduced_dims(g, dims, keepdim), mask, dims)
            result = part if result is None else result + part
    return result


# -- views, shape and indexing -------------------------------------------------------------


def _moved_index_add(zeros: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """``zeros.index_add(dim, index, src)`` as an accumulating index_put."""
    n = zeros.dim()
    dim = dim % n if n else 0
    out: Tensor = _index_put(zeros, [*([None] * dim), index], src, True)
    return out


def index_select_backward(grad: Tensor, sizes: Any, dim: int, index: Tensor) -> Tensor:
    if len(sizes) == 0:
        return grad.sum().view(list(sizes))
    return _moved_index_add(new_zeros(grad, sizes), dim, index.reshape([-1]), grad)


def gather_backward(
    grad: Tensor, self: Tensor, dim: int, index: Tensor, sparse_grad: bool
) -> Tensor:
    if index.numel() == 0 and index.dtype != grad.dtype:  # torch takes any dtype when empty
        index = _index(np.zeros(index._shape))
    out: Tensor = _scatter_add(new_zeros(grad, self._shape), dim, index, grad)
    return out


def index_backward(zeros: Tensor, indices: Any, grad: Tensor) -> Tensor:
    out: Tensor = _index_put(zeros, list(indices), grad, True)
    return out


def index_put(self: Tensor, indices: Any, values: Tensor, accumulate: bool) -> Tensor:
    out: Tensor = _index_put(self, list(indices), values, accumulate)
    return out


def masked_fill_backward(grad: Tensor, mask: Tensor) -> Tensor:
    return grad.masked_select(mask).sum()


def masked_select_backward(grad: Tensor, input: Tensor, mask: Tensor) -> Tensor:
    shape = np.broadcast_shapes(tuple(input._shape), tuple(mask._shape))
    where_true = np.flatnonzero(np.broadcast_to(np.asarray(mask._data), shape))
    flat = new_zeros(grad, [math.prod(shape)])
    return index_put(flat, [_index(where_true)], grad, False).reshape(list(shape))


def diagonal_backward(grad: Tensor, sizes: Any, offset: int, dim1: int, dim2: int) -> Tensor:
    out = new_zeros(grad, sizes)
    _copy_(_diagonal(out, offset, dim1, dim2), grad)
    return out


def _positions(sizes: Sequence[int], strides: Sequence[int], offset: int) -> Any:
    pos = np.full(tuple(sizes), offset, np.int64)
    for d, (n, s) in enumerate(zip(sizes, strides, strict=True)):
        shape = [1] * len(sizes)
        shape[d] = n
        pos = pos + (np.arange(n, dtype=np.int64) * s).reshape(shape)
    return pos


def as_strided_backward(
    grad: Tensor, self_geometry: Any, size: Any, stride: Any, storage_offset: Any
) -> Tensor:
    in_sizes, in_strides, in_offset = self_geometry
    offset = in_offset if storage_offset is None else storage_offset
    out_pos = _positions(list(size), list(stride), offset).reshape(-1)
    in_pos = _positions(in_sizes, in_strides, in_offset).reshape(-1)
    length = int(max(out_pos.max(initial=0), in_pos.max(initial=0))) + 1
    flat = new_zeros(grad, [length])
    flat = index_put(flat, [_index(out_pos)], grad.reshape([-1]), True)
    count = np.bincount(in_pos, minlength=length)[in_pos]  # an overlapping input shares
    picked = index(flat, [_index(in_pos)]) / _const(np.maximum(count, 1), grad)
    return picked.reshape(list(in_sizes))


def unfold_backward(grad: Tensor, sizes: Any, dim: int, size: int, step: int) -> Tensor:
    sizes = list(sizes)
    if not sizes:
        return grad.reshape([])
    dim = dim % len(sizes)
    n = grad._shape[dim]
    idx = (np.arange(n)[:, None] * step + np.arange(size)[None, :]).reshape(-1)
    moved = _movedim(grad, dim)
    flat = moved.reshape([*sizes[:dim], n * size, *sizes[dim + 1 :]])
    return _moved_index_add(new_zeros(grad, sizes), dim, _index(idx), flat)


def _movedim(t: Tensor, dim: int) -> Tensor:
    """Move the last dimension to ``dim + 1``."""
    n = t.dim()
    order = list(range(n - 1))
    order.insert(dim + 1, n - 1)
    return t.permute(order)


def repeat_backward(grad: Tensor, repeats: Any, input_shape: Any) -> Tensor:
    repeats = list(repeats)
    if 0 in repeats:  # torch: no gradient flows through an empty repeat
        return new_zeros(grad, input_shape)
    shape = [1] * (len(repeats) - len(input_shape)) + list(input_shape)
    interleaved: list[int] = []
    for r, s in zip(repeats, shape, strict=True):
        interleaved += [r, s]
    g = grad.reshape(interleaved)
    g = _sum_dim(g, list(range(0, 2 * len(repeats), 2)), False)
    return g.reshape(list(input_shape))


def cat_tensors_backward(grad: Tensor, sizes: Any, dtypes: Any, dim: int) -> list[Tensor | None]:
    ndim = next((len(s) for s in sizes if list(s) != [0]), 1)
    dim = dim % ndim if ndim else 0
    out: list[Tensor | None] = []
    start = 0
    for s, dt in zip(sizes, dtypes, strict=True):
        if list(s) == [0]:  # torch's legacy empty input takes no slice
            out.append(_zeros([0], dtype=dt, device=grad.device))
            continue
        piece = _narrow(grad, dim, start, s[dim])
        out.append(piece.to(dt) if piece.dtype != dt else piece)
        start += s[dim]
    return out


def stack_tensors_backward(grad: Tensor, dim: int, dtypes: Any) -> list[Tensor]:
    parts = grad.unbind(dim % grad.dim())
    return [p.to(dt) if p.dtype != dt else p for p, dt in zip(parts, dtypes, strict=True)]


def split_with_sizes_backward(
    grads: Sequence[Tensor | None], split_sizes: Any, dim: int, sizes: Any, opts: Options
) -> Tensor:
    sizes = list(sizes)
    dim = dim % len(sizes)
    parts = []
    for g, n in zip(grads, split_sizes, strict=False):
        if g is None:
            shape = list(sizes)
            shape[dim] = n
            g = _zeros(shape, dtype=opts.dtype, device=opts.device)
        parts.append(g)
    out: Tensor = _cat(parts, dim)
    return out


def split_backward(
    grads: Sequence[Tensor | None], split_size: int, dim: int, sizes: Any, opts: Options
) -> Tensor:
    total = list(sizes)[dim % len(sizes)]
    n = max(1, -(-total // split_size)) if split_size else 1
    split_sizes = [split_size] * n
    split_sizes[-1] = total - split_size * (n - 1)
    return split_with_sizes_backward(grads, split_sizes, dim, sizes, opts)


def unbind_backward(grads: Sequence[Tensor | None], dim: int) -> Tensor:
    like = next(g for g in grads if g is not None)
    parts = [g if g is not None else _zeros_like(like) for g in grads]
    out: Tensor = _stack(parts, dim)
    return out


def embedding_backward(
    grad: Tensor,
    indices: Tensor,
    num_weights: int,
    padding_idx: int,
    scale_grad_by_freq: bool,
    sparse: bool,
) -> Tensor:
    width = grad._shape[-1]
    flat_idx = indices._data.reshape(-1).astype(np.int64)
    scale = np.ones(flat_idx.shape)
    if scale_grad_by_freq:
        scale = 1.0 / np.bincount(flat_idx, minlength=num_weights)[flat_idx]
    if padding_idx >= 0:
        scale = np.where(flat_idx == padding_idx, 0.0, scale)
    g = grad.reshape([-1, width]) * _const(scale.reshape(-1, 1), grad)
    return index_put(new_zeros(grad, [num_weights, width]), [_index(flat_idx)], g, True)


# -- pointwise -----------------------------------------------------------------------------


def pow_backward_self(grad: Tensor, self: Tensor, exponent: Tensor) -> Tensor:
    out = where(exponent == 0.0, 0, grad * conj(exponent * self.pow(exponent - 1)))
    return handle_r_to_c(self.dtype, out)


def pow_backward_exponent(grad: Tensor, self: Any, exponent: Tensor, result: Tensor) -> Tensor:
    if not isinstance(self, Tensor):
        if self == 0:
            return where(exponent >= 0, 0, grad * (result * -math.inf))
        log = cmath.log(self) if isinstance(self, complex) else math.log(self)
        return handle_r_to_c(exponent.dtype, grad * conj(result * log))
    if exponent.dtype.is_complex:  # torch: 0 ** z has no gradient only for real z >= 0
        from tensordispatch.autograd.formulas import _view_as_real

        parts = _view_as_real(exponent)
        cond = (self == 0) & (parts.select(-1, 1) == 0) & (parts.select(-1, 0) >= 0)
    else:
        cond = (self == 0) & (exponent >= 0)
    return handle_r_to_c(exponent.dtype, where(cond, 0, grad * conj(result * self.log())))


def infinitely_differentiable_silu_backward(grad: Tensor, self: Tensor) -> Tensor:
    s = self.sigmoid()
    return grad * (s * (1 + self * (1 - s)))


silu_backward = infinitely_differentiable_silu_backward


def gelu_backward(grad: Tensor, self: Tensor, approximate: str = "none") -> Tensor:
    if approximate == "tanh":
        k = math.sqrt(2.0 / math.pi)
        inner = k * (self + 0.044715 * self * self * self)
        t = inner.tanh()
        d_inner = k * (1 + 3 * 0.044715 * self * self)
        return grad * (0.5 * (1 + t) + 0.5 * self * (1 - t * t) * d_inner)
    cdf = 0.5 * (1 + _erf(self * (1 / math.sqrt(2.0))))
    pdf = (self * self * -0.5).exp() * (1 / math.sqrt(2 * math.pi))
    return grad * (cdf + self * pdf)


def clamp_backward(grad: Tensor, self: Tensor, min: Any, max: Any) -> Tensor:
    if min is not None and max is not None:
        return where((self >= min) & (self <= max), grad, 0)
    if min is not None:
        return where(self >= min, grad, 0)
    if max is not None:
        return where(self <= max, grad, 0)
    return grad


def clamp_backward_min_max(
    grad: Tensor, self: Tensor, min: Any, max: Any, grad_input_mask: Sequence[bool]
) -> tuple[Tensor | None, Tensor | None]:
    gmin = gmax = None
    if min is not None and max is not None:
        if grad_input_mask[0]:
            gmin = where((self < min) & (min < max), grad, 0)
        if grad_input_mask[1]:
            gmax = where((self > max) | (max < min), grad, 0)
    elif min is not None and grad_input_mask[0]:
        gmin = where(self < min, grad, 0)
    elif max is not None and grad_input_mask[1]:
        gmax = where(self > max, grad, 0)
    return gmin, gmax


def _dropout_backward(grad: Tensor, mask: Tensor, scale: float) -> Tensor:
    return grad * (mask.to(grad.dtype) * scale)


native_dropout_backward = _dropout_backward
infinitely_differentiable_native_dropout_backward = _dropout_backward


def view_as_complex(t: Tensor) -> Tensor:
    out: Tensor = op("view_as_complex")(t)
    return out


def view_as_real(t: Tensor) -> Tensor:
    out: Tensor = op("view_as_real")(t)
    return out


def slice_tensor(t: Tensor, dim: int, start: Any, end: Any, step: int) -> Tensor:
    out: Tensor = _slice(t, dim, start, end, step)
    return out


def slice_scatter(t: Tensor, src: Tensor, dim: int, start: Any, end: Any, step: int) -> Tensor:
    out: Tensor = op("slice_scatter")(t, src, dim, start, end, step)
    return out


def select_scatter(t: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    out: Tensor = op("select_scatter")(t, src, dim, index)
    return out


def diagonal_scatter(t: Tensor, src: Tensor, offset: int, dim1: int, dim2: int) -> Tensor:
    out: Tensor = op("diagonal_scatter")(t, src, offset, dim1, dim2)
    return out


def index(t: Tensor, indices: Any) -> Tensor:
    out: Tensor = op("index.Tensor")(t, list(indices))
    return out


def as_strided_scatter_backward(
    grad: Tensor, input_geometry: Any, src_geometry: Any, size: Any, stride: Any,
    storage_offset: Any,
) -> Tensor:  # fmt: skip
    """torch's helper, as it is: zeros of the input's shape holding ``grad``'s elements at
    the scattered positions (torch assumes a contiguous input and, as written, passes the
    scattered slice itself, not its complement; we match the oracle)."""
    g = grad.contiguous()
    picked = g.as_strided(list(size), list(stride), storage_offset)
    zeros = new_zeros(grad, input_geometry[0])
    out: Tensor = op("as_strided_scatter")(zeros, picked, size, stride, storage_offset)
    return out


register_helpers(globals())  # last: HELPERS gets every helper above (formulas.py)
