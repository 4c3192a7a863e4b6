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
``FRESH_IMPLS``. The fused in-place kernels are in fresh_inplace.py; ``CPU_INPLACE_KERNELS``
is re-exported here, the name the generated registrations use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tensordispatch.backends.common import broadcast_shapes
from tensordispatch.backends.cpu.fpstate import QUIET_RUN, quiet_retry
from tensordispatch.backends.cpu.fresh_inplace import CPU_INPLACE_KERNELS  # re-exported
from tensordispatch.backends.structured import alloc_cpu
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.device import CPU
from tensordispatch.tensor.geometry import CONTIGUOUS_STRIDES as _CONTIGUOUS
from tensordispatch.tensor.geometry import contiguous_of as _contiguous_of
from tensordispatch.tensor.inference import mark_inference, watch_inference_count
from tensordispatch.tensor.tensor import _CPU_KEY_SET, Tensor, contiguous_strides, new_cpu_tensor

__all__ = ["CPU_FRESH_KERNELS", "CPU_FUNCTIONAL_KERNELS", "CPU_INPLACE_KERNELS", "as_result"]

_ndarray = np.ndarray
_asarray = np.asarray
_ONE: tuple[int, ...] = (1,)
_INFERENCE_ACTIVE = 0  # open inference_mode blocks, kept by watch_inference_count
watch_inference_count(globals())


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
    elif type(r) is _ndarray and r.dtype is dt._numpy and r.shape == shape:
        # NumPy keeps its operands' memory order (order="K"), as TensorIterator does: a
        # fresh dense array with exactly the spec's strides is the result as it is.
        item = dt.itemsize
        if len(strides) == 2:  # spelled out: a comprehension costs ~250 ns in CPython 3.11
            t0, t1 = strides
            expected = (t0 * item, t1 * item) if t0 >= 0 and t1 >= 0 else None
        else:
            expected = tuple([s * item for s in strides]) if min(strides) >= 0 else None
        if r.strides == expected:
            return new_cpu_tensor(r, shape, strides, dt)
    out = alloc_cpu(spec)
    o = out._data
    try:  # a narrowing cast (float16) may overflow: no warning, as torch
        QUIET_RUN(_copyto, o, r, casting="unsafe")
    except RuntimeError as e:  # Note [Quiet context] in fpstate.py
        quiet_retry(e, _copyto, o, r, casting="unsafe")
    return out


_copyto = np.copyto


# When the operands already have the computation dtype, NumPy's own loop for them is the
# one dtype= would pick: calling without keywords saves ~100 ns of argument parsing. Every
# ufunc runs with NumPy's floating-point reports off (torch never warns about overflow,
# division by zero or invalid results): QUIET_RUN inline (Note [Quiet context]).


def _binary(ufunc: Any) -> Callable[..., Tensor]:
    def fresh(pre: Any, spec: Any, self: Tensor, other: Tensor) -> Tensor:
        try:
            if self.dtype is pre and other.dtype is pre:
                r = QUIET_RUN(ufunc, self._data, other._data)
            else:
                r = QUIET_RUN(ufunc, self._data, other._data, dtype=pre._numpy, casting="unsafe")
        except RuntimeError as e:  # Note [Quiet context] in fpstate.py
            r = quiet_retry(e, ufunc, self._data, other._data, dtype=pre._numpy, casting="unsafe")
        if type(r) is _ndarray and r.ndim == 1 and spec[1] is None and spec[2] is pre:
            return new_cpu_tensor(r, spec[0], _ONE, pre)  # as_result, inline
        return as_result(r, spec)

    fresh.__name__ = f"{ufunc.__name__}_fresh"
    return fresh


