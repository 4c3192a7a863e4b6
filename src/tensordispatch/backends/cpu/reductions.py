"""CPU (NumPy) kernels of the reductions and the batched linear algebra (F2).

Structured impls are ``impl(precomputed, *out_variant_args, *outs)`` and write into the
outs; ``precomputed`` is what the group's meta function in ``backends/meta/reductions.py``
returned (usually the wrapped reduction dims). Unstructured kernels check through the
same ``*_spec`` functions as their Meta twins, then compute.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from tensordispatch.backends.common import is_integral
from tensordispatch.backends.cpu.fpstate import QUIET_RUN, quiet_fp, quiet_retry
from tensordispatch.backends.meta import reductions as _m
from tensordispatch.backends.overlap import (
    assert_no_internal_overlap,
    check_bias_copy,
    check_written,
)
from tensordispatch.backends.structured import alloc_cpu, prepare_out
from tensordispatch.dispatch.dispatcher import DISPATCHER
from tensordispatch.dispatch.kernel import KernelKind
from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import (
    AFTER_AUTOGRAD_RAW,
    AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW,
    DEFAULT_EXCLUDED_RAW,
    DEFAULT_INCLUDED_RAW,
    keyset_raw,
)
from tensordispatch.dispatch.tls import local_state
from tensordispatch.ops.indexing_fast import FunctionalGuard
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.tensor import _CPU_KEY_SET, Tensor, new_cpu_tensor

__all__ = ["REDUCTION_CPU_KERNELS", "mean_all_fast", "sum_all_fast", "unobserved_cpu"]


def _axis(self: Tensor, dims: Any) -> Any:
    """NumPy's axis for wrapped reduction dims (a 0-dim tensor reduces as a whole)."""
    if self.dim() == 0:
        return None
    return dims


def _store(out: Tensor, value: Any) -> None:
    np.copyto(out._data, np.asarray(value).reshape(out._shape), casting="unsafe")


def _not_implemented(name: str, t: Tensor) -> NotImplementedError:
    from tensordispatch.backends.common import scalar_type_name

    return NotImplementedError(f"\"{name}\" not implemented for '{scalar_type_name(t.dtype)}'")


# -- sum of every element, without the second dispatch ------------------------------------------

# Note [Full sum without the second dispatch]
# ``sum(x)`` is CompositeExplicitAutograd in torch's yaml (kept: the dispatch tables are
# conformance-tested): its kernel calls ``sum.dim_IntList(x, [])`` through the dispatcher,
# which on a CPU tensor lands on the autograd entry's no-grad branch and then the structured
# CPU wrapper (meta function, allocation, impl), ~2.5 us of Python for a 3-element tensor.
# When that nested call could only reach the CPU kernel with nothing observing it in between
# (a plain CPU tensor; no TLS-included key, so no mode, no transform; autograd excluded by
# the recording kernel above us, or not recording: no input requiring grad or grad mode off;
# no dispatch trace open) the kernel computes the CPU result directly: the meta function's
# dtype (integers and bool sum to int64), a fresh 0-dim allocation as alloc_cpu makes it, and
# the CPU impl's very NumPy call (kernels.py ``sum_out``: np.add.reduce over every axis, in
# the quiet floating-point context), so values are bit-identical to the dispatched path.
# Nothing observing it also means the nested operator's own table (session 8): its published
# state, checked per state by a ``FunctionalGuard`` (ops/indexing_fast.py; ``_NestedGuard``:
# below the plain autograd kernel a functional call skips ADInplaceOrView), must lead a plain
# CPU call through the plain autograd kernel to our generated structured wrapper, so a kernel
# registered later for ``sum.dim_IntList`` (at CPU, Autograd, ADInplaceOrView, ...) or an open
# trace takes the dispatched call, as torch's composite kernel would.
#
# ``mean(x)`` (session 8) is the same case for ``mean.dim(x, [])``: ``mean_all_fast`` does
# kernels.py ``mean_out``'s work for a real floating input, dtype absent or a real floating
# dtype object, and at least one element (an empty input writes NaN there; taken by the
# dispatched call). np.mean's own steps, without its Python wrappers (~2.5 us): np.add.reduce
# over every axis in the reduction dtype, then the division by the element count in float64
# and the cast back to the reduction dtype: np.mean's scalar ``ret.dtype.type(ret / rcount)``
# with an ``intp`` count promotes a float16/32/64 sum to float64 and divides there, which a
# Python float division is exactly (IEEE double), so values are bit-identical to the kernel's.

