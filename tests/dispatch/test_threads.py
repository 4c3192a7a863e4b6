"""Threads (issue 3 section 7): dispatch without a lock while other threads (de)register.

Every registration state the toggling threads can produce is first enumerated single
threaded; that gives, per input, the set of outcomes (kernel that ran, or the expected
missing-kernel error) that are valid in *some* state, and the set of valid dump tables.
Then dispatcher, registrar and dump-reader threads start together on a Barrier with a
one-microsecond switch interval, and every observed outcome and table must be one of
those. A torn table (a slot from one state, a fallthrough mask from another, a half
rebuilt list) shows up as a kernel that no state runs or as an unexpected exception.
"""

from __future__ import annotations

import contextlib
import itertools
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

CIA = "CompositeImplicitAutograd"
_ns = itertools.count()

# (kind, key, name): toggled by one registrar thread each; distinct keys so that the
# active kernel depends only on the set of live registrations
TOGGLES: tuple[tuple[str, str, str], ...] = (
    ("impl", "AutogradCPU", "agc"),
    ("fallthrough", "Autograd", "ftag"),
    ("impl", CIA, "cia"),
    ("impl", "XLA", "xla"),
    # a process-wide fallback: registering it refreshes every operator's table
    ("fallback", "XLA", "fbx"),
)


class StandIn:
    __slots__ = ("_key_set",)

    def __init__(self, raw: int) -> None:
        self._key_set = raw


def _probes() -> dict[str, int]:
    from tensordispatch.dispatch.keys import BackendComponent
    from tensordispatch.dispatch.keyset import backend_tensor_keyset

    return {
        name: backend_tensor_keyset(getattr(BackendComponent, f"{name}Bit")).raw
        for name in ("CPU", "XLA", "Meta")
    }


class Op:
    """``<ns>::foo`` with a permanent CPU kernel, plus toggled registrations."""

    def __init__(self) -> None:
        from tensordispatch.library import Library

        self.ns = f"tdthreads{next(_ns)}x"
        self.base = Library(self.ns, "FRAGMENT")
        self.base.define("foo(Tensor x) -> Tensor")
        self.base.impl("foo", self.kernel("cpu"), "CPU", debug="cpu")
        self.ran = threading.local()

    def kernel(self, name: str) -> Callable[[Any], Any]:
        def kernel(x: Any) -> Any:
            self.ran.name = name
            return x

        return kernel

    def fallback(self, name: str) -> Callable[..., Any]:
        def fallback(op: Any, *args: Any, **kwargs: Any) -> Any:
            self.ran.name = name
            return args[0]

        return fallback

    def register(self, toggle: tuple[str, str, str]) -> tuple[Any, Any]:
        from tensordispatch.library import Library, fallthrough_kernel

        kind, key, name = toggle
        if kind == "fallback":
            lib = Library("_", "IMPL")
            return lib, lib.fallback(self.fallback(name), key, debug=name)
        lib = Library(self.ns, "FRAGMENT")
        fn = fallthrough_kernel if kind == "fallthrough" else self.kernel(name)
        return lib, lib.impl("foo", fn, key, debug=name)

    def call(self, raw: int) -> str:
        from tensordispatch import ops

        self.ran.name = None
        try:
            getattr(ops, self.ns).foo.default(StandIn(raw))
        except NotImplementedError:
            return "raised NotImplementedError"
        return f"ran {self.ran.name}"

    def table(self) -> str:
        from tensordispatch.dispatch import dump_table

        return str(dump_table(f"{self.ns}::foo"))

    def close(self) -> None:
        self.base._destroy()


def _valid_outcomes(op: Op, probes: dict[str, int]) -> tuple[dict[str, set[str]], set[str]]:
    outcomes: dict[str, set[str]] = {name: set() for name in probes}
    tables: set[str] = set()
    for n in range(len(TOGGLES) + 1):
        for subset in itertools.combinations(TOGGLES, n):
            live = [op.register(t) for t in subset]
            tables.add(op.table())
            for name, raw in probes.items():
                outcomes[name].add(op.call(raw))
            for lib, _ in live:
                lib._destroy()
    return outcomes, tables


def _spin(n: int = 2000) -> None:
    """Pure-bytecode busy work, during which the interpreter may switch threads."""
    for _ in range(n):
        pass


