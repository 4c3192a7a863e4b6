"""Meta functions and Meta kernels of the reductions and the batched linear algebra (F2).

Structured groups (``META_FUNCTIONS`` entries, keyed by the group's functional name) follow
the convention of ``backends/meta/structured.py``: ``meta(outs, *args) -> (specs, pre)``.
The unstructured operators' checks and output specs are plain ``*_spec`` functions shared by
their CPU kernels and the Meta kernels here (``REDUCTION_META_KERNELS``), so both devices
raise the same errors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensordispatch.backends.common import (
    check_batch_pair,
    expand_check,
    is_integral,
    reduction_dims,
    reduction_shape,
    scalar_type_name,
    shape_text,
    type_meta_name,
    wrap_dim,
)
from tensordispatch.backends.meta.iterator import Spec
from tensordispatch.backends.structured import alloc_meta, prepare_out
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.dtypes import can_cast
from tensordispatch.tensor.tensor import Tensor

__all__ = [
    "REDUCTION_META_FUNCTIONS",
    "REDUCTION_META_KERNELS",
    "all_reduce_spec",
    "logsumexp_spec",
    "var_spec",
]

MetaResult = tuple[tuple[Spec, ...], Any]


# -- shared rules ------------------------------------------------------------------------------


def promoted_int64(self: Any, dtype: Any) -> Any:
    """sum/prod/cumsum's result dtype: ``dtype``, else int64 for integral (and bool) input.

    >>> from tensordispatch.tensor import tensor
    >>> promoted_int64(tensor([True]), None)
    tensordispatch.int64
    """
    if dtype is not None:
        return dtype
    return _dt.int64 if is_integral(self.dtype, True) else self.dtype


def zero_numel_check(
    name: str, self: Any, dims: tuple[int, ...], given: bool, shown: tuple[int, ...] = ()
) -> None:
    """torch's zero_numel_check_dims: an empty input needs named, non-empty reduction dims.
    ``shown``: the dims as the caller gave them, when torch's message prints those (amax)."""
    if self.numel() != 0:
        return
    if not given:
        raise RuntimeError(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument."
        )
    for i, d in enumerate(dims):
        if self.dim() > 0 and self._shape[d] == 0:
            raise IndexError(
                f"{name}(): Expected reduction dim {shown[i] if shown else d} to have non-zero "
                "size."
            )


def _spec(self: Any, dims: tuple[int, ...], keepdim: bool, dt: Any) -> tuple[Spec, ...]:
    return ((reduction_shape(self._shape, dims, keepdim), None, dt),)


def _given(dim: Any) -> bool:
    return dim is not None and not (isinstance(dim, (list, tuple)) and len(dim) == 0)


# -- structured reductions ---------------------------------------------------------------------


def prod_dim_int(
    outs: Any, self: Any, dim: int, keepdim: bool = False, dtype: Any = None
) -> MetaResult:
    dims = (wrap_dim(dim, self.dim()),)
    dt = promoted_int64(self, dtype) if outs is None or dtype is not None else outs[0].dtype
    return _spec(self, dims, keepdim, dt), dims


def _amax_amin(name: str) -> Callable[..., MetaResult]:
    def meta(outs: Any, self: Any, dim: Any = (), keepdim: bool = False) -> MetaResult:
        if outs is not None and outs[0].dtype is not self.dtype:
            raise RuntimeError(
                "Expected the dtype for input and out to match, but got "
                f"{scalar_type_name(self.dtype)} for input's dtype and "
                f"{scalar_type_name(outs[0].dtype)} for out's dtype."
            )
        if self.numel() == 0:  # checked before duplicate dims, as torch does, dim by dim
            for d in [dim] if isinstance(dim, int) else list(dim or ()):
                zero_numel_check(name, self, (wrap_dim(d, self.dim()),), True, (d,))
            zero_numel_check(name, self, (), _given(dim))
        dims = reduction_dims(dim, self.dim())
        return _spec(self, dims, keepdim, self.dtype), dims

    meta.__name__ = name
    return meta


