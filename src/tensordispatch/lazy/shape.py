"""Shape inference for lazy nodes through the library's meta functions (spec 3.2 step 5).

Owns the shape cache. A traced operator's output shapes and dtypes come from running the
operator on meta tensors, redispatched straight to the Meta key: the same structured meta
functions and Meta kernels the Meta backend uses (composite kernels decompose on meta
tensors as they would anywhere). Results are cached by operator, argument values and
operand shapes, as LTC caches shapes by shape hash, so a repeated trace costs one dict hit.
"""

from __future__ import annotations

from typing import Any

from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import DispatchKeySet
from tensordispatch.lazy.ir import Operand, Shape
from tensordispatch.tensor.tensor import Tensor

__all__ = ["SHAPE_CACHE", "fill_arguments", "flatten_result", "infer_shapes"]

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