_ST = local_state()
_RECORDING_EXCLUDED = DEFAULT_EXCLUDED_RAW | AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW
# every axis per rank (None for a 0-dim tensor: it reduces as a whole, sum_out's rule)
_ALL_AXES: dict[int, tuple[int, ...] | None] = {}
_SUM_DTYPE: dict[Any, Any] = {}  # input dtype -> sum's result dtype
_add_reduce = np.add.reduce
_INT64 = _dt.int64


def unobserved_cpu(self: Tensor) -> bool:
    """Whether an aten call that a composite kernel makes on ``self`` would reach the CPU
    kernel with nothing observing it in between (Note [Full sum without the second
    dispatch]): a plain NumPy-backed CPU tensor, no TLS-included key, autograd excluded by
    the recording kernel above or nothing to record, no dispatch trace open.

    >>> import tensordispatch as td
    >>> unobserved_cpu(td.tensor([1.0])), unobserved_cpu(td.tensor([1.0]).requires_grad_())
    (True, False)
    """
    if self._key_set != _CPU_KEY_SET:
        return False
    st = _ST
    if st.included != DEFAULT_INCLUDED_RAW:
        return False
    excluded = st.excluded
    if excluded != _RECORDING_EXCLUDED:
        if excluded != DEFAULT_EXCLUDED_RAW:
            return False
        m = self._autograd_meta
        if m is not None and m.requires_grad and st.grad_enabled:
            return False
    return type(self._data) is np.ndarray and DISPATCHER.tracer is None  # a trace shows all


def sum_all_fast(self: Tensor) -> Tensor | None:
    """``sum.dim_IntList(self, [])`` computed directly, or None when the dispatched call
    must run (Note [Full sum without the second dispatch]).

    >>> import tensordispatch as td
    >>> sum_all_fast(td.tensor([1.0, 2.0, 3.0])), sum_all_fast(td.tensor([True, True]))
    (tensor(6.), tensor(2))
    """
    if self._key_set != _CPU_KEY_SET:  # unobserved_cpu(self), inlined (one call less)
        return None
    st = _ST
    if st.included != DEFAULT_INCLUDED_RAW:
        return None
    excluded = st.excluded
    if excluded != _RECORDING_EXCLUDED:
        if excluded != DEFAULT_EXCLUDED_RAW:
            return None
        m = self._autograd_meta
        if m is not None and m.requires_grad and st.grad_enabled:
            return None
    data = self._data
    if type(data) is not np.ndarray or DISPATCHER.tracer is not None:
        return None
    g = _SUM_DIM
    if g.entry.state is not g.state and not g.recheck():  # a kernel registered later
        return None
    dt = self.dtype
    out_dt = _SUM_DTYPE.get(dt)
    if out_dt is None:
        out_dt = _SUM_DTYPE[dt] = _INT64 if is_integral(dt, True) else dt
    cd = out_dt._numpy
    result = new_cpu_tensor(np.empty((), cd), (), (), out_dt)
    ndim = len(self._shape)
    axis = _ALL_AXES.get(ndim)
    if axis is None:
        axis = _ALL_AXES[ndim] = tuple(range(ndim)) if ndim else None
    o = result._data
    try:
        QUIET_RUN(_add_reduce, data, axis, cd, o)  # (array, axis, dtype, out): positional
    except RuntimeError as e:
        quiet_retry(e, _add_reduce, data, axis, cd, o)
    return result


# below a functional operator's plain autograd kernel: ADInplaceOrView skipped (Note
# [Versions of results made from inference tensors] in autograd/inference_versions.py)
_BELOW_FUNCTIONAL = AFTER_AUTOGRAD_RAW & ~keyset_raw(DispatchKey.ADInplaceOrView)


