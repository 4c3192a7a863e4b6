"""CompositeImplicitAutograd kernels of M1's shape and comparison helpers, merged into
``DECOMPOSITIONS``: ``movedim`` / ``moveaxis`` (a permute), ``swapaxes`` / ``swapdims``
(transpose), ``ravel``, ``unflatten``, ``tile`` (repeat), ``broadcast_to`` (expand),
``flipud`` / ``fliplr``, ``diag`` (diag_embed or diagonal_copy), ``isclose`` and ``argsort``
(sort's indices). Each calls other operators through the dispatcher, so autograd records
torch's nodes (PermuteBackward0, ViewBackward0, RepeatBackward0, ...).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tensordispatch.backends.aten import op
from tensordispatch.backends.common import contiguous_format, wrap_dim
from tensordispatch.tensor.tensor import Tensor

__all__ = ["RESHAPING_DECOMPOSITIONS", "movedim_order"]


def _dims(value: Any) -> list[int]:
    return [value] if isinstance(value, int) else [int(v) for v in value]


def _dim_list_text(dims: Sequence[int]) -> str:
    return "[" + ", ".join(str(d) for d in dims) + "]"


def movedim_order(ndim: int, source: Sequence[int], destination: Sequence[int]) -> list[int]:
    """The permutation that moves dims ``source`` to positions ``destination``, the other
    dims keeping their relative order in the remaining positions.

    >>> movedim_order(3, [0], [2])
    [1, 2, 0]
    """
    if len(source) != len(destination):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({_dim_list_text(source)} "
            f"dims) should contain the same number of dims as destination "
            f"({_dim_list_text(destination)} dims)"
        )
    src = [wrap_dim(d, ndim) for d in source]
    dst = [wrap_dim(d, ndim) for d in destination]
    for name, dims, given in (("source", src, source), ("destination", dst, destination)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({_dim_list_text(given)})")
    if ndim == 0:  # a scalar's one "dim" is 0 or -1: nothing moves
        return []
    order = [-1] * ndim
    for s, d in zip(src, dst, strict=True):
        order[d] = s
    rest = iter(d for d in range(ndim) if d not in src)
    return [next(rest) if o == -1 else o for o in order]


def movedim(self: Tensor, source: Any, destination: Any) -> Tensor:
    """aten::movedim (both overloads): ``permute`` by movedim_order.

    >>> import tensordispatch as td
    >>> td.ones(2, 3, 4).movedim(0, -1).shape
    tensordispatch.Size([3, 4, 2])
    """
    order = movedim_order(self.dim(), _dims(source), _dims(destination))
    return op("permute")(self, order)  # type: ignore[no-any-return]


def swapaxes(self: Tensor, axis0: int, axis1: int) -> Tensor:
    return op("transpose.int")(self, axis0, axis1)  # type: ignore[no-any-return]


def swapaxes_(self: Tensor, axis0: int, axis1: int) -> Tensor:
    return op("transpose_")(self, axis0, axis1)  # type: ignore[no-any-return]


def ravel(self: Tensor) -> Tensor:
    """aten::ravel: ``contiguous().view(-1)`` (a view of a contiguous tensor).

    >>> import tensordispatch as td
    >>> td.arange(6).reshape(2, 3).t().ravel().tolist()
    [0, 3, 1, 4, 2, 5]
    """
    flat = op("contiguous")(self, memory_format=contiguous_format)
    return op("view")(flat, [-1])  # type: ignore[no-any-return]


def unflatten_symint(self: Tensor, dim: int, sizes: Any) -> Tensor:
    """aten::unflatten.int: dim ``dim`` split into ``sizes`` (one of them may be -1), a view.

    >>> import tensordispatch as td
    >>> td.ones(2, 6).unflatten(1, (3, -1)).shape
    tensordispatch.Size([2, 3, 2])
    """
    sizes = [int(s) for s in sizes]
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    dim = wrap_dim(dim, self.dim())
    length = self._shape[dim]
    known = 1
    for s in sizes:
        known *= s if s != -1 else 1
    inferred = list(sizes)
    if -1 in sizes and known != 0 and length % known == 0:
        inferred[sizes.index(-1)] = length // known
    product = 1
    for s in inferred:
        product *= s
    if product != length or inferred.count(-1) > 0:
        raise RuntimeError(
            f"unflatten: Provided sizes {_dim_list_text(sizes)} don't multiply up to the size "
            f"of dim {dim} ({length}) in the input tensor"
        )
    shape = list(self._shape[:dim]) + inferred + list(self._shape[dim + 1 :])
    return op("view")(self, shape)  # type: ignore[no-any-return]


def tile_symint(self: Tensor, dims: Any) -> Tensor:
    """aten::tile: ``repeat`` with ``dims`` padded with leading ones to ``self``'s rank.

    >>> import tensordispatch as td
    >>> td.tensor([[1, 2]]).tile((2,)).tolist()
    [[1, 2, 1, 2]]
    """
    dims = [int(d) for d in dims]
    dims = [1] * (self.dim() - len(dims)) + dims
    return op("repeat")(self, dims)  # type: ignore[no-any-return]


def broadcast_to_symint(self: Tensor, size: Any) -> Tensor:
    return op("expand")(self, [int(s) for s in size])  # type: ignore[no-any-return]


def flipud(self: Tensor) -> Tensor:
    if self.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return op("flip")(self, [0])  # type: ignore[no-any-return]


def fliplr(self: Tensor) -> Tensor:
    if self.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return op("flip")(self, [1])  # type: ignore[no-any-return]


def diag(self: Tensor, diagonal: int = 0) -> Tensor:
    """aten::diag: a 1-D tensor placed on a diagonal of a square matrix (diag_embed), or the
    diagonal of a matrix copied out (diagonal_copy).

    >>> import tensordispatch as td
    >>> td.diag(td.tensor([1, 2]), 1).tolist()
    [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
    """
    if self.dim() == 1:
        return op("diag_embed")(self, diagonal)  # type: ignore[no-any-return]
    if self.dim() == 2:
        return op("diagonal_copy")(self, diagonal)  # type: ignore[no-any-return]
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {self.dim()}D")


def diag_out(self: Tensor, diagonal: int = 0, *, out: Tensor) -> Tensor:
    from tensordispatch.backends.structured import resize_output

    result = diag(self, diagonal)
    resize_output(out, result._shape)
    return op("copy_")(out, result)  # type: ignore[no-any-return]


def isclose(self: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:  # fmt: skip
    """aten::isclose: ``|self - other| <= atol + rtol * |other|`` (finite), or equal (nan
    equal to nan with ``equal_nan``).

    >>> import tensordispatch as td
    >>> td.isclose(td.tensor([1.0, 2.0]), td.tensor([1.0 + 1e-9, 2.1]))
    tensor([ True, False])
    """
    from tensordispatch.backends.common import scalar_type_name

    if self.dtype is not other.dtype:
        raise RuntimeError(
            f"{scalar_type_name(self.dtype)} did not match {scalar_type_name(other.dtype)}"
        )
    if self.dtype.is_complex is False and (rtol < 0 or atol < 0):
        which, value = ("rtol", rtol) if rtol < 0 else ("atol", atol)
        raise RuntimeError(f"{which} must be greater than or equal to zero, but got {value:g}")
    close = op("eq.Tensor")(self, other)
    floating = self.dtype.is_floating_point or self.dtype.is_complex
    if equal_nan and floating:
        both = op("logical_and")(op("isnan")(self), op("isnan")(other))
        close = op("logical_or")(close, both)
    if rtol == 0 and atol == 0:
        return close  # type: ignore[no-any-return]
    if not floating:  # torch measures integer (and bool) errors in the default float dtype
        from tensordispatch.tensor.dtypes import float32

        self, other = op("to.dtype")(self, float32), op("to.dtype")(other, float32)
    allowed = op("add.Scalar")(op("abs")(op("mul.Scalar")(other, rtol)), atol)
    actual = op("abs")(op("sub.Tensor")(self, other))
    within = op("logical_and")(op("isfinite")(actual), op("le.Tensor")(actual, allowed))
    return op("logical_or")(close, within)  # type: ignore[no-any-return]


_ABSENT: Any = object()


def argsort(self: Tensor, dim: int = -1, descending: bool = False, *,
            stable: Any = _ABSENT) -> Tensor:  # fmt: skip
    """aten::argsort and argsort.stable (one C++ name): sort's indices.

    >>> import tensordispatch as td
    >>> td.argsort(td.tensor([3.0, 1.0, 2.0])).tolist()
    [1, 2, 0]
    """
    if stable is _ABSENT:
        return op("sort")(self, dim, descending)[1]  # type: ignore[no-any-return]
    return op("sort.stable")(self, stable=stable, dim=dim, descending=descending)[1]  # type: ignore[no-any-return]


def argsort_out(self: Tensor, *, stable: bool, dim: int = -1, descending: bool = False,
                out: Tensor) -> Tensor:  # fmt: skip
    values = op("empty")([0], dtype=self.dtype, device=self.device)
    op("sort.values_stable")(self, stable=stable, dim=dim, descending=descending,
                             values=values, indices=out)  # fmt: skip
    return out


RESHAPING_DECOMPOSITIONS: dict[str, Any] = {
    "movedim": movedim,
    "moveaxis": movedim,
    "swapaxes": swapaxes,
    "swapaxes_": swapaxes_,
    "swapdims": swapaxes,
    "swapdims_": swapaxes_,
    "ravel": ravel,
    "unflatten_symint": unflatten_symint,
    "tile_symint": tile_symint,
    "broadcast_to_symint": broadcast_to_symint,
    "flipud": flipud,
    "fliplr": fliplr,
    "diag": diag,
    "diag_out": diag_out,
    "isclose": isclose,
    "argsort": argsort,
    "argsort_out": argsort_out,
}
