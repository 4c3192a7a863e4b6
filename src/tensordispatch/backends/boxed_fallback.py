"""The boxed CPU fallback for external backends (seed 001, issue 6 section 2).

An out-of-tree backend implements the operators it can and registers one boxed kernel,
``cpu_fallback``, as the global fallback of its dispatch key (PrivateUse1 for a renamed
device). Every other operator then runs on CPU: tensor arguments are moved to CPU with the
backend's batched ``to_cpu`` hook, the operator is redispatched to the CPU key, written
arguments are copied back into the caller's device tensors, and the other outputs move to
the device of the tensor arguments.

Owns the fallback kernel, the per-backend hooks registry (keyed by BackendComponent), the
per-operator plans, counters, strict mode and the registration helper. Must not know about
any particular backend: everything device-specific goes through ``FallbackBackend``.

Note [One to_cpu call per fallback]
Every tensor argument (plain, optional, and the elements of Tensor[] / Tensor?[] lists, in
stack order) is gathered into one list and handed to ``to_cpu`` once: an XLA-style backend
materializes a shared graph once for all of them (review of seed 001). ``None`` (an
undefined optional tensor or list element) is not sent and stays None. Arguments already
on CPU are left alone (``device.type == "cpu"``; the ``is CPU`` test first is the fast
path). A call without device tensors (a factory with ``device=``) makes no ``to_cpu`` call.
Outputs are moved back with one ``from_cpu`` call as well.

Note [Fallback plans]
Which stack positions hold tensors, lists or devices, which arguments are written, which
return aliases which written argument, and whether the operator is a view: all of it is
derived from the schema once per operator (``FallbackPlan`` in fallback_plan.py, cached
by operator entry and checked against the entry's current schema by identity), never per
call ("quadratic police", seed 001). The cache holds one small object per operator that
ever fell back.

Note [Written arguments keep their identity]
For ``Tensor(a!)`` arguments (in-place and out= operators) the CPU result is copied back
into the ORIGINAL device tensor with the backend's ``copy_from_cpu`` hook, and a return that
aliases it returns that same object, so every alias the caller holds (views included) sees
the write. Torch does the same with ``_copy_from_and_resize``.

Note [Views cannot fall back]
A view operator (a return that aliases an argument without writing it) cannot run on CPU:
the result would live in a CPU storage the device tensor does not share, and a later write
through either would not be seen by the other. The fallback raises instead (torch's
``error_on_views``). Backends must implement every view they use.

Note [Fallback before composite kernels]
By the dispatcher's rules (spec 5.2) a CompositeExplicitAutograd(NonFunctional) kernel
beats a backend fallback, so e.g. ``zeros`` on the backend runs the composite kernel, which
calls ``empty`` and ``fill_`` on the device: an extra hop, an allocation and a second
fallback (seed 001's list). ``register_cpu_fallback(..., before_composite=True)`` registers
the fallback as a direct kernel of the backend key for every operator defined at that time
that has such a composite kernel, no kernel of its own for the backend and is not a view
(direct kernels beat composite ones), and keeps doing so for operators defined (or given
such a composite kernel) later, through a dispatcher registration listener (torch's
addRegistrationListener); ``remove()`` stops the listener first, then unregisters.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tensordispatch.backends.fallback_plan import (
    ARG_LIST,
    ARG_TENSOR,
    PLANS,
    RET_TENSOR,
    FallbackPlan,
    call_on_cpu,
    count_error,
    fallback_plan,
    outputs,
    substitute,
)
from tensordispatch.backends.fallback_unboxed import UnboxedContext, make_unboxed, set_strict_hint
from tensordispatch.dispatch.dispatcher import DISPATCHER, RegistrationHandle
from tensordispatch.dispatch.kernel import KernelFunction, KernelKind
from tensordispatch.dispatch.keys import BackendComponent, DispatchKey, parse_dispatch_key
from tensordispatch.dispatch.keyset import DispatchKeySet
from tensordispatch.dispatch.library import Library
from tensordispatch.dispatch.op_overload import OpOverload
from tensordispatch.tensor.device import CPU, device
from tensordispatch.tensor.tensor import Tensor

__all__ = [
    "CPUFallbackRegistration",
    "FallbackBackend",
    "FallbackPlan",
    "FallbackStrictError",
    "FallbackViewError",
    "call_fallback",
    "cpu_fallback",
    "fallback_counts",
    "fallback_plan",
    "register_cpu_fallback",
    "register_fallback_backend",
    "reset_fallback_counts",
    "strict_fallback",
    "unboxed_cpu_fallback",
]

_COMPOSITE_KEYS = (
    DispatchKey.CompositeExplicitAutograd,
    DispatchKey.CompositeExplicitAutogradNonFunctional,
)


class FallbackViewError(RuntimeError):
    """A view operator reached the CPU fallback (Note [Views cannot fall back])."""


class FallbackStrictError(NotImplementedError):
    """An operator reached the CPU fallback while strict mode was on."""


@dataclass(frozen=True, slots=True)
class FallbackBackend:
    """What the CPU fallback needs from one backend: its name and three copy hooks.

    * ``to_cpu(tensors)``: CPU copies of a list of device tensors, in order, in ONE call
      (Note [One to_cpu call per fallback]);
    * ``from_cpu(tensors, device)``: device copies of a list of CPU tensors;
    * ``copy_from_cpu(src, dst)``: write CPU tensor ``src`` into device tensor ``dst`` in
      place, resizing ``dst`` if the shapes differ (out= arguments);
    * ``log(op, tensors)``: optional, called on every fallback with the operator and the
      device tensors it moves (XLA's per-operator logging);
    * ``strict``: raise FallbackStrictError instead of falling back.
    """

    name: str
    component: BackendComponent
    to_cpu: Callable[[list[Tensor]], Sequence[Tensor]]
    from_cpu: Callable[[list[Tensor], device], Sequence[Tensor]]
    copy_from_cpu: Callable[[Tensor, Tensor], Any]
    log: Callable[[OpOverload, list[Tensor]], Any] | None = None
    strict: bool = False


# -- backends, counters, strict mode -----------------------------------------------------------

_BACKENDS: dict[BackendComponent, FallbackBackend] = {}
_BY_RAW: dict[int, FallbackBackend] = {}
_COUNTS: dict[str, dict[str, int]] = {}
# Fast-path counters: a cell in each unboxed runner's globals (``_fb_count``): backend name ->
# [(operator name, runner globals)]; fallback_counts adds them up.
_RUNNER_COUNTS: dict[str, list[tuple[str, dict[str, Any]]]] = {}
_LOCK = threading.Lock()


class _StrictState(threading.local):
    def __init__(self) -> None:
        self.depth = 0


_STRICT = _StrictState()
# Open strict_fallback blocks over all threads: while nonzero, the unboxed runners leave their
# fast branch (set_strict_hint) and the thread-local depth decides; none open costs them nothing.
_STRICT_BLOCKS = [0]


def register_fallback_backend(backend: FallbackBackend) -> RegistrationHandle:
    """Make ``backend``'s hooks the ones ``cpu_fallback`` uses for its component.

    Returns a handle whose ``remove()`` undoes exactly this (``register_cpu_fallback`` does
    this and registers the kernel too).
    """
    with _LOCK:
        if backend.component in _BACKENDS:
            raise ValueError(
                f"register_fallback_backend({backend.name!r}): backend component "
                f"{backend.component.name} already has CPU fallback hooks (registered for "
                f"{_BACKENDS[backend.component].name!r}); remove that registration first"
            )
        _BACKENDS[backend.component] = backend
        _BY_RAW.clear()

    def undo() -> None:
        with _LOCK:
            if _BACKENDS.get(backend.component) is backend:
                del _BACKENDS[backend.component]
            _BY_RAW.clear()

    return RegistrationHandle(undo, f"CPU fallback hooks for {backend.name}")


def _backend_for(op: OpOverload, raw: int) -> FallbackBackend:
    backend = _BY_RAW.get(raw)
    if backend is None:
        component = DispatchKeySet.from_raw(raw).highest_backend_key()
        backend = _BACKENDS.get(component)
        if backend is None:
            raise RuntimeError(
                f"{op.name()}: the CPU fallback ran for backend component {component.name}, "
                "which has no CPU fallback hooks; register them with register_cpu_fallback "
                "(or register_fallback_backend) before registering cpu_fallback as a kernel"
            )
        _BY_RAW[raw] = backend
    return backend


def fallback_counts(backend: str | None = None) -> dict[str, int]:
    """How many times each operator fell back to CPU: a copy, ``name -> count``, for one
    backend or summed over all. Counts accumulate until ``reset_fallback_counts()``.

    >>> reset_fallback_counts(); fallback_counts()
    {}
    """
    with _LOCK:
        rows = [(n, op, k) for n, counts in _COUNTS.items() for op, k in counts.items()]
        rows += [
            (n, op, sc["_fb_count"].cell_contents)
            for n, scopes in _RUNNER_COUNTS.items()
            for op, sc in scopes
        ]
    total: dict[str, int] = {}
    for name, op, k in rows:
        if k and (backend is None or name == backend):
            total[op] = total.get(op, 0) + k
    return total


def reset_fallback_counts(backend: str | None = None) -> None:
    """Zero the counters of one backend (or of all)."""
    with _LOCK:
        for name in list(_COUNTS):
            if backend is None or name == backend:
                del _COUNTS[name]
        for name, scopes in _RUNNER_COUNTS.items():
            if backend is None or name == backend:
                for _, scope in scopes:
                    scope["_fb_count"].cell_contents = 0


@contextmanager
def strict_fallback(enabled: bool = True) -> Iterator[None]:
    """Within the block (this thread), every CPU fallback raises FallbackStrictError instead
    of running: use it to list what a backend is missing.

    >>> with strict_fallback():
    ...     pass
    """
    previous = _STRICT.depth
    _STRICT.depth = previous + 1 if enabled else 0
    with _LOCK:
        _STRICT_BLOCKS[0] += 1
        if _STRICT_BLOCKS[0] == 1:
            set_strict_hint(_CONTEXT, True)
    try:
        yield
    finally:
        _STRICT.depth = previous
        with _LOCK:
            _STRICT_BLOCKS[0] -= 1
            if not _STRICT_BLOCKS[0]:
                set_strict_hint(_CONTEXT, False)


def _device_text(stack: list[Any], plan: FallbackPlan, backend: FallbackBackend) -> str:
    for i, kind in plan.args:
        v = stack[i]
        items = v if kind == ARG_LIST else [v]
        for t in items:
            if isinstance(t, Tensor) and t.device.type != "cpu":
                return str(t.device)
    return backend.name


def _refuse(op: OpOverload, plan: FallbackPlan, backend: FallbackBackend, stack: list[Any]) -> None:
    where = _device_text(stack, plan, backend)
    if plan.is_view:
        raise FallbackViewError(
            f"The operator {plan.name} appears to be a view operator, but it has no "
            f'implementation for the backend "{where}". View operators don\'t support '
            "falling back to run on the CPU, since the tensor's storage cannot be shared "
            f"across devices. Implement {plan.name} for the backend (list it in its backend "
            "yaml)."
        )
    raise FallbackStrictError(
        f'{plan.name}: no kernel for the backend "{where}" and the CPU fallback is in strict '
        "mode, so it was not run on CPU. Implement the operator for the backend (list it in "
        "its backend yaml), or leave strict mode to let it fall back."
    )


# -- the fallback kernel -------------------------------------------------------------------------


def cpu_fallback(op: OpOverload, keyset: DispatchKeySet | int, stack: list[Any]) -> Any:
    """The boxed CPU fallback: run ``op`` on CPU for a backend without a kernel for it.

    Register it with ``register_cpu_fallback`` (which also registers the backend's hooks),
    or wrap it in the backend's own boxed fallback (custom logging) and register that with
    ``Library("_", "IMPL").fallback(fn, key, boxed=True)``. Returns the operator's result.
    See the module notes for the rules (one ``to_cpu`` call, written arguments keep their
    identity, views refuse).

    A toy backend "doc3" whose device tensors hold NumPy arrays (transfers re-wrap them):

    >>> import tensordispatch as td
    >>> from tensordispatch.dispatch.kernel import fallthrough_kernel
    >>> from tensordispatch.library import Library
    >>> from tensordispatch.tensor.device import register_device_type
    >>> dev_type = register_device_type("doc3", BackendComponent.PrivateUse3Bit)
    >>> def move(t, dev):
    ...     return Tensor._make(t._data.copy(), t._shape, t._strides, 0, t.dtype, dev)
    >>> backend = FallbackBackend(
    ...     "doc3", BackendComponent.PrivateUse3Bit,
    ...     to_cpu=lambda ts: [move(t, CPU) for t in ts],
    ...     from_cpu=lambda ts, dev: [move(t, dev) for t in ts],
    ...     copy_from_cpu=lambda src, dst: dst._data.__setitem__(..., src._data))
    >>> autograd = Library("_", "IMPL")  # no global AutogradPrivateUse3 fallback, as in torch
    >>> _ = autograd.fallback(fallthrough_kernel, "AutogradPrivateUse3")
    >>> reg = register_cpu_fallback(backend, "PrivateUse3")
    >>> x = move(td.tensor([1.0, 2.0]), device("doc3"))
    >>> y = x.mul_(td.tensor(3.0))
    >>> y is x, x._data.tolist(), fallback_counts("doc3")
    (True, [3.0, 6.0], {'aten::mul_.Tensor': 1})
    >>> reg.remove(); autograd._destroy(); dev_type.remove(); reset_fallback_counts()
    """
    raw = keyset if type(keyset) is int else keyset.raw  # type: ignore[union-attr]
    plan = PLANS.get(op._entry)
    if plan is None or plan.schema is not op._entry.schema:
        plan = fallback_plan(op)
    backend = _BY_RAW.get(raw) or _backend_for(op, raw)
    return _run_boxed(op, plan, backend, stack)


def _run_boxed(
    op: OpOverload, plan: FallbackPlan, backend: FallbackBackend, stack: list[Any]
) -> Any:
    """The fallback on a full stack, every case (the unboxed fast path's general fallback)."""
    if plan.is_view or backend.strict or _STRICT.depth:
        _refuse(op, plan, backend, stack)
    counts = _COUNTS.get(backend.name)
    if counts is None:
        counts = _COUNTS.setdefault(backend.name, {})
    counts[plan.name] = counts.get(plan.name, 0) + 1

    plain = plan.plain
    if plain is not None and not plan.mutable and plan.num_returns == 1:
        return _run_plain(op, plan, plain, backend, stack)

    # Gather the device tensors (Note [One to_cpu call per fallback]).
    moved: list[Tensor] = []
    target: device | None = None
    cpu_stack = list(stack)
    for i, kind in plan.args:
        v = stack[i]
        if kind == ARG_TENSOR:
            if v is not None and v.device is not CPU and v.device.type != "cpu":
                moved.append(v)
        elif kind == ARG_LIST:
            cpu_stack[i] = list(v)
            for t in v:
                if t is not None and t.device is not CPU and t.device.type != "cpu":
                    moved.append(t)
        elif v is not None:
            dev = v if isinstance(v, device) else device(v)
            if dev.type != "cpu":
                target = dev
                cpu_stack[i] = CPU
    if backend.log is not None:
        backend.log(op, moved)
    if moved:
        target = moved[0].device
        cpus = backend.to_cpu(moved)
        substitute(plan, stack, cpu_stack, cpus)

    result = call_on_cpu(op, plan, cpu_stack)

    # Written arguments: copy back into the caller's tensors (Note [Written arguments ...]).
    for i in plan.mutable:
        dst = stack[i]
        if isinstance(dst, Tensor):
            if dst.device is not CPU and dst.device.type != "cpu":
                backend.copy_from_cpu(cpu_stack[i], dst)
        elif dst is not None:
            for src, d in zip(cpu_stack[i], dst, strict=True):
                if d is not None and d.device is not CPU and d.device.type != "cpu":
                    backend.copy_from_cpu(src, d)
    return outputs(plan, backend, stack, result, target)


def _run_plain(
    op: OpOverload,
    plan: FallbackPlan,
    plain: tuple[int, ...],
    backend: FallbackBackend,
    stack: list[Any],
) -> Any:
    """The common case, same rules: plain tensor arguments, nothing written, one return."""
    cpu_stack = stack.copy()
    where = []
    moved = []
    for i in plain:
        v = stack[i]
        if v is not None and v.device is not CPU and v.device.type != "cpu":
            where.append(i)
            moved.append(v)
    if backend.log is not None:
        backend.log(op, moved)
    if not moved:
        return outputs(plan, backend, stack, call_on_cpu(op, plan, cpu_stack), None)
    cpus = backend.to_cpu(moved)
    if len(cpus) != len(moved):
        raise count_error(plan, len(cpus), len(moved))
    for i, t in zip(where, cpus):
        cpu_stack[i] = t
    result = call_on_cpu(op, plan, cpu_stack)
    kind = plan.returns[0][0]
    if kind == RET_TENSOR and result is not None:
        return backend.from_cpu([result], moved[0].device)[0]
    return outputs(plan, backend, stack, result, moved[0].device)


def unboxed_cpu_fallback(backend: FallbackBackend) -> Callable[..., Any]:
    """``backend``'s CPU fallback in the dispatcher's unboxed fallback convention
    ``fn(op, *args, **kwargs)`` (Note [The unboxed fallback] in fallback_unboxed.py); what
    ``register_cpu_fallback`` registers when no ``fallback_fn`` is given. Same rules and
    results as ``cpu_fallback``; ``fn.specializer(op, raw)`` is the per-operator runner.

    >>> callable(unboxed_cpu_fallback(FallbackBackend("x", BackendComponent.PrivateUse3Bit,
    ...     list, lambda ts, d: ts, lambda s, d: None)))
    True
    """
    return make_unboxed(backend, _CONTEXT)


_CONTEXT = UnboxedContext(_run_boxed, _STRICT_BLOCKS, _LOCK, _RUNNER_COUNTS)


def call_fallback(
    fallback_fn: Callable[[OpOverload, DispatchKeySet, list[Any]], Any],
    op: OpOverload,
    *args: Any,
    **kwargs: Any,
) -> Any:
    """Call a boxed fallback directly for one call of ``op`` (seed 001's
    ``call_fallback_fn``): a backend kernel uses it for the cases it does not handle.

    The arguments are boxed as the dispatcher would box them (defaults filled in) and the key
    set is that of the tensor arguments.

    >>> import tensordispatch as td
    >>> seen = []
    >>> def fb(op, keyset, stack):
    ...     seen.append((op.name(), stack))
    ...     return stack[0]
    >>> x = td.tensor([1.0])
    >>> call_fallback(fb, td.ops.aten.add.Tensor, x, x) is x, seen[0][0], seen[0][1][2]
    (True, 'aten::add.Tensor', 1)
    """
    facts = op._entry.facts
    if facts is None:
        op._schema  # raises the "no schema" error  # noqa: B018
        raise AssertionError("unreachable")
    bound = facts.bind(args, kwargs)
    raw = facts.key_set_of(bound)
    return fallback_fn(op, DispatchKeySet.from_raw(raw), facts.stack_of(bound))


# -- registration ---------------------------------------------------------------------------------


@dataclass(slots=True)
class CPUFallbackRegistration:
    """The result of ``register_cpu_fallback``; ``remove()`` undoes exactly it."""

    backend: FallbackBackend
    dispatch_key: str
    handles: list[RegistrationHandle] = field(default_factory=list)
    libraries: list[Library] = field(default_factory=list)
    composite_overrides: list[str] = field(default_factory=list)
    #: the registered kernel: ``fallback_fn`` (boxed) or ``unboxed_cpu_fallback(backend)``
    kernel: Callable[..., Any] = cpu_fallback
    boxed: bool = True
    #: the registration listener of ``before_composite`` (operators defined later)
    listener: RegistrationHandle | None = None

    def remove(self) -> None:
        """Unregister the kernels and the hooks, newest first (the before-composite listener
        first, so removing the kernels does not make it register them again)."""
        if self.listener is not None:
            self.listener.remove()
            self.listener = None
        for lib in reversed(self.libraries):
            lib._destroy()
        self.libraries.clear()
        for handle in reversed(self.handles):
            handle.remove()
        self.handles.clear()


def register_cpu_fallback(
    backend: FallbackBackend,
    dispatch_key: str = "PrivateUse1",
    *,
    fallback_fn: Callable[[OpOverload, DispatchKeySet, list[Any]], Any] | None = None,
    before_composite: bool = False,
) -> CPUFallbackRegistration:
    """Register ``backend``'s hooks and the boxed CPU fallback for ``dispatch_key``.

    ``fallback_fn`` (default ``cpu_fallback``) lets a backend register its own boxed wrapper
    around ``cpu_fallback``. ``before_composite=True`` also registers it ahead of composite
    kernels (Note [Fallback before composite kernels]). Returns a registration whose
    ``remove()`` undoes everything.
    """
    reg = CPUFallbackRegistration(backend, dispatch_key)
    boxed = fallback_fn is not None
    reg.kernel = fallback_fn if fallback_fn is not None else unboxed_cpu_fallback(backend)
    reg.boxed = boxed
    reg.handles.append(register_fallback_backend(backend))
    try:
        lib = Library("_", "IMPL")
        reg.libraries.append(lib)
        debug = f"CPU fallback of {backend.name}"
        if boxed:
            lib.fallback(reg.kernel, dispatch_key, boxed=True, debug=debug)
        else:
            # Through the dispatcher, to pass the per-operator specializer (no Library
            # parameter for it); the handle is removed with the others.
            specializer = getattr(reg.kernel, "specializer", None)
            kernel = KernelFunction(reg.kernel, KernelKind.FALLBACK, debug, specializer=specializer)
            reg.handles.append(
                DISPATCHER.register_fallback(parse_dispatch_key(dispatch_key), kernel)
            )
        if before_composite:
            _register_before_composite(reg)
    except BaseException:
        reg.remove()
        raise
    return reg


def _register_before_composite(reg: CPUFallbackRegistration) -> None:
    """Override composite kernels now, and for operators defined or given a composite kernel
    later (a registration listener, Note [Fallback before composite kernels])."""
    key = parse_dispatch_key(reg.dispatch_key)
    special = getattr(reg.kernel, "specializer", None)
    libraries: dict[str, Library] = {}
    done: set[Any] = set()

    def override(entry: Any) -> None:
        schema = entry.schema
        if schema is None or key in entry.kernels or schema.boxing_info.view_pairs:
            return
        if not any(k in entry.kernels for k in _COMPOSITE_KEYS):
            return
        debug = "CPU fallback before composite"
        if reg.boxed:
            ns, name = entry.qualified_name.split("::")
            lib = libraries.get(ns)
            if lib is None:
                lib = libraries[ns] = Library(ns, "IMPL")
                reg.libraries.append(lib)
            op_name = f"{name}.{entry.overload}" if entry.overload else name
            lib.impl(op_name, reg.kernel, reg.dispatch_key, boxed=True, debug=debug)
        else:
            # The fallback's own convention and specializer, so the dispatcher caches the
            # operator's runner here too (a plain impl would re-specialize on every call).
            kernel = KernelFunction(reg.kernel, KernelKind.FALLBACK, debug, specializer=special)
            handle = DISPATCHER.register_impl(entry.qualified_name, entry.overload, key, kernel)
            reg.handles.append(handle)
        if entry.qualified_overload_name not in done:
            done.add(entry.qualified_overload_name)
            reg.composite_overrides.append(entry.qualified_overload_name)

    for entry in sorted(DISPATCHER.live_entries(), key=lambda e: e.qualified_overload_name):
        override(entry)
    reg.listener = DISPATCHER.add_registration_listener(override)
