"""Python bindings of ``clip`` / ``clip_`` (torch's alias of clamp): like clamp's
(ops/bindings_pointwise.py), number or tensor bounds pick the overload, but the call reaches
aten::clip.* (Note [Alias operators] in ops/decompositions_aliases.py), as torch's does.
"""

from __future__ import annotations

from typing import Any

from tensordispatch.backends.aten import op
from tensordispatch.dispatch.errors import ArgumentTypeError
from tensordispatch.ops.binding_errors import REQUIRED, combination_error
from tensordispatch.ops.bindings_pointwise import _bounds
from tensordispatch.tensor.tensor import Tensor

__all__ = ["clip", "clip_", "method_clip", "method_clip_"]


def _clip(name: str, input: Tensor, min: Any, max: Any, out: Any = None) -> Any:  # noqa: A002
    suffix, kwargs = _bounds(min, max)
    if out is not None:
        return op(f"clip.{'Tensor_out' if suffix else 'out'}")(input, out=out, **kwargs)
    return op(f"{name}{suffix}")(input, **kwargs)


def clip(input: Tensor = REQUIRED, min: Any = None, max: Any = None, *, out: Any = None) -> Any:  # noqa: A002
    """torch.clip: torch.clamp under its NumPy name.

    >>> import tensordispatch as td
    >>> td.clip(td.tensor([-1.0, 0.5, 2.0]), 0, td.tensor(1.0))
    tensor([0.0000, 0.5000, 1.0000])
    """
    try:
        return _clip("clip", input, min, max, out)
    except ArgumentTypeError:  # torch's parser matched no signature
        raise combination_error("clip", False) from None


def clip_(input: Tensor = REQUIRED, min: Any = None, max: Any = None) -> Any:  # noqa: A002
    """torch.clip_: clip in place."""
    try:
        return _clip("clip_", input, min, max)
    except ArgumentTypeError:
        raise combination_error("clip_", False) from None


def method_clip(self: Tensor, min: Any = None, max: Any = None) -> Any:  # noqa: A002
    """Tensor.clip(min, max)."""
    try:
        return _clip("clip", self, min, max)
    except ArgumentTypeError:
        raise combination_error("clip", True) from None


def method_clip_(self: Tensor, min: Any = None, max: Any = None) -> Any:  # noqa: A002
    """Tensor.clip_(min, max)."""
    try:
        return _clip("clip_", self, min, max)
    except ArgumentTypeError:
        raise combination_error("clip_", True) from None
