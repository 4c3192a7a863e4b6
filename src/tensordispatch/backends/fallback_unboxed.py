"""The unboxed fast path of the CPU fallback: one compiled runner per operator.

Note [The unboxed fallback]
``cpu_fallback(op, keyset, stack)`` is boxed: the dispatcher builds the full stack (defaults
filled in) and the fallback unboxes it again for the CPU call. ``register_cpu_fallback``
registers this module's unboxed variant instead, in the dispatcher's fallback convention
``fn(op, *args, **kwargs)`` with a specializer, so the dispatcher caches, per operator, a
*runner* built once from the operator's FallbackPlan. For the common shape (Tensor / Tensor?
arguments, no lists or devices, nothing written, one fresh tensor returned) the runner is a
function compiled per operator signature with the operator's own parameters (the dispatcher
entry's, ``_NO`` for an omitted optional argument; keyword-only ones with defaults become
ordinary parameters, which binds cheaper), so the caller's arguments bind by position or by
name with no ``*args`` / ``**kwargs`` packing.

Its fast branch runs when every tensor argument has the backend's plain key set (one
comparison per tensor): one ``to_cpu`` call, the operator's CPU kernel (held by the runner,
refreshed whenever the dispatcher asks again) called as the dispatcher's entry would call it
(given optional arguments through a generated per-signature ``forwarder``), one ``from_cpu``
call. In-place and out= operators of that shape (one plain ``Tensor(a!)`` argument, written
and returned) get the same runner ending the boxed way: ``copy_from_cpu`` of the CPU copy
into the caller's tensor, which is returned (Note [Written arguments keep their identity]).
Each runner counts its calls in a closure cell (``_fb_count`` in its globals), summed by
``fallback_counts``.

Everything else leaves the fast branch through that same test: a None or omitted optional
tensor, a CPU tensor (a wrapped number), another device or layout, and strict mode, which
swaps every runner's key set for a sentinel equal to nothing while any thread has a strict
block open (so the fast branch pays nothing for it). The slow branch moves only the device
tensors, and hands strict mode, in-place and out= operators, omitted required arguments and
anything unexpected to the general path, the same code as ``cpu_fallback``. The rules of the
boxed notes in boxed_fallback.py hold for both.

boxed_fallback.py owns the state (strict mode, counters, locks) and hands it in through an
``UnboxedContext``, so this module imports nothing from it.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable
from dataclasses import dataclass
from types import CellType, CodeType, FunctionType
from typing import Any

from tensordispatch.backends.fallback_plan import _CPU_RAW, count_error, fallback_plan
from tensordispatch.dispatch.calling import NO_DEFAULT, NOT_GIVEN, entry_parameters
from tensordispatch.dispatch.keyset import backend_tensor_keyset
from tensordispatch.dispatch.op_overload import OpOverload
from tensordispatch.tensor.device import CPU
from tensordispatch.tensor.tensor import Tensor

__all__ = ["STRICT_KEY_SET", "UnboxedContext", "forwarder", "make_unboxed", "set_strict_hint"]

_NO: Any = NOT_GIVEN  # an optional argument the caller omitted (the dispatcher's marker)

#: What runners compare key sets with while a strict block is open: equal to no key set.
STRICT_KEY_SET: Any = object()


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


def set_strict_hint(ctx: UnboxedContext, on: bool) -> None:
    """Send every runner's fast branch to the slow one (``on``) or let it run again; the
    caller holds ``ctx.lock`` (Note [The unboxed fallback])."""
    for scopes in ctx.counts.values():
        for _, scope in scopes:
            if "_fb_ks_on" in scope:
                scope["_fb_ks"] = STRICT_KEY_SET if on else scope["_fb_ks_on"]


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
        if run is None or run.__globals__.get("_fb_schema", entry.schema) is not entry.schema:
            run = runners[entry] = _runner(op, backend, runners, ctx)
        scope = run.__globals__
        if "_fb_k" in scope:
            # The dispatcher asks again after any registration that could change the CPU
            # kernel (the operator's table or a global fallback republishes), so the runner
            # can hold the kernel instead of looking it up per call.
            scope["_fb_k"] = _cpu_kernel(entry)
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
    facts = entry.facts
    general = _general_path(op, plan, backend, runners, ctx)
    if plan.fast is None or backend.strict or facts is None or not _names_ok(facts):
        return general
    forward = forwarder(facts)
    counter = CellType(0)

    def first_call(*args: Any, **kwargs: Any) -> Any:
        # The CPU kernel until the dispatcher's specialization sets it (a runner made by the
        # general path after a re-def is called once before that).
        return _cpu_kernel(entry)(*args, **kwargs)

    ks = backend_tensor_keyset(backend.component).raw
    scope = {
        "_NO": _NO,
        "_fb_forward": forward,
        "_fb_schema": plan.schema,
        "_fb_op": op,
        "_fb_log": backend.log,
        "_fb_to_cpu": backend.to_cpu,
        "_fb_from_cpu": backend.from_cpu,
        "_fb_copy_back": backend.copy_from_cpu,
        "_fb_k": first_call,  # the CPU kernel, set by specialize
        "_fb_ks": ks,
        "_fb_ks_on": ks,
        "_fb_count": counter,
        "_fb_count_error": count_error,
        "_fb_plan": plan,
    }
    scope["_fb_slow"] = _slow_path(op, plan, backend, ctx, general, scope)
    optional_return = str(plan.schema.returns[0].type) != "Tensor"
    code, defaults, kwdefaults = _runner_code(
        facts, plan.fast, backend.log is not None, optional_return, plan.inplace
    )
    with ctx.lock:
        if ctx.strict_blocks[0]:
            scope["_fb_ks"] = STRICT_KEY_SET
        ctx.counts.setdefault(backend.name, []).append((plan.name, scope))
    run = FunctionType(code, scope, entry.qualified_name.split("::")[-1], defaults, (counter,))
    run.__kwdefaults__ = kwdefaults
    return run


def _general_path(
    op: OpOverload, plan: Any, backend: Any, runners: dict[Any, Any], ctx: UnboxedContext
) -> Callable[..., Any]:
    """The boxed fallback with the caller's arguments (every case; a re-def'd operator gets
    a new runner)."""
    entry = op._entry
    schema = plan.schema

    def general(*args: Any, **kwargs: Any) -> Any:
        if entry.schema is not schema:  # re-def'd: plan again
            runners.pop(entry, None)
            return runners.setdefault(entry, _runner(op, backend, runners, ctx))(*args, **kwargs)
        facts = entry.facts
        assert facts is not None  # an operator that reached a kernel has a schema
        return ctx.run_boxed(op, plan, backend, facts.stack_of(facts.bind(args, kwargs)))

    return general


def _split(facts: Any, values: tuple[Any, ...]) -> tuple[list[Any], dict[str, Any]]:
    """The call the dispatcher's entry makes with these parameter values: positional up to
    the first omitted one, the rest by name."""
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for i, v in enumerate(values):
        if v is _NO:
            continue
        if i < facts.num_positional and len(args) == i:
            args.append(v)
        else:
            kwargs[facts.names[i]] = v
    return args, kwargs


def _slow_path(
    op: OpOverload,
    plan: Any,
    backend: Any,
    ctx: UnboxedContext,
    general: Callable[..., Any],
    scope: dict[str, Any],
) -> Callable[[tuple[Any, ...]], Any]:
    """The slow branch of the runner with globals ``scope``, given its parameter values in
    schema order: not every tensor on the backend (move only the device ones), or strict
    mode or an in-place or out= operator (the general path)."""
    facts: Any = op._entry.facts
    defaults = facts.defaults
    to_cpu, from_cpu, log = backend.to_cpu, backend.from_cpu, backend.log
    forward, counter = scope["_fb_forward"], scope["_fb_count"]

    def slow(values: tuple[Any, ...]) -> Any:
        if ctx.strict_blocks[0] or plan.inplace >= 0:
            args, kwargs = _split(facts, values)
            return general(*args, **kwargs)
        moved = []
        where = []
        for i in plan.fast:
            v = values[i]
            if v is None or (v is _NO and defaults[i] is not NO_DEFAULT):
                continue
            if not isinstance(v, Tensor):  # a missing argument or a wrong type: its error
                args, kwargs = _split(facts, values)
                return general(*args, **kwargs)
            dev = v.device
            if dev is not CPU and dev.type != "cpu":
                moved.append(v)
                where.append(i)
        counter.cell_contents += 1
        if log is not None:
            log(op, moved)
        kernel = scope["_fb_k"]
        if not moved:
            return forward(kernel, *values)
        cpus = to_cpu(moved)
        if len(cpus) != len(moved):
            raise count_error(plan, len(cpus), len(moved))
        cpu_values = list(values)
        for n, i in enumerate(where):
            cpu_values[i] = cpus[n]
        result = forward(kernel, *cpu_values)
        return None if result is None else from_cpu([result], moved[0].device)[0]

    return slow


# Names the generated code reads besides its parameters and ``_fb_*`` globals.
_RESERVED = frozenset({"_NO", "len", "AttributeError", "ValueError"})


def _names_ok(facts: Any) -> bool:
    """Whether the schema's names can be the runner's parameters."""
    return bool(facts.identifiers_ok) and not any(
        keyword.iskeyword(n) or n.startswith("_fb_") or n in _RESERVED for n in facts.names
    )


def _cpu_kernel(entry: Any) -> Callable[..., Any]:
    """The operator's current CPU kernel (what ``op.redispatch(CPU, ...)`` would call)."""
    state = entry.state
    try:
        return state.redispatch_cache[_CPU_RAW]  # type: ignore[no-any-return]
    except KeyError:
        return state.redispatch_miss(_CPU_RAW)  # type: ignore[no-any-return]


