"""Meta functions of the linear-algebra decompositions (``_linalg_svd``) and the argument
checks torch's ``linalg.*`` functions share (``checkIsMatrix``, ``checkFloatingOrComplex``).

Strides follow torch's CPU kernels: U and Vh are batches of column-major (Fortran) matrices,
S is contiguous and real. Torch's own meta path lays Vh out row-major instead; we keep one
meta function for both devices, so on 'meta' Vh has the CPU strides (docs/CODEGEN.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensordispatch.backends.common import scalar_type_name
from tensordispatch.backends.meta.iterator import Spec
from tensordispatch.tensor.geometry import contiguous_strides
from tensordispatch.tensor.tensor import Tensor

__all__ = ["LINALG_META_FUNCTIONS", "check_floating_or_complex", "check_is_matrix"]

MetaResult = tuple[tuple[Spec, ...], Any]


def check_is_matrix(a: Tensor, name: str) -> None:
    """torch's checkIsMatrix: at least two dims.

    >>> import tensordispatch as td
    >>> check_is_matrix(td.ones(3), "linalg.svd")
    Traceback (most recent call last):
    ...
    RuntimeError: linalg.svd: The input tensor A must have at least 2 dimensions.
    """
    if a.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")


def check_floating_or_complex(a: Tensor, name: str, low_precision: bool = True) -> None:
    """torch's checkFloatingOrComplex: a floating or complex dtype (float16 refused unless
    ``low_precision``)."""
    dt = a.dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(
            f"{name}: Expected a floating point or complex tensor as input. "
            f"Got {scalar_type_name(dt)}"
        )
    if not low_precision and dt.itemsize < 4 and dt.is_floating_point:
        raise RuntimeError(
            f"{name}: Low precision dtypes not supported. Got {scalar_type_name(dt)}"
        )


def batched_fortran_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Strides of a C-contiguous batch of column-major matrices (torch's
    batched_matrix_contiguous_strides with f_contig).

    >>> batched_fortran_strides((2, 4, 3)), batched_fortran_strides((2, 0, 3))
    ((12, 1, 4), (3, 1, 1))
    """
    strides = list(contiguous_strides(shape))
    strides[-1], strides[-2] = max(shape[-2], 1), 1
    return tuple(strides)


def _linalg_svd(
    outs: Any, A: Tensor, full_matrices: bool = False, compute_uv: bool = True,
    driver: str | None = None,
) -> MetaResult:  # fmt: skip
    """U (..., m, k), S (..., min(m, n)) real, Vh (..., k', n); U and Vh empty (shape [0])
    without ``compute_uv``; k = m and k' = n with ``full_matrices``, else min(m, n)."""
    check_is_matrix(A, "linalg.svd")
    check_floating_or_complex(A, "linalg.svd")
    *batch, m, n = A._shape
    k = min(m, n)
    real = A.dtype.to_real() if A.dtype.is_complex else A.dtype
    s_shape = (*batch, k)
    s_spec = (s_shape, contiguous_strides(s_shape), real)
    if not compute_uv:
        empty = ((0,), (1,), A.dtype)
        return (empty, s_spec, empty), None
    u_shape = (*batch, m, m if full_matrices else k)
    vh_shape = (*batch, n if full_matrices else k, n)
    u_spec = (u_shape, batched_fortran_strides(u_shape), A.dtype)
    vh_spec = (vh_shape, batched_fortran_strides(vh_shape), A.dtype)
    return (u_spec, s_spec, vh_spec), None


# Keyed by the structured group's functional operator name.
LINALG_META_FUNCTIONS: dict[str, Callable[..., MetaResult]] = {"_linalg_svd": _linalg_svd}
