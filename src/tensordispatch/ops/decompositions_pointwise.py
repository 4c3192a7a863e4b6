"""CompositeImplicitAutograd kernels of the pointwise family F1, merged into
``DECOMPOSITIONS``: the number forms of ``where`` (ATen's ``where.ScalarSelf``,
``where.ScalarOther`` and ``where.Scalar`` share the C++ name ``where``)."""

from __future__ import annotations

from typing import Any

from tensordispatch.backends.aten import op, wrap_number
from tensordispatch.tensor.tensor import Tensor

__all__ = ["POINTWISE_DECOMPOSITIONS"]


def where(condition: Any, self: Any, other: Any) -> Any:
    """where with numbers for self and/or other: each number becomes a wrapped 0-dim tensor
    (ranked below tensors by type promotion, two numbers give the default dtype), then
    ``where.self``."""
    if not isinstance(self, Tensor):
        self = wrap_number(self)
    if not isinstance(other, Tensor):
        other = wrap_number(other)
    return op("where.self")(condition, self, other)


POINTWISE_DECOMPOSITIONS: dict[str, Any] = {"where": where}