def _max_min_dim(name: str) -> Callable[..., MetaResult]:
    def meta(outs: Any, self: Any, dim: int, keepdim: bool = False) -> MetaResult:
        d = wrap_dim(dim, self.dim())  # torch: the dim and emptiness before the dtype
        zero_numel_check(name, self, (d,), True)
        if self.dtype.is_complex:
            raise RuntimeError(f"{name}(): does not support complex input")
        shape = reduction_shape(self._shape, (d,), keepdim)
        return ((shape, None, self.dtype), (shape, None, _dt.int64)), d

    meta.__name__ = f"{name}_dim"
    return meta


def _arg_reduce(name: str) -> Callable[..., MetaResult]:
    def meta(outs: Any, self: Any, dim: Any = None, keepdim: bool = False) -> MetaResult:
        if self.dtype.is_complex:
            raise RuntimeError(f"{name}(): does not support complex input")
        if self.dtype is _dt.bool:
            raise RuntimeError(f"{name}(): does not support bool input")
        if dim is None:
            if self.numel() == 0:
                raise IndexError(
                    f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
                )
            shape = (1,) * self.dim() if keepdim else ()
            return ((shape, None, _dt.int64),), None
        d = wrap_dim(dim, self.dim())
        if self.numel() == 0 and self.dim() > 0 and self._shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
        return _spec(self, (d,), keepdim, _dt.int64), d

    meta.__name__ = name
    return meta


def _check_norm_dtypes(self: Any, dtype: Any) -> Any:
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError(
            "norm(): input dtype should be either floating point or complex. "
            f"Got {scalar_type_name(self.dtype)} instead."
        )
    if dtype is None:
        return self.dtype.to_real()
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(
            "norm(): the desired output dtype should be either floating point or complex. "
            f"Got {scalar_type_name(dtype)} instead."
        )
    return dtype.to_real()


def norm_ScalarOpt_dim_dtype(
    outs: Any, self: Any, p: Any, dim: Any, keepdim: bool, dtype: Any = None
) -> MetaResult:
    dt = _check_norm_dtypes(self, dtype)
    dims = reduction_dims(dim, self.dim())
    return _spec(self, dims, keepdim, dt), (dims, 2 if p is None else p)


def norm_ScalarOpt_dim(outs: Any, self: Any, p: Any, dim: Any, keepdim: bool = False) -> MetaResult:
    return norm_ScalarOpt_dim_dtype(outs, self, p, dim, keepdim)


def _softmax_like(name: str) -> Callable[..., MetaResult]:
    def meta(outs: Any, self: Any, dim: int, half_to_float: bool) -> MetaResult:
        if half_to_float:
            raise RuntimeError("softmax with half to float conversion is not supported on CPU")
        d = wrap_dim(dim, self.dim())
        if not self.dtype.is_floating_point and self.numel() > 0:
            kernel = "lastdim_kernel_impl" if d == max(self.dim() - 1, 0) else "kernel_impl"
            raise NotImplementedError(
                f"\"{name}_{kernel}\" not implemented for '{scalar_type_name(self.dtype)}'"
            )
        return ((self._shape, None, self.dtype),), d

    meta.__name__ = name
    return meta


def cumsum(outs: Any, self: Any, dim: int, dtype: Any = None) -> MetaResult:
    d = wrap_dim(dim, self.dim())
    dt = promoted_int64(self, dtype) if outs is None or dtype is not None else outs[0].dtype
    if dt is _dt.bool and self.numel() and self.dim() and self.device.type != "meta":
        # torch's CPU kernel has no bool loop (a 0-dim or empty input never reaches it)
        raise NotImplementedError("\"cumsum_out_cpu\" not implemented for 'Bool'")
    return ((self._shape, None, dt),), d


def all_reduce_spec(name: str, outs: Any, self: Any, dims: tuple[int, ...], keepdim: bool) -> Any:
    """all/any: bool results (uint8 for uint8 input); an out= tensor must be bool or uint8.

    >>> from tensordispatch import ones, uint8
    >>> all_reduce_spec("all", None, ones(2, 3, dtype=uint8), (1,), False)
    (((2,), None, tensordispatch.uint8),)
    """
    dt = _dt.uint8 if self.dtype is _dt.uint8 else _dt.bool
    if outs is not None:
        dt = outs[0].dtype
        if dt is not _dt.bool and dt is not _dt.uint8:
            raise RuntimeError(
                f"{name} only supports bool tensor for result, got: {scalar_type_name(dt)}"
            )
    return _spec(self, dims, keepdim, dt)


