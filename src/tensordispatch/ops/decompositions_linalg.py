"""CompositeImplicitAutograd decompositions of the linalg operators, as ATen writes them:
``linalg_svdvals`` -> ``_linalg_svd`` (singular vectors computed only when a gradient may be
needed), ``linalg_matrix_norm`` (orders ±1, ±2, ±inf) and ``linalg_matrix_norm.str_ord``
('fro', 'nuc') over ``linalg_svdvals``, amax/amin and the vector norm. Merged into
``DECOMPOSITIONS`` by ops/decompositions.py.

The vector norms here call ``aten::norm`` (ATen calls ``linalg_vector_norm``, which we do not
declare): same values, the grad_fn is NormBackward instead of LinalgVectorNormBackward0.
"""

from __future__ import annotations

import math
from typing import Any

from tensordispatch.backends.aten import op
from tensordispatch.backends.common import scalar_type_name, wrap_dim
from tensordispatch.backends.composite_reductions import cast
from tensordispatch.backends.meta.linalg import check_floating_or_complex, check_is_matrix
from tensordispatch.tensor.dtypes import promote_types
from tensordispatch.tensor.tensor import Tensor

__all__ = ["LINALG_DECOMPOSITIONS"]

_NAME = "linalg.matrix_norm"


def linalg_svdvals(A: Tensor, *, driver: str | None = None) -> Tensor:
    """Singular values of (a batch of) matrices, largest first.

    >>> import tensordispatch as td
    >>> td.ops.aten.linalg_svdvals(td.tensor([[3.0, 0.0], [0.0, -4.0]])).tolist()
    [4.0, 3.0]
    """
    from tensordispatch.autograd.grad_mode import is_grad_enabled

    compute_uv = is_grad_enabled() and A.requires_grad
    return op("_linalg_svd")(A, False, compute_uv, driver=driver)[1]  # type: ignore[no-any-return]


def _check_dtype(dtype: Any, self_dtype: Any) -> None:
    """torch's check_linalg_norm_dtype."""
    if dtype is None:
        return
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(
            f"{_NAME}: dtype should be floating point or complex, but got {scalar_type_name(dtype)}"
        )
    if self_dtype.is_complex != dtype.is_complex:
        kind = "complex" if self_dtype.is_complex else "real"
        raise RuntimeError(
            f"{_NAME}: dtype should be {kind} for {kind} inputs, but got {scalar_type_name(dtype)}"
        )
    if promote_types(self_dtype, dtype) is not dtype:
        raise RuntimeError(
            f"{_NAME}: the dtype of the input ({scalar_type_name(self_dtype)}) should be "
            f"convertible without narrowing to the specified dtype ({scalar_type_name(dtype)})"
        )


def _checks(A: Tensor, dim: Any, dtype: Any, low_precision: bool) -> list[int]:
    """torch's _linalg_matrix_norm_checks; the two dims wrapped."""
    check_is_matrix(A, _NAME)
    check_floating_or_complex(A, _NAME, low_precision)
    dims = [int(d) for d in dim]
    if len(dims) != 2:
        raise RuntimeError(f"{_NAME}: dim must be a 2-tuple. Got {' '.join(map(str, dims))}")
    dims = [wrap_dim(d, A.dim()) for d in dims]
    if dims[0] == dims[1]:
        raise RuntimeError(f"{_NAME}: dims must be different. Got ({dims[0]}, {dims[1]})")
    _check_dtype(dtype, A.dtype)
    return dims


def _backshift(dims: list[int], ndim: int) -> list[int]:
    """The permutation moving ``dims`` (in order) to the end."""
    return [d for d in range(ndim) if d not in dims] + dims


def _over_svdvals(A: Tensor, dims: list[int], keepdim: bool, reduce: Any) -> Tensor:
    """``reduce(svdvals(A with dims moved last), [-1], keepdim)``, dims restored as size 1 if
    keepdim (ATen's order: reduce keeping the dim, add the other, permute back)."""
    perm = _backshift(dims, A.dim())
    result: Tensor = reduce(op("linalg_svdvals")(op("permute")(A, perm)), [-1], keepdim)
    if keepdim:
        inverse = [perm.index(i) for i in range(len(perm))]
        result = op("permute")(op("unsqueeze")(result, -1), inverse)
    return result


def linalg_matrix_norm_str_ord(
    A: Tensor, ord: str = "fro", dim: Any = (-2, -1), keepdim: bool = False, *,
    dtype: Any = None,
) -> Tensor:  # fmt: skip
    """The Frobenius ('fro') or nuclear ('nuc', sum of singular values) norm over ``dim``.

    >>> import tensordispatch as td
    >>> td.ops.aten.linalg_matrix_norm.str_ord(td.tensor([[3.0, 0.0], [0.0, -4.0]]), "nuc")
    tensor(7.)
    """
    dims = _checks(A, dim, dtype, low_precision=ord != "nuc")
    if ord not in ("fro", "nuc"):
        raise RuntimeError(f"{_NAME}: Order {ord} not supported.")
    A = cast(A, dtype)
    if ord == "fro":
        return op("norm.ScalarOpt_dim")(A, 2, dims, keepdim)  # type: ignore[no-any-return]
    return _over_svdvals(A, dims, keepdim, op("sum.dim_IntList"))


def _ord_text(ord: float) -> str:
    return str(int(ord)) if math.isfinite(ord) and ord == int(ord) else str(ord)


def linalg_matrix_norm(
    A: Tensor, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False, *,
    dtype: Any = None,
) -> Tensor:  # fmt: skip
    """aten::linalg_matrix_norm and its .str_ord overload (one kernel name in ATen): matrix
    norms of numeric order: 2 / -2 (largest / smallest singular value), 1 / -1
    (max / min column abs sum), inf / -inf (max / min row abs sum).

    >>> import tensordispatch as td
    >>> td.ops.aten.linalg_matrix_norm(td.tensor([[1.0, -2.0], [3.0, 4.0]]), float("inf"))
    tensor(7.)
    """
    if isinstance(ord, str):
        return linalg_matrix_norm_str_ord(A, ord, dim, keepdim, dtype=dtype)
    value = float(ord)
    size = abs(value)
    if size not in (1.0, 2.0, math.inf):
        raise RuntimeError(f"{_NAME}: Order {_ord_text(value)} not supported.")
    dims = _checks(A, dim, dtype, low_precision=size != 2.0)
    name = "amax" if value > 0 else "amin"
    if size == 2.0:
        return _over_svdvals(cast(A, dtype), dims, keepdim, op(name))
    if size == math.inf:  # the inf norm is the 1 norm of the transpose
        dims = [dims[1], dims[0]]
    if not keepdim and dims[0] < dims[1]:
        dims[1] -= 1
    if dtype is None:
        sums = op("norm.ScalarOpt_dim")(A, 1, [dims[0]], keepdim)
    else:
        sums = op("norm.ScalarOpt_dim_dtype")(A, 1, [dims[0]], keepdim, dtype=dtype)
    return op(name)(sums, [dims[1]], keepdim)  # type: ignore[no-any-return]


LINALG_DECOMPOSITIONS: dict[str, Any] = {
    "linalg_svdvals": linalg_svdvals,
    "linalg_matrix_norm": linalg_matrix_norm,
}
