"""The FuncTorchBatched kernel and the FuncTorchVmapMode random-operator kernels.

Owns registration (``install`` / ``uninstall``) and the kernel every operator reaches when
an argument is a BatchedTensor: box the call (every argument in schema order, defaults
filled in), find the highest level among the arguments, look the operator up in ``RULES``
and run the rule; without a rule, a CompositeImplicit operator decomposes (its composite
kernel runs on the BatchedTensors), anything else loops (fallback.py).

Note [One kernel, a table of rules]
torch registers each batching rule as the operator's FuncTorchBatched kernel. We register
one global fallback for FuncTorchBatched that consults ``RULES`` keyed by operator name:
the same dispatch outcome, and the rule table stays plain data that tests and docs can
list. Pointwise operators and the reductions whose dim follows ``self`` (the hottest
rules) also get a direct FuncTorchBatched kernel that runs the rule's common case unboxed,
without the fallback's lookups; it still consults ``RULES`` first, so editing the table
changes what runs.

Note [Lazy registration]
Nothing is registered on import: the first ``vmap`` call installs the kernels (the
dispatcher's own tables stay torch's until a program uses vmap). ``uninstall`` restores the
import-time fallbacks.

Note [Randomness]
While vmap runs, FuncTorchVmapMode is in the thread's include set, so random operators
(tag ``nondeterministic_seeded``) reach ``random_kernel`` even without batched arguments
(``torch.rand(3)`` inside vmap), as in torch. 'error' at any enclosing level raises
torch's error. Factories draw one value per entry of every 'different' level (their batch
sizes prepended to ``size``) and broadcast over 'same' levels. Operators with tensor
arguments follow the innermost level: 'same' draws one sample's worth that broadcasts over
the batch; 'different' draws for the whole batch at once (batched arguments unwrapped,
unbatched ones expanded).
"""

from __future__ import annotations

import threading
from typing import Any

from tensordispatch.dispatch import (
    DISPATCHER,
    DispatchKey,
    ExcludeDispatchKeyGuard,
    global_fallback_handle,
    restore_global_fallback,
)
from tensordispatch.dispatch.keyset import full_after_raw
from tensordispatch.dispatch.library import Library
from tensordispatch.transforms.vmap.batched import BatchedTensor, VmapLevel, current_levels, wrap
from tensordispatch.transforms.vmap.fallback import loop_fallback
from tensordispatch.transforms.vmap.plan import OpPlan, plan_of
from tensordispatch.transforms.vmap.rules import (
    DECLINE,
    DIM_ARGS,
    RULES,
    pointwise_rule,
    pointwise_unboxed,
    wrap_dim,
    wrap_result,
)

__all__ = ["batched_kernel", "install", "installed", "random_kernel", "uninstall"]

_AFTER_BATCHED = full_after_raw(DispatchKey.FuncTorchBatched)
_AFTER_VMAP_MODE = full_after_raw(DispatchKey.FuncTorchVmapMode)
_LIBS: list[Library] = []
_LOCK = threading.Lock()


def _level_of(plan: OpPlan, stack: list[Any]) -> int:
    level = 0
    for i in plan.tensors:
        v = stack[i]
        if type(v) is BatchedTensor and v._level > level:
            level = v._level
    for i in plan.lists:
        for v in stack[i] or ():
            if type(v) is BatchedTensor and v._level > level:
                level = v._level
    return level


def batched_kernel(keyset: Any, op: Any, *args: Any, **kwargs: Any) -> Any:
    """The FuncTorchBatched kernel (Note [One kernel, a table of rules])."""
    plan = _BY_OP.get(op)
    if plan is None or plan.schema is not op._entry.schema:
        plan = _BY_OP[op] = plan_of(op)
    rule = RULES.get(plan.name)
    if plan.fast and rule is pointwise_rule:
        result = pointwise_unboxed(op, args, kwargs)
        if result is not DECLINE:
            return result
    if not kwargs and len(args) >= plan.required:
        stack = [*args, *plan.defaults[len(args) :]]
    else:
        facts = op._entry.facts
        stack = facts.stack_of(facts.bind(args, kwargs))
    level = _level_of(plan, stack)
    if level == 0:
        return op._redispatch_boxed(keyset.raw & _AFTER_BATCHED, stack)
    if rule is not None:
        result = rule(op, plan, stack, level)
        if result is not DECLINE:
            return result
    elif DispatchKey.CompositeImplicitAutograd in op._entry.kernels:
        return op._redispatch_boxed(keyset.raw & _AFTER_BATCHED, stack)
    return loop_fallback(op, plan, stack, level)