def _all_any(name: str, kind: str) -> Callable[..., MetaResult]:
    def dim_meta(outs: Any, self: Any, dim: int, keepdim: bool = False) -> MetaResult:
        dims = (wrap_dim(dim, self.dim()),)
        return all_reduce_spec(name, outs, self, dims, keepdim), dims

    def dims_meta(outs: Any, self: Any, dim: Any = None, keepdim: bool = False) -> MetaResult:
        # unlike sum's, an empty dim list reduces nothing here
        dims = () if dim is not None and len(dim) == 0 else reduction_dims(dim, self.dim())
        return all_reduce_spec(name, outs, self, dims, keepdim), dims

    def all_meta(outs: Any, self: Any) -> MetaResult:
        dims = tuple(range(self.dim()))
        return all_reduce_spec(name, outs, self, dims, False), dims

    table: dict[str, Callable[..., MetaResult]] = {
        "dim": dim_meta,
        "dims": dims_meta,
        "all": all_meta,
    }
    return table[kind]


# -- structured batched linear algebra ---------------------------------------------------------


def baddbmm(
    outs: Any, self: Any, batch1: Any, batch2: Any, beta: Any = 1, alpha: Any = 1
) -> MetaResult:
    bs, n, _ = check_batch_pair(batch1, batch2)
    if not (self.dtype is batch1.dtype is batch2.dtype):
        raise RuntimeError(
            f"Input dtypes must be the same, got: input {type_meta_name(self.dtype)}, "
            f"batch1: {type_meta_name(batch1.dtype)}, batch2: {type_meta_name(batch2.dtype)}"
        )
    shape = (bs, n, batch2._shape[2])
    expand_check(self, shape)
    return ((shape, None, batch1.dtype),), None


def addmv(outs: Any, self: Any, mat: Any, vec: Any, beta: Any = 1, alpha: Any = 1) -> MetaResult:
    if mat.dim() != 2 or vec.dim() != 1 or self.dim() > 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got {self.dim()}, {mat.dim()}, {vec.dim()}"
        )
    n, m = mat._shape
    if m != vec._shape[0] or (self.dim() == 1 and self._shape[0] not in (1, n)):
        raise RuntimeError(
            f"size mismatch, got input ({self._shape[0] if self.dim() else 1}), mat ({n}x{m}), "
            f"vec ({vec._shape[0]})"
        )
    if not (self.dtype is mat.dtype is vec.dtype):
        raise RuntimeError(
            "addmv input tensors must have the same dtype, but got "
            f"{scalar_type_name(self.dtype)}, {scalar_type_name(mat.dtype)}, and "
            f"{scalar_type_name(vec.dtype)}"
        )
    return (((n,), None, mat.dtype),), None


# -- unstructured reductions: specs shared with the CPU kernels ---------------------------------


def prod_spec(self: Any, dtype: Any = None) -> Spec:
    return ((), None, promoted_int64(self, dtype))


def max_all_spec(name: str, self: Any) -> Spec:
    if self.numel() == 0:
        raise RuntimeError(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify "
            "the reduction dim with the 'dim' argument."
        )
    return ((), None, self.dtype)


def var_spec(self: Any, dim: Any, keepdim: bool, out: Any = None) -> tuple[Spec, tuple[int, ...]]:
    """var/std.correction: float or complex input, a real result over ``dim``; an out=
    tensor keeps its dtype if the result can be cast to it.

    >>> from tensordispatch import ones, complex64
    >>> var_spec(ones(2, 3, dtype=complex64), [1], True)
    (((2, 1), None, tensordispatch.float32), (1,))
    """
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dims = reduction_dims(dim, self.dim())
    dt = self.dtype.to_real()
    if out is not None:
        if not can_cast(dt, out.dtype):
            raise RuntimeError(
                f"result type {scalar_type_name(dt)} can't be cast to the desired output type "
                f"{scalar_type_name(out.dtype)}"
            )
        dt = out.dtype
    return (reduction_shape(self._shape, dims, keepdim), None, dt), dims


