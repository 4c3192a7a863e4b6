"""Shape inference for lazy nodes through the library's meta functions (spec 3.2 step 5).

Owns the shape cache. A traced operator's output shapes and dtypes come from running the
operator on meta tensors, redispatched straight to the Meta key: the same structured meta
functions and Meta kernels the Meta backend uses (composite kernels decompose on meta
tensors as they would anywhere). Results are cached by operator, argument values and
operand shapes, as LTC caches shapes by shape hash, so a repeated trace costs one dict hit.

Note [Same-shape pointwise shapes]
A cache miss costs a meta call (~12 us for add.Tensor). For the commonest pointwise
operators (`SAME_SHAPE_POINTWISE`) called on floating tensors that all have one Shape, with
Python numbers (wrapped numbers and Scalars of dtype Long or Double) as the other operands,
the meta function's answer is known: that Shape (numbers never promote a floating tensor,
same-shape tensors do not broadcast, and no check of these functions can fail). Any other
combination goes to the meta function. tests/lazy/test_ir_shapes.py checks the rule against
the meta functions on every operator of the set.
"""

from __future__ import annotations

from typing import Any

from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import DispatchKeySet
from tensordispatch.lazy.ir import Operand, Shape
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.tensor import Tensor

__all__ = [
    "SAME_SHAPE_POINTWISE",
    "SHAPE_CACHE",
    "fill_arguments",
    "flatten_result",
    "infer_shapes",
    "same_shape_pointwise",
]

_META = DispatchKeySet(DispatchKey.Meta)
SHAPE_CACHE: dict[Any, tuple[Shape, ...]] = {}
_CACHE_SIZE = 4096


def fill_arguments(args: tuple[Any, ...], values: list[Any]) -> list[Any]:
    """The boxed argument list with each `Operand` marker replaced by ``values[index]``."""
    stack = list(args)
    for i, a in enumerate(stack):
        if type(a) is Operand:
            stack[i] = values[a.index]
        elif type(a) is tuple and a and any(type(x) is Operand for x in a):
            stack[i] = [values[x.index] if type(x) is Operand else x for x in a]
    return stack


def _meta_operand(shape: Shape, kind: str) -> Any:
    t = Tensor._make_meta(shape.sizes, None, shape.dtype)
    if kind == "wrapped":
        t._wrapped_number = True
    return t


def flatten_result(result: Any) -> tuple[list[Tensor], str]:
    """The tensors of an operator's result and how they were returned."""
    if isinstance(result, Tensor):
        return [result], "one"
    if isinstance(result, list):
        return list(result), "list"
    return list(result), "tuple"


def infer_shapes(
    op: Any,
    args: tuple[Any, ...],
    sig: list[tuple[Shape, str]],
    scalars: dict[int, Any],
    key: Any = None,
) -> tuple[Shape, ...]:
    """Output shapes of ``op`` for boxed ``args`` whose `Operand` markers stand for operands
    of shapes and kinds ``sig`` (``scalars``: the values of the Scalar ones), stored in
    SHAPE_CACHE under ``key`` (None: not cached). Raises what the meta function raises."""
    shapes = same_shape_pointwise(op, sig) if op.name() in SAME_SHAPE_POINTWISE else None
    if shapes is None:
        values = [
            scalars.get(i) if kind == "scalar" else _meta_operand(shape, kind)
            for i, (shape, kind) in enumerate(sig)
        ]
        result = op._redispatch_boxed(_META, fill_arguments(args, values))
        tensors, _ = flatten_result(result)
        shapes = tuple([Shape.of(t.dtype, tuple(t._shape)) for t in tensors])
    if key is not None:
        if len(SHAPE_CACHE) >= _CACHE_SIZE:
            SHAPE_CACHE.clear()
        SHAPE_CACHE[key] = shapes
    return shapes


#: Operators whose only arguments are Tensors and Scalars and whose output, for floating
#: tensors of one Shape and Python-number operands, is that Shape (Note [Same-shape
#: pointwise shapes]).
SAME_SHAPE_POINTWISE = frozenset(
    f"aten::{name}"
    for name in (
        "add.Tensor", "sub.Tensor", "mul.Tensor", "div.Tensor", "neg", "abs", "exp", "expm1",
        "log", "log1p", "sin", "cos", "tan", "tanh", "sqrt", "rsqrt", "reciprocal", "sigmoid",
        "relu", "erf", "ceil", "floor", "sign",
    )
)  # fmt: skip
_NUMBER_DTYPES = (_dt.int64, _dt.float64)


def same_shape_pointwise(op: Any, sig: list[tuple[Shape, str]]) -> tuple[Shape, ...] | None:
    """The output shapes of an operator of `SAME_SHAPE_POINTWISE` when its tensor operands
    are floating and share one Shape and the others are Python numbers, else None.

    >>> import tensordispatch as td
    >>> x, two = Shape.of(td.float32, (3,)), Shape.of(td.float64, ())
    >>> same_shape_pointwise(td.ops.aten.mul.Tensor, [(x, "tensor"), (two, "wrapped")])
    (Shape(dtype=tensordispatch.float32, sizes=(3,)),)
    >>> same_shape_pointwise(td.ops.aten.mul.Tensor, [(x, "tensor"), (two, "tensor")]) is None
    True
    """
    out = None
    for shape, kind in sig:
        if kind == "tensor":
            if out is None:
                out = shape
            elif shape is not out and shape != out:
                return None
        elif shape.dtype not in _NUMBER_DTYPES:
            return None
    if out is None or not out.dtype.is_floating_point:
        return None
    return (out,)
