"""DispatchMode against torch 2.13's TorchDispatchMode: the same program under a logging mode
on both sides, nesting, the mode disabled in its own handler, TLS inside and outside the
handler, threads, exceptions and the error messages."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch
from torch.utils import _python_dispatch as torch_pd

import tensordispatch as td
from tensordispatch import ops
from tensordispatch.dispatch import (
    DispatchKey,
    DispatchKeySet,
    ExcludeDispatchKeyGuard,
    backend_tensor_keyset,
    dispatch_trace,
    local_state,
)
from tensordispatch.dispatch.keys import BackendComponent
from tensordispatch.dispatch.modes import (
    DispatchMode,
    _disable_current_modes,
    _get_current_dispatch_mode,
    _get_current_dispatch_mode_stack,
    _len_torch_dispatch_stack,
    _pop_mode,
    _pop_mode_temporarily,
    _push_mode,
)
from tensordispatch.library import Library

TK = torch._C.DispatchKey


def _tls_words_td() -> tuple[int, int]:
    return local_state().included, local_state().excluded


def _tls_words_torch() -> tuple[int, int]:
    return (
        torch._C._dispatch_tls_local_include_set().raw_repr(),
        torch._C._dispatch_tls_local_exclude_set().raw_repr(),
    )


def _logging_modes(
    base: type, current: Callable[[], Any], tls: Callable[[], tuple[int, int]]
) -> type:
    """A logging mode class over ``base``: records (name, op, overload, types, kwargs,
    current mode is the next one down, TLS words) and runs the call below."""

    class Log(base):  # type: ignore[misc, valid-type]
        def __init__(self, name: str, log: list[tuple[Any, ...]]) -> None:
            super().__init__()
            self.name, self.log, self.below = name, log, None

        def __enter__(self) -> Any:
            self.below = current()
            return super().__enter__()

        def __torch_dispatch__(
            self, func: Any, types: Any, args: Any = (), kwargs: Any = None
        ) -> Any:
            self.log.append(
                (
                    self.name,
                    func.name(),
                    func._overloadname,
                    types,
                    dict(kwargs),
                    current() is self.below,
                    tls(),
                )
            )
            return func(*args, **(kwargs or {}))

    return Log


TdLog = _logging_modes(DispatchMode, _get_current_dispatch_mode, _tls_words_td)
TorchLog = _logging_modes(
    torch_pd.TorchDispatchMode, torch_pd._get_current_dispatch_mode, _tls_words_torch
)


def _program(lib: Any, a: Any, b: Any) -> list[Any]:
    """The same small program on either library (ops both have)."""
    s = lib.add(a, b)
    m = lib.mul(s, b)
    v = m.view(2, 1)
    c = v.clone()
    t = lib.sum(c)
    u = lib.add(a, b, alpha=2)
    return [s, m, v, c, t, u]


def _run(lib: Any, log_cls: type, names: tuple[str, ...]) -> tuple[list[Any], list[Any]]:
    a, b = lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])
    log: list[tuple[Any, ...]] = []
    modes = [log_cls(n, log) for n in names]
    for m in modes:
        m.__enter__()
    try:
        results = _program(lib, a, b)
    finally:
        for m in reversed(modes):
            m.__exit__(None, None, None)
    return [r.tolist() for r in results], log


def test_logged_calls_match_torch() -> None:
    ours, our_log = _run(td, TdLog, ("m",))
    theirs, their_log = _run(torch, TorchLog, ("m",))
    assert ours == theirs
    assert [e[:5] for e in our_log] == [e[:5] for e in their_log]
    assert [e[1] for e in our_log] == [
        "aten::add.Tensor",
        "aten::mul.Tensor",
        "aten::view",
        "aten::clone",
        "aten::sum",
        "aten::add.Tensor",
    ]


def test_nested_modes_innermost_first_like_torch() -> None:
    _, our_log = _run(td, TdLog, ("outer", "inner"))
    _, their_log = _run(torch, TorchLog, ("outer", "inner"))
    assert [e[:3] for e in our_log] == [e[:3] for e in their_log]
    assert [e[0] for e in our_log[:2]] == ["inner", "outer"]


def test_handler_sees_next_mode_down_as_current() -> None:
    _, our_log = _run(td, TdLog, ("outer", "inner"))
    _, their_log = _run(torch, TorchLog, ("outer", "inner"))
    assert all(e[5] for e in our_log) and all(e[5] for e in their_log)


def test_handler_tls_words_equal_torch() -> None:
    _, our_log = _run(td, TdLog, ("outer", "inner"))
    _, their_log = _run(torch, TorchLog, ("outer", "inner"))
    assert [(e[0], e[6]) for e in our_log] == [(e[0], e[6]) for e in their_log]


def test_include_set_while_mode_active_equals_torch() -> None:
    with DispatchMode(), torch_pd.TorchDispatchMode():
        assert _tls_words_td() == _tls_words_torch()
        assert (
            local_state().included
            == DispatchKeySet(
                DispatchKey.BackendSelect,
                DispatchKey.Python,
                DispatchKey.ADInplaceOrView,
                DispatchKey.PythonTLSSnapshot,
            ).raw
        )
    assert _tls_words_td() == _tls_words_torch()


def test_handler_tls_under_a_caller_guard_equals_torch() -> None:
    log_td: list[Any] = []
    log_torch: list[Any] = []
    with ExcludeDispatchKeyGuard(DispatchKeySet(DispatchKey.BackendSelect)), TdLog("m", log_td):
        td.neg(td.tensor([1.0]))  # tensor() builds outside: the mode sees neg only
    a = torch.tensor([1.0])
    with (
        torch._C._ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(TK.BackendSelect)),
        TorchLog("m", log_torch),
    ):
        torch.neg(a)
    assert log_td[-1][6] == log_torch[-1][6]


# ----- custom operators on stand-in tensors -------------------------------------------------


class _T:
    """A stand-in CPU tensor: the dispatcher reads only ``_key_set``."""

    _key_set = backend_tensor_keyset(BackendComponent.CPUBit).raw


@pytest.fixture
def lib() -> Iterator[Library]:
    lib = Library("test_modes", "DEF")
    lib.define("f(Tensor a, Tensor b, *, int k=1) -> Tensor")
    lib.impl("f", lambda a, b, k=1: ("kernel", k), "CPU")
    yield lib
    lib._destroy()


def test_kernel_runs_when_handler_calls_func(lib: Library) -> None:
    seen: list[Any] = []

    class M(DispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            seen.append((func, types, len(args), kwargs))
            return func(*args, **kwargs)

    a, b = _T(), _T()
    with M():
        assert ops.test_modes.f(a, b, k=3) == ("kernel", 3)
        assert ops.test_modes.f.default(a, b) == ("kernel", 1)
    assert seen == [
        (ops.test_modes.f.default, (), 2, {"k": 3}),
        (ops.test_modes.f.default, (), 2, {}),
    ]
    assert ops.test_modes.f(a, b) == ("kernel", 1)


def test_types_lists_python_key_arguments(lib: Library) -> None:
    class P(_T):
        _key_set = _T._key_set | DispatchKeySet(DispatchKey.Python).raw

    class M(DispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            return types

    lib.define("h(Tensor[] xs, Tensor? y=None, *, Tensor? out=None) -> Tensor")
    lib.impl("h", lambda *a, **k: None, "CPU")
    with M():
        assert ops.test_modes.f(_T(), _T()) == ()
        assert ops.test_modes.f(_T(), P()) == (P,)
        assert ops.test_modes.f(P(), P()) == (P,)
        assert ops.test_modes.f(_T(), b=P()) == (P,)
        assert ops.test_modes.h([_T(), _T()], None, out=_T()) == ()
        assert ops.test_modes.h([_T(), P()]) == (P,)
        assert ops.test_modes.h([_T()], out=P()) == (P,)
        assert ops.test_modes.h([_T()], y=P()) == (P,)


def _recording(base: type, calls: list[str], label: str) -> type:
    """A mode class over ``base`` appending ``label`` (or the op) to ``calls``."""

    class Recording(base):  # type: ignore[misc, valid-type]
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            calls.append(label or str(func))
            return func(*args, **(kwargs or {}))

    return Recording


def test_same_mode_entered_twice_handles_twice_like_torch() -> None:
    counts = []
    for base, lib_ in ((DispatchMode, td), (torch_pd.TorchDispatchMode, torch)):
        calls: list[str] = []
        m = _recording(base, calls, "")()
        a = lib_.tensor([1.0])
        with m, m:
            lib_.neg(a)
        counts.append(calls)
    assert counts[0] == counts[1] == ["aten.neg.default", "aten.neg.default"]


def test_reentering_the_mode_inside_its_handler(lib: Library) -> None:
    depth: list[int] = []

    class M(DispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            depth.append(_len_torch_dispatch_stack())
            if len(depth) == 1:
                with self:
                    return func(*args, **kwargs)
            return func(*args, **kwargs)

    with M():
        assert ops.test_modes.f(_T(), _T()) == ("kernel", 1)
    assert depth == [0, 0]


def test_modes_are_per_thread(lib: Library) -> None:
    seen: list[str] = []
    barrier = threading.Barrier(2)
    other: list[Any] = []

    class M(DispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            seen.append(threading.current_thread().name)
            return func(*args, **kwargs)

    def worker() -> None:
        barrier.wait()
        other.append((ops.test_modes.f(_T(), _T()), _len_torch_dispatch_stack()))
        barrier.wait()

    t = threading.Thread(target=worker, name="worker")
    t.start()
    with M():
        barrier.wait()
        ops.test_modes.f(_T(), _T())
        barrier.wait()
    t.join()
    assert other == [(("kernel", 1), 0)]
    assert seen == [threading.current_thread().name]


def test_exception_in_handler_restores_stack_and_tls(lib: Library) -> None:
    class Boom(DispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            raise ValueError("boom")

    before = (local_state().included, local_state().excluded)
    with Boom() as m:
        inside = (local_state().included, local_state().excluded)
        with pytest.raises(ValueError, match="boom"):
            ops.test_modes.f(_T(), _T())
        assert _get_current_dispatch_mode_stack() == [m]
        assert (local_state().included, local_state().excluded) == inside
    assert (local_state().included, local_state().excluded) == before


def test_not_implemented_message(lib: Library) -> None:
    class NI(DispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            return NotImplemented

        def __repr__(self) -> str:
            return "<NI>"

    with NI(), pytest.raises(TypeError) as info:
        ops.test_modes.f(_T(), _T())
    assert str(info.value) == "\n".join(
        [
            "Multiple dispatch failed for 'tensordispatch.ops.test_modes.f.default'; all "
            + "__torch_dispatch__ handlers returned NotImplemented:",
            "",
            "  - mode object <NI>",
            "",
            "Return a result from __torch_dispatch__, e.g. func(*args, **kwargs) to run the "
            + "kernels below the mode.",
        ]
    )


def test_not_implemented_does_not_fall_to_outer_mode_like_torch() -> None:
    outcomes = []
    for base, lib_ in ((DispatchMode, td), (torch_pd.TorchDispatchMode, torch)):
        calls: list[str] = []
        Outer = _recording(base, calls, "outer")

        class NI(base):  # type: ignore[misc, valid-type]
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
                return NotImplemented

        a = lib_.tensor([1.0])
        with Outer(), NI(), pytest.raises(TypeError) as info:
            lib_.neg(a)
        outcomes.append((calls, str(info.value).split(";")[0].split("'")[1].split(".")[-2:]))
    assert outcomes[0] == outcomes[1] == ([], ["neg", "default"])


def test_base_handler_message() -> None:
    with pytest.raises(NotImplementedError) as info:
        DispatchMode().__torch_dispatch__(None, ())
    assert str(info.value) == (
        "DispatchMode.__torch_dispatch__ is not implemented; a DispatchMode subclass must "
        + "override __torch_dispatch__(self, func, types, args, kwargs)"
    )


def test_pop_empty_message_and_torch_first_clause() -> None:
    with pytest.raises(RuntimeError) as ours:
        _pop_mode()
    with pytest.raises(RuntimeError) as theirs:
        torch_pd._pop_mode()
    assert str(ours.value) == (
        "trying to pop from empty mode stack: no DispatchMode is active in this thread; "
        + "pop only modes this thread pushed (prefer `with mode:`)"
    )
    assert str(ours.value).startswith(str(theirs.value))


def test_push_pop_helpers_like_torch() -> None:
    results = []
    for base, push, pop, current, length in (
        (
            DispatchMode,
            _push_mode,
            _pop_mode,
            _get_current_dispatch_mode,
            _len_torch_dispatch_stack,
        ),
        (
            torch_pd.TorchDispatchMode,
            torch_pd._push_mode,
            torch_pd._pop_mode,
            torch_pd._get_current_dispatch_mode,
            torch_pd._len_torch_dispatch_stack,
        ),
    ):
        m1, m2 = base(), base()
        push(m1)
        push(m2)
        row = [current() is m2, length()]
        row.append(pop() is m2)
        row.append(pop() is m1)
        row.append((current(), length()))
        results.append(row)
    assert results[0] == results[1] == [True, 2, True, True, (None, 0)]


def test_disable_and_pop_temporarily() -> None:
    with DispatchMode() as m1, DispatchMode() as m2:
        with _pop_mode_temporarily() as popped:
            assert popped is m2 and _get_current_dispatch_mode() is m1
        with _disable_current_modes() as all_modes:
            assert all_modes == [m1, m2] and _len_torch_dispatch_stack() == 0
            assert (
                local_state().included
                == DispatchKeySet(DispatchKey.BackendSelect, DispatchKey.ADInplaceOrView).raw
            )
        assert _get_current_dispatch_mode_stack() == [m1, m2]


def test_mode_is_not_a_decorator_like_torch() -> None:
    assert callable(DispatchMode()) == callable(torch_pd.TorchDispatchMode()) is False


def test_no_mode_cache_entry_is_the_kernel_itself(lib: Library) -> None:
    """With no mode active the call cache holds the kernel function itself: no Python-key
    machinery on the hot path (Note [Modes as dispatch keys])."""

    def kernel(a: Any, b: Any) -> str:
        return "direct"

    lib.define("g(Tensor a, Tensor b) -> Tensor")
    lib.impl("g", kernel, "CPU")
    op = ops.test_modes.g.default
    with DispatchMode():
        pass
    assert op(_T(), _T()) == "direct"
    assert list(op._entry.state.default_cache.values()) == [kernel]


def test_trace_under_a_mode_shows_the_python_hops(lib: Library) -> None:
    class M(DispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            return func(*args, **kwargs)

    with dispatch_trace() as trace, M():
        ops.test_modes.f(_T(), _T())
    lines = [f"{'  ' * h.depth}{h.key.name}" for h in trace.hops]
    assert lines == ["PythonTLSSnapshot", "  AutogradCPU", "    Python", "      CPU"]


def test_handler_arguments_are_normalized_like_torch() -> None:
    """The handler sees the positional arguments up to the last non-default one and the
    non-default kwarg-only ones, however the caller spelled the call (torch's boxing)."""
    schema = "norm(Tensor a, Tensor b, int n=1, *, int k=2, float s=1.5) -> Tensor"
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((), {"a": 0, "b": 1}),
        ((0, 1, 1), {}),
        ((0, 1, 3), {}),
        ((0, 1), {"k": 2}),
        ((0, 1), {"k": 5, "n": 1}),
        ((0,), {"b": 1, "n": 4, "s": 1.5}),
        ((0, 1), {"s": 2.5}),
    ]

    def run(base: type, lib_: Any, library: Any, tensor: Any) -> list[Any]:
        seen: list[Any] = []

        class M(base):  # type: ignore[misc, valid-type]
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
                shown = tuple("T" if i < 2 else a for i, a in enumerate(args))
                seen.append((shown, dict(kwargs or {})))
                return func(*args, **(kwargs or {}))

        L = library("td_mode_norm", "FRAGMENT")
        L.define(schema)
        L.impl("norm", lambda a, b, n=1, *, k=2, s=1.5: a, "CPU")
        op = lib_.ops.td_mode_norm.norm.default
        ts = [tensor([1.0]), tensor([2.0])]
        try:
            with M():
                for args, kwargs in calls:
                    pos = [ts[a] if i < 2 else a for i, a in enumerate(args)]
                    op(*pos, **{n: ts[v] if n in ("a", "b") else v for n, v in kwargs.items()})
        finally:
            L._destroy()
        return seen

    ours = run(DispatchMode, td, Library, td.tensor)
    theirs = run(torch_pd.TorchDispatchMode, torch, torch.library.Library, torch.tensor)
    assert ours == theirs
    assert ours[0] == (("T", "T"), {}) and ours[2] == (("T", "T", 3), {})
