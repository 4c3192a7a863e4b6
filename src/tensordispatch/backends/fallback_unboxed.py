"""The unboxed fast path of the CPU fallback: one compiled runner per operator.

Note [The unboxed fallback]
``cpu_fallback(op, keyset, stack)`` is boxed: the dispatcher builds the full stack (defaults
filled in) and the fallback unboxes it again for the CPU call. ``register_cpu_fallback``
registers this module's unboxed variant instead, in the dispatcher's fallback convention
``fn(op, *args, **kwargs)`` with a specializer, so the dispatcher caches, per operator, a
*runner* built once from the operator's FallbackPlan: for the common shape (positional
Tensor / Tensor? arguments, nothing written, one fresh tensor returned) a function compiled
once per shape (tensor positions, positional count, logging on or off) that reads the
tensors by position, makes one ``to_cpu`` call, calls the operator's current CPU kernel with
the caller's own arguments (no stack, no keyword filtering) and one ``from_cpu`` call.
Counters live in the runner's globals (``_n``), summed by ``fallback_counts``. Everything
else (strict mode, views, written arguments, lists, devices, tensors passed by keyword)
takes the general path, the same code as ``cpu_fallback``. The rules of the boxed notes in
boxed_fallback.py hold for both.

boxed_fallback.py owns the state (strict mode, counters, locks) and hands it in through an
``UnboxedContext``, so this module imports nothing from it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import CodeType, FunctionType
from typing import Any

from tensordispatch.backends.fallback_plan import _CPU_RAW, count_error, fallback_plan
from tensordispatch.dispatch.keyset import DispatchKeySet
from tensordispatch.dispatch.op_overload import OpOverload

__all__ = ["UnboxedContext", "make_unboxed"]

_NO: Any = object()  # a runner parameter the caller did not pass positionally


@dataclass(frozen=True, slots=True)
class UnboxedContext:
    """What runners need from boxed_fallback.py: the general path, the open strict-mode
    blocks over all threads (``[n]``: when nonzero, runners take the general path, which reads
    the thread-local state), the counters' lock and ``backend name -> [(op name, runner
    globals)]``."""

    run_boxed: Callable[..., Any]
    strict_blocks: list[int]
    lock: Any
    counts: dict[str, list[tuple[str, dict[str, Any]]]]


def make_unboxed(backend: Any, ctx: UnboxedContext) -> Callable[..., Any]:
    """``fallback(op, *args, **kwargs)`` for ``backend`` with ``fallback.specializer``."""
    # By operator entry: OpOverload hashes by name (slow); entries hash by identity.
    runners: dict[Any, Callable[..., Any]] = {}

    def specialize(op: OpOverload, raw: int = 0) -> Callable[..., Any]:
        """The operator's runner, called with the operator's arguments: what the dispatcher
        caches for this fallback's slot (KernelFunction.specializer), skipping one hop."""
        entry = op._entry
        run = runners.get(entry)
        # A re-def republishes the operator's table, so the dispatcher asks again: the only
        # place the runner's schema needs checking.
        if run is None or run.__globals__.get("_schema", entry.schema) is not entry.schema:
            run = runners[entry] = _runner(op, backend, runners, ctx)
        scope = run.__globals__
        if "_k" in scope:
            # The dispatcher asks again after any registration that could change the CPU
            # kernel (the operator's table or a global fallback republishes), so the runner
            # can hold the kernel instead of looking it up per call.
            scope["_k"] = _cpu_kernel(entry)
        return run

    def fallback(op: OpOverload, *args: Any, **kwargs: Any) -> Any:
        return specialize(op)(*args, **kwargs)

    fallback.specializer = specialize  # type: ignore[attr-defined]
    return fallback


