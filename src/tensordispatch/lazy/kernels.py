"""The Lazy key's kernels: tracing operators into IR nodes (spec 3.2).

Owns the one boxed tracing kernel every ``full_codegen`` operator of backend.yaml shares
(rules as data: what differs per operator is derived once from its schema into an
`OpPlan`), the in-place and out= kernels derived from those functional ones, and the
hand-written ``supported`` kernels (factories, copies, transfers). Must not execute graphs
other than through `LazyTensor.materialize` (a sync).

Note [Derived in-place and out= kernels]
For an in-place or out= overload whose functional sibling is traced (same `signature()`),
the kernel traces the functional operator and then gives the written tensor the new value
(cast back to its dtype if the result's differs, as LTC's in-place kernels do). This only
serves lazy tensors used without functionalization (e.g. the composite kernels of factories:
``empty`` then ``fill_``); with functionalization above, the Lazy key never sees in-place,
out= or view operators.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tensordispatch.dispatch.op_overload import OpOverload
from tensordispatch.dispatch.tls import local_state
from tensordispatch.lazy import config as _config  # noqa: F401 - registers the TLS field
from tensordispatch.lazy import metrics
from tensordispatch.lazy.ir import (
    BackendData,
    Node,
    Operand,
    Shape,
    Value,
    device_data_node,
    operand,
    scalar_node,
)
from tensordispatch.lazy.shape import SHAPE_CACHE, infer_shapes
from tensordispatch.lazy.tensor import (
    LAZY,
    LazyTensor,
    from_array,
    from_value,
    weaken,
)
from tensordispatch.schema.model import SchemaKind
from tensordispatch.tensor.device import device as Device
from tensordispatch.tensor.tensor import Tensor

__all__ = ["OpPlan", "op_plan", "trace", "trace_inplace", "trace_out"]

_COUNTERS = metrics.COUNTERS
_ST = local_state()
T_TENSOR, T_LIST, T_SCALAR = 0, 1, 2


@dataclass(frozen=True, slots=True)
class OpPlan:
    """What tracing one operator needs from its schema, computed once (Note in header)."""

    op: OpOverload
    name: str
    counter: str
    inputs: tuple[tuple[int, int], ...]  # (stack position, T_TENSOR / T_LIST / T_SCALAR)
    lists: tuple[int, ...]  # positions of non-tensor list arguments (made tuples)
    returns: str  # "one", "tuple", "list"
    num_args: int  # arguments of the functional form (out= arguments excluded)
    key: Any  # the operator entry (hashes by identity; the shape cache's key)


_PLANS: dict[Any, OpPlan] = {}
#: Operators listed under `symint:` in backend.yaml: LTC's kernel (and counter) names for
#: them end in ``_symint`` (``lazy::view_copy_symint``); set by registration.install().
SYMINT: set[str] = set()


def op_plan(op: OpOverload) -> OpPlan:
    """The OpPlan of ``op`` (cached by operator entry)."""
    plan = _PLANS.get(op._entry)
    if plan is not None:
        return plan
    schema = op._schema
    inputs: list[tuple[int, int]] = []
    lists: list[int] = []
    args = [a for a in schema.arguments if not (a.alias_info and a.alias_info.is_write)]
    if schema.kind() == SchemaKind.out:
        args = list(schema.arguments[: len(schema.arguments) - len(schema.out)])
    for i, a in enumerate(args):
        text = str(a.type)
        if text in ("Tensor", "Tensor?"):
            inputs.append((i, T_TENSOR))
        elif text in ("Tensor[]", "Tensor?[]"):
            inputs.append((i, T_LIST))
        elif text in ("Scalar", "Scalar?"):
            inputs.append((i, T_SCALAR))
        elif text.endswith(("]", "]?")):
            lists.append(i)
    rets = [str(r.type) for r in schema.returns]
    returns = "list" if rets == ["Tensor[]"] else ("one" if len(rets) == 1 else "tuple")
    suffix = "_symint" if op.name().removeprefix("aten::") in SYMINT else ""
    plan = OpPlan(
        op, op.name(), f"lazy::{op._opname}{suffix}", tuple(inputs), tuple(lists), returns,
        len(args), op._entry,
    )  # fmt: skip
    _PLANS[op._entry] = plan
    return plan


def _operand(
    v: Any, operands: list[Value], sig: list[tuple[Shape, str]], upload: bool = False
) -> Operand:
    if isinstance(v, LazyTensor):
        value = v.ir or v.ir_value()
        kind = "tensor"
    elif isinstance(v, Tensor) and v._data is not None and not v._shape:
        # wrapped numbers and 0-dim CPU tensors join lazy ones as scalar device data
        kind = "wrapped" if v._wrapped_number else "tensor"
        value = scalar_node(v._data.item(), v.dtype)
    elif upload and isinstance(v, Tensor) and isinstance(v._data, np.ndarray):
        # index lists may hold CPU tensors on any device (torch's index kernels allow it)
        shape = Shape.of(v.dtype, tuple(v._shape))
        kind = "tensor"
        weaken()  # a buffer enters IR: tensor.py Note [Strong entries for pending values]
        value = device_data_node(BackendData(np.array(v._data, copy=True), shape))
    else:
        where = f"a {type(v).__name__} on device '{getattr(v, 'device', '?')}'"
        raise RuntimeError(
            f"lazy: every tensor argument must be a lazy tensor, but found {where}; move it "
            "with .to('lazy') first (only 0-dim CPU tensors may join lazy ones)"
        )
    operands.append(value)
    sig.append((value.shape, kind))
    return operand(len(operands) - 1, kind)


def build_node(plan: OpPlan, stack: list[Any]) -> Node:
    """The IR node of one call of ``plan.op`` with boxed arguments ``stack``."""
    operands: list[Value] = []
    sig: list[tuple[Shape, str]] = []
    scalars: dict[int, Any] = {}
    args = stack[: plan.num_args]
    for pos, kind in plan.inputs:
        v = args[pos]
        if v is None:
            continue
        if kind == T_TENSOR:
            if v.__class__ is LazyTensor:  # the common case, inline
                value = v.ir or v.ir_value()
                operands.append(value)
                sig.append((value.shape, "tensor"))
                args[pos] = operand(len(operands) - 1)
            else:
                args[pos] = _operand(v, operands, sig)
        elif kind == T_LIST:
            args[pos] = tuple([None if t is None else _operand(t, operands, sig, True) for t in v])
        else:
            node = scalar_node(v)
            scalars[len(operands)] = v
            operands.append(node)
            sig.append((node.shapes[0], "scalar"))
            args[pos] = operand(len(operands) - 1, "scalar")
    for pos in plan.lists:
        if args[pos] is not None:
            args[pos] = tuple(args[pos])
    frozen = tuple(args)
    key: Any = (plan.key, frozen, tuple(sig))
    try:
        shapes = SHAPE_CACHE.get(key)
    except TypeError:  # an unhashable argument: infer without caching
        key, shapes = None, None
    if shapes is None:
        shapes = infer_shapes(plan.op, frozen, sig, scalars, key)
    return Node(plan.name, plan.op, tuple(operands), frozen, shapes, plan.returns)


def _wrap(node: Node) -> Any:
    if node.returns == "one":
        return from_value(node)
    outs = [from_value(node.output(i)) for i in range(len(node.shapes))]
    return outs if node.returns == "list" else tuple(outs)


def trace(op: OpOverload, keyset: Any, stack: list[Any]) -> Any:
    """The boxed Lazy kernel of every traced operator: record one node, return lazy
    tensors for its outputs (spec 3.2)."""
    plan = _PLANS.get(op._entry) or op_plan(op)
    if _ST.lazy_force_fallback and _forced(plan):
        return _fallback(op, keyset, stack)
    _COUNTERS[plan.counter] += 1
    return _wrap(build_node(plan, list(stack)))


def _forced(plan: OpPlan) -> bool:
    return bool(plan.name.partition(".")[0] == _ST.lazy_force_fallback)


def _fallback(op: OpOverload, keyset: Any, stack: list[Any]) -> Any:
    from tensordispatch.lazy.fallback import lazy_fallback

    return lazy_fallback(op, keyset, stack)


_CAST = "aten::_to_copy"


def cast_value(value: Value, dtype: Any) -> Value:
    """``value`` converted to ``dtype`` (a ``_to_copy`` node), or itself if it has it."""
    shape = value.shape
    if shape.dtype is dtype:
        return value
    from tensordispatch.ops import aten

    op = aten._to_copy.default
    cast = Node(
        _CAST, op, (value,), (operand(0), dtype, None, None, None, False, None),
        (Shape.of(dtype, shape.sizes),),
    )  # fmt: skip
    return cast


def _set_value(t: Any, value: Value, op: OpOverload) -> None:
    if not isinstance(t, LazyTensor):
        raise TypeError(f"{op.name()}: the written tensor must be a lazy tensor")
    value = cast_value(value, t.dtype)
    shape = value.shape
    if shape.sizes != t._shape:
        if t._base is not None:
            raise RuntimeError(f"{op.name()}: cannot resize a view of a lazy tensor")
        from tensordispatch.tensor.geometry import contiguous_strides

        t._shape = shape.sizes
        t._strides = contiguous_strides(shape.sizes)
    t.set_ir(value)
    t._bump_version()


def derived_kernel(op: OpOverload, functional: OpOverload) -> Any:
    """The in-place or out= kernel of ``op`` traced through ``functional``
    (Note [Derived in-place and out= kernels])."""
    plan = op_plan(op)
    fplan = op_plan(functional)
    inplace = op._schema.kind() == SchemaKind.inplace

    def kernel(op_: OpOverload, keyset: Any, stack: list[Any]) -> Any:
        if _ST.lazy_force_fallback and (_forced(plan) or _forced(fplan)):
            return _fallback(op_, keyset, stack)
        _COUNTERS[plan.counter] += 1
        node = build_node(fplan, list(stack[: fplan.num_args]))
        if inplace:
            _set_value(stack[0], node.output(0), op)
            return stack[0]
        outs = stack[fplan.num_args :]
        for i, t in enumerate(outs):
            _set_value(t, node.output(i), op)
        return outs[0] if len(outs) == 1 else tuple(outs)

    return kernel


trace_inplace = trace_out = derived_kernel


# -- hand-written kernels (backend.yaml `supported`) ------------------------------------------


def _count(name: str) -> None:
    _COUNTERS[name] += 1


def _default_dtype(dtype: Any) -> Any:
    if dtype is not None:
        return dtype
    from tensordispatch.tensor.dtypes import get_default_dtype

    return get_default_dtype()


def _device(device: Any) -> Device:
    if device is None:
        return LAZY
    dev = device if isinstance(device, Device) else Device(device)
    return LAZY if dev.type == "lazy" and dev.index in (None, 0) else dev


def _functional(t: LazyTensor) -> Tensor:
    """Wrap a new lazy tensor for functionalization (spec 3.7), unless Functionalize is
    excluded (then the caller, functionalization itself, wraps it)."""
    from tensordispatch.dispatch.tls import local_state
    from tensordispatch.transforms.functionalize import to_functional
    from tensordispatch.transforms.functionalize.wrapper import FUNCTIONALIZE_BIT

    if local_state().excluded & FUNCTIONALIZE_BIT:
        return t
    return to_functional(t)


def empty_memory_format(
    size: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
    pin_memory: Any = None, memory_format: Any = None,
) -> Tensor:  # fmt: skip
    dt = _default_dtype(dtype)
    return _functional(from_array(np.zeros(tuple(size), dt._numpy), dt, _device(device)))


def empty_strided(
    size: Any, stride: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
    pin_memory: Any = None,
) -> Tensor:  # fmt: skip
    dt = _default_dtype(dtype)
    return _functional(from_array(np.zeros(tuple(size), dt._numpy), dt, _device(device)))


def clone(self: LazyTensor, *, memory_format: Any = None) -> LazyTensor:
    """LTC's clone shares the IR value (values are immutable); like LTC's, not counted."""
    return from_value(self.ir_value(), self.device)


def _cpu_array(t: Tensor) -> np.ndarray[Any, Any]:
    return np.array(t._data, copy=True)


def to_cpu_tensor(t: LazyTensor, dtype: Any = None) -> Tensor:
    """A new CPU tensor with ``t``'s values (syncs its graph)."""
    from tensordispatch.tensor.geometry import contiguous_strides
    from tensordispatch.tensor.tensor import new_cpu_tensor

    dt = dtype if dtype is not None else t.dtype
    array = np.array(t.materialize(), dtype=dt._numpy, copy=True, order="C")
    array = array.reshape(t._shape)
    return new_cpu_tensor(array, t._shape, contiguous_strides(t._shape), dt)


