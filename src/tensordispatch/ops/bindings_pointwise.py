"""Hand-written Python bindings of the pointwise family F1 (bound through codegen/model.py's
PYTHON_FUNCTIONS / PYTHON_METHODS), for names the generated overload choice cannot handle:

* ``where``: the method's ``self`` is the schema's second argument (``x.where(c, y)`` is
  ``where(c, x, y)``), and numbers choose among where.self / ScalarSelf / ScalarOther /
  Scalar;
* ``~`` (``Tensor.__invert__``): bitwise_not, but a TypeError for floating and complex
  tensors, as torch's Python operator;
* ``clamp`` / ``clamp_``: ``clamp`` takes ``Scalar?`` bounds and ``clamp.Tensor`` takes
  ``Tensor?`` bounds under the same names, so the choice is by the bounds' types, as
  torch's arg parser makes it (see ``_bounds``).
"""

from __future__ import annotations

from typing import Any

from tensordispatch.backends.aten import op
from tensordispatch.dispatch.errors import ArgumentTypeError
from tensordispatch.ops.binding_errors import REQUIRED, combination_error, extra_arguments
from tensordispatch.tensor.tensor import Tensor

__all__ = [
    "clamp",
    "clamp_",
    "invert",
    "method_clamp",
    "method_clamp_",
    "method_where",
    "where",
]


def _where_overload(input: Any, other: Any) -> str:
    if isinstance(input, Tensor):
        return "where.self" if isinstance(other, Tensor) else "where.ScalarOther"
    return "where.ScalarSelf" if isinstance(other, Tensor) else "where.Scalar"


def where(
    condition: Tensor = REQUIRED, input: Any = None, other: Any = None, *_td_more: Any,
    out: Any = None,
) -> Any:  # fmt: skip
    """torch.where(condition, input, other): elements of ``input`` where ``condition`` holds,
    else of ``other``; either may be a Python number.

    >>> import tensordispatch as td
    >>> td.where(td.tensor([True, False]), td.tensor([1.0, 2.0]), 0)
    tensor([1., 0.])
    """
    if _td_more:  # Note [Functions count their arguments] in codegen/python_errors.py
        raise extra_arguments("where", False)
    if input is None and other is None and out is None:
        try:
            return tuple(op("where")(condition))  # nonzero as a tuple of index tensors
        except ArgumentTypeError:
            raise combination_error("where", False) from None
    if input is None or other is None:
        raise combination_error("where", False)
    if out is not None:
        for position, (name, value) in enumerate((("input", input), ("other", other)), 2):
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"where(): argument '{name}' (position {position}) must be Tensor, not "
                    f"{type(value).__name__}"
                )
        return op("where.self_out")(condition, input, other, out=out)
    try:
        return op(_where_overload(input, other))(condition, input, other)
    except ArgumentTypeError:  # torch's parser matched no signature
        raise combination_error("where", False) from None


def method_where(self: Tensor, condition: Tensor = REQUIRED, other: Any = REQUIRED) -> Any:
    """Tensor.where(condition, other) is where(condition, self, other)."""
    try:
        return op(_where_overload(self, other))(condition, self, other)
    except ArgumentTypeError:
        raise combination_error("where", True) from None


def _bounds(min: Any, max: Any) -> tuple[str, dict[str, Any]]:
    """The overload suffix and bound arguments: all given bounds tensors -> clamp.Tensor;
    else numbers, where a 0-dim tensor counts as its number (torch's arg parser accepts one
    for a Number) and a dimensioned tensor next to a number is a TypeError."""
    given = {k: v for k, v in (("min", min), ("max", max)) if v is not None}
    if given and all(isinstance(v, Tensor) for v in given.values()):
        return ".Tensor", given
    for name, value in given.items():
        if isinstance(value, Tensor):
            if value.dim() != 0:
                raise ArgumentTypeError("a dimensioned tensor bound next to a number")
            given[name] = value.item()
    return "", given


def clamp(
    input: Tensor = REQUIRED, min: Any = None, max: Any = None, *_td_more: Any, out: Any = None
) -> Any:
    """torch.clamp with number or tensor bounds.

    >>> import tensordispatch as td
    >>> td.clamp(td.tensor([-1.0, 0.5, 2.0]), td.tensor([0.0]), td.tensor(1.0))
    tensor([0.0000, 0.5000, 1.0000])
    """
    if _td_more:  # Note [Functions count their arguments] in codegen/python_errors.py
        raise extra_arguments("clamp", False)
    try:
        return _clamp("clamp", input, min, max, out)
    except ArgumentTypeError:  # torch's parser matched no signature
        raise combination_error("clamp", False) from None


def _clamp(name: str, input: Tensor, min: Any, max: Any, out: Any = None) -> Any:
    suffix, kwargs = _bounds(min, max)
    if out is not None:
        return op(f"clamp.{'Tensor_out' if suffix else 'out'}")(input, out=out, **kwargs)
    return op(f"{name}{suffix}")(input, **kwargs)


def clamp_(input: Tensor = REQUIRED, min: Any = None, max: Any = None) -> Any:
    """torch.clamp_: clamp in place."""
    try:
        return _clamp("clamp_", input, min, max)
    except ArgumentTypeError:
        raise combination_error("clamp_", False) from None


def method_clamp(self: Tensor, min: Any = None, max: Any = None) -> Any:
    """Tensor.clamp(min, max)."""
    try:
        return _clamp("clamp", self, min, max)
    except ArgumentTypeError:
        raise combination_error("clamp", True) from None


def method_clamp_(self: Tensor, min: Any = None, max: Any = None) -> Any:
    """Tensor.clamp_(min, max)."""
    try:
        return _clamp("clamp_", self, min, max)
    except ArgumentTypeError:
        raise combination_error("clamp_", True) from None


def invert(self: Tensor) -> Any:
    """``~tensor``: bitwise_not of an integer or bool tensor.

    >>> import tensordispatch as td
    >>> ~td.tensor([True, False]), ~td.tensor([0, 5])
    (tensor([False,  True]), tensor([-1, -6]))
    >>> ~td.tensor([1.5])
    Traceback (most recent call last):
    ...
    TypeError: ~ (operator.invert) is only implemented on integer and Boolean-type tensors
    """
    if self.dtype.is_floating_point or self.dtype.is_complex:
        raise TypeError(
            "~ (operator.invert) is only implemented on integer and Boolean-type tensors"
        )
    return op("bitwise_not")(self)
