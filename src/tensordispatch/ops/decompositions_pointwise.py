"""CompositeImplicitAutograd kernels of the pointwise family F1, merged into
``DECOMPOSITIONS``: ``where`` (ATen's ``where(condition)``, ``where.ScalarSelf``,
``where.ScalarOther`` and ``where.Scalar`` share the C++ name ``where``, so one Python
function serves the four schemas)."""

from __future__ import annotations

from typing import Any

from tensordispatch.backends.aten import op, wrap_number
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
    if not isinstance(self, Tensor):
        self = wrap_number(self)
    if not isinstance(other, Tensor):
        other = wrap_number(other)
    return op("where.self")(condition, self, other)


POINTWISE_DECOMPOSITIONS: dict[str, Any] = {"where": where}
