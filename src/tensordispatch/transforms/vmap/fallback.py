"""The boxed for-loop fallback of vmap: every operator without a batching rule (seed 003).

Slice every argument batched at the current level along its batch dim, call the operator
once per batch entry, and stack the results into one BatchedTensor per tensor return.
Written arguments (in-place and out= operators) are written through the slices, which are
views of the batched argument's inner tensor, so the caller's tensor sees the writes and is
returned itself. Owns the per-operator counters, the warn-once set and strict mode; must
not know about any particular operator.

Note [In-place on an unbatched tensor]
``a.add_(b)`` inside vmap with ``b`` batched and ``a`` not cannot be done: ``a`` has one
value, the result has one per batch entry. torch raises before running anything; so do we,
with torch's text (the rules' variant in rules.py, this one for the fallback).
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tensordispatch.transforms.vmap.batched import BatchedTensor, wrap
from tensordispatch.transforms.vmap.plan import OpPlan

__all__ = [
    "VmapFallbackStrictError",
    "loop_fallback",
    "reset_vmap_fallback_counts",
    "strict_vmap_fallback",
    "vmap_fallback_counts",
]


class VmapFallbackStrictError(NotImplementedError):
    """An operator without a batching rule was called in vmap while strict mode was on."""


_COUNTS: dict[str, int] = {}
_WARNED: set[str] = set()
_LOCK = threading.Lock()


class _Strict(threading.local):
    depth = 0


_STRICT = _Strict()


def vmap_fallback_counts() -> dict[str, int]:
    """How many times each operator ran through the for-loop fallback (a copy).

    >>> reset_vmap_fallback_counts(); vmap_fallback_counts()
    {}
    """
    with _LOCK:
        return dict(_COUNTS)


def reset_vmap_fallback_counts() -> None:
    """Zero the counters and forget which operators were already warned about.

    >>> reset_vmap_fallback_counts()
    """
    with _LOCK:
        _COUNTS.clear()
        _WARNED.clear()


@contextmanager
def strict_vmap_fallback(enabled: bool = True) -> Iterator[None]:
    """Within the block (this thread) an operator without a batching rule raises
    VmapFallbackStrictError instead of looping: use it to find what a program is missing.

    >>> with strict_vmap_fallback():
    ...     pass
    """
    previous = _STRICT.depth
    _STRICT.depth = previous + 1 if enabled else 0
    try:
        yield
    finally:
        _STRICT.depth = previous


def _note_call(name: str) -> None:
    if _STRICT.depth:
        raise VmapFallbackStrictError(
            f"{name}: there is no batching rule for this operator and the vmap for-loop "
            "fallback is in strict mode, so it was not run once per batch entry. Add a batching "
            "rule (tensordispatch.transforms.vmap.rules) or leave strict_vmap_fallback()."
        )
    with _LOCK:
        _COUNTS[name] = _COUNTS.get(name, 0) + 1
        first = name not in _WARNED
        _WARNED.add(name)
    if first:
        warnings.warn(
            f"There is a performance drop because we have not yet implemented the batching "
            f"rule for {name}. The operator runs once per batch entry (the vmap for-loop "
            "fallback); this warning is given once per operator.",
            UserWarning,
            stacklevel=2,
        )


def check_inplace(plan: OpPlan, stack: list[Any], level: int, base_name: str) -> None:
    """Note [In-place on an unbatched tensor]: raise if a written argument is unbatched at
    ``level`` while another argument is batched there."""
    for i in plan.mutable:
        v = stack[i]
        if type(v) is BatchedTensor and v._level == level:
            continue
        raise RuntimeError(
            f"vmap: {base_name}(self, *extra_args) is not possible because there exists a "
            "Tensor `other` in extra_args that has more elements than `self`. This happened "
            "due to `other` being vmapped over but `self` not being vmapped over at level "
            f"{level}. Please try to use out-of-place operators instead of {base_name}. If said "
            "operator is being called inside the PyTorch framework, please file a bug report "
            "instead."
        )


def batch_size_at(plan: OpPlan, stack: list[Any], level: int) -> int:
    """The batch size of ``level`` read from the first argument batched at it."""
    for i in plan.tensors:
        v = stack[i]
        if type(v) is BatchedTensor and v._level == level:
            size: int = v._data._shape[0]
            return size
    for i in plan.lists:
        for v in stack[i] or ():
            if type(v) is BatchedTensor and v._level == level:
                size = v._data._shape[0]
                return size
    raise RuntimeError(f"{plan.name}: no argument is batched at vmap level {level}")


def _slice(plan: OpPlan, stack: list[Any], level: int, b: int) -> list[Any]:
    s = list(stack)
    for i in plan.tensors:
        v = stack[i]
        if type(v) is BatchedTensor and v._level == level:
            s[i] = v._data.select(0, b)
    for i in plan.lists:
        items = stack[i]
        if items is not None:
            s[i] = [
                v._data.select(0, b) if type(v) is BatchedTensor and v._level == level else v
                for v in items
            ]
    return s


def loop_fallback(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
    """Run ``op`` once per batch entry of ``level`` and stack the results (module header)."""
    _note_call(plan.name)
    if plan.mutable:
        check_inplace(plan, stack, level, plan.base_name)
    size = batch_size_at(plan, stack, level)
    results = [plan.call(op, _slice(plan, stack, level, b)) for b in range(size)]
    return _combine(plan, stack, results, level)


def _combine(plan: OpPlan, stack: list[Any], results: list[Any], level: int) -> Any:
    from tensordispatch import stack as stack_op

    if plan.num_returns == 0:
        return None
    outs = []
    for j, (kind, aliased) in enumerate(plan.returns):
        column = [r[j] if plan.num_returns > 1 else r for r in results]
        if aliased >= 0:
            outs.append(stack[aliased])
        elif kind == "tensor":
            outs.append(wrap(stack_op(column, 0), level))
        elif kind == "list":
            outs.append([wrap(stack_op(list(c), 0), level) for c in zip(*column, strict=True)])
        else:
            outs.append(column[0])
    return outs[0] if plan.num_returns == 1 else tuple(outs)
