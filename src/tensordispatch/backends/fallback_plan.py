"""Per-operator fallback plans: what the boxed CPU fallback derives from a schema, once.

See Note [Fallback plans] in boxed_fallback.py: stack positions of tensors, tensor lists and
devices, written arguments, what each return aliases, whether the operator is a view, and
how to call it again on CPU. Computed once per operator and cached, never per call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import DispatchKeySet
from tensordispatch.dispatch.op_overload import OpOverload
from tensordispatch.schema.types import ListType

__all__ = [
    "ARG_DEVICE",
    "ARG_LIST",
    "ARG_TENSOR",
    "PLANS",
    "RET_ALIAS",
    "RET_LIST",
    "RET_OTHER",
    "RET_TENSOR",
    "FallbackPlan",
    "call_on_cpu",
    "fallback_plan",
]

_CPU_RAW = DispatchKeySet(DispatchKey.CPU).raw

# -- per-operator plans (Note [Fallback plans]) ------------------------------------------------

ARG_TENSOR, ARG_LIST, ARG_DEVICE = 0, 1, 2  # argument kinds in a plan
RET_OTHER, RET_TENSOR, RET_LIST, RET_ALIAS = 0, 1, 2, 3


@dataclass(frozen=True, slots=True)
class FallbackPlan:
    """Everything the fallback derives from one schema, computed once per operator.

    >>> import tensordispatch as td
    >>> p = fallback_plan(td.ops.aten.add_.Tensor)
    >>> p.args, p.mutable, p.returns, p.is_view
    (((0, 0), (1, 0)), (0,), ((3, 0),), False)
    """

    name: str
    schema: Any = field(repr=False)  # the FunctionSchema it was computed from (identity)
    args: tuple[tuple[int, int], ...]  # (stack position, kind): tensors, lists, devices
    mutable: tuple[int, ...]  # written argument positions
    returns: tuple[tuple[int, int], ...]  # (return kind, aliased argument or -1)
    is_view: bool
    num_returns: int
    # Fast path (only Tensor / Tensor? arguments, no Device ones): their positions.
    plain: tuple[int, ...] | None = None
    # How the CPU call is made: positional count, then (position, name, default) of the
    # keyword-only arguments (defaults left out, as the dispatcher forwards them).
    num_positional: int = 0
    keywords: tuple[tuple[int, str, Any], ...] = ()


def compute_plan(op: OpOverload) -> FallbackPlan:
    schema = op._schema
    info = schema.boxing_info
    args: list[tuple[int, int]] = []
    for i, a in enumerate(schema.arguments):
        if a.type.is_tensor_like():
            args.append((i, ARG_LIST if isinstance(a.type, ListType) else ARG_TENSOR))
        elif str(a.type) in ("Device", "Device?"):
            args.append((i, ARG_DEVICE))
    aliased = {j: i for i, j in info.alias_pairs}
    returns = []
    for j, r in enumerate(schema.returns):
        if j in aliased:
            returns.append((RET_ALIAS, aliased[j]))
        elif r.type.is_tensor_like():
            returns.append((RET_LIST if isinstance(r.type, ListType) else RET_TENSOR, -1))
        else:
            returns.append((RET_OTHER, -1))
    plain = tuple(i for i, kind in args if kind == ARG_TENSOR)
    positional = [a for a in schema.arguments if not a.kwarg_only]
    keywords = tuple(
        (i, a.name, _NO_DEFAULT if a.default is None else a.default_value)
        for i, a in enumerate(schema.arguments)
        if a.kwarg_only
    )
    return FallbackPlan(
        name=op.name(),
        schema=schema,
        args=tuple(args),
        mutable=info.mutable_arg_indices,
        returns=tuple(returns),
        is_view=bool(info.view_pairs),
        num_returns=len(schema.returns),
        plain=plain if len(plain) == len(args) else None,
        num_positional=len(positional),
        keywords=keywords,
    )


_NO_DEFAULT = object()
_SIMPLE = (int, float, bool, str, type(None))


def call_on_cpu(op: OpOverload, plan: FallbackPlan, stack: list[Any]) -> Any:
    """Redispatch ``op`` to the CPU key with ``stack`` (keyword arguments equal to their
    default are left out, as a caller who omitted them)."""
    kwargs = {}
    for i, name, default in plan.keywords:
        v = stack[i]
        if v is default or (type(v) is type(default) and type(v) in _SIMPLE and v == default):
            continue
        kwargs[name] = v
    return op.redispatch(_CPU_RAW, *stack[: plan.num_positional], **kwargs)


PLANS: dict[Any, FallbackPlan] = {}


def fallback_plan(op: OpOverload) -> FallbackPlan:
    """The cached plan of ``op`` (Note [Fallback plans]); recomputed only if the operator's
    schema object changed (re-def'd)."""
    entry = op._entry
    plan = PLANS.get(entry)
    if plan is None or plan.schema is not entry.schema:
        plan = PLANS[entry] = compute_plan(op)
    return plan