_BY_OP: dict[Any, OpPlan] = {}


def _pointwise_kernel(op: Any) -> Any:
    """The FuncTorchBatched kernel of one pointwise operator (Note [One kernel, a table of
    rules]): the unboxed pointwise rule without the fallback's lookups."""
    name = op.name()

    def kernel(keyset: Any, *args: Any, **kwargs: Any) -> Any:
        if RULES.get(name) is pointwise_rule:
            # the first lines of pointwise_unboxed, inline (one frame less per call)
            n = len(args)
            if n == 1:
                a = args[0]
                if type(a) is BatchedTensor:
                    return wrap(op(a._data, **kwargs), a._level)
            elif n == 2:
                a, c = args
                if type(a) is BatchedTensor and type(c) is not BatchedTensor:
                    ra = len(a._shape)
                    if ra and ra >= len(getattr(c, "_shape", ())):
                        return wrap(op(a._data, c, **kwargs), a._level)
            result = pointwise_unboxed(op, args, kwargs)
            if result is not DECLINE:
                return result
        return batched_kernel(keyset, op, *args, **kwargs)

    kernel.__qualname__ = f"batched_{name.replace('::', '_').replace('.', '_')}"
    return kernel


def _dims_kernel(op: Any, rule: Any, kind: str) -> Any:
    """The FuncTorchBatched kernel of one reduction-like operator whose only tensor is
    ``self`` and whose dim argument comes second (``sum(x, 0)``, ``x.mean([0, 1])``,
    ``softmax(x, -1)``): the common call of its dims rule without boxing. Anything else
    (a keyword dim, a 0-dim sample, every dim, a table edit) takes the general kernel."""
    name = op.name()

    def kernel(keyset: Any, *args: Any, **kwargs: Any) -> Any:
        if len(args) > 1 and type(args[0]) is BatchedTensor and RULES.get(name) is rule:
            x = args[0]
            rank = len(x._shape)
            dim = args[1]
            if rank and type(dim) is int:
                shifted: Any = wrap_dim(dim, rank) + 1
                return wrap_result(op(x._data, shifted, *args[2:], **kwargs), x._level)
            if rank and kind == "dims" and type(dim) in (list, tuple) and dim:
                shifted = [wrap_dim(d, rank) + 1 for d in dim]
                return wrap_result(op(x._data, shifted, *args[2:], **kwargs), x._level)
        return batched_kernel(keyset, op, *args, **kwargs)

    kernel.__qualname__ = f"batched_{name.replace('::', '_').replace('.', '_')}"
    return kernel


def _register_direct(lib: Library) -> None:
    """Direct FuncTorchBatched kernels: every fast pointwise operator (Note [One kernel, a
    table of rules]) and the reductions of ``DIM_ARGS`` with one dim argument after self."""
    for entry in list(DISPATCHER.live_entries()):
        if entry.schema is not None and RULES.get(entry.qualified_overload_name) is (
            pointwise_rule
        ):
            op = entry.overload_object
            if plan_of(op).fast:
                name = entry.qualified_overload_name.split("::")[1]
                lib.impl(name, _pointwise_kernel(op), with_keyset=True)
    from tensordispatch import ops

    for names, spec in DIM_ARGS.items():
        if len(spec) != 1 or spec[0][0] != "dim" or spec[0][1] not in ("dim", "dims"):
            continue
        for name in names.split():
            packet, _, overload = name.partition(".")
            op = getattr(getattr(ops.aten, packet), overload or "default")
            plan = plan_of(op)
            simple = plan.tensors == (0,) and not plan.lists and not plan.mutable
            if simple and plan.index("dim") == 1:
                rule = RULES[f"aten::{name}"]
                lib.impl(name, _dims_kernel(op, rule, spec[0][1]), with_keyset=True)


# -- randomness (Note [Randomness]) ------------------------------------------------------------


def _innermost_vmap() -> VmapLevel | None:
    for lvl in reversed(current_levels()):
        if type(lvl) is VmapLevel:
            return lvl
    return None


