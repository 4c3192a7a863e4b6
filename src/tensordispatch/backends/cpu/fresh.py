"""Functional CPU kernels of structured pointwise groups that compute a fresh result.

Note [Fresh results]
A structured functional wrapper allocates the output from the meta spec and then runs the
out= impl into it (spec 3.2). For the small pointwise ops of the hot path that costs an
``np.empty`` plus NumPy's slower ``out=`` call, about a third of the wrapper. A kernel here
takes the meta function's ``(precomputed, spec, *args)`` instead and lets NumPy allocate:
``ufunc(a, b, dtype=computation dtype)``. The result is used as it is only when it is
exactly what the spec describes (contiguous, the spec's dtype; NumPy's fresh C-order
arrays have torch's contiguous strides); otherwise (0-dim results come back as NumPy
scalars, strided specs, another output dtype) it is copied into an allocation of the spec,
so the result never differs from the allocate-then-impl path. The codegen uses a kernel of
``CPU_FRESH_KERNELS`` for a group whose out impl name is listed in codegen/model.py's
``FRESH_IMPLS``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tensordispatch.backends.cpu.fpstate import FP_QUIET, FP_STATE
from tensordispatch.backends.structured import alloc_cpu
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.tensor import Tensor, contiguous_strides, new_cpu_tensor

__all__ = ["CPU_FRESH_KERNELS", "as_result"]

_ndarray = np.ndarray
_CONTIGUOUS: dict[tuple[int, ...], tuple[int, ...]] = {}
_ONE = (1,)


def as_result(r: Any, spec: Any) -> Tensor:
    """The output tensor of ``spec`` holding NumPy's fresh result ``r`` (Note [Fresh
    results]): ``r`` itself when it has the spec's layout and dtype, else a copy.

    >>> import numpy as np
    >>> from tensordispatch.tensor import float32, float64
    >>> as_result(np.ones(2, np.float32), ((2,), None, float32)).tolist()
    [1.0, 1.0]
    >>> as_result(np.float32(2.0), ((), None, float64))
    tensor(2., dtype=tensordispatch.float64)
    """
    shape, strides, dt = spec
    if strides is None and type(r) is _ndarray and r.dtype is dt._numpy:
        if r.ndim == 1:  # a fresh 1-d result is contiguous; its length is the spec's
            return new_cpu_tensor(r, shape, _ONE, dt)
        if r.flags.c_contiguous and r.shape == shape:
            contiguous = _CONTIGUOUS.get(shape)
            if contiguous is None:
                contiguous = contiguous_strides(shape)
                if len(_CONTIGUOUS) < 4096:
                    _CONTIGUOUS[shape] = contiguous
            return new_cpu_tensor(r, shape, contiguous, dt)
    out = alloc_cpu(spec)
    np.copyto(out._data, r, casting="unsafe")
    return out


# When the operands already have the computation dtype, NumPy's own loop for them is the
# one dtype= would pick: calling without keywords saves ~100 ns of argument parsing.


def _binary(ufunc: Any, quiet: bool) -> Callable[..., Tensor]:
    def fresh(pre: Any, spec: Any, self: Tensor, other: Tensor) -> Tensor:
        token = FP_STATE.set(FP_QUIET) if quiet else None
        try:
            if self.dtype is pre and other.dtype is pre:
                r = ufunc(self._data, other._data)
            else:
                r = ufunc(self._data, other._data, dtype=pre._numpy, casting="unsafe")
        finally:
            if token is not None:
                FP_STATE.reset(token)
        if type(r) is _ndarray and r.ndim == 1 and spec[1] is None and spec[2] is pre:
            return new_cpu_tensor(r, spec[0], _ONE, pre)  # as_result, inline
        return as_result(r, spec)

    fresh.__name__ = f"{ufunc.__name__}_fresh"
    return fresh


def _with_alpha(ufunc: Any) -> Callable[..., Tensor]:
    def fresh(pre: Any, spec: Any, self: Tensor, other: Tensor, alpha: Any = 1) -> Tensor:
        if alpha == 1 and type(alpha) is int and self.dtype is pre and other.dtype is pre:
            r = ufunc(self._data, other._data)
            if type(r) is _ndarray and r.ndim == 1 and spec[1] is None and spec[2] is pre:
                return new_cpu_tensor(r, spec[0], _ONE, pre)
            return as_result(r, spec)
        cd = pre._numpy
        b = other._data
        if alpha != 1 or type(alpha) is bool:
            b = np.multiply(b, np.array(alpha).astype(cd), dtype=cd, casting="unsafe")
        return as_result(ufunc(self._data, b, dtype=cd, casting="unsafe"), spec)

    fresh.__name__ = f"{ufunc.__name__}_fresh"
    return fresh


def _mul(pre: Any, spec: Any, self: Tensor, other: Tensor) -> Tensor:
    if pre is _dt.bool:
        r = np.logical_and(self._data, other._data)
    elif self.dtype is pre and other.dtype is pre:
        r = np.multiply(self._data, other._data)
    else:
        r = np.multiply(self._data, other._data, dtype=pre._numpy, casting="unsafe")
    return as_result(r, spec)


def _unary(ufunc: Any) -> Callable[..., Tensor]:
    def fresh(pre: Any, spec: Any, self: Tensor) -> Tensor:
        token = FP_STATE.set(FP_QUIET)  # np.errstate(all="ignore"), cheaply (fpstate.py)
        try:
            if self.dtype is pre:
                r = ufunc(self._data)
            else:
                r = ufunc(self._data, dtype=pre._numpy, casting="unsafe")
        finally:
            FP_STATE.reset(token)
        if type(r) is _ndarray and r.ndim == 1 and spec[1] is None and spec[2] is pre:
            return new_cpu_tensor(r, spec[0], _ONE, pre)  # as_result, inline
        return as_result(r, spec)

    fresh.__name__ = f"{ufunc.__name__}_fresh"
    return fresh


# Keyed by the out impl's name in CPU_KERNELS (the yaml's CPU: kernel of the out entry).
CPU_FRESH_KERNELS: dict[str, Callable[..., Tensor]] = {
    "add_out": _with_alpha(np.add),
    "sub_out": _with_alpha(np.subtract),
    "mul_out": _mul,
    "div_out": _binary(np.true_divide, quiet=True),
    "neg_out": _unary(np.negative),
    "exp_out": _unary(np.exp),
    "sin_out": _unary(np.sin),
    "cos_out": _unary(np.cos),
    "sqrt_out": _unary(np.sqrt),
}