def _runner(
    op: OpOverload, backend: Any, runners: dict[Any, Any], ctx: UnboxedContext
) -> Callable[..., Any]:
    """One operator's unboxed fallback for one backend: everything looked up once."""
    entry = op._entry
    plan = fallback_plan(op)
    schema = plan.schema
    fast = plan.fast
    name = plan.name
    to_cpu, from_cpu, log = backend.to_cpu, backend.from_cpu, backend.log

    def general(*args: Any, **kwargs: Any) -> Any:
        if entry.schema is not schema:  # re-def'd: plan again
            runners.pop(entry, None)
            return runners.setdefault(entry, _runner(op, backend, runners, ctx))(*args, **kwargs)
        facts = entry.facts
        assert facts is not None  # an operator that reached a kernel has a schema
        return ctx.run_boxed(op, plan, backend, facts.stack_of(facts.bind(args, kwargs)))

    if fast is None or backend.strict:
        return general

    def mixed(*args: Any, **kwargs: Any) -> Any:
        """Some tensor arguments are None or on CPU: move only the others."""
        moved = []
        where = []
        for i in fast:
            v = args[i]
            if v is not None and v.device.type != "cpu":
                moved.append(v)
                where.append(i)
        if log is not None:
            log(op, moved)
        cpu_kernel = _cpu_kernel(entry)
        if not moved:
            return cpu_kernel(*args, **kwargs)
        cpus = to_cpu(moved)
        if len(cpus) != len(moved):
            raise count_error(plan, len(cpus), len(moved))
        cpu_args = list(args)
        for i, t in zip(where, cpus, strict=True):
            cpu_args[i] = t
        result = cpu_kernel(*cpu_args, **kwargs)
        return None if result is None else from_cpu([result], moved[0].device)[0]

    scope = {
        "_general": general,
        "_mixed": mixed,
        "_strict_blocks": ctx.strict_blocks,
        "_entry": entry,
        "_schema": schema,
        "_n": 0,
        "_op": op,
        "_log": log,
        "_to_cpu": to_cpu,
        "_from_cpu": from_cpu,
        "_CPU_RAW": _CPU_RAW,
        "_k": None,  # the CPU kernel, set by specialize
        "_NO": _NO,
        "_bit": DispatchKeySet(backend.component).raw,
        "_count_error": count_error,
        "_plan": plan,
    }
    with ctx.lock:
        ctx.counts.setdefault(backend.name, []).append((name, scope))
    code = _runner_code(fast, plan.need, log is not None)
    return FunctionType(code, scope, f"fallback_{name}", (_NO,) * plan.need)


def _cpu_kernel(entry: Any) -> Callable[..., Any]:
    """The operator's current CPU kernel (what ``op.redispatch(CPU, ...)`` would call)."""
    state = entry.state
    try:
        return state.redispatch_cache[_CPU_RAW]  # type: ignore[no-any-return]
    except KeyError:
        return state.redispatch_miss(_CPU_RAW)  # type: ignore[no-any-return]


_RUNNER_CODE: dict[tuple[tuple[int, ...], int, bool], CodeType] = {}


def _runner_code(fast: tuple[int, ...], need: int, logs: bool) -> CodeType:
    """Compiled body of the unboxed fast path for one shape of operator (tensor positions,
    positional count needed, whether the backend logs), shared by every operator of that
    shape (Note [The unboxed fallback])."""
    key = (fast, need, logs)
    code = _RUNNER_CODE.get(key)
    if code is not None:
        return code
    # Positional parameters up to the last tensor (generic names, default _NO): positional
    # binding instead of packing and indexing a tuple. Keyword-passed tensors land in
    # **kwargs, leave a _NO behind and take the general path.
    params = [f"_td_p{i}" for i in range(need)]
    names = [params[i] for i in fast]
    # Fast only when every tensor carries the backend's own bit (one AND over all key sets;
    # a None has no key set); any other mix (None, CPU scalars, other devices) takes _mixed,
    # which looks at devices.
    all_bits = " & ".join(f"{n}._key_set" for n in names)
    given = ", ".join(params)
    c_names = [f"_c{i}" for i in fast]
    cpu_args = ", ".join(f"_c{p}" if p in fast else params[p] for p in range(need))
    lines = [
        f"def run({', '.join(p + '=_NO' for p in params)}, *args, **kwargs):",
        f"    if _strict_blocks[0] or {params[-1]} is _NO:",
        f"        return _general(*[_p for _p in ({given},) if _p is not _NO], *args, **kwargs)",
        "    global _n",
        "    _n += 1",
        "    try:",
        f"        _ok = {all_bits} & _bit",
        "    except AttributeError:  # a None optional tensor",
        "        _ok = 0",
        "    if not _ok:",
        f"        return _mixed({given}, *args, **kwargs)",
        f"    _m = [{', '.join(names)}]",
        *(["    _log(_op, _m)"] if logs else []),
        "    _c = _to_cpu(_m)",
        "    try:",
        f"        {', '.join(c_names)}, = _c",
        "    except ValueError:",
        f"        raise _count_error(_plan, len(_c), {len(fast)}) from None",
        "    if args or kwargs:",
        f"        _r = _k({cpu_args}, *args, **kwargs)",
        "    else:",
        f"        _r = _k({cpu_args})",
        f"    return None if _r is None else _from_cpu([_r], {names[0]}.device)[0]",
    ]
    namespace: dict[str, Any] = {"_NO": _NO}
    source = "\n".join(lines) + "\n"
    exec(compile(source, "<tensordispatch cpu fallback>", "exec"), namespace)  # noqa: S102 - ours
    compiled: CodeType = namespace["run"].__code__
    _RUNNER_CODE[key] = compiled
    return compiled
