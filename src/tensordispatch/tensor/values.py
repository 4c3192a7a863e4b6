"""Reading a tensor's values: Python numbers and lists, NumPy and DLPack exchange.

`TensorValues` is a mixin of `Tensor` (kept in its own module for size): everything here
reads the CPU payload `_data` (a NumPy array) and fails clearly for tensors without data.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import keyset_raw
from tensordispatch.tensor.device import CPU
from tensordispatch.tensor.device import device as Device
from tensordispatch.tensor.dtypes import dtype as DType

__all__ = ["TensorValues", "resolved_values"]

_CONJ_RAW = keyset_raw(DispatchKey.Conjugate)
_NEG_RAW = keyset_raw(DispatchKey.Negative)
_MATH_BITS_RAW = _CONJ_RAW | _NEG_RAW
_CPU_KS = CPU._key_set  # a plain CPU tensor's key set: tested by identity before the bits


def resolved_values(data: np.ndarray[Any, Any], key_set: int) -> np.ndarray[Any, Any]:
    """The values of a CPU array stored under the conjugate / negative bits of ``key_set``
    (Note [The conjugate and negative bits] in ops/decompositions_conj.py): ``data`` itself
    without bits, else a new array with them applied.

    >>> resolved_values(np.array([1 + 2j]), _CONJ_RAW | _NEG_RAW).tolist()
    [(-1+2j)]
    """
    if key_set & _CONJ_RAW and data.dtype.kind == "c":
        data = np.conjugate(data)
    if key_set & _NEG_RAW:
        data = np.negative(data)
    return data


class TensorValues:
    """Value access and interop methods of Tensor (see tensor.py for the class itself)."""

    __slots__ = ()

    _data: Any
    _key_set: int
    dtype: DType
    device: Device

    def numel(self) -> int:
        raise NotImplementedError  # provided by Tensor

    @property
    def requires_grad(self) -> bool:
        raise NotImplementedError  # provided by Tensor

    # -- values ---------------------------------------------------------------------------------

    def _require_data(self, what: str) -> None:
        if self._data is None:
            raise NotImplementedError(
                f"{what}: cannot read the values of a tensor on device "
                f"'{self.device}', which has no data; compute on device='cpu' for values"
            )

    def item(self) -> Any:
        """The value of a one-element tensor as a Python number."""
        n = self.numel()
        if n != 1:
            raise RuntimeError(f"a Tensor with {n} elements cannot be converted to Scalar")
        if self._data is None:
            raise RuntimeError(
                f"item(): cannot be called on a tensor on device '{self.device}', which has "
                "no data; compute on device='cpu' for values"
            )
        if self._key_set is not _CPU_KS and self._key_set & _MATH_BITS_RAW:
            return resolved_values(self._data, self._key_set).item()
        return self._data.item()

    def __iter__(self) -> Iterator[Any]:
        """The tensor's rows (``t[0]``, ``t[1]``, ...: views, as indexing gives them); a 0-dim
        tensor refuses, as torch's (so ``list(td.tensor(2))`` raises instead of giving []).

        >>> import tensordispatch as td
        >>> [r.tolist() for r in td.tensor([[1, 2], [3, 4]])]
        [[1, 2], [3, 4]]
        """
        shape = self.shape  # type: ignore[attr-defined]
        if not shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(shape[0]))  # type: ignore[index]

    def tolist(self) -> Any:
        """The values as (nested) Python lists of Python numbers; a number for 0-dim."""
        self._require_data("tolist()")
        if self._key_set is not _CPU_KS and self._key_set & _MATH_BITS_RAW:
            return resolved_values(self._data, self._key_set).tolist()
        return self._data.tolist()

    def numpy(self, *, force: bool = False) -> np.ndarray[Any, Any]:
        """A NumPy array sharing this tensor's memory (no copy), as torch's numpy()."""
        if self._data is None or not isinstance(self._data, np.ndarray):
            raise TypeError(
                f"numpy(): cannot convert a tensor on device '{self.device}' to NumPy; "
                "only CPU tensors share memory with NumPy arrays"
            )
        if self.requires_grad and not force:
            raise RuntimeError(
                "numpy(): can't call numpy() on a Tensor that requires grad; "
                "use tensor.detach().numpy() instead"
            )
        if self._key_set is not _CPU_KS and self._key_set & _MATH_BITS_RAW:
            if force:  # torch's force: resolve_conj().resolve_neg(), a copy
                return resolved_values(self._data, self._key_set)
            which, resolve = (
                ("conjugate", "resolve_conj") if self._key_set & _CONJ_RAW else
                ("negative", "resolve_neg")
            )  # fmt: skip
            raise RuntimeError(
                " ".join(
                    [
                        f"Can't call numpy() on Tensor that has {which} bit set.",
                        f"Use tensor.{resolve}().numpy() instead.",
                    ]
                )
            )
        array: np.ndarray[Any, Any] = self._data.view()
        return array

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray[Any, Any]:
        if self._key_set & _MATH_BITS_RAW:  # torch's __array__ calls numpy(): refused
            self.numpy()
        array = self.numpy(force=True)
        if dtype is not None and np.dtype(dtype) != array.dtype:
            return array.astype(dtype)
        return array.copy() if copy else array

    def _one_element(self, kind: str, error: type[Exception]) -> Any:
        """Messages of torch's Python number conversions (its own text, so no subject)."""
        if self.numel() != 1:
            raise error("only one element tensors can be converted to Python scalars")
        value = self.item()
        if isinstance(value, complex) and kind != "complex":  # torch's checked conversion
            target = "int64_t" if kind == "int" else "double"
            raise RuntimeError(f"value cannot be converted to type {target} without overflow")
        return value

    def __bool__(self) -> bool:
        if self.numel() != 1:
            which = "no values" if self.numel() == 0 else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {which} is ambiguous")
        return bool(self.item())

    def __float__(self) -> float:
        return float(self._one_element("float", ValueError))

    def __int__(self) -> int:
        return int(self._one_element("int", ValueError))

    def __complex__(self) -> complex:
        return complex(self._one_element("complex", ValueError))

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self.dtype.is_complex or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    # -- interop --------------------------------------------------------------------------------

    def __dlpack__(
        self,
        *,
        stream: Any = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> Any:
        """Export as a DLPack capsule sharing memory (CPU tensors only)."""
        if self.requires_grad:
            raise BufferError(
                "__dlpack__: can't export a tensor that requires grad; use tensor.detach()"
            )
        if self._key_set & _CONJ_RAW:  # torch's text (a negative view exports its storage)
            raise BufferError("Can't export tensors with the conjugate bit set")
        if not isinstance(self._data, np.ndarray):
            raise BufferError(  # noqa: TRY004 - torch raises BufferError here
                f"__dlpack__: cannot export a tensor on device '{self.device}' through DLPack; "
                "only CPU tensors can be exported"
            )
        kwargs: dict[str, Any] = {"stream": stream}
        if max_version is not None:
            kwargs["max_version"] = max_version
        if dl_device is not None:
            kwargs["dl_device"] = dl_device
        if copy is not None:
            kwargs["copy"] = copy
        return self._data.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        """(1, 0): DLPack's kDLCPU device type and index 0, for CPU tensors."""
        if not isinstance(self._data, np.ndarray):
            raise ValueError(  # noqa: TRY004 - torch raises ValueError here
                f"__dlpack_device__: device type '{self.device.type}' has no DLPack device; "
                "only CPU tensors can be exchanged"
            )
        return (1, 0)
