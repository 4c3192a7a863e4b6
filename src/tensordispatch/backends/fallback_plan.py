"""Per-operator fallback plans: what the boxed CPU fallback derives from a schema, once.

See Note [Fallback plans] in boxed_fallback.py: stack positions of tensors, tensor lists and
devices, written arguments, what each return aliases, whether the operator is a view, and
how to call it again on CPU. Computed once per operator and cached, never per call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import DispatchKeySet
from tensordispatch.dispatch.op_overload import OpOverload
from tensordispatch.schema.types import ListType
from tensordispatch.tensor.device import CPU, device
from tensordispatch.tensor.tensor import Tensor

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
    "count_error",
    "count_moved",
    "fallback_plan",
    "outputs",
    "substitute",
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
    # Unboxed fast path (Note [The unboxed fallback]): tensor positions when every tensor
    # argument is a Tensor / Tensor? and either nothing is written and the one return is a
    # fresh tensor, or (``inplace`` >= 0) one plain Tensor argument is written and returned
    # (an in-place or out= operator); ``need`` = one past the last tensor position.
    fast: tuple[int, ...] | None = None
    need: int = 0
    inplace: int = -1


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
    is_plain = len(plain) == len(args)
    eligible = is_plain and not info.view_pairs
    written = info.mutable_arg_indices
    fast = None
    inplace = -1
    if eligible and not written and [k for k, _ in returns] == [RET_TENSOR]:
        fast = plain
    elif (
        eligible
        and len(written) == 1
        and returns == [(RET_ALIAS, written[0])]
        and str(schema.arguments[written[0]].type) == "Tensor"
    ):
        fast, inplace = plain, written[0]
    return FallbackPlan(
        name=op.name(),
        schema=schema,
        args=tuple(args),
        mutable=info.mutable_arg_indices,
        returns=tuple(returns),
        is_view=bool(info.view_pairs),
        num_returns=len(schema.returns),
        plain=plain if is_plain else None,
        num_positional=len(positional),
        keywords=keywords,
        fast=fast,
        need=max(fast, default=-1) + 1 if fast is not None else 0,
        inplace=inplace,
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


# -- helpers of the general path (boxed_fallback.cpu_fallback) --------------------------------


def count_error(plan: FallbackPlan, got: int, expected: int) -> RuntimeError:
    return RuntimeError(
        f"{plan.name}: the backend's to_cpu hook returned {got} tensor(s) for "
        f"{expected} device tensor(s); it must return one CPU tensor per input, in order"
    )


def substitute(
    plan: FallbackPlan, stack: list[Any], cpu_stack: list[Any], cpus: Sequence[Tensor]
) -> None:
    """Put the CPU copies into ``cpu_stack`` in the order they were gathered."""
    it = iter(cpus)
    try:
        for i, kind in plan.args:
            if kind == ARG_TENSOR:
                v = stack[i]
                if v is not None and v.device is not CPU and v.device.type != "cpu":
                    cpu_stack[i] = next(it)
            elif kind == ARG_LIST:
                items = cpu_stack[i]
                for n, t in enumerate(items):
                    if t is not None and t.device is not CPU and t.device.type != "cpu":
                        items[n] = next(it)
    except StopIteration:
        raise count_error(plan, len(cpus), count_moved(plan, stack)) from None
    if next(it, None) is not None:
        raise count_error(plan, len(cpus), count_moved(plan, stack))


def count_moved(plan: FallbackPlan, stack: list[Any]) -> int:
    n = 0
    for i, kind in plan.args:
        items = stack[i] if kind == ARG_LIST else [stack[i]] if kind == ARG_TENSOR else []
        n += sum(1 for t in items if t is not None and t.device.type != "cpu")
    return n


def outputs(
    plan: FallbackPlan,
    backend: Any,
    stack: list[Any],
    result: Any,
    target: device | None,
) -> Any:
    """The operator's result with CPU outputs moved to ``target`` (one from_cpu call)."""
    n = plan.num_returns
    if n == 0:
        return result
    values = (result,) if n == 1 else tuple(result)
    pending: list[Tensor] = []
    for (kind, _), v in zip(plan.returns, values, strict=True):
        if kind == RET_TENSOR and v is not None:
            pending.append(v)
        elif kind == RET_LIST:
            pending.extend(t for t in v if t is not None)
    if target is None or not pending:
        moved_back: Sequence[Tensor] = pending
    else:
        moved_back = backend.from_cpu(pending, target)
    k = 0
    out: list[Any] = []
    for (kind, alias), v in zip(plan.returns, values, strict=True):
        if kind == RET_ALIAS:
            out.append(stack[alias])
        elif kind == RET_TENSOR and v is not None:
            out.append(moved_back[k])
            k += 1
        elif kind == RET_LIST:
            items: list[Tensor | None] = []
            for t in v:
                if t is None:
                    items.append(None)
                else:
                    items.append(moved_back[k])
                    k += 1
            out.append(items)
        else:
            out.append(v)
    return out[0] if n == 1 else tuple(out)