class _NestedGuard(FunctionalGuard):
    """A ``FunctionalGuard`` whose chain is the one a functional operator's plain autograd
    kernel takes: its no-grad redispatch skips ADInplaceOrView (whose kernels, set for the
    versions of results made from inference tensors, a normal call never reaches), then the
    named CPU kernel.

    >>> _NestedGuard("mean.dim", _WRAPPERS, "wrapper_CPU_mean_dim").recheck()
    True
    """

    __slots__ = ()

    def chain(self, state: Any) -> Any:
        final = state.final_keyset(DEFAULT_EXCLUDED_RAW, _CPU_KEY_SET | DEFAULT_INCLUDED_RAW)
        try:
            top, raw = state.resolve(final)
            below, _ = state.resolve(raw & _BELOW_FUNCTIONAL)
        except Exception:  # noqa: BLE001 - a missing kernel: the dispatched call reports it
            return None
        fn = below.fn
        if (
            getattr(top.fn, "_td_plain_no_grad", False) is True  # Note [Plain kernel markers]
            and below.kind is KernelKind.UNBOXED
            and getattr(fn, "__module__", None) == self.module
            and getattr(fn, "__name__", None) == self.function
        ):
            return fn
        return None


_WRAPPERS = "tensordispatch.generated.registrations"
_SUM_DIM = _NestedGuard("sum.dim_IntList", _WRAPPERS, "wrapper_CPU_sum_dim_IntList")
_MEAN_DIM = _NestedGuard("mean.dim", _WRAPPERS, "wrapper_CPU_mean_dim")
_FLOATING = 2  # dtypes.py's category rank of the real floating dtypes
_DTYPE = type(_dt.float32)


def mean_all_fast(self: Tensor, dtype: Any = None) -> Tensor | None:
    """``mean.dim(self, [], dtype=dtype)`` computed directly, or None when the dispatched
    call must run (Note [Full sum without the second dispatch], the mean paragraph).

    >>> import tensordispatch as td
    >>> mean_all_fast(td.tensor([1.0, 2.0])), mean_all_fast(td.tensor([1, 2]))
    (tensor(1.5000), None)
    >>> mean_all_fast(td.tensor([1.0, 2.0], dtype=td.float16), td.float64)
    tensor(1.5000, dtype=tensordispatch.float64)
    """
    if self._key_set != _CPU_KEY_SET:  # unobserved_cpu(self), inlined (one call less)
        return None
    st = _ST
    if st.included != DEFAULT_INCLUDED_RAW:
        return None
    excluded = st.excluded
    if excluded != _RECORDING_EXCLUDED:
        if excluded != DEFAULT_EXCLUDED_RAW:
            return None
        m = self._autograd_meta
        if m is not None and m.requires_grad and st.grad_enabled:
            return None
    data = self._data
    dt = self.dtype
    if (
        type(data) is not np.ndarray
        or dt._category != _FLOATING
        or data.size == 0
        or DISPATCHER.tracer is not None
    ):
        return None
    if dtype is None:
        out_dt = dt
    elif type(dtype) is _DTYPE and dtype._category == _FLOATING:
        out_dt = dtype
        data = data.astype(dtype._numpy)  # mean_out's cast before np.mean
    else:
        return None
    g = _MEAN_DIM
    if g.entry.state is not g.state and not g.recheck():  # a kernel registered later
        return None
    cd = out_dt._numpy
    result = new_cpu_tensor(np.empty((), cd), (), (), out_dt)
    ndim = len(self._shape)
    axis = _ALL_AXES.get(ndim)
    if axis is None:
        axis = _ALL_AXES[ndim] = tuple(range(ndim)) if ndim else None
    o = result._data
    try:
        QUIET_RUN(_add_reduce, data, axis, cd, o)  # (array, axis, dtype, out): positional
    except RuntimeError as e:
        quiet_retry(e, _add_reduce, data, axis, cd, o)
    o[()] = float(o) / data.size  # the float64 division and the cast back, as np.mean's
    return result


# -- structured reductions ---------------------------------------------------------------------


def prod_int_out(pre: Any, self: Tensor, dim: int, keepdim: bool, dtype: Any, out: Tensor) -> None:
    data = np.prod(self._data, axis=_axis(self, pre), dtype=out.dtype._numpy, keepdims=keepdim)
    _store(out, data)


def _amax_amin(fn: Any, name: str) -> Any:
    def impl(pre: Any, self: Tensor, dim: Any, keepdim: bool, out: Tensor) -> None:
        if self.numel() == 0:  # torch checks the dtype only when there are elements
            return
        if self.dtype.is_complex or self.dtype._category < 0:  # Note [Limited unsigned dtypes]
            raise _not_implemented(name, self)
        _store(out, fn(self._data, axis=_axis(self, pre), keepdims=keepdim))

    return impl


