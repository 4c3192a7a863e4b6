"""Hand-written Python bindings of M1's names whose overloads the generated binding cannot
choose between: ``clip`` / ``clip_`` (torch's alias of clamp: like clamp's binding in
ops/bindings_pointwise.py, number or tensor bounds pick the overload, but the call reaches
aten::clip.*, Note [Alias operators] in ops/decompositions_aliases.py) and ``movedim`` /
``moveaxis`` (two ints: the .int overload; two sequences: .intlist; anything else is torch's
"invalid combination" TypeError), ``count_nonzero`` (an int dim or None, or a sequence).
"""

from __future__ import annotations

from typing import Any

from tensordispatch.backends.aten import op
from tensordispatch.dispatch.errors import ArgumentTypeError
from tensordispatch.ops.binding_errors import REQUIRED, combination_error
from tensordispatch.ops.bindings_pointwise import _bounds
from tensordispatch.tensor.tensor import Tensor

__all__ = [
    "clip",
    "clip_",
    "count_nonzero",
    "method_clip",
    "method_clip_",
    "method_count_nonzero",
    "method_moveaxis",
    "method_movedim",
    "moveaxis",
    "movedim",
]  # fmt: skip


def _clip(name: str, input: Tensor, min: Any, max: Any, out: Any = None) -> Any:
    suffix, kwargs = _bounds(min, max)
    if out is not None:
        return op(f"clip.{'Tensor_out' if suffix else 'out'}")(input, out=out, **kwargs)
    return op(f"{name}{suffix}")(input, **kwargs)


def clip(input: Tensor = REQUIRED, min: Any = None, max: Any = None, *, out: Any = None) -> Any:
    """torch.clip: torch.clamp under its NumPy name.

    >>> import tensordispatch as td
    >>> td.clip(td.tensor([-1.0, 0.5, 2.0]), 0, td.tensor(1.0))
    tensor([0.0000, 0.5000, 1.0000])
    """
    try:
        return _clip("clip", input, min, max, out)
    except ArgumentTypeError:  # torch's parser matched no signature
        raise combination_error("clip", False) from None


def clip_(input: Tensor = REQUIRED, min: Any = None, max: Any = None) -> Any:
    """torch.clip_: clip in place."""
    try:
        return _clip("clip_", input, min, max)
    except ArgumentTypeError:
        raise combination_error("clip_", False) from None


def method_clip(self: Tensor, min: Any = None, max: Any = None) -> Any:
    """Tensor.clip(min, max)."""
    try:
        return _clip("clip", self, min, max)
    except ArgumentTypeError:
        raise combination_error("clip", True) from None


def method_clip_(self: Tensor, min: Any = None, max: Any = None) -> Any:
    """Tensor.clip_(min, max)."""
    try:
        return _clip("clip_", self, min, max)
    except ArgumentTypeError:
        raise combination_error("clip_", True) from None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_int_list(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(_is_int(v) for v in value)


def _move(name: str, self: Any, source: Any, destination: Any) -> Any:
    """The result, or None when no overload fits (the binding then raises, from its own
    frame: combination_error reads the call's arguments there)."""
    if not isinstance(self, Tensor):
        return None
    if _is_int(source) and _is_int(destination):
        return op(f"{name}.int")(self, source, destination)
    if _is_int_list(source) and _is_int_list(destination):
        return op(f"{name}.intlist")(self, list(source), list(destination))
    return None


def movedim(input: Any = REQUIRED, source: Any = None, destination: Any = None) -> Any:
    """torch.movedim(input, source, destination): dims ``source`` moved to ``destination``.

    >>> import tensordispatch as td
    >>> td.movedim(td.ones(2, 3, 4), (0, 1), (2, 0)).shape
    tensordispatch.Size([3, 4, 2])
    """
    result = _move("movedim", input, source, destination)
    if result is None:
        raise combination_error("movedim", False)
    return result


def moveaxis(input: Any = REQUIRED, source: Any = None, destination: Any = None) -> Any:
    """torch.moveaxis: NumPy's name of movedim."""
    result = _move("moveaxis", input, source, destination)
    if result is None:
        raise combination_error("moveaxis", False)
    return result


def method_movedim(self: Tensor, source: Any = None, destination: Any = None) -> Any:
    """Tensor.movedim(source, destination)."""
    result = _move("movedim", self, source, destination)
    if result is None:
        raise combination_error("movedim", True)
    return result


def method_moveaxis(self: Tensor, source: Any = None, destination: Any = None) -> Any:
    """Tensor.moveaxis(source, destination)."""
    result = _move("moveaxis", self, source, destination)
    if result is None:
        raise combination_error("moveaxis", True)
    return result


def _count_nonzero(input: Tensor, dim: Any) -> Any:
    if dim is None or _is_int(dim):
        return op("count_nonzero")(input, dim)
    if _is_int_list(dim):
        return op("count_nonzero.dim_IntList")(input, list(dim))
    return None


def count_nonzero(input: Any = REQUIRED, dim: Any = None) -> Any:
    """torch.count_nonzero(input, dim=None): an int dim or None, or a sequence of dims.

    >>> import tensordispatch as td
    >>> td.count_nonzero(td.tensor([[0, 1], [2, 3]]), dim=1).tolist()
    [1, 2]
    """
    result = _count_nonzero(input, dim) if isinstance(input, Tensor) else None
    if result is None:
        raise combination_error("count_nonzero", False)
    return result


def method_count_nonzero(self: Tensor, dim: Any = None) -> Any:
    """Tensor.count_nonzero(dim=None)."""
    result = _count_nonzero(self, dim)
    if result is None:
        raise combination_error("count_nonzero", True)
    return result