_Compiled = tuple[CodeType, "tuple[Any, ...] | None", "dict[str, Any] | None"]
_RUNNER_CODE: dict[tuple[str, tuple[int, ...], bool, bool, int], _Compiled] = {}


def _parameters(facts: Any) -> tuple[str, list[str]]:
    """The runner's parameter list and the names that default to ``_NO``: the dispatcher
    entry's, except that keyword-only arguments with defaults become ordinary ones (a call
    filling keyword-only defaults costs more; callers pass them by name either way)."""
    params, optional, _ = entry_parameters(facts)
    kw_only = facts.names[facts.num_positional :]
    if not kw_only or not all(n in optional for n in kw_only):
        return params, optional
    head, _, _ = params.partition("*")
    parts = [p.strip() for p in head.split(",") if p.strip()]
    return ", ".join(parts + [f"{n}=_NO" for n in kw_only]), optional


def _runner_code(
    facts: Any, fast: tuple[int, ...], logs: bool, optional: bool, inplace: int
) -> _Compiled:
    """Compiled body of the unboxed fast path for one operator signature (parameter list,
    tensor positions, whether the backend logs, whether the return may be None, the written
    and returned argument of an in-place operator or -1), shared by every operator with that
    signature, with its defaults (Note [The unboxed fallback]).
    The counter is the code's one free variable (a cell per runner: cheaper to bump than
    a global)."""
    params, omitted = _parameters(facts)
    key = (params, fast, logs, optional, inplace)
    done = _RUNNER_CODE.get(key)
    if done is not None:
        return done
    names = facts.names
    tensors = [names[i] for i in fast]
    every = ", ".join(names)
    c_names = {i: f"_fb_c{i}" for i in fast}
    cpu_values = [c_names.get(i, n) for i, n in enumerate(names)]
    test = " or ".join(f"{n}._key_set != _fb_ks" for n in tensors)
    moved = f"[{', '.join(tensors)}]"
    lines = [
        f"def run({params}):",
        "    nonlocal _fb_n",
        "    try:",
        f"        if {test}:",
        f"            return _fb_slow(({every},))",
        "    except AttributeError:  # None, or an omitted optional tensor",
        f"        return _fb_slow(({every},))",
        "    _fb_n += 1",
        *([f"    _fb_m = {moved}", "    _fb_log(_fb_op, _fb_m)"] if logs else []),
        f"    _fb_c = _fb_to_cpu({'_fb_m' if logs else moved})",
        "    try:",
        f"        {', '.join(c_names.values())}, = _fb_c",
        "    except ValueError:",
        f"        raise _fb_count_error(_fb_plan, len(_fb_c), {len(fast)}) from None",
    ]
    required = [
        (f"{n}={cpu_values[i]}" if i >= facts.num_positional else cpu_values[i])
        for i, n in enumerate(names)
        if n not in omitted
    ]
    direct = f"_fb_k({', '.join(required)})"
    if omitted:
        lines += [
            f"    if {' and '.join(f'{n} is _NO' for n in omitted)}:",
            f"        _fb_r = {direct}",
            "    else:",
            f"        _fb_r = _fb_forward(_fb_k, {', '.join(cpu_values)})",
        ]
    else:
        lines.append(f"    _fb_r = {direct}")
    if inplace >= 0:  # Note [Written arguments keep their identity] in boxed_fallback.py
        lines += [
            f"    _fb_copy_back(_fb_c{inplace}, {names[inplace]})",
            f"    return {names[inplace]}",
        ]
    else:
        result = f"_fb_from_cpu([_fb_r], {tensors[0]}.device)[0]"
        lines.append(
            f"    return None if _fb_r is None else {result}"
            if optional
            else f"    return {result}"
        )
    # Nested in a maker so that _fb_n is a free variable of run's code.
    source = "def make():\n    _fb_n = 0\n" + "".join(f"    {line}\n" for line in lines)
    source += "    return run\n"
    namespace: dict[str, Any] = {"_NO": _NO}
    exec(compile(source, "<tensordispatch cpu fallback>", "exec"), namespace)  # noqa: S102 - ours
    proto = namespace["make"]()
    done = _RUNNER_CODE[key] = (proto.__code__, proto.__defaults__, proto.__kwdefaults__)
    return done