def logsumexp_spec(self: Any, dim: Any, keepdim: bool) -> tuple[Spec, tuple[int, ...]]:
    """logsumexp: integral input computes in the default float dtype.

    >>> from tensordispatch import ones, int64
    >>> logsumexp_spec(ones(2, 3, dtype=int64), [0], False)
    (((3,), None, tensordispatch.float32), (0,))
    """
    dims = reduction_dims(dim, self.dim())
    if not _given(dim) and self.dim() > 0 and not keepdim and self.numel() != 0:
        # ATen adds the kept-dims maximum back onto a fully reduced result here.
        raise RuntimeError(
            f"output with shape [] doesn't match the broadcast shape {shape_text((1,) * self.dim())}"
        )
    dt = _dt.get_default_dtype() if is_integral(self.dtype, True) else self.dtype
    return (reduction_shape(self._shape, dims, keepdim), None, dt), dims


def check_logsumexp_out(out: Any) -> None:
    if not (out.dtype.is_floating_point or out.dtype.is_complex):
        raise RuntimeError(
            "logsumexp(): Expected floating point type for result tensor, but got: "
            f"{scalar_type_name(out.dtype)}"
        )


def prod_meta(self: Tensor, *, dtype: Any = None) -> Tensor:
    return alloc_meta(prod_spec(self, dtype), self.device)


def _max_all_meta(name: str) -> Any:
    def kernel(self: Tensor) -> Tensor:
        return alloc_meta(max_all_spec(name, self), self.device)

    def out_kernel(self: Tensor, *, out: Tensor) -> Tensor:
        prepare_out(out, max_all_spec(name, self))
        return out

    return kernel, out_kernel


def var_meta(
    self: Tensor, dim: Any = None, *, correction: Any = None, keepdim: bool = False
) -> Tensor:
    return alloc_meta(var_spec(self, dim, keepdim)[0], self.device)


def var_out_meta(
    self: Tensor, dim: Any = None, *, correction: Any = None, keepdim: bool = False, out: Tensor
) -> Tensor:
    prepare_out(out, var_spec(self, dim, keepdim, out)[0])
    return out


def logsumexp_meta(self: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    return alloc_meta(logsumexp_spec(self, dim, keepdim)[0], self.device)


def logsumexp_out_meta(self: Tensor, dim: Any, keepdim: bool = False, *, out: Tensor) -> Tensor:
    check_logsumexp_out(out)
    shape, strides, _ = logsumexp_spec(self, dim, keepdim)[0]
    prepare_out(out, (shape, strides, out.dtype))
    return out


_MAX_META, _MAX_OUT_META = _max_all_meta("max")
_MIN_META, _MIN_OUT_META = _max_all_meta("min")

REDUCTION_META_FUNCTIONS: dict[str, Callable[..., MetaResult]] = {
    "prod.dim_int": prod_dim_int,
    "amax": _amax_amin("amax"),
    "amin": _amax_amin("amin"),
    "max.dim": _max_min_dim("max"),
    "min.dim": _max_min_dim("min"),
    "argmax": _arg_reduce("argmax"),
    "argmin": _arg_reduce("argmin"),
    "norm.ScalarOpt_dim": norm_ScalarOpt_dim,
    "norm.ScalarOpt_dim_dtype": norm_ScalarOpt_dim_dtype,
    "_softmax": _softmax_like("softmax"),
    "_log_softmax": _softmax_like("log_softmax"),
    "cumsum": cumsum,
    **{
        f"{n}.{k}" if k != "all" else n: _all_any(n, k)
        for n in ("all", "any")
        for k in ("dim", "dims", "all")
    },
    "baddbmm": baddbmm,
    "addmv": addmv,
}

REDUCTION_META_KERNELS: dict[str, Any] = {
    "prod_meta": prod_meta,
    "max_all_meta": _MAX_META,
    "max_unary_out_meta": _MAX_OUT_META,
    "min_all_meta": _MIN_META,
    "min_unary_out_meta": _MIN_OUT_META,
    "var_correction_meta": var_meta,
    "var_correction_out_meta": var_out_meta,
    "std_correction_meta": var_meta,
    "std_correction_out_meta": var_out_meta,
    "logsumexp_meta": logsumexp_meta,
    "logsumexp_out_meta": logsumexp_out_meta,
}