def _to_copy(
    self: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
    pin_memory: Any = None, non_blocking: bool = False, memory_format: Any = None,
) -> Tensor:  # fmt: skip
    _count("lazy::_to_copy")
    target = self.device if device is None else _device(device)
    if target.type == "cpu":
        return to_cpu_tensor(self, dtype)  # type: ignore[arg-type]
    if target.type != "lazy":
        raise RuntimeError(
            f"_to_copy: a lazy tensor can be copied to 'cpu' or 'lazy', not to device "
            f"'{target}'; copy it to 'cpu' first"
        )
    if not isinstance(self, LazyTensor):
        dt = dtype if dtype is not None else self.dtype
        return _functional(from_array(np.asarray(_cpu_array(self), dtype=dt._numpy), dt, target))
    value = self.ir_value()
    return from_value(cast_value(value, dtype if dtype is not None else self.dtype), target)


def copy_(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    """Either side may be on CPU: this is also the transfer between CPU and lazy."""
    _count("lazy::copy_")
    if isinstance(self, LazyTensor):
        if isinstance(src, LazyTensor):
            value = src.ir_value()
            if src._shape != self._shape:
                from tensordispatch.ops import aten

                expand: OpOverload = aten.expand_copy.default  # type: ignore[assignment]
                value = build_node(op_plan(expand), [src, list(self._shape), False])
            _set_value(self, value, aten_copy())
            return self
        _count("lazy::_to_copy")
        array = np.broadcast_to(np.asarray(src._data, dtype=self.dtype._numpy), self._shape)
        shape = Shape.of(self.dtype, self._shape)
        self.set_handle(BackendData(np.array(array, copy=True), shape))
        self._bump_version()
        return self
    _count("lazy::_to_copy")
    np.copyto(self._data, src.materialize(), casting="unsafe")  # type: ignore[attr-defined]
    self._bump_version()
    return self


def aten_copy() -> OpOverload:
    from tensordispatch.ops import aten

    copy: OpOverload = aten.copy_.default  # type: ignore[assignment]
    return copy


HANDWRITTEN: dict[str, Any] = {
    "empty.memory_format": empty_memory_format,
    "empty_strided": empty_strided,
    "clone": clone,
    "_to_copy": _to_copy,
    "copy_": copy_,
}
