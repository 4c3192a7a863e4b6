"""DISPATCHER.batch(): registrations inside it are checked and stored at once, published once
at the end, and leave the same tables as unbatched registrations in any order."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from typing import Any

import pytest
from dispatch_oracle import fresh

from tensordispatch import ops
from tensordispatch.dispatch import (
    DISPATCHER,
    BackendComponent,
    DuplicateRegistrationError,
    backend_tensor_keyset,
    check_invariants,
    dump_table,
)
from tensordispatch.library import Library, fallthrough_kernel


class T:
    """A stand-in CPU tensor."""

    _key_set = backend_tensor_keyset(BackendComponent.CPUBit).raw


def _k(name: str) -> Callable[..., str]:
    def kernel(x: Any) -> str:
        return name

    return kernel


Step = Callable[[Library, Library], object]
STEPS: list[Step] = [
    lambda d, i: i.impl("f", _k("cpu"), "CPU", debug="cpu"),
    lambda d, i: i.impl("f", _k("cea"), "CompositeExplicitAutograd", debug="cea"),
    lambda d, i: i.impl("f", _k("ag"), "Autograd", debug="ag"),
    lambda d, i: i.impl("f", fallthrough_kernel, "AutogradCPU", debug="ft"),
    lambda d, i: i.impl("f", _k("cia"), "CompositeImplicitAutograd", debug="cia"),
]


def _table(ns: str) -> str:
    return dump_table(f"{ns}::f").replace(ns, "NS")


def _apply(order: tuple[int, ...], batched: bool) -> tuple[str, str, list[Library]]:
    ns = fresh("batch")
    d = Library(ns, "DEF")
    i = Library(ns, "IMPL")
    d.define("f(Tensor x) -> Tensor")

    def run() -> None:
        for n in order:
            STEPS[n](d, i)

    if batched:
        with DISPATCHER.batch():
            run()
    else:
        run()
    return ns, _table(ns), [d, i]


def test_batched_tables_equal_unbatched_in_every_order() -> None:
    _, reference, libs = _apply(tuple(range(len(STEPS))), batched=False)
    for lib in libs:
        lib._destroy()
    for order in itertools.permutations(range(len(STEPS)), 4):
        ns, table, libs = _apply(order, batched=True)
        _, plain, plain_libs = _apply(order, batched=False)
        assert table == plain
        check_invariants(f"{ns}::f")
        for lib in libs + plain_libs:
            lib._destroy()
    assert "cpu [kernel]" in reference


def test_tables_are_published_at_the_end_of_the_outermost_batch() -> None:
    ns = fresh("batch")
    lib = Library(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    first = lib.impl("f", _k("first"), "CPU")
    op = getattr(ops, ns).f.default
    assert op(T()) == "first"
    with DISPATCHER.batch():
        lib.impl("f", _k("cea"), "CompositeExplicitAutograd")
        with DISPATCHER.batch():
            first.remove()
            lib.impl("f", _k("second"), "CPU")
        assert op(T()) == "first"  # the batching thread also sees the previous table
        assert "CompositeExplicitAutograd" not in dump_table(f"{ns}::f")
    assert op(T()) == "second"
    check_invariants(f"{ns}::f")
    lib._destroy()


def test_rejected_registration_raises_at_once_and_the_rest_is_published() -> None:
    ns = fresh("batch")
    lib = Library(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    with pytest.raises(DuplicateRegistrationError), DISPATCHER.batch():
        lib.impl("f", _k("cpu"), "CPU")
        lib.define("f(Tensor x) -> Tensor")
    assert getattr(ops, ns).f.default(T()) == "cpu"
    assert len(lib.handles) == 3  # claim, def, impl: the rejected def left no handle
    check_invariants(f"{ns}::f")
    lib._destroy()


def test_removals_and_fallbacks_inside_a_batch() -> None:
    ns = fresh("batch")
    lib = Library(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    handle = lib.impl("f", _k("cpu"), "CPU")
    fallbacks = Library("_", "IMPL")
    with DISPATCHER.batch():
        handle.remove()
        fallbacks.fallback(lambda op, *a, **k: "fallback", "CPU")
    assert getattr(ops, ns).f.default(T()) == "fallback"
    check_invariants(f"{ns}::f")
    fallbacks._destroy()
    assert not [line for line in _table(ns).splitlines() if line.startswith("CPU:")]
    lib._destroy()


def test_other_threads_see_the_previous_table_and_are_not_deferred() -> None:
    ns = fresh("batch")
    lib = Library(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    lib.define("g(Tensor x) -> Tensor")
    old = lib.impl("f", _k("old"), "CPU")
    f, g = getattr(ops, ns).f.default, getattr(ops, ns).g.default
    seen: list[str] = []
    barrier = threading.Barrier(2)

    def other() -> None:
        barrier.wait()  # the batch has registered f's new kernel
        seen.append(f(T()))
        lib.impl("g", _k("g"), "CPU")  # not deferred: visible at once
        seen.append(g(T()))
        barrier.wait()

    t = threading.Thread(target=other)
    t.start()
    with DISPATCHER.batch():
        old.remove()
        lib.impl("f", _k("new"), "CPU")
        barrier.wait()
        barrier.wait()
    t.join()
    assert seen == ["old", "g"]
    assert f(T()) == "new"
    lib._destroy()