def random_kernel(op: Any, keyset: Any, stack: list[Any]) -> Any:
    """FuncTorchVmapMode kernel of the random operators."""
    lvl = _innermost_vmap()
    raw = keyset if type(keyset) is int else keyset.raw
    plan = plan_of(op)
    train = plan.index("train")
    if lvl is None or (train >= 0 and stack[train] is False):  # dropout in eval mode
        return op._redispatch_boxed(raw & _AFTER_VMAP_MODE, stack)
    levels = [v for v in current_levels() if type(v) is VmapLevel]
    if any(v.randomness == "error" for v in levels):
        raise RuntimeError(
            "vmap: called random operation while in randomness error mode. Please either use "
            "the 'same' or 'different' randomness flags on vmap or perform the randomness "
            "operation out of vmap"
        )
    with ExcludeDispatchKeyGuard(DispatchKey.FuncTorchVmapMode):
        if not plan.tensors and not plan.lists:
            return _factory(op, plan, stack, levels)
        if lvl.randomness == "same":
            return _same(op, plan, stack, lvl)
        return _different(op, plan, stack, lvl)


def _factory(op: Any, plan: OpPlan, stack: list[Any], levels: list[VmapLevel]) -> Any:
    """``rand(size)`` and friends: one draw per entry of every 'different' level (outermost
    first in the shape), broadcast over the 'same' ones."""
    different = [v for v in levels if v.randomness == "different"]
    s = list(stack)
    k = plan.index("size")
    s[k] = [*(v.batch_size for v in different), *s[k]]
    result = plan.call(op, s)
    for v in different:
        result = wrap(result, v.level)
    return result


def _same(op: Any, plan: OpPlan, stack: list[Any], lvl: VmapLevel) -> Any:
    level = lvl.level
    s = list(stack)
    for i in plan.tensors:
        v = stack[i]
        if type(v) is BatchedTensor and v._level == level:
            s[i] = v._data.select(0, 0)
    if plan.name in ("aten::dropout", "aten::dropout_"):
        from tensordispatch import ones_like

        s[0] = ones_like(s[0])
        mask = (
            plan.call(op, s)
            if plan.name == "aten::dropout"
            else plan.call(op, [s[0].clone(), *s[1:]])
        )
        out = stack[0] * mask
        if plan.mutable:
            stack[0].copy_(out)
            return stack[0]
        return out
    if plan.mutable:
        target = stack[plan.mutable[0]]
        s[plan.mutable[0]] = s[plan.mutable[0]].clone()
        target.copy_(plan.call(op, s))
        return target
    return plan.call(op, s)


def _different(op: Any, plan: OpPlan, stack: list[Any], lvl: VmapLevel) -> Any:
    level, size = lvl.level, lvl.batch_size
    s = list(stack)
    for i in plan.mutable:
        v = stack[i]
        if not (type(v) is BatchedTensor and v._level == level):
            raise RuntimeError(
                "vmap: Cannot ask for different inplace randomness on an unbatched tensor. This "
                "will appear like same randomness. If this is necessary for your usage, please "
                "file an issue with functorch."
            )
    for i in plan.tensors:
        v = stack[i]
        if type(v) is BatchedTensor and v._level == level:
            s[i] = v._data
        elif v is not None:
            s[i] = v.expand([size, *v._shape])
    result = plan.call(op, s)
    if plan.mutable:
        return stack[plan.mutable[0]]
    return wrap_result(result, level)


# -- registration (Note [Lazy registration]) ---------------------------------------------------


def installed() -> bool:
    """Whether the vmap kernels are registered."""
    return bool(_LIBS)


def install() -> None:
    """Register the FuncTorchBatched fallback and the random kernels (idempotent)."""
    if _LIBS:
        return
    with _LOCK:
        if _LIBS:
            return
        from tensordispatch.transforms.vmap.rules import install_part1
        from tensordispatch.transforms.vmap.rules_index import install_part3
        from tensordispatch.transforms.vmap.rules_linalg import install_part2

        install_part1()
        install_part2()
        install_part3()
        fallback_lib = Library("_", "IMPL")
        lib = Library("aten", "IMPL", "FuncTorchVmapMode")
        pointwise_lib = Library("aten", "IMPL", "FuncTorchBatched")
        with DISPATCHER.batch():
            global_fallback_handle(DispatchKey.FuncTorchBatched).remove()
            fallback_lib.fallback(batched_kernel, "FuncTorchBatched", with_keyset=True)
            _register_direct(pointwise_lib)
            for entry in list(DISPATCHER.live_entries()):
                if entry.qualified_name.startswith("aten::") and (
                    "nondeterministic_seeded" in entry.tags
                ):
                    lib.impl(
                        entry.qualified_overload_name.split("::")[1], random_kernel, boxed=True
                    )
        _LIBS.extend([fallback_lib, lib, pointwise_lib])


def uninstall() -> None:
    """Remove the vmap kernels and restore the import-time FuncTorchBatched fallback."""
    with _LOCK:
        while _LIBS:
            _LIBS.pop()._destroy()
        restore_global_fallback(DispatchKey.FuncTorchBatched)