@contextlib.contextmanager
def _tiny_switch_interval() -> Iterator[None]:
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def _run_threads(targets: list[Callable[[], None]]) -> list[BaseException]:
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(targets))

    def wrap(fn: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                barrier.wait()
                fn()
            except BaseException as e:  # noqa: BLE001 - reported by the test
                errors.append(e)

        return run

    threads = [threading.Thread(target=wrap(fn)) for fn in targets]
    with _tiny_switch_interval():
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    return errors


@pytest.fixture
def op() -> Iterator[Op]:
    o = Op()
    yield o
    o.close()


def test_every_call_sees_a_consistent_table(op: Op) -> None:
    probes = _probes()
    valid, tables = _valid_outcomes(op, probes)
    # the toggles are visible to calls
    assert valid["CPU"] >= {"ran cpu", "ran agc"}
    assert valid["XLA"] >= {"ran xla", "ran fbx"}
    bad: list[str] = []
    seen: set[tuple[str, str]] = set()
    registrars_left = [len(TOGGLES)]
    rounds = [0]  # full rounds of probe calls completed, over all dispatchers
    lock = threading.Lock()
    dispatchers = 3

    def running() -> bool:
        return registrars_left[0] > 0

    def dispatcher() -> None:
        n = 0
        while running() or n < 200:
            n += 1
            for name, raw in probes.items():
                got = op.call(raw)
                seen.add((name, got))
                if got not in valid[name]:
                    bad.append(f"{name}: {got} not in {sorted(valid[name])}")
            with lock:
                rounds[0] += 1

    def overlap() -> None:
        # Wait (bounded) until some dispatcher ran a whole round that started after our
        # registration went live: with `dispatchers` rounds in flight, that takes one more.
        with lock:
            target = rounds[0] + dispatchers + 1
        deadline = time.monotonic() + 2.0
        while rounds[0] < target and time.monotonic() < deadline:
            _spin(200)

    def reader() -> None:
        while running():
            table = op.table()
            if table not in tables:
                bad.append(f"torn dump_table:\n{table}")

    def registrar(toggle: tuple[str, str, str]) -> Callable[[], None]:
        def run() -> None:
            try:
                for i in range(60):
                    lib, handle = op.register(toggle)
                    if i % 10 == 0:
                        overlap()  # guarantees calls really saw this state
                    if i % 2:
                        handle.remove()
                    lib._destroy()
            finally:
                with lock:
                    registrars_left[0] -= 1

        return run

    errors = _run_threads([dispatcher] * dispatchers + [reader] + [registrar(t) for t in TOGGLES])
    assert errors == []
    assert bad == []
    # the threads really interleaved: calls saw registrations made by other threads
    assert ("CPU", "ran agc") in seen
    assert op.call(probes["CPU"]) == "ran cpu"  # every toggle undone


def test_thread_local_include_exclude_are_per_thread(op: Op) -> None:
    from tensordispatch.dispatch.keys import DispatchKey
    from tensordispatch.dispatch.tls import (
        ExcludeDispatchKeyGuard,
        IncludeDispatchKeyGuard,
        _AutoDispatchBelowAutograd,
        tls_is_pristine,
    )

    live = [
        op.register(("impl", key, name))
        for key, name in (("AutogradCPU", "agc"), ("XLA", "xla"), ("AutogradXLA", "agx"))
    ]
    cpu = _probes()["CPU"]
    guards: dict[str, Callable[[], Any]] = {
        "ran agc": contextlib.nullcontext,
        "ran cpu": _AutoDispatchBelowAutograd,
        "ran agx": lambda: IncludeDispatchKeyGuard(DispatchKey.XLA),
        # excluding AutogradCPU clears the autograd functionality for every backend
        "ran xla": lambda: _both(
            IncludeDispatchKeyGuard(DispatchKey.XLA),
            ExcludeDispatchKeyGuard(DispatchKey.AutogradCPU),
        ),
    }
    bad: list[str] = []

    def worker(expected: str, guard: Callable[[], Any]) -> Callable[[], None]:
        def run() -> None:
            with guard():
                for _ in range(300):
                    got = op.call(cpu)
                    if got != expected:
                        bad.append(f"{expected!r} thread saw {got!r}")
            if not tls_is_pristine():
                bad.append(f"{expected!r} thread: TLS not restored")

        return run

    errors = _run_threads([worker(e, g) for e, g in guards.items()])
    for lib, _ in live:
        lib._destroy()
    assert errors == []
    assert bad == []
    assert tls_is_pristine()


def test_fresh_thread_sees_default_tls_while_another_holds_a_guard() -> None:
    from tensordispatch.dispatch.keys import DispatchKey
    from tensordispatch.dispatch.keyset import DEFAULT_EXCLUDED, DEFAULT_INCLUDED
    from tensordispatch.dispatch.tls import (
        ExcludeDispatchKeyGuard,
        IncludeDispatchKeyGuard,
        tls_local_exclude_set,
        tls_local_include_set,
    )

    seen: list[Any] = []

    def child() -> None:
        seen.append((tls_local_include_set(), tls_local_exclude_set()))

    include = IncludeDispatchKeyGuard(DispatchKey.XLA)
    with include, ExcludeDispatchKeyGuard(DispatchKey.AutogradCPU):
        t = threading.Thread(target=child)
        t.start()
        t.join()
    assert seen == [(DEFAULT_INCLUDED, DEFAULT_EXCLUDED)]


@contextlib.contextmanager
def _both(a: Any, b: Any) -> Iterator[None]:
    with a, b:
        yield


def test_dispatch_trace_records_only_the_tracing_threads_calls(op: Op) -> None:
    from tensordispatch.dispatch.trace import dispatch_trace

    cpu = _probes()["CPU"]
    bad: list[str] = []
    done = threading.Event()

    def tracer() -> None:
        try:
            for rounds in range(30):
                # opening/closing a trace republishes every table while others dispatch
                with dispatch_trace() as trace:
                    outcomes = [op.call(cpu) for _ in range(rounds % 4 + 1)]
                top = [h for h in trace.hops if h.depth == 0]
                if len(top) != len(outcomes) or any(h.op != f"{op.ns}::foo" for h in top):
                    bad.append(f"trace of {len(outcomes)} calls has top-level hops {top}")
        finally:
            done.set()

    def caller() -> None:
        while not done.is_set():
            got = op.call(cpu)
            if got not in ("ran cpu", "ran agc"):
                bad.append(f"untraced caller saw {got}")

    def registrar() -> None:
        while not done.is_set():
            lib, _ = op.register(("impl", "AutogradCPU", "agc"))
            _spin(500)
            lib._destroy()

    errors = _run_threads([tracer, caller, caller, registrar])
    assert errors == []
    assert bad == []
    assert op.call(cpu) == "ran cpu"
