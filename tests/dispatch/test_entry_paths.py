"""The generated entry's paths: cache levels per pair of thread-local words, key sets by
identity, and the boxed-first twin (calling.py, Notes [Generated entry functions], [Key
sets by identity], [Boxed-first entries])."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from dispatch_oracle import fresh

from tensordispatch import ops
from tensordispatch.dispatch import (
    BackendComponent,
    DispatchKey,
    DispatchKeySet,
    ExcludeDispatchKeyGuard,
    backend_tensor_keyset,
    check_invariants,
)
from tensordispatch.dispatch.errors import ArgumentTypeError
from tensordispatch.dispatch.modes import DispatchMode
from tensordispatch.library import Library


class T:
    """A stand-in tensor: the dispatcher only reads ``_key_set``."""

    __slots__ = ("_key_set", "tag")

    def __init__(self, raw: Any, tag: str = "") -> None:
        self._key_set = raw
        self.tag = tag


CPU = backend_tensor_keyset(BackendComponent.CPUBit).raw
META = backend_tensor_keyset(BackendComponent.MetaBit).raw


def _copy(raw: int) -> int:
    """An int equal to ``raw`` that is not the same object."""
    other = int(str(raw))
    assert other == raw and other is not raw
    return other


@pytest.fixture
def lib() -> Iterator[Library]:
    lib = Library(fresh("entry_paths"), "DEF")
    yield lib
    lib._destroy()


def _op(lib: Library, name: str) -> Any:
    return getattr(getattr(ops, lib.ns), name).default


def _boxed_first(op: Any) -> bool:
    """Whether the installed entry is the boxed-first twin (it probes ``_td_b0``)."""
    return "_td_b0" in type(op).__call__.__code__.co_names


def _stack_recorder(seen: list[Any]) -> Any:
    def boxed(op: Any, ks: DispatchKeySet, stack: list[Any]) -> str:
        seen.append((repr(ks), [s.tag if isinstance(s, T) else s for s in stack]))
        return "boxed"

    return boxed


# ----- key sets by identity ------------------------------------------------------------


def test_equal_key_sets_that_are_distinct_objects_dispatch_alike(lib: Library) -> None:
    lib.define("f(Tensor x, Tensor y) -> Tensor")
    lib.impl("f", lambda x, y: "cpu", "CPU")
    lib.impl("f", lambda x, y: "meta", "Meta")
    f = _op(lib, "f")
    assert f(T(CPU), T(CPU)) == "cpu"
    assert f(T(CPU), T(_copy(CPU))) == "cpu"
    assert f(T(_copy(CPU)), T(META)) == "meta"
    assert f(T(META), T(_copy(CPU))) == "meta"


def test_a_tensor_list_after_a_shared_key_set_still_contributes(lib: Library) -> None:
    lib.define("f(Tensor x, Tensor[] ys, Tensor? z=None) -> Tensor")
    lib.impl("f", lambda *a, **k: "cpu", "CPU")
    lib.impl("f", lambda *a, **k: "meta", "Meta")
    f = _op(lib, "f")
    c = T(CPU)
    assert f(c, [c, c]) == "cpu"
    assert f(c, [c, T(META)]) == "meta"
    assert f(c, [], T(META)) == "meta"
    assert f(c, [c], None) == "cpu"


@pytest.mark.parametrize("shared", [True, False])
def test_a_non_int_key_set_is_reported_as_a_bad_argument(lib: Library, shared: bool) -> None:
    lib.define("f(Tensor x, Tensor y) -> Tensor")
    lib.impl("f", lambda x, y: "cpu", "CPU")
    word = "not a key set"
    x = T(word)
    y = x if shared else T(CPU)
    with pytest.raises(ArgumentTypeError) as info:
        _op(lib, "f")(x, y)
    assert str(info.value).splitlines()[0] == (
        f"{lib.ns}::f() Expected a value of type 'Tensor' for argument 'x' but instead found "
        "type 'T'."
    )


# ----- cache levels ----------------------------------------------------------------------


def test_default_calls_are_cached_by_the_arguments_word(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "cpu", "CPU")
    f = _op(lib, "f")
    assert f(T(CPU)) == "cpu"
    assert set(f._entry.state.default_cache) == {CPU}


def test_mode_calls_use_the_mode_and_handler_levels(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "cpu", "CPU")
    f = _op(lib, "f")

    class M(DispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            return ("mode", func(*args, **(kwargs or {})))

    with M():
        assert f(T(CPU)) == ("mode", "cpu")
    state = f._entry.state
    assert set(state.mode_cache) == {CPU}
    assert set(state.handler_cache) == {CPU}
    assert f(T(CPU)) == "cpu"


def test_other_thread_local_words_use_the_general_level(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "cpu", "CPU")
    lib.impl("f", lambda x: "autograd", "AutogradCPU")
    f = _op(lib, "f")
    with ExcludeDispatchKeyGuard(DispatchKeySet(DispatchKey.AutogradCPU)):
        assert f(T(CPU)) == "cpu"
        assert f(T(CPU)) == "cpu"
    assert f(T(CPU)) == "autograd"
    assert f._entry.state.by_excluded, "the excluded word has its own level"


# ----- boxed-first entries ---------------------------------------------------------------


def test_an_operator_whose_calls_reach_a_boxed_kernel_gets_the_boxed_first_entry(
    lib: Library,
) -> None:
    lib.define("f(Tensor x, Tensor y) -> Tensor")
    seen: list[Any] = []
    lib.impl("f", _stack_recorder(seen), "CPU", boxed=True)
    f = _op(lib, "f")
    assert not _boxed_first(f)
    assert f(T(CPU, "a"), T(CPU, "b")) == "boxed"
    assert _boxed_first(f)
    assert f(T(CPU, "c"), T(CPU, "d")) == "boxed"
    assert seen == [("DispatchKeySet(CPU)", ["a", "b"]), ("DispatchKeySet(CPU)", ["c", "d"])]


def test_boxed_first_stacks_fill_defaults_with_fresh_lists(lib: Library) -> None:
    lib.define("f(Tensor x, int a=1, *, int[] b=[2,3], Tensor? z=None) -> Tensor")
    seen: list[Any] = []

    def boxed(op: Any, ks: DispatchKeySet, stack: list[Any]) -> str:
        seen.append([s.tag if isinstance(s, T) else s for s in stack])
        stack[2].append(99)  # must not leak into the next call's default
        return "boxed"

    lib.impl("f", boxed, "CPU", boxed=True)
    f = _op(lib, "f")
    x = T(CPU, "x")
    f(x)
    assert _boxed_first(f)
    f(x)
    f(x, 7, b=[5], z=T(CPU, "z"))
    f(x, a=8)
    assert seen == [
        ["x", 1, [2, 3, 99], None],
        ["x", 1, [2, 3, 99], None],
        ["x", 7, [5, 99], "z"],
        ["x", 8, [2, 3, 99], None],
    ]


def test_an_operator_reaching_both_kinds_keeps_the_boxed_first_entry(lib: Library) -> None:
    lib.define("f(Tensor x, *, int n=1) -> Tensor")
    seen: list[Any] = []
    lib.impl("f", _stack_recorder(seen), "CPU", boxed=True)
    lib.impl("f", lambda x, **kw: ("meta", kw), "Meta")
    f = _op(lib, "f")
    assert f(T(META)) == ("meta", {})
    assert not _boxed_first(f), "no boxed kernel reached yet"
    assert f(T(CPU, "a")) == "boxed"
    assert _boxed_first(f)
    assert f(T(META)) == ("meta", {})
    assert f(T(META), n=3) == ("meta", {"n": 3})
    assert f(T(CPU, "b"), n=4) == "boxed"
    assert seen == [("DispatchKeySet(CPU)", ["a", 1]), ("DispatchKeySet(CPU)", ["b", 4])]
    check_invariants(f"{lib.ns}::f")


def test_a_new_table_starts_on_the_plain_entry(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", _stack_recorder([]), "CPU", boxed=True)
    f = _op(lib, "f")
    assert f(T(CPU)) == "boxed"
    assert _boxed_first(f)
    lib.impl("f", lambda x: "meta", "Meta")
    assert not _boxed_first(f)
    assert f(T(CPU)) == "boxed"
    assert f(T(META)) == "meta"


def test_the_boxed_first_entry_serves_other_words_and_modes(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    seen: list[Any] = []
    lib.impl("f", _stack_recorder(seen), "CPU", boxed=True)
    lib.impl("f", lambda x: "meta", "Meta")
    f = _op(lib, "f")
    assert f(T(CPU, "a")) == "boxed"
    assert _boxed_first(f)
    with ExcludeDispatchKeyGuard(DispatchKeySet(DispatchKey.AutogradCPU)):
        assert f(T(CPU, "b")) == "boxed"
        assert f(T(META)) == "meta"

    class M(DispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            return ("mode", func(*args, **(kwargs or {})))

    with M():
        assert f(T(CPU, "c")) == ("mode", "boxed")
    assert _boxed_first(f), "only default-words calls choose the entry"
    assert seen == [("DispatchKeySet(CPU)", [t]) for t in "abc"]


def test_the_boxed_first_entry_reports_bad_arguments_like_the_plain_one(lib: Library) -> None:
    lib.define("f(Tensor x, Tensor y) -> Tensor")
    lib.impl("f", _stack_recorder([]), "CPU", boxed=True)
    f = _op(lib, "f")
    f(T(CPU), T(CPU))
    assert _boxed_first(f)
    with pytest.raises(ArgumentTypeError) as info:
        f(T(CPU), 3)
    assert str(info.value).splitlines()[0] == (
        f"{lib.ns}::f() Expected a value of type 'Tensor' for argument 'y' but instead found "
        "type 'int'."
    )


def test_the_packet_follows_the_installed_entry(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", _stack_recorder([]), "CPU", boxed=True)
    packet = getattr(ops, lib.ns).f
    assert packet(T(CPU)) == "boxed"
    assert type(packet).__call__ is type(packet.default).__call__
    assert _boxed_first(packet.default)


def test_calls_racing_registrations_reach_a_kernel_of_some_table(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", _stack_recorder([]), "CPU", boxed=True)
    f = _op(lib, "f")
    results: set[Any] = set()
    errors: list[BaseException] = []
    stop = threading.Event()

    def caller() -> None:
        x = T(CPU)
        try:
            while not stop.is_set():
                results.add(f(x))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=caller) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        for _ in range(60):
            lib.impl("f", lambda x: "unboxed", "AutogradCPU")
            lib.handles[-1].remove()
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors
    assert results <= {"boxed", "unboxed"} and "boxed" in results
