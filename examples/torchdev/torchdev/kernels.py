# ruff: noqa: PLW0211 - kernels keep the schema's argument names, `self` included
"""torchdev's native kernels: aten operators computed by torch on torch's CPU device.

A torchdev tensor is a tensordispatch Tensor whose payload (``_data``) is a torch.Tensor:
its storage lives in torch's allocator, not in NumPy, so nothing is shared with
tensordispatch's CPU backend and every transfer is a real copy (runtime.py). The kernels
below are the static methods gen-backend-stubs asked for (generated/
privateuse1_native_functions.py, class TorchDevNativeFunctions); the generated module
registers them under PrivateUse1 and synthesizes the out= and in-place variants of the
functional-only ones (mul.Tensor -> mul.out, mul_.Tensor) from ``_copy_from`` and
``_copy_from_and_resize``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from torchdev.runtime import (
    DEVICE,
    TorchDevTensor,
    as_torch,
    current_device,
    from_payload,
    resize_to,
    to_td_dtype,
    to_torch_dtype,
)


def _operand(x: Any) -> Any:
    """A torch value for a kernel argument: the payload of a torchdev tensor, the Python
    number of a wrapped scalar (so type promotion treats it as a number, as torch does), or a
    torch view of a CPU tensor's values."""
    if isinstance(x, TorchDevTensor):
        return x._data
    if getattr(x, "_wrapped_number", False):
        return x.item()
    return as_torch(x)


def _new(pt: torch.Tensor) -> TorchDevTensor:
    # On the current device: the generated device guard (backend.yaml device_guard: true)
    # makes the arguments' device (or a factory's device=) current around every kernel.
    return from_payload(pt, current_device())


class TorchDevNativeFunctions:
    """The kernels torchdev implements (names and signatures from the generated Protocol)."""

    # -- factories --------------------------------------------------------------------------

    @staticmethod
    def empty_memory_format(
        size: Sequence[int],
        *,
        dtype: Any = None,
        layout: Any = None,
        device: Any = None,
        pin_memory: Any = None,
        memory_format: Any = None,
    ) -> TorchDevTensor:
        td_dtype = dtype if dtype is not None else _default_dtype()
        return _new(torch.empty(tuple(size), dtype=to_torch_dtype(td_dtype)))

    @staticmethod
    def empty_strided(
        size: Sequence[int],
        stride: Sequence[int],
        *,
        dtype: Any = None,
        layout: Any = None,
        device: Any = None,
        pin_memory: Any = None,
    ) -> TorchDevTensor:
        td_dtype = dtype if dtype is not None else _default_dtype()
        pt = torch.empty_strided(tuple(size), tuple(stride), dtype=to_torch_dtype(td_dtype))
        return _new(pt)

    # -- pointwise ----------------------------------------------------------------------------

    @staticmethod
    def add_Tensor(self: Any, other: Any, *, alpha: Any = 1) -> TorchDevTensor:
        return _new(torch.add(_operand(self), _operand(other), alpha=alpha))

    @staticmethod
    def add__Tensor(self: Any, other: Any, *, alpha: Any = 1) -> Any:
        # The native in-place kernel: writes into the payload, so views of self see it.
        self._data.add_(_operand(other), alpha=alpha)
        self._bump_version()
        return self

    @staticmethod
    def sub_Tensor(self: Any, other: Any, *, alpha: Any = 1) -> TorchDevTensor:
        return _new(torch.sub(_operand(self), _operand(other), alpha=alpha))

    @staticmethod
    def mul_Tensor(self: Any, other: Any) -> TorchDevTensor:
        return _new(torch.mul(_operand(self), _operand(other)))

    @staticmethod
    def div_Tensor(self: Any, other: Any) -> TorchDevTensor:
        return _new(torch.div(_operand(self), _operand(other)))

    @staticmethod
    def neg(self: Any) -> TorchDevTensor:
        return _new(torch.neg(self._data))

    @staticmethod
    def exp(self: Any) -> TorchDevTensor:
        return _new(torch.exp(self._data))

    # -- reductions, linear algebra -----------------------------------------------------------

    @staticmethod
    def sum(self: Any, *, dtype: Any = None) -> TorchDevTensor:
        pt_dtype = None if dtype is None else to_torch_dtype(dtype)
        return _new(torch.sum(self._data, dtype=pt_dtype))

    @staticmethod
    def mm(self: Any, mat2: Any) -> TorchDevTensor:
        return _new(torch.mm(_operand(self), _operand(mat2)))

    # -- copies and views ---------------------------------------------------------------------

    @staticmethod
    def clone(self: Any, *, memory_format: Any = None) -> TorchDevTensor:
        return _new(self._data.clone())

    @staticmethod
    def copy_(self: Any, src: Any, non_blocking: bool = False) -> Any:
        # Either side may be on CPU: this is also the host <-> device transfer.
        if isinstance(self, TorchDevTensor):
            self._data.copy_(_operand(src) if not isinstance(src, TorchDevTensor) else src._data)
        else:
            as_torch(self).copy_(src._data)
        self._bump_version()
        return self

    @staticmethod
    def view(self: Any, size: Sequence[int]) -> Any:
        pt = self._data.view(tuple(size))
        return self._make_view(tuple(pt.shape), tuple(pt.stride()), pt.storage_offset(), pt)

    # -- copy hooks of the generated out=/inplace kernels -------------------------------------

    @staticmethod
    def _copy_from(self: Any, dst: Any, non_blocking: bool = False) -> Any:
        dst._data.copy_(self._data)
        dst._bump_version()
        return dst

    @staticmethod
    def _copy_from_and_resize(self: Any, dst: Any) -> Any:
        if tuple(dst._shape) != tuple(self._shape):
            resize_to(dst, tuple(self._shape))
        dst._data.copy_(self._data)
        dst._bump_version()
        return dst


def _default_dtype() -> Any:
    import tensordispatch as td

    return td.get_default_dtype() if hasattr(td, "get_default_dtype") else td.float32


__all__ = ["DEVICE", "TorchDevNativeFunctions", "to_td_dtype"]