def _max_min_dim(fn: Any, arg: Any, name: str) -> Any:
    def impl(pre: Any, self: Tensor, dim: int, keepdim: bool, values: Tensor, idx: Tensor) -> None:
        if self.numel() == 0:
            return
        if self.dtype._category < 0:  # Note [Limited unsigned dtypes]
            raise _not_implemented(f"{name}_cpu", self)
        data = self._data if self.dim() else self._data.reshape(1)
        axis = pre if self.dim() else 0
        _store(values, fn(data, axis=axis, keepdims=keepdim))
        _store(idx, arg(data, axis=axis, keepdims=keepdim))

    return impl


def _arg_reduce(arg: Any) -> Any:
    def impl(pre: Any, self: Tensor, dim: Any, keepdim: bool, out: Tensor) -> None:
        if self.numel() == 0:
            return
        if self.dtype._category < 0:  # Note [Limited unsigned dtypes]
            raise _not_implemented(f"{arg.__name__}_cpu", self)
        data = self._data
        if pre is None or self.dim() == 0:
            _store(out, arg(data.reshape(-1)))
            return
        _store(out, arg(data, axis=pre, keepdims=keepdim))

    return impl


def _vector_norm(data: Any, p: Any, axis: Any, keepdim: bool) -> Any:
    a = np.abs(data)
    if p == 0:
        return np.sum(a != 0, axis=axis, keepdims=keepdim).astype(a.dtype)
    if p == float("inf"):
        return np.amax(a, axis=axis, keepdims=keepdim, initial=0)
    if p == float("-inf"):
        return np.amin(a, axis=axis, keepdims=keepdim)
    if p == 1:
        return np.sum(a, axis=axis, keepdims=keepdim)
    if p == 2:
        return np.sqrt(np.sum(a * a, axis=axis, keepdims=keepdim))
    return np.power(np.sum(np.power(a, p), axis=axis, keepdims=keepdim), 1.0 / p)


def norm_dtype_out(
    pre: Any, self: Tensor, p: Any, dim: Any, keepdim: bool, dtype: Any, out: Tensor
) -> None:
    dims, order = pre
    data = self._data if dtype is None else self._data.astype(dtype._numpy)
    with quiet_fp():
        _store(out, _vector_norm(data, order, _axis(self, dims) or None, keepdim))


def norm_out(pre: Any, self: Tensor, p: Any, dim: Any, keepdim: bool, out: Tensor) -> None:
    norm_dtype_out(pre, self, p, dim, keepdim, None, out)


def _softmax_into(out: Tensor, data: Any, axis: int, log: bool) -> None:
    """out = (log_)softmax of ``data`` along ``axis``: the ufuncs' own reduce methods (np.amax
    and np.sum add ~1 us of Python wrappers each); run in the quiet context by the impl."""
    # A row whose max is inf or nan gives nan everywhere (data - m), as torch's kernel does;
    # a row of -inf gives nan too. Rows are never empty here (the impl returns first).
    m = _max_reduce(data, axis=axis, keepdims=True, initial=-np.inf)
    shifted = data - m
    e = np.exp(shifted)
    s = _add_reduce(e, axis=axis, keepdims=True)
    target = out._data
    if target.shape != data.shape or target.dtype != data.dtype:
        _store(out, shifted - np.log(s) if log else e / s)
    elif log:  # written in place: the same ufunc call as above, without the copy
        np.subtract(shifted, np.log(s), out=target)
    else:
        np.divide(e, s, out=target)


_max_reduce = np.maximum.reduce
_add_reduce = np.add.reduce


def _softmax_impl(log: bool) -> Any:
    def impl(pre: Any, self: Tensor, dim: int, half_to_float: bool, out: Tensor) -> None:
        assert_no_internal_overlap(out)  # torch: on the resized out, no input check
        if 0 in self._shape:
            return
        data = self._data if self._shape else self._data.reshape(1)
        try:  # NumPy's FP reports off (Note [Quiet context] in fpstate.py)
            QUIET_RUN(_softmax_into, out, data, pre, log)
        except RuntimeError as e:
            quiet_retry(e, _softmax_into, out, data, pre, log)

    return impl