def _with_alpha(ufunc: Any) -> Callable[..., Tensor]:
    def fresh(pre: Any, spec: Any, self: Tensor, other: Tensor, alpha: Any = 1) -> Tensor:
        if (
            alpha == 1
            and type(alpha) is int
            and self.dtype is pre
            and other.dtype is pre
            and pre._category != _COMPLEX  # Note [Complex alpha] in cpu/kernels.py
        ):
            try:
                r = QUIET_RUN(ufunc, self._data, other._data)
            except RuntimeError as e:
                r = quiet_retry(e, ufunc, self._data, other._data)
            if type(r) is _ndarray and r.ndim == 1 and spec[1] is None and spec[2] is pre:
                return new_cpu_tensor(r, spec[0], _ONE, pre)
            return as_result(r, spec)
        cd = pre._numpy
        b = other._data
        f = ufunc
        if pre._category == _COMPLEX and ufunc is np.subtract:  # Note [Complex alpha]
            f, alpha = np.add, -alpha  # torch's sub is add(self, other, -alpha)
        if alpha != 1 or type(alpha) is bool or pre._category == _COMPLEX:
            a = np.array(alpha).astype(cd)
            try:
                b = QUIET_RUN(np.multiply, b, a, dtype=cd, casting="unsafe")
            except RuntimeError as e:
                b = quiet_retry(e, np.multiply, b, a, dtype=cd, casting="unsafe")
        try:
            r = QUIET_RUN(f, self._data, b, dtype=cd, casting="unsafe")
        except RuntimeError as e:
            r = quiet_retry(e, f, self._data, b, dtype=cd, casting="unsafe")
        return as_result(r, spec)

    fresh.__name__ = f"{ufunc.__name__}_fresh"
    return fresh


def _mul(pre: Any, spec: Any, self: Tensor, other: Tensor) -> Tensor:
    if pre is _dt.bool:
        r = np.logical_and(self._data, other._data)
    else:
        try:
            if self.dtype is pre and other.dtype is pre:
                r = QUIET_RUN(np.multiply, self._data, other._data)
            else:
                r = QUIET_RUN(
                    np.multiply, self._data, other._data, dtype=pre._numpy, casting="unsafe"
                )
        except RuntimeError as e:  # Note [Quiet context] in fpstate.py
            r = quiet_retry(
                e, np.multiply, self._data, other._data, dtype=pre._numpy, casting="unsafe"
            )
    return as_result(r, spec)


def _unary(ufunc: Any) -> Callable[..., Tensor]:
    def fresh(pre: Any, spec: Any, self: Tensor) -> Tensor:
        try:
            if self.dtype is pre:
                r = QUIET_RUN(ufunc, self._data)
            else:
                r = QUIET_RUN(ufunc, self._data, dtype=pre._numpy, casting="unsafe")
        except RuntimeError as e:  # Note [Quiet context] in fpstate.py
            r = quiet_retry(e, ufunc, self._data, dtype=pre._numpy, casting="unsafe")
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
    "div_out": _binary(np.true_divide),
    "neg_out": _unary(np.negative),
    "exp_out": _unary(np.exp),
    "sin_out": _unary(np.sin),
    "cos_out": _unary(np.cos),
    "sqrt_out": _unary(np.sqrt),
}


# Note [Fused functional kernels]
# The generated functional wrapper of a FRESH group calls the meta function, unpacks its
# answer and calls the fresh kernel: three Python frames and two tuples before NumPy runs,
# about 450 ns of a 1.1 us ``add``. A kernel of CPU_FUNCTIONAL_KERNELS is the whole functional
# CPU kernel in one frame. Its fast path covers operands the meta function would answer
# without any promotion or layout work: same dtype, same shape, same device, no wrapped
# number, and either 1-d (any stride: NumPy's fresh 1-d result is contiguous, as the spec) or
# n-d with both operands exactly contiguous (NumPy keeps C order). There it calls the ufunc
# as the fresh kernel would and builds the result Tensor inline. Any other call (0-d, other
# layouts, mixed dtypes, alpha != 1, dtypes the meta function refuses or promotes) runs the
# meta function and the fresh kernel, exactly the generated wrapper's body, so results and
# errors are the same by construction. The codegen registers these in place of the
# wrappers of the groups listed in codegen/model.py.

_new = object.__new__
_FLOATING = 2  # dtypes.py's category ranks: bool 0, integral 1, floating 2, complex 3
_COMPLEX = 3


