"""``tensordispatch.linalg``: torch.linalg's matrix norms and singular values over the aten
operators (``linalg_matrix_norm[.str_ord]``, ``linalg_svdvals``, ``_linalg_svd``).

Hand-written instead of generated from their ``python_module: linalg`` entries: the two
``linalg_matrix_norm`` overloads differ by the type of ``ord`` (Scalar or str), which the
generated bindings cannot choose between (Note [Overload choice by presence]).
"""

from __future__ import annotations

from typing import Any

from tensordispatch.backends.aten import op
from tensordispatch.tensor.tensor import Tensor

__all__ = ["matrix_norm", "svdvals"]


def _write_out(result: Tensor, out: Tensor | None) -> Tensor:
    if out is None:
        return result
    from tensordispatch.backends.structured import resize_output

    resize_output(out, result._shape)
    op("copy_")(out, result)
    return out


def matrix_norm(
    A: Tensor, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False, *,
    dtype: Any = None, out: Tensor | None = None,
) -> Tensor:  # fmt: skip
    """torch.linalg.matrix_norm: 'fro', 'nuc', 2, -2, 1, -1, inf or -inf over two ``dim``.

    >>> import tensordispatch as td
    >>> A = td.tensor([[3.0, 0.0], [0.0, -4.0]])
    >>> td.linalg.matrix_norm(A).item(), td.linalg.matrix_norm(A, "nuc").item()
    (5.0, 7.0)
    """
    overload = "linalg_matrix_norm.str_ord" if isinstance(ord, str) else "linalg_matrix_norm"
    result = op(overload)(A, ord, list(dim), keepdim, dtype=dtype)
    return _write_out(result, out)


def svdvals(A: Tensor, *, driver: str | None = None, out: Tensor | None = None) -> Tensor:
    """torch.linalg.svdvals: the singular values of (a batch of) matrices, in descending order.

    >>> import tensordispatch as td
    >>> td.linalg.svdvals(td.tensor([[0.0, 2.0], [1.0, 0.0]])).tolist()
    [2.0, 1.0]
    """
    return _write_out(op("linalg_svdvals")(A, driver=driver), out)
