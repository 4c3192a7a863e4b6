"""CompositeExplicitAutograd kernels of the layout, indexing and factory operators (F3).

Written once for every backend in terms of other operators (``op``), so they run on CPU and
Meta alike: factories allocate with ``empty`` and fill through an out=/in-place operator,
functional forms clone and call the in-place one, as ATen's do.
"""

from __future__ import annotations

from typing import Any

from tensordispatch.backends.aten import op
from tensordispatch.backends.common import (
    broadcast_shapes,
    contiguous_format,
    shape_text,
    strided,
    wrap_dim,
)
from tensordispatch.backends.composite import empty_like
from tensordispatch.backends.composite_direct import KnownOutKernel, direct_cpu_kernels
from tensordispatch.backends.cpu.kernels import empty_cpu
from tensordispatch.backends.cpu.layout import (
    arange_cpu,
    arange_start_out,
    eye_m_out,
)
from tensordispatch.backends.cpu.linspace import linspace_cpu
from tensordispatch.backends.cpu.linspace import linspace_out as cpu_linspace_out
from tensordispatch.backends.meta.layout import arange_length, eye_check, linspace_check
from tensordispatch.backends.structured import resize_output
from tensordispatch.backends.view_ops import VIEW_OP_KERNELS
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.device import CPU
from tensordispatch.tensor.tensor import Tensor

__all__ = ["COMPOSITE_LAYOUT"]

_ARANGE_OUT = KnownOutKernel("arange.start_out", arange_start_out)
_LINSPACE_OUT = KnownOutKernel("linspace.out", cpu_linspace_out)
_EYE_OUT = KnownOutKernel("eye.m_out", eye_m_out)


def _direct(device: Any, layout: Any, pin_memory: Any, out_kernel: KnownOutKernel) -> bool:
    """Whether a range factory may call our CPU ``empty`` and out= kernel itself (Note
    [Composite factories call known kernels directly] in composite_direct.py): a CPU result
    under the bindings' words, with both operators' dispatch known to reach those kernels."""
    return bool(
        (device is None or device is CPU)
        and (layout is None or layout is strided)
        and not pin_memory
        and direct_cpu_kernels()
        and out_kernel.known()
    )


def _to_copy(
    self: Tensor,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: Any = None,
    non_blocking: bool = False,
    memory_format: Any = None,
) -> Tensor:
    result = empty_like(
        self, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
        memory_format=memory_format,
    )  # fmt: skip
    op("copy_")(result, self, non_blocking)
    return result


def stack(tensors: Any, dim: int = 0) -> Tensor:
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors[1:], 1):
        if t._shape != tensors[0]._shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got "
                f"{shape_text(tensors[0]._shape)} at entry 0 and {shape_text(t._shape)} at "
                f"entry {i}"
            )
    d = wrap_dim(dim, tensors[0].dim() + 1)
    return op("cat")([op("unsqueeze")(t, d) for t in tensors], d)


def stack_out(tensors: Any, dim: int = 0, *, out: Tensor) -> Tensor:
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    d = wrap_dim(dim, tensors[0].dim() + 1)
    return op("cat.out")([op("unsqueeze")(t, d) for t in tensors], d, out=out)


def repeat(self: Tensor, repeats: Any) -> Tensor:
    reps = [int(r) for r in repeats]
    if len(reps) < self.dim():
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions "
            "of tensor"
        )
    padded = (1,) * (len(reps) - self.dim()) + self._shape
    target = [p * r for p, r in zip(padded, reps, strict=True)]
    result = op("empty.memory_format")(target, dtype=self.dtype, device=self.device)
    if 0 in target:
        return result
    interleaved = [x for p, r in zip(padded, reps, strict=True) for x in (r, p)]
    source = op("reshape")(self, [x for p in padded for x in (1, p)])
    op("copy_")(op("view")(result, interleaved), op("expand")(source, interleaved))
    return result


