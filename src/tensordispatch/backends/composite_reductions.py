"""CompositeExplicitAutograd kernels of the reductions, softmax and batched matmul (F2).

Device-generic: each calls other operators through the dispatcher with ``op``. Merged
into ``COMPOSITE_KERNELS`` by ``backends/composite.py``.
"""

from __future__ import annotations

from typing import Any

from tensordispatch.backends.aten import op
from tensordispatch.tensor.tensor import Tensor

__all__ = ["REDUCTION_COMPOSITE_KERNELS", "cast"]


def cast(self: Tensor, dtype: Any) -> Tensor:
    """``self`` converted to ``dtype`` (itself when it already has it), through
    empty_like + copy_ so that it runs on every backend.

    >>> import tensordispatch as td
    >>> cast(td.tensor([1.5, -2.0]), td.int64).tolist()
    [1, -2]
    """
    if dtype is None or dtype is self.dtype:
        return self
    result = op("empty_like")(self, dtype=dtype)
    return op("copy_")(result, self)


def mean_dtype_out(self: Tensor, *, dtype: Any = None, out: Tensor) -> Tensor:
    return op("mean.out")(self, [], dtype=dtype, out=out)


def norm_Scalar(self: Tensor, p: Any = 2) -> Tensor:
    return op("norm.ScalarOpt_dim")(self, p, [])


def norm_ScalarOpt_dtype(self: Tensor, p: Any, *, dtype: Any) -> Tensor:
    return op("norm.ScalarOpt_dim_dtype")(self, p, [], False, dtype=dtype)


def softmax_int_out(self: Tensor, dim: int, dtype: Any = None, *, out: Tensor) -> Tensor:
    return op("_softmax.out")(cast(self, dtype), dim, False, out=out)


def log_softmax_int_out(self: Tensor, dim: int, dtype: Any = None, *, out: Tensor) -> Tensor:
    return op("_log_softmax.out")(cast(self, dtype), dim, False, out=out)


def _addbmm_operands(batch1: Tensor, batch2: Tensor) -> tuple[Tensor, Tensor]:
    """addbmm as one addmm: the batches laid side by side, (n, b*m) @ (b*m, p)."""
    if batch1.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    b, n, m = batch1._shape
    if batch2._shape[0] != b:
        raise RuntimeError(
            f"batch1 and batch2 must have same number of batches, got {b} and {batch2._shape[0]}"
        )
    if batch2._shape[1] != m:
        raise RuntimeError(
            f"Incompatible matrix sizes for bmm ({n}x{m} and {batch2._shape[1]}x{batch2._shape[2]})"
        )
    left = op("reshape")(op("transpose.int")(batch1, 0, 1), [n, b * m])
    right = op("reshape")(batch2, [b * m, batch2._shape[2]])
    return left, right


def addbmm(
    self: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1
) -> Tensor:
    left, right = _addbmm_operands(batch1, batch2)
    return op("addmm")(self, left, right, beta=beta, alpha=alpha)


def _resize_to_expanded_self(self: Tensor, shape: list[int], beta: Any) -> None:
    """ATen's addbmm_ on a ``self`` that only broadcasts to the result's ``shape``: ``self``
    is resized (no warning, as ATen's ``resize_as_``) and, unless ``beta`` is 0, its old
    values are copied back from the expanded view of the same storage, row after row as ATen's
    copy reads it: a (3, 1) self [[1], [2], [3]] becomes all ones, as in torch.
    """
    expanded = op("expand")(self, shape)  # torch's expand error if it does not broadcast
    strides, offset = list(expanded.stride()), expanded.storage_offset()
    op("resize_")(self, shape)
    if beta == 0:
        return
    source = op("as_strided")(self, shape, strides, offset)
    select, copy_ = op("select.int"), op("copy_")
    for i in range(shape[0]):
        copy_(select(self, 0, i), select(source, 0, i))


def addbmm_(
    self: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1
) -> Tensor:
    left, right = _addbmm_operands(batch1, batch2)
    shape = [left._shape[0], right._shape[1]]
    if list(self._shape) != shape:
        _resize_to_expanded_self(self, shape, beta)
    return op("addmm_")(self, left, right, beta=beta, alpha=alpha)


def addbmm_out(
    self: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1, out: Tensor
) -> Tensor:
    left, right = _addbmm_operands(batch1, batch2)
    shape = [left._shape[0], right._shape[1]]
    if list(out._shape) != shape:  # ATen resizes out with resize_as_: no warning
        op("expand")(self, shape)  # torch's expand error first
        op("resize_")(out, shape)
    return op("addmm.out")(self, left, right, beta=beta, alpha=alpha, out=out)


def linear_out(input: Tensor, weight: Tensor, bias: Tensor | None = None, *, out: Tensor) -> Tensor:
    op("matmul.out")(input, op("t")(weight), out=out)
    if bias is not None:
        op("add_.Tensor")(out, bias)
    return out


def embedding(
    weight: Tensor, indices: Tensor, padding_idx: int = -1, scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:  # fmt: skip
    """Rows of ``weight`` picked by integer ``indices`` (index_select), shaped like indices."""
    from tensordispatch.tensor import dtypes as _dt

    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    if indices.dtype is not _dt.int64 and indices.dtype is not _dt.int32:
        from tensordispatch.backends.meta.nn import legacy_type_name

        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got {legacy_type_name(indices.dtype, python=True)} instead "
            "(while checking arguments for embedding)"
        )
    if indices.dim() == 1:
        return op("index_select")(weight, 0, indices)
    rows = op("index_select")(weight, 0, op("reshape")(indices, [-1]))
    return op("view")(rows, [*indices._shape, weight._shape[1]])


REDUCTION_COMPOSITE_KERNELS: dict[str, Any] = {
    "mean_dtype_out": mean_dtype_out,
    "norm_Scalar": norm_Scalar,
    "norm_ScalarOpt_dtype": norm_ScalarOpt_dtype,
    "softmax_int_out": softmax_int_out,
    "log_softmax_int_out": log_softmax_int_out,
    "addbmm_composite": addbmm,
    "addbmm__composite": addbmm_,
    "addbmm_out_composite": addbmm_out,
    "linear_out": linear_out,
    "embedding": embedding,
}
