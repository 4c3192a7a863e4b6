"""Tensor metadata queries: shape, sizes, strides, element counts, dtype and device facts.

`TensorMetadata` is a mixin of `Tensor` (kept in its own module for size, like
`values.TensorValues`); everything here reads the metadata fields `_shape`, `_strides`,
`_offset`, `dtype` and `device`, never the payload.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, SupportsIndex

from tensordispatch.tensor.device import device as Device
from tensordispatch.tensor.dtypes import dtype as DType
from tensordispatch.tensor.geometry import CONTIGUOUS_STRIDES as _CONTIGUOUS
from tensordispatch.tensor.geometry import Size, contiguous_of, wrap_dim

if TYPE_CHECKING:
    from tensordispatch.tensor.tensor import Tensor

__all__ = ["TensorMetadata"]

# (shape, strides) -> is_contiguous's answer for strides that are not the shape's contiguous
# ones (Note [Contiguity by cached strides]); cleared when it reaches 4096 geometries.
_ANSWERS: dict[tuple[tuple[int, ...], tuple[int, ...]], bool] = {}


def _is_contiguous(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """torch's contiguity rule: empty tensors are; otherwise the strides of the dims of size
    other than 1 are the row-major ones.

    >>> _is_contiguous((2, 1, 3), (3, 7, 1)), _is_contiguous((2, 3), (1, 2))
    (True, False)
    """
    if 0 in shape:
        return True
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides), strict=True):
        if size != 1:
            if stride != expected:
                return False
            expected *= size
    return True


class TensorMetadata:
    """Metadata methods and properties of Tensor (see tensor.py for the class itself)."""

    __slots__ = ()

    _shape: tuple[int, ...]
    _strides: tuple[int, ...]
    _offset: int
    dtype: DType
    device: Device

    @property
    def shape(self) -> Size:
        return Size(self._shape)

    def size(self, dim: SupportsIndex | None = None) -> Any:
        """The shape as a Size, or the size of one dim (negative dims count from the end)."""
        if dim is None:
            return Size(self._shape)
        return self._shape[wrap_dim("size", dim, len(self._shape))]

    def stride(self, dim: SupportsIndex | None = None) -> Any:
        """The strides in elements as a tuple, or the stride of one dim."""
        if dim is None:
            return self._strides
        return self._strides[wrap_dim("stride", dim, len(self._shape))]

    def storage_offset(self) -> int:
        """The index in the storage, in elements, of this tensor's first element."""
        return self._offset

    def dim(self) -> int:
        return len(self._shape)

    @property
    def ndim(self) -> int:
        return len(self._shape)

    def ndimension(self) -> int:
        return len(self._shape)

    def numel(self) -> int:
        n = 1
        for s in self._shape:
            n *= s
        return n

    nelement = numel

    def element_size(self) -> int:
        return self.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.numel() * self.dtype.itemsize

    def is_contiguous(self) -> bool:
        """Whether the strides are row-major for the shape (size-1 dims ignored), as torch.

        >>> from tensordispatch.tensor import tensor
        >>> a = tensor([[1.0, 2.0], [3.0, 4.0]]); a.is_contiguous(), a.t().is_contiguous()
        (True, False)
        """
        # Note [Contiguity by cached strides]: the usual answer is one dict read and one
        # tuple compare with the shape's contiguous strides (geometry.contiguous_of's
        # cache); other strides (size-0 / size-1 dims with odd strides, or really not
        # contiguous) take the loop below, then have their answer kept per geometry.
        shape = self._shape
        strides = self._strides
        if _CONTIGUOUS.get(shape) == strides:
            return True
        key = (shape, strides)
        answer = _ANSWERS.get(key)
        if answer is None:
            answer = _is_contiguous(shape, strides)
            if len(_ANSWERS) >= 4096:
                _ANSWERS.clear()
            _ANSWERS[key] = answer
            contiguous_of(shape)  # fills the cache read above, for the next call
        return answer

    def cpu(self, memory_format: Any = None) -> Tensor:
        """This tensor on the CPU: itself when it is there already, as in torch.

        >>> from tensordispatch.tensor import tensor
        >>> t = tensor([1.0]); t.cpu() is t
        True
        """
        if self.device.type == "cpu":
            return self
        if memory_format is None:
            return self.to("cpu")  # type: ignore[attr-defined, no-any-return]
        return self.to("cpu", memory_format=memory_format)  # type: ignore[attr-defined, no-any-return]

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        return self.dtype.is_complex

    def is_signed(self) -> bool:
        return self.dtype.is_signed

    @property
    def is_meta(self) -> bool:
        return self.device.type == "meta"

    @property
    def is_cpu(self) -> bool:
        return self.device.type == "cpu"

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"
