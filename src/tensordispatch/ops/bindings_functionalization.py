"""Hand-written Python bindings of operators added for functionalization (helper A).

``squeeze`` / ``squeeze_`` / ``squeeze_copy``: their overloads differ by ``int`` vs ``int[]`` in one
argument, which the generated binding cannot choose between (Note [Overload choice by
presence] in codegen/gen_python.py). ``zero_``: torch binds ``zero_`` but not its autogen
functional ``zero``, and the generator's skip list matches base names, so ``zero_`` is bound
here; the same for the method ``resize_`` (torch has no ``torch.resize``).

torch's argument parser picks ``squeeze()`` without ``dim``, ``squeeze.dim`` for an int and
``squeeze.dims`` for a list or tuple; so do these.
"""

from __future__ import annotations

import sys
from typing import Any

from tensordispatch.backends.aten import op
from tensordispatch.dispatch.errors import ArgumentTypeError
from tensordispatch.ops.binding_errors import (
    REQUIRED,
    binding_type_error,
    combination_error,
    missing_list,
)
from tensordispatch.tensor.tensor import Tensor

__all__ = ["resize_", "squeeze", "squeeze_", "squeeze_copy", "zero_"]


def _pick(base: str, self: Tensor, dim: Any) -> Any:
    if dim is None:
        return op(base)(self)
    if isinstance(dim, list | tuple):
        return op(f"{base}.dims")(self, list(dim))
    return op(f"{base}.dim")(self, dim)


def squeeze(input: Tensor = REQUIRED, dim: Any = None) -> Any:
    """``input`` without size-1 dims (all, one ``dim``, or a list of dims), as a view.

    >>> import tensordispatch as td
    >>> x = td.zeros(2, 1, 1)
    >>> x.squeeze().shape, td.squeeze(x, 1).shape, x.squeeze((1, 2)).shape
    (tensordispatch.Size([2]), tensordispatch.Size([2, 1]), tensordispatch.Size([2]))
    """
    try:
        return _pick("squeeze", input, dim)
    except ArgumentTypeError:  # torch's parser matched no signature
        raise combination_error("squeeze", False) from None


def squeeze_(input: Tensor, dim: Any = None) -> Any:
    """``squeeze`` in place (all size-1 dims, one ``dim``, or a list of dims).

    >>> import tensordispatch as td
    >>> td.zeros(2, 1, 1).squeeze_((1, 2)).shape
    tensordispatch.Size([2])
    """
    return _pick("squeeze_", input, dim)


def squeeze_copy(input: Tensor = REQUIRED, dim: Any = None) -> Any:
    """``squeeze`` as a copy (the view_copy variant)."""
    try:
        return _pick("squeeze_copy", input, dim)
    except ArgumentTypeError:  # torch's parser matched no signature
        raise combination_error("squeeze_copy", False) from None


def zero_(input: Tensor) -> Any:
    """Fill ``input`` with zeros in place and return it.

    >>> import tensordispatch as td
    >>> td.ones(2).zero_().tolist()
    [0.0, 0.0]
    """
    try:
        return op("zero_")(input)
    except ArgumentTypeError as e:
        raise binding_type_error("zero_", e, ("input",), False) from None


def resize_(self: Tensor, *size: Any, memory_format: Any = None) -> Any:
    """Resize in place to contiguous ``size`` (varargs or one sequence), growing storage.

    >>> import tensordispatch as td
    >>> td.ones(2).resize_(3).shape, td.ones(4).resize_((2, 1)).shape
    (tensordispatch.Size([3]), tensordispatch.Size([2, 1]))
    """
    if len(size) == 1 and isinstance(size[0], list | tuple):
        size = tuple(size[0])
    elif not size:  # torch's parser text (Note [Size lists given as varargs])
        raise missing_list("resize_", "size", True, sys._getframe())
    kwargs = {} if memory_format is None else {"memory_format": memory_format}
    return op("resize_")(self, list(size), **kwargs)