def index_put_(self: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
    return op("_index_put_impl_")(self, indices, values, accumulate, False)


def index_put(self: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
    result = op("clone")(self)
    return op("_index_put_impl_")(result, indices, values, accumulate, False)


def _masked_fill(inplace: str) -> Any:
    def kernel(self: Tensor, mask: Tensor, value: Any) -> Tensor:
        shape = broadcast_shapes(self._shape, mask._shape)
        source = self if shape == self._shape else op("expand")(self, list(shape))
        result = op("clone")(source, memory_format=contiguous_format)
        return op(inplace)(result, mask, value)

    return kernel


def sort(self: Tensor, dim: int = -1, descending: bool = False) -> Any:
    return op("sort.stable")(self, stable=False, dim=dim, descending=descending)


def sort_out(
    self: Tensor, dim: int = -1, descending: bool = False, *, values: Tensor, indices: Tensor
) -> Any:
    return op("sort.values_stable")(
        self, stable=False, dim=dim, descending=descending, values=values, indices=indices
    )


# -- factories ---------------------------------------------------------------------------------


def _number_dtype(*values: Any) -> Any:
    for v in values:  # the common case: Python ints and floats only
        t = type(v)
        if t is float:
            return _dt.get_default_dtype()
        if t is not int:
            break
    else:
        return _dt.int64
    if any(isinstance(v, Tensor) and v.dtype.is_floating_point for v in values) or any(
        isinstance(v, float) for v in values
    ):
        return _dt.get_default_dtype()
    return _dt.int64


def _empty(size: Any, dtype: Any, layout: Any, device: Any, pin_memory: Any) -> Tensor:
    return op("empty.memory_format")(
        list(size), dtype=dtype, layout=layout, device=device, pin_memory=pin_memory
    )


def arange_start_step(
    start: Any, end: Any, step: Any = 1, *, dtype: Any = None, layout: Any = None,
    device: Any = None, pin_memory: Any = None,
) -> Tensor:  # fmt: skip
    dt = _number_dtype(start, end, step) if dtype is None else dtype
    # sized up front (the out= kernel checks the range again and finds nothing to resize)
    size = 0
    if dt is _dt.int64 or (isinstance(dt, _dt.dtype) and dt.is_floating_point):
        size = arange_length(start, end, step, dt)
        if _direct(device, layout, pin_memory, _ARANGE_OUT):
            fused = arange_cpu(start, end, step, size, dt)
            if fused is not None:
                return fused
    result = _empty([size], dt, layout, device, pin_memory)
    return op("arange.start_out")(start, end, step, out=result)


def arange_start(start: Any, end: Any, **options: Any) -> Tensor:
    return arange_start_step(start, end, 1, **options)


def arange(end: Any, **options: Any) -> Tensor:
    return arange_start_step(0, end, 1, **options)


def arange_out(end: Any, *, out: Tensor) -> Tensor:
    return op("arange.start_out")(0, end, 1, out=out)


def _linspace_bound(value: Any, name: str) -> Any:
    """A 0-dim tensor bound as a number (any number on meta: only metadata is computed)."""
    if not isinstance(value, Tensor):
        return value
    if value.dim() != 0:
        raise RuntimeError(
            f"linspace only supports 0-dimensional start and end tensors, but got {name} with "
            f"{value.dim()} dimension(s)."
        )
    return 0 if value._data is None else value.item()


def linspace(
    start: Any, end: Any, steps: int, *, dtype: Any = None, layout: Any = None,
    device: Any = None, pin_memory: Any = None,
) -> Tensor:  # fmt: skip
    """linspace and its Tensor_Tensor / Tensor_Scalar / Scalar_Tensor overloads (whose
    result, as in torch, is on the bounds' device when none is given)."""
    if device is None:
        bounds = [t for t in (start, end) if isinstance(t, Tensor)]
        device = bounds[0].device if bounds else None
    start, end = _linspace_bound(start, "start"), _linspace_bound(end, "end")
    if dtype is None:
        complex_ = isinstance(start, complex) or isinstance(end, complex)
        dtype = _dt.get_default_complex_dtype() if complex_ else _dt.get_default_dtype()
    linspace_check(steps)  # as torch, before the result is made at its final size
    if _direct(device, layout, pin_memory, _LINSPACE_OUT):
        result = linspace_cpu(start, end, steps, dtype)  # the common case, fresh
        if result is not None:
            return result
        return cpu_linspace_out(start, end, steps, out=empty_cpu([steps], dtype=dtype))
    result = _empty([steps], dtype, layout, device, pin_memory)
    return op("linspace.out")(start, end, steps, out=result)


def linspace_out(start: Any, end: Any, steps: int, *, out: Tensor) -> Tensor:
    """The out= forms of the Tensor overloads of linspace."""
    start, end = _linspace_bound(start, "start"), _linspace_bound(end, "end")
    return op("linspace.out")(start, end, steps, out=out)  # type: ignore[no-any-return]


def narrow_copy_out(self: Tensor, dim: int, start: int, length: int, *, out: Tensor) -> Tensor:
    result = op("narrow_copy")(self, dim, start, length)
    resize_output(out, result._shape)
    return op("copy_")(out, result)  # type: ignore[no-any-return]


def eye_m(
    n: int, m: int, *, dtype: Any = None, layout: Any = None, device: Any = None,
    pin_memory: Any = None,
) -> Tensor:  # fmt: skip
    dt = _dt.get_default_dtype() if dtype is None else dtype
    if _direct(device, layout, pin_memory, _EYE_OUT):
        eye_check(n, m)  # the kernel's first step: before allocating at the final size
        return eye_m_out(n, m, out=empty_cpu([n, m], dtype=dt))
    result = _empty([0], dt, layout, device, pin_memory)
    return op("eye.m_out")(n, m, out=result)


def eye(n: int, **options: Any) -> Tensor:
    return eye_m(n, n, **options)


def full_like(self: Tensor, fill_value: Any, **options: Any) -> Tensor:
    result = empty_like(self, **options)
    op("fill_.Scalar")(result, fill_value)
    return result


def _random(
    fill: str, size: Any, generator: Any, dtype: Any, layout: Any, device: Any, pin: Any,
    *args: Any,
) -> Tensor:  # fmt: skip
    result = _empty(size, dtype, layout, device, pin)
    return op(fill)(result, *args, generator=generator)


def rand_generator(size: Any, *, generator: Any, dtype: Any = None, layout: Any = None,
                   device: Any = None, pin_memory: Any = None) -> Tensor:  # fmt: skip
    return _random("uniform_", size, generator, dtype, layout, device, pin_memory, 0.0, 1.0)


def rand(size: Any, **options: Any) -> Tensor:
    return rand_generator(size, generator=None, **options)


def rand_out(size: Any, *, out: Tensor) -> Tensor:
    resize_output(out, tuple(int(s) for s in size))
    return op("uniform_")(out, 0.0, 1.0)


def randn_generator(size: Any, *, generator: Any, dtype: Any = None, layout: Any = None,
                    device: Any = None, pin_memory: Any = None) -> Tensor:  # fmt: skip
    return _random("normal_", size, generator, dtype, layout, device, pin_memory, 0.0, 1.0)


def randn(size: Any, **options: Any) -> Tensor:
    return randn_generator(size, generator=None, **options)


def randn_out(size: Any, *, out: Tensor) -> Tensor:
    resize_output(out, tuple(int(s) for s in size))
    return op("normal_")(out, 0.0, 1.0)


def randint_low_generator(
    low: int, high: int, size: Any, *, generator: Any, dtype: Any = _dt.int64,
    layout: Any = None, device: Any = None, pin_memory: Any = None,
) -> Tensor:  # fmt: skip
    # the schema default ``dtype=long`` arrives as ScalarType's number when not overridden
    dt = dtype if isinstance(dtype, _dt.dtype) else _dt.int64
    return _random("random_.from", size, generator, dt, layout, device, pin_memory, low, high)


def randint_low(low: int, high: int, size: Any, **options: Any) -> Tensor:
    return randint_low_generator(low, high, size, generator=None, **options)


def randint_generator(high: int, size: Any, *, generator: Any, **options: Any) -> Tensor:
    return randint_low_generator(0, high, size, generator=generator, **options)


def randint(high: int, size: Any, **options: Any) -> Tensor:
    return randint_low_generator(0, high, size, generator=None, **options)


def randint_low_out(low: int, high: int, size: Any, *, out: Tensor) -> Tensor:
    resize_output(out, tuple(int(s) for s in size))
    return op("random_.from")(out, low, high)


def randint_out(high: int, size: Any, *, out: Tensor) -> Tensor:
    return randint_low_out(0, high, size, out=out)


def normal_functional(
    self: Tensor, mean: float = 0, std: float = 1, *, generator: Any = None
) -> Tensor:
    return op("normal_")(op("clone")(self), mean, std, generator=generator)


def rand_like(self: Tensor, **options: Any) -> Tensor:
    return op("uniform_")(empty_like(self, **options), 0.0, 1.0)


def randn_like(self: Tensor, **options: Any) -> Tensor:
    return op("normal_")(empty_like(self, **options), 0.0, 1.0)


# -- conjugation (no conjugate bit: every conjugate is materialized) -----------------------------


def conj_physical_out(self: Tensor, *, out: Tensor) -> Tensor:
    """``out`` = the complex conjugate of ``self`` (a copy for real dtypes); ``out`` must have
    ``self``'s dtype (torch's unary-op check) and is resized as torch's out= are.

    >>> import tensordispatch as td
    >>> td.conj_physical(td.tensor([1 + 2j, -3j]))
    tensor([1.-2.j, -0.+3.j])
    """
    from tensordispatch.backends.common import scalar_type_name

    if out.dtype is not self.dtype:
        raise RuntimeError(
            f"Found dtype {scalar_type_name(out.dtype)} but expected {scalar_type_name(self.dtype)}"
        )
    resize_output(out, self._shape)
    op("copy_")(out, self)
    if self.dtype.is_complex:
        op("neg_")(op("select.int")(op("view_as_real")(out), -1, 1))
    return out


def _conj_physical(self: Tensor) -> Tensor:
    return conj_physical_out(self, out=empty_like(self))


def conj_physical_(self: Tensor) -> Tensor:
    """Conjugates the stored values: a Conjugate fallthrough, so on a tensor with the bit it
    acts on the unconjugated view (values conjugated either way)."""
    if self.dtype.is_complex:
        stored = op("_conj")(self) if self.is_conj() else self
        op("neg_")(op("select.int")(op("view_as_real")(stored), -1, 1))
    return self


COMPOSITE_LAYOUT: dict[str, Any] = {
    **VIEW_OP_KERNELS,
    "conj_physical_out": conj_physical_out,
    "_conj_physical": _conj_physical,
    "conj_physical_": conj_physical_,
    "_to_copy": _to_copy,
    "stack": stack,
    "stack_out": stack_out,
    "repeat": repeat,
    "index_put_": index_put_,
    "index_put": index_put,
    "masked_fill_Scalar": _masked_fill("masked_fill_.Scalar"),
    "masked_fill_Tensor": _masked_fill("masked_fill_.Tensor"),
    "sort": sort,
    "sort_out": sort_out,
    "arange": arange,
    "arange_start": arange_start,
    "arange_start_step": arange_start_step,
    "arange_out": arange_out,
    "linspace": linspace,
    "linspace_out": linspace_out,
    "narrow_copy_out": narrow_copy_out,
    "eye": eye,
    "eye_m": eye_m,
    "full_like": full_like,
    "rand": rand,
    "rand_generator": rand_generator,
    "rand_out": rand_out,
    "randn": randn,
    "randn_generator": randn_generator,
    "randn_out": randn_out,
    "randint": randint,
    "randint_generator": randint_generator,
    "randint_low": randint_low,
    "randint_low_generator": randint_low_generator,
    "randint_out": randint_out,
    "randint_low_out": randint_low_out,
    "normal_functional": normal_functional,
    "rand_like": rand_like,
    "randn_like": randn_like,
}
