"""CompositeImplicitAutograd kernels of the pointwise family F1, merged into
``DECOMPOSITIONS``: ``where`` (ATen's ``where(condition)``, ``where.ScalarSelf``,
``where.ScalarOther`` and ``where.Scalar`` share the C++ name ``where``, so one Python
function serves the four schemas)."""

from __future__ import annotations

from typing import Any

from tensordispatch.backends.aten import op, wrap_number
from tensordispatch.tensor.dtypes import _result_type_of
from tensordispatch.tensor.tensor import Tensor

__all__ = ["POINTWISE_DECOMPOSITIONS"]


_ABSENT: Any = object()


def where(condition: Any, self: Any = _ABSENT, other: Any = _ABSENT) -> Any:
    """where with numbers for self and/or other: each number becomes a wrapped 0-dim tensor
    (ranked below tensors by type promotion, two numbers give the default dtype), then
    ``where.self``. With the condition alone: the indices of its nonzero elements, one
    1-d tensor per dimension (``nonzero`` unbound along dim 1)."""
    if self is _ABSENT and other is _ABSENT:
        if condition.dim() == 0:
            condition = op("unsqueeze")(condition, 0)
        return op("unbind.int")(op("nonzero")(condition), 1)
    self_number, other_number = not isinstance(self, Tensor), not isinstance(other, Tensor)
    if not (self_number or other_number):
        return op("where.self")(condition, self, other)
    # torch: the result dtype first, then each number as a 0-dim tensor of it, converted with
    # the overflow check (where(c, uint8, 256) raises; -1 wraps to 255)
    result = _result_type_of(
        (wrap_number(self) if self_number else self, wrap_number(other) if other_number else other)
    )
    if self_number and other_number:
        device = condition.device
    else:
        device = (other if self_number else self).device
    if self_number:
        self = _scalar_tensor(self, result, device)
    if other_number:
        other = _scalar_tensor(other, result, device)
    return op("where.self")(condition, self, other)


def _scalar_tensor(value: Any, dtype: Any, device: Any) -> Tensor:
    """torch's at::scalar_tensor: a 0-dim tensor holding ``value`` with the one-element fill
    rules (checked_fill_value's ``single``: float16 overflows to inf)."""
    from tensordispatch.backends.cpu.scalars import checked_fill_value

    if device.type == "cpu":
        value = checked_fill_value(value, dtype, single=True)
    return op("full")([], value, dtype=dtype, device=device)


POINTWISE_DECOMPOSITIONS: dict[str, Any] = {"where": where}