def _pair_strides(self: Tensor, other: Tensor, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """The result strides of the fused fast path for two same-shape n-d operands (n != 1:
    the kernels handle 1-d inline): () for 0-d (the kernel then turns NumPy's scalar result
    into a 0-d array), None when they are not both exactly contiguous."""
    if not shape:
        return shape
    strides = _contiguous_of(shape)
    if self._strides == strides and other._strides == strides:
        return strides
    return None


def _scalar_operand(ufunc: Any, self: Tensor, other: Tensor, dt: Any) -> Tensor | None:
    """``ufunc(self, wrapped number)`` computing in ``dt`` (self's dtype, which the meta
    function picks for a number of no higher category) when self is 1-d or contiguous, as the
    fresh kernel would; None when the layout needs the general path."""
    shape = self._shape
    n = len(shape)
    if n == 1:
        strides = _ONE
    elif not n:
        strides = shape
    elif self._strides == _contiguous_of(shape):
        strides = self._strides
    else:
        return None
    a, b, cd = self._data, other._data, dt._numpy
    try:
        r = QUIET_RUN(ufunc, a, b, dtype=cd, casting="unsafe")
    except RuntimeError as e:  # Note [Quiet context] in fpstate.py
        r = quiet_retry(e, ufunc, a, b, dtype=cd, casting="unsafe")
    if not n:  # a 0-d self: NumPy answers with a scalar
        r = _asarray(r)
    return new_cpu_tensor(r, shape, strides, dt)


# Note [Broadcast operands in the fused kernels]
# Two operands of one dtype and device but different shapes (``a * b[0]``, a bias row)
# used to take the meta function (promotion, TensorIterator's output strides) and the
# fresh kernel: ~1.7 us before NumPy's own ~0.9. When both operands are exactly contiguous,
# TensorIterator's dimension order is the identity (in contiguous strides an earlier dim
# never has the smaller stride, and broadcast dims have stride 0, which decides nothing),
# so torch's result is contiguous with the broadcast shape, as NumPy's fresh C-order result
# is; the dtype is the operands' own. The broadcast of the two shapes is the meta
# function's (common.broadcast_shapes, cached per pair); shapes that do not broadcast go
# to the meta function for its error. A result NumPy does not lay out in C order (it always
# does for C-contiguous operands) is copied by as_result.


def _broadcast_operands(ufunc: Any, self: Tensor, other: Tensor, dt: Any) -> Tensor | None:
    """``ufunc(self, other)`` for two contiguous operands of dtype ``dt`` whose shapes differ
    and broadcast; None when the general path must decide (Note [Broadcast operands in the
    fused kernels])."""
    plan = _PLANS.get((self._shape, other._shape))
    if plan is None:
        plan = _broadcast_plan(self._shape, other._shape)
        if plan is None:
            return None
    shape, a_strides, b_strides, strides = plan
    if self._strides != a_strides or other._strides != b_strides:
        return None
    try:
        r = QUIET_RUN(ufunc, self._data, other._data)
    except RuntimeError as e:  # Note [Quiet context] in fpstate.py
        r = quiet_retry(e, ufunc, self._data, other._data)
    if not r.flags.c_contiguous:  # an ndarray: the broadcast shape has a dim (one operand has)
        return as_result(r, (shape, None, dt))
    t = _new(Tensor)  # new_cpu_tensor(r, shape, strides, dt), inline
    t._key_set = _CPU_KEY_SET
    t._shape = shape
    t._strides = strides
    t._offset = 0
    t.dtype = dt
    t.device = CPU
    t._data = r
    t._storage = None
    t._vc = None
    t._base = None
    t._wrapped_number = False
    t._autograd_meta = None
    if _INFERENCE_ACTIVE:  # Note [Inference tensors] in tensor/inference.py
        mark_inference(t)
    return t


# (shape, shape) -> (broadcast shape, the two operands' contiguous strides, the result's)
_PLANS: dict[tuple[Any, Any], tuple[Any, Any, Any, Any]] = {}


def _broadcast_plan(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[Any, Any, Any, Any] | None:
    """The cached plan of two operand shapes (the first 4096 pairs), None if they do not
    broadcast (the meta function then raises torch's error)."""
    try:
        shape = broadcast_shapes(a, b)
    except RuntimeError:
        return None
    plan = (shape, _contiguous_of(a), _contiguous_of(b), _contiguous_of(shape))
    if len(_PLANS) < 4096 and type(a) is tuple and type(b) is tuple:
        _PLANS[a, b] = plan
    return plan


def _fused_binary(ufunc: Any, op: str, fresh_name: str, min_category: int) -> Callable[..., Tensor]:
    """A fused functional kernel ``(self, other)`` (Note [Fused functional kernels])."""
    from tensordispatch.backends.meta import META_FUNCTIONS

    meta, fresh = META_FUNCTIONS[op], CPU_FRESH_KERNELS[fresh_name]

    def kernel(self: Tensor, other: Tensor) -> Tensor:
        dt = self.dtype
        shape = self._shape
        if (
            dt is other.dtype
            and dt._category >= min_category
            and self.device is other.device
            and not (self._wrapped_number or other._wrapped_number)
        ):
            if shape != other._shape:
                result = _broadcast_operands(ufunc, self, other, dt)
                if result is not None:
                    return result
                strides = None
            else:
                strides = _ONE if len(shape) == 1 else _pair_strides(self, other, shape)
            if strides is not None:
                try:
                    r = QUIET_RUN(ufunc, self._data, other._data)
                except RuntimeError as e:  # Note [Quiet context] in fpstate.py
                    r = quiet_retry(e, ufunc, self._data, other._data)
                if not strides:  # 0-d operands: NumPy answers with a scalar
                    r = _asarray(r)
                t = _new(Tensor)  # new_cpu_tensor(r, shape, strides, dt), inline
                t._key_set = _CPU_KEY_SET
                t._shape = shape
                t._strides = strides
                t._offset = 0
                t.dtype = dt
                t.device = CPU
                t._data = r
                t._storage = None
                t._vc = None
                t._base = None
                t._wrapped_number = False
                t._autograd_meta = None
                if _INFERENCE_ACTIVE:  # Note [Inference tensors] in tensor/inference.py
                    mark_inference(t)
                return t
        elif (
            other._wrapped_number
            and 1 <= other.dtype._category <= dt._category
            and dt._category >= min_category
            and not self._wrapped_number
        ):
            result = _scalar_operand(ufunc, self, other, dt)
            if result is not None:
                return result
        specs, pre = meta(None, self, other)
        return fresh(pre, specs[0], self, other)

    kernel.__name__ = kernel.__qualname__ = f"{ufunc.__name__}_functional"
    return kernel


def _fused_alpha(ufunc: Any, op: str, fresh_name: str) -> Callable[..., Tensor]:
    """A fused functional kernel ``(self, other, *, alpha=1)`` (add, sub); the fast path
    needs alpha == 1 (an int) and a non-bool dtype (sub refuses bool, add of bools is or)."""
    from tensordispatch.backends.meta import META_FUNCTIONS

    meta, fresh = META_FUNCTIONS[op], CPU_FRESH_KERNELS[fresh_name]

    def kernel(self: Tensor, other: Tensor, *, alpha: Any = 1) -> Tensor:
        dt = self.dtype
        shape = self._shape
        if (
            type(alpha) is int
            and alpha == 1
            and dt is other.dtype
            and 1 <= dt._category <= _FLOATING  # not bool; complex: Note [Complex alpha]
            and self.device is other.device
            and not (self._wrapped_number or other._wrapped_number)
        ):
            if shape != other._shape:
                result = _broadcast_operands(ufunc, self, other, dt)
                if result is not None:
                    return result
                strides = None
            else:
                strides = _ONE if len(shape) == 1 else _pair_strides(self, other, shape)
            if strides is not None:
                try:
                    r = QUIET_RUN(ufunc, self._data, other._data)
                except RuntimeError as e:  # Note [Quiet context] in fpstate.py
                    r = quiet_retry(e, ufunc, self._data, other._data)
                if not strides:  # 0-d operands: NumPy answers with a scalar
                    r = _asarray(r)
                t = _new(Tensor)  # new_cpu_tensor(r, shape, strides, dt), inline
                t._key_set = _CPU_KEY_SET
                t._shape = shape
                t._strides = strides
                t._offset = 0
                t.dtype = dt
                t.device = CPU
                t._data = r
                t._storage = None
                t._vc = None
                t._base = None
                t._wrapped_number = False
                t._autograd_meta = None
                if _INFERENCE_ACTIVE:  # Note [Inference tensors] in tensor/inference.py
                    mark_inference(t)
                return t
        elif (
            other._wrapped_number
            and type(alpha) is int
            and alpha == 1
            and 1 <= other.dtype._category <= dt._category <= _FLOATING
            and not self._wrapped_number
        ):
            result = _scalar_operand(ufunc, self, other, dt)
            if result is not None:
                return result
        specs, pre = meta(None, self, other, alpha)
        return fresh(pre, specs[0], self, other, alpha)

    kernel.__name__ = kernel.__qualname__ = f"{ufunc.__name__}_functional"
    return kernel


def _fused_unary(
    ufunc: Any, op: str, fresh_name: str, min_category: int, quiet: bool
) -> Callable[..., Tensor]:
    """A fused functional kernel ``(self)``; ``quiet``: NumPy's FP error reports off (every
    unary op here but neg, whose sign flip raises no FP flag)."""
    from tensordispatch.backends.meta import META_FUNCTIONS

    meta, fresh = META_FUNCTIONS[op], CPU_FRESH_KERNELS[fresh_name]

    def kernel(self: Tensor) -> Tensor:
        dt = self.dtype
        if dt._category >= min_category and not self._wrapped_number:
            shape = self._shape
            strides: tuple[int, ...] | None
            if len(shape) == 1:
                strides = _ONE
            elif not shape:
                strides = shape  # 0-d: NumPy's scalar result is turned into a 0-d array
            elif self._strides == _contiguous_of(shape):
                strides = self._strides
            else:
                strides = None
            if strides is not None:
                if quiet:
                    try:
                        r = QUIET_RUN(ufunc, self._data)
                    except RuntimeError as e:  # Note [Quiet context] in fpstate.py
                        r = quiet_retry(e, ufunc, self._data)
                else:
                    r = ufunc(self._data)
                if not strides:
                    r = _asarray(r)
                t = _new(Tensor)  # new_cpu_tensor(r, shape, strides, dt), inline
                t._key_set = _CPU_KEY_SET
                t._shape = shape
                t._strides = strides
                t._offset = 0
                t.dtype = dt
                t.device = CPU
                t._data = r
                t._storage = None
                t._vc = None
                t._base = None
                t._wrapped_number = False
                t._autograd_meta = None
                if _INFERENCE_ACTIVE:  # Note [Inference tensors] in tensor/inference.py
                    mark_inference(t)
                return t
        specs, pre = meta(None, self)
        return fresh(pre, specs[0], self)

    kernel.__name__ = kernel.__qualname__ = f"{ufunc.__name__}_functional"
    return kernel


# Keyed by the functional overload's name (the META_FUNCTIONS key); every kernel has the
# generated functional wrapper's Python signature.
CPU_FUNCTIONAL_KERNELS: dict[str, Callable[..., Tensor]] = {
    "add.Tensor": _fused_alpha(np.add, "add.Tensor", "add_out"),
    "sub.Tensor": _fused_alpha(np.subtract, "sub.Tensor", "sub_out"),
    "mul.Tensor": _fused_binary(np.multiply, "mul.Tensor", "mul_out", 1),
    "div.Tensor": _fused_binary(np.true_divide, "div.Tensor", "div_out", _FLOATING),
    "neg": _fused_unary(np.negative, "neg", "neg_out", 1, quiet=False),
    "exp": _fused_unary(np.exp, "exp", "exp_out", _FLOATING, quiet=True),
    "sin": _fused_unary(np.sin, "sin", "sin_out", _FLOATING, quiet=True),
    "cos": _fused_unary(np.cos, "cos", "cos_out", _FLOATING, quiet=True),
    "sqrt": _fused_unary(np.sqrt, "sqrt", "sqrt_out", _FLOATING, quiet=True),
}
