"""CompositeImplicitAutograd decompositions of the layout operators (F3): narrow, chunk,
split.sizes, flatten, contiguous and the four ``to`` overloads.

Keyed by operator name (the implicit kernel name): one kernel serves every overload of a
name (``narrow`` / ``narrow.Tensor``, ``split.sizes``, the four ``to``), like C++ overloads.
"""

from __future__ import annotations

from typing import Any

from tensordispatch.backends.aten import op
from tensordispatch.backends.common import contiguous_format, preserve_format, wrap_dim
from tensordispatch.tensor.device import device as make_device
from tensordispatch.tensor.dtypes import dtype as DType
from tensordispatch.tensor.tensor import Tensor

__all__ = ["DECOMPOSITIONS_LAYOUT"]


def narrow(self: Tensor, dim: int, start: Any, length: int) -> Tensor:
    """narrow and narrow.Tensor (a 0-dim integral tensor start)."""
    if isinstance(start, Tensor):
        if start.dim() != 0 or start.dtype.is_floating_point or start.dtype.is_complex:
            raise RuntimeError("start must be an 0-dim integral Tensor.")
        start = int(start.item())
    if self.dim() == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    d = wrap_dim(dim, self.dim())
    size = self._shape[d]
    if not -size <= start <= size:
        raise IndexError(
            f"start out of range (expected to be in range of [{-size}, {size}], but got {start})"
        )
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return op("slice.Tensor")(self, d, start, start + length)


def split(self: Tensor, split_size: Any, dim: int = 0) -> list[Tensor]:
    return op("split_with_sizes")(self, split_size, dim)  # type: ignore[no-any-return]


def chunk(self: Tensor, chunks: int, dim: int = 0) -> list[Tensor]:
    if self.dim() == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, self.dim())
    size = self._shape[d]
    split_size = (size + chunks - 1) // chunks
    if split_size == 0 and size == 0:
        sizes = [split_size] * chunks
        sizes[-1] = split_size - (split_size * chunks - size)
        return op("split_with_sizes")(self, sizes, d)  # type: ignore[no-any-return]
    return op("split.Tensor")(self, split_size, d)  # type: ignore[no-any-return]


def flatten(self: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    ndim = self.dim()
    start, end = wrap_dim(start_dim, ndim), wrap_dim(end_dim, ndim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if ndim == 0:
        return op("reshape")(self, [1])  # type: ignore[no-any-return]
    if start == end:
        return self
    size = 1
    for s in self._shape[start : end + 1]:
        size *= s
    shape = [*self._shape[:start], size, *self._shape[end + 1 :]]
    return op("reshape")(self, shape)  # type: ignore[no-any-return]


def contiguous(self: Tensor, *, memory_format: Any = contiguous_format) -> Tensor:
    if memory_format is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    if memory_format is contiguous_format and self.is_contiguous():
        return self
    return op("clone")(self, memory_format=memory_format)  # type: ignore[no-any-return]


def _to(
    self: Tensor, dtype: Any, device: Any, copy: bool, memory_format: Any, non_blocking: bool
) -> Tensor:
    if isinstance(device, str):
        device = make_device(device)
    same = (dtype is None or dtype is self.dtype) and (device is None or device == self.device)
    # torch aliases when the format asked is the one the tensor suggests (contiguous for the
    # strided layouts we have)
    keeps_format = memory_format in (None, preserve_format, contiguous_format)
    if same and not copy and keeps_format:
        return self
    return op("_to_copy")(  # type: ignore[no-any-return]
        self, dtype=dtype, device=device, non_blocking=non_blocking, memory_format=memory_format
    )


def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """The four ``to`` overloads (one CompositeImplicitAutograd kernel, as in ATen): by
    other tensor, by device and dtype, by dtype, or by keywords."""
    names = ["non_blocking", "copy", "memory_format"]
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    rest = list(args)
    if rest and isinstance(rest[0], Tensor):
        other = rest.pop(0)
        dtype, device = other.dtype, other.device
    elif rest and isinstance(rest[0], DType):
        dtype = rest.pop(0)
    elif rest:
        device = rest.pop(0)
        if rest and isinstance(rest[0], DType):
            dtype = rest.pop(0)
    options = dict(zip(names, rest, strict=False))
    options.update(kwargs)
    return _to(
        self, dtype, device, bool(options.get("copy", False)), options.get("memory_format"),
        bool(options.get("non_blocking", False)),
    )  # fmt: skip


DECOMPOSITIONS_LAYOUT: dict[str, Any] = {
    "narrow": narrow,
    "split": split,
    "chunk": chunk,
    "flatten": flatten,
    "contiguous": contiguous,
    "to": to,
}
