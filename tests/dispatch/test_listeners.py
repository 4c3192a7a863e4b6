"""DISPATCHER.add_registration_listener: called after each published def and impl, outside
the registration lock (so a listener may register), once per entry at the end of a batch."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from dispatch_oracle import fresh

from tensordispatch import ops
from tensordispatch.dispatch import (
    DISPATCHER,
    BackendComponent,
    DispatchKey,
    backend_tensor_keyset,
)
from tensordispatch.dispatch.keys import slot_of
from tensordispatch.dispatch.operator import OperatorEntry
from tensordispatch.library import Library


class T:
    """A stand-in CPU tensor."""

    _key_set = backend_tensor_keyset(BackendComponent.CPUBit).raw


@pytest.fixture
def lib() -> Iterator[Library]:
    lib = Library(fresh("listen"), "DEF")
    yield lib
    lib._destroy()


def _cpu_label(entry: OperatorEntry) -> str | None:
    slot = entry.table[slot_of(DispatchKey.CPU)]
    return None if slot is None else slot[1]


def test_listener_sees_each_def_and_impl_after_it_is_published(lib: Library) -> None:
    seen: list[tuple[str, str | None]] = []
    handle = DISPATCHER.add_registration_listener(
        lambda e: seen.append((e.qualified_overload_name, _cpu_label(e)))
    )
    try:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x, "CPU")
    finally:
        handle.remove()
    name = f"{lib.ns}::f"
    assert seen == [(name, None), (name, "kernel")]


def test_removed_listener_is_not_called(lib: Library) -> None:
    seen: list[OperatorEntry] = []
    DISPATCHER.add_registration_listener(seen.append).remove()
    lib.define("f(Tensor x) -> Tensor")
    assert seen == []


def test_listener_may_register_from_inside_the_call(lib: Library) -> None:
    """G's use: give every operator with a CompositeExplicitAutograd kernel a CPU kernel."""

    def listener(entry: OperatorEntry) -> None:
        if not entry.qualified_name.startswith(f"{lib.ns}::"):
            return
        has_cea = DispatchKey.CompositeExplicitAutograd in entry.kernels
        if has_cea and DispatchKey.CPU not in entry.kernels:
            lib.impl(entry.qualified_overload_name.split("::")[1], lambda x: "cpu", "CPU")

    handle = DISPATCHER.add_registration_listener(listener)
    try:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: "cea", "CompositeExplicitAutograd")
    finally:
        handle.remove()
    assert getattr(ops, lib.ns).f(T()) == "cpu"


def test_batch_announces_each_entry_once_after_publishing(lib: Library) -> None:
    seen: list[tuple[str, str | None]] = []
    handle = DISPATCHER.add_registration_listener(
        lambda e: seen.append((e.qualified_overload_name, _cpu_label(e)))
    )
    try:
        with DISPATCHER.batch():
            lib.define("f(Tensor x) -> Tensor")
            lib.define("g(Tensor x) -> Tensor")
            lib.impl("f", lambda x: x, "CPU")
            assert seen == []
    finally:
        handle.remove()
    assert seen == [(f"{lib.ns}::f", "kernel"), (f"{lib.ns}::g", None)]


def test_replay_existing_announces_defined_operators(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    seen: list[Any] = []
    handle = DISPATCHER.add_registration_listener(
        lambda e: seen.append(e.qualified_name), replay_existing=True
    )
    handle.remove()
    assert f"{lib.ns}::f" in seen
    assert "aten::add" in seen