_FORWARDERS: dict[tuple[str, ...], Callable[..., Any]] = {}


def forwarder(facts: Any) -> Callable[..., Any]:
    """``forward(kernel, *values)``: call ``kernel`` as the dispatcher's entry calls the next
    kernel, from the operator's parameter values in schema order (``_NO`` = omitted): the
    required ones, then each given optional one positionally while the positions line up,
    by name after. Compiled once per signature.

    >>> import tensordispatch as td
    >>> forward = forwarder(td.ops.aten.add.Tensor._entry.facts)
    >>> forward(lambda *a, **kw: (a, kw), 1, 2, _NO), forward(lambda *a, **kw: (a, kw), 1, 2, 3)
    (((1, 2), {}), ((1, 2), {'alpha': 3}))
    """
    params, omitted, _ = entry_parameters(facts)
    key = (params, *facts.names)
    done = _FORWARDERS.get(key)
    if done is not None:
        return done
    names, npos = facts.names, facts.num_positional
    args = [n for n in names[:npos] if n not in omitted]
    kw = [n for n in names[npos:] if n not in omitted]
    given = ", ".join(args + [f"{n}={n}" for n in kw])
    lines = [f"def forward(_fb_k, {', '.join(names)}):"]
    if omitted:
        lines += [
            f"    if {' and '.join(f'{n} is _NO' for n in omitted)}:",
            f"        return _fb_k({given})",
            f"    _fb_a = [{', '.join(args)}]",
            f"    _fb_kw = {{{', '.join(f'{n!r}: {n}' for n in kw)}}}",
        ]
        for i, n in enumerate(names):
            if n not in omitted:
                continue
            if i < npos:
                lines += [
                    f"    if {n} is not _NO:",
                    f"        if len(_fb_a) == {i}: _fb_a.append({n})",
                    f"        else: _fb_kw[{n!r}] = {n}",
                ]
            else:
                lines.append(f"    if {n} is not _NO: _fb_kw[{n!r}] = {n}")
        lines.append("    return _fb_k(*_fb_a, **_fb_kw)")
    else:
        lines.append(f"    return _fb_k({given})")
    namespace: dict[str, Any] = {"_NO": _NO}
    source = "\n".join(lines) + "\n"
    exec(compile(source, "<tensordispatch cpu fallback>", "exec"), namespace)  # noqa: S102 - ours
    forward: Callable[..., Any] = namespace["forward"]
    _FORWARDERS[key] = forward
    return forward