def cumsum_out(pre: Any, self: Tensor, dim: int, dtype: Any, out: Tensor) -> None:
    check_written(out, (self,))  # torch: on the resized out
    data = self._data if self.dim() else self._data.reshape(1)
    _store(out, np.cumsum(data, axis=pre, dtype=out.dtype._numpy))


def _all_any(fn: Any) -> Any:
    def dims_impl(pre: Any, self: Tensor, *rest: Any) -> None:
        out = rest[-1]
        keepdim = rest[1] if len(rest) == 3 else False
        data = self._data
        if out.dtype is _dt.uint8 and self.dtype is not _dt.uint8:
            data = data.astype(np.uint8)  # torch reduces the input cast to the out dtype
        _store(out, fn(data, axis=_axis(self, pre), keepdims=keepdim))

    return dims_impl


# -- structured batched linear algebra ---------------------------------------------------------


def _scaled_sum(self: Tensor, product: Any, beta: Any, alpha: Any, out: Tensor) -> None:
    dt = product.dtype
    if alpha != 1:
        product = np.multiply(product, alpha, dtype=dt, casting="unsafe")
    if beta == 0:
        _store(out, product)
        return
    bias = self._data if beta == 1 else np.multiply(self._data, beta, dtype=dt, casting="unsafe")
    _store(out, np.add(bias, product, dtype=dt, casting="unsafe"))


def baddbmm_out(
    pre: Any, self: Tensor, b1: Tensor, b2: Tensor, beta: Any, alpha: Any, out: Tensor
) -> None:
    if beta != 0 and out is not self:  # torch copies self into out first
        check_bias_copy(out, self)
    if b1.dtype._category <= 0:  # bool, or Note [Limited unsigned dtypes]
        raise _not_implemented("baddbmm_cpu" if b1.dtype is _dt.bool else "baddbmm", b1)
    _scaled_sum(self, np.matmul(b1._data, b2._data), beta, alpha, out)


def addmv_out(
    pre: Any, self: Tensor, mat: Tensor, vec: Tensor, beta: Any, alpha: Any, out: Tensor
) -> None:
    if mat.dtype._category <= 0:  # bool, or Note [Limited unsigned dtypes]
        raise _not_implemented("addmv_impl_cpu", mat)
    _scaled_sum(self, np.matmul(mat._data, vec._data), beta, alpha, out)


# -- unstructured reductions -------------------------------------------------------------------


def prod_cpu(self: Tensor, *, dtype: Any = None) -> Tensor:
    result = alloc_cpu(_m.prod_spec(self, dtype))
    _store(result, np.prod(self._data, dtype=result.dtype._numpy))
    return result


def _max_all(fn: Any, name: str) -> Any:
    def compute(self: Tensor, out: Tensor) -> Tensor:
        if self.dtype.is_complex or self.dtype._category < 0:  # Note [Limited ...]
            raise _not_implemented(f"{name}_all", self)
        _store(out, fn(self._data))
        return out

    def kernel(self: Tensor) -> Tensor:
        return compute(self, alloc_cpu(_m.max_all_spec(name, self)))

    def out_kernel(self: Tensor, *, out: Tensor) -> Tensor:
        prepare_out(out, _m.max_all_spec(name, self))
        return compute(self, out)

    return kernel, out_kernel


def _variance(self: Tensor, dims: Any, correction: Any, keepdim: bool) -> Any:
    data = self._data
    axis = _axis(self, dims)
    kept = 1 if axis is None else data.size // max(int(np.prod([data.shape[d] for d in axis])), 1)
    n = data.size // max(kept, 1) if data.size else 0  # torch: input numel / output numel
    c = 1 if correction is None else correction
    if n - c <= 0:
        warnings.warn(
            "var(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "reduction factor (input numel divided by output numel).",
            UserWarning,
            stacklevel=3,
        )
    kind, size = data.dtype.kind, data.dtype.itemsize
    if (kind == "f" and size < 8) or (kind == "c" and size < 16):
        # torch accumulates in double (WelfordOps<scalar_t, double>): no float32 overflow of
        # the sum (var of equal values near the float32 maximum is 0); stored back rounded
        data = data.astype(np.float64 if kind == "f" else np.complex128)
    with quiet_fp():
        mean = np.sum(data, axis=axis, keepdims=True) / n  # np.mean warns on empty input
        dev = np.abs(data - mean) ** 2 if self.dtype.is_complex else (data - mean) ** 2
        return np.sum(dev, axis=axis, keepdims=keepdim) / max(n - c, 0)


