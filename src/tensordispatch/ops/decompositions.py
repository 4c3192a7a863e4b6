"""CompositeImplicitAutograd kernels: operators written in terms of other operators.

Keyed by the kernel names of native_functions.yaml (an entry without ``dispatch:`` gets the
implicit ``CompositeImplicitAutograd: <name>`` kernel, ``<name>_out`` for out= variants).
They call operators through the dispatcher, so autograd, vmap and lazy tracing see the
decomposition, exactly like ATen's CIA kernels.
"""

from __future__ import annotations

from typing import Any

from tensordispatch.backends.aten import op
from tensordispatch.backends.common import broadcast_shapes, contiguous_format
from tensordispatch.backends.structured import resize_output
from tensordispatch.backends.views import compute_stride, infer_size

__all__ = ["DECOMPOSITIONS"]


def reshape(self: Any, shape: Any) -> Any:
    """A view when the strides allow it, else a contiguous copy under ``_unsafe_view`` (no
    view: torch's reshape)."""
    size = infer_size(shape, self.numel())
    if compute_stride(self._shape, self._strides, size) is not None:
        return op("view")(self, list(size))
    copy = op("clone")(self, memory_format=contiguous_format)
    return op("_unsafe_view")(copy, list(size))


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def matmul(self: Any, other: Any) -> Any:
    """torch.matmul's case analysis over dot, mv, mm and bmm."""
    d1, d2 = self.dim(), other.dim()
    if d1 == 0 or d2 == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {d1}D and {d2}D"
        )
    if d1 == 1 and d2 == 1:
        return op("dot")(self, other)
    if d1 == 2 and d2 == 1:
        return op("mv")(self, other)
    if d1 == 1 and d2 == 2:
        return op("squeeze.dim")(op("mm")(op("unsqueeze")(self, 0), other), 0)
    if d1 == 2 and d2 == 2:
        return op("mm")(self, other)
    if d1 >= 3 and d2 in (1, 2):
        rhs = other if d2 == 2 else op("unsqueeze")(other, -1)
        folded = reshape(self, [_numel(self._shape[:-1]), self._shape[-1]])
        result = op("mm")(folded, rhs)
        tail = (rhs._shape[-1],) if d2 == 2 else ()
        return op("view")(result, list(self._shape[:-1] + tail))
    n = self._shape[-2] if d1 > 1 else 1
    m1 = self._shape[-1]
    m2 = other._shape[-2] if d2 > 1 else other._shape[0]
    p = other._shape[-1] if d2 > 1 else 1
    batch = broadcast_shapes(self._shape[: max(d1 - 2, 0)], other._shape[: max(d2 - 2, 0)])
    count = _numel(batch)
    lhs = reshape(op("expand")(self, list(batch + (n, m1))), [count, n, m1])
    rhs = reshape(op("expand")(other, list(batch + (m2, p))), [count, m2, p])
    shape = batch + ((n,) if d1 > 1 else ()) + ((p,) if d2 > 1 else ())
    return op("view")(op("bmm")(lhs, rhs), list(shape))


def matmul_out(self: Any, other: Any, *, out: Any) -> Any:
    result = matmul(self, other)
    resize_output(out, result._shape)
    return op("copy_")(out, result)


DECOMPOSITIONS: dict[str, Any] = {
    "reshape": reshape,
    "matmul": matmul,
    "matmul_out": matmul_out,
}

from tensordispatch.ops.decompositions_reductions import REDUCTION_DECOMPOSITIONS

DECOMPOSITIONS.update(REDUCTION_DECOMPOSITIONS)

from tensordispatch.ops.decompositions_pointwise import POINTWISE_DECOMPOSITIONS

DECOMPOSITIONS.update(POINTWISE_DECOMPOSITIONS)

from tensordispatch.ops.decompositions_layout import DECOMPOSITIONS_LAYOUT

DECOMPOSITIONS.update(DECOMPOSITIONS_LAYOUT)

from tensordispatch.ops.decompositions_nn import NN_DECOMPOSITIONS

DECOMPOSITIONS.update(NN_DECOMPOSITIONS)

from tensordispatch.ops.decompositions_linalg import LINALG_DECOMPOSITIONS

DECOMPOSITIONS.update(LINALG_DECOMPOSITIONS)

from tensordispatch.ops.decompositions_conj import CONJ_DECOMPOSITIONS

DECOMPOSITIONS.update(CONJ_DECOMPOSITIONS)

from tensordispatch.ops.decompositions_aliases import M1_DECOMPOSITIONS

DECOMPOSITIONS.update(M1_DECOMPOSITIONS)

from tensordispatch.ops.decompositions_reshaping import RESHAPING_DECOMPOSITIONS

DECOMPOSITIONS.update(RESHAPING_DECOMPOSITIONS)