def _var_kernels(root: bool) -> Any:
    def compute(self: Tensor, dim: Any, correction: Any, keepdim: bool, out: Tensor) -> None:
        dims = _m.var_spec(self, dim, keepdim)[1]
        value = _variance(self, dims, correction, keepdim)
        _store(out, np.sqrt(value) if root else value)

    def kernel(
        self: Tensor, dim: Any = None, *, correction: Any = None, keepdim: bool = False
    ) -> Tensor:
        out = alloc_cpu(_m.var_spec(self, dim, keepdim)[0])
        compute(self, dim, correction, keepdim, out)
        return out

    def out_kernel(
        self: Tensor, dim: Any = None, *, correction: Any = None, keepdim: bool = False,
        out: Tensor,
    ) -> Tensor:  # fmt: skip
        prepare_out(out, _m.var_spec(self, dim, keepdim, out)[0])
        compute(self, dim, correction, keepdim, out)
        return out

    return kernel, out_kernel


def _logsumexp(self: Tensor, dims: Any, keepdim: bool, dt: Any) -> Any:
    data = self._data.astype(dt._numpy, copy=False)
    axis = _axis(self, dims)
    with quiet_fp():
        # complex: the max of the real parts, as torch (the imaginary part of the result
        # then stays the principal log's, in (-pi, pi])
        real = data.real if np.iscomplexobj(data) else data
        m = np.amax(real, axis=axis, keepdims=True, initial=-np.inf)
        m = np.where(np.isfinite(m), m, 0)
        result = np.log(np.sum(np.exp(data - m), axis=axis, keepdims=True)) + m
    if not keepdim:
        result = result.reshape(_m.reduction_shape(self._shape, dims, False))
    return result


def logsumexp_cpu(self: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    spec, dims = _m.logsumexp_spec(self, dim, keepdim)
    out = alloc_cpu(spec)
    _store(out, _logsumexp(self, dims, keepdim, spec[2]))
    return out


def logsumexp_out_cpu(self: Tensor, dim: Any, keepdim: bool = False, *, out: Tensor) -> Tensor:
    _m.check_logsumexp_out(out)
    spec, dims = _m.logsumexp_spec(self, dim, keepdim)
    prepare_out(out, (spec[0], spec[1], out.dtype))
    _store(out, _logsumexp(self, dims, keepdim, spec[2]))
    return out


_MAX, _MAX_OUT = _max_all(np.amax, "max")
_MIN, _MIN_OUT = _max_all(np.amin, "min")
_VAR, _VAR_OUT = _var_kernels(False)
_STD, _STD_OUT = _var_kernels(True)

REDUCTION_CPU_KERNELS: dict[str, Any] = {
    "prod_int_out": prod_int_out,
    "amax_out": _amax_amin(np.amax, "max_values_cpu"),
    "amin_out": _amax_amin(np.amin, "min_values_cpu"),
    "max_dim_out": _max_min_dim(np.amax, np.argmax, "max"),
    "min_dim_out": _max_min_dim(np.amin, np.argmin, "min"),
    "argmax_out": _arg_reduce(np.argmax),
    "argmin_out": _arg_reduce(np.argmin),
    "norm_out": norm_out,
    "norm_dtype_out": norm_dtype_out,
    "softmax_cpu_out": _softmax_impl(False),
    "log_softmax_cpu_out": _softmax_impl(True),
    "cumsum_out": cumsum_out,
    **{
        f"{n}_{k}": _all_any(fn)
        for n, fn in (("all", np.all), ("any", np.any))
        for k in ("dim_out", "dims_out", "all_out")
    },
    "baddbmm_out_cpu": baddbmm_out,
    "addmv_out_cpu": addmv_out,
    "prod_cpu": prod_cpu,
    "max_all_cpu": _MAX,
    "max_unary_out": _MAX_OUT,
    "min_all_cpu": _MIN,
    "min_unary_out": _MIN_OUT,
    "var_correction_cpu": _VAR,
    "var_correction_out_cpu": _VAR_OUT,
    "std_correction_cpu": _STD,
    "std_correction_out_cpu": _STD_OUT,
    "logsumexp_cpu": logsumexp_cpu,
    "logsumexp_out_cpu": logsumexp_out_cpu,
}
