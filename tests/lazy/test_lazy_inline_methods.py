"""FunctionalTensor's inlined ``+ - * /`` over lazy tensors (lazy/inline_methods.py, Note
[Inlined operator methods]): taken once an earlier call taught them the operands' Values and
shapes, and indistinguishable from the dispatcher path (nodes, graphs, counters, results)."""

from __future__ import annotations

import contextlib
import inspect
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch import lazy
from tensordispatch.lazy import inline_methods, shortcut
from tensordispatch.lazy.ir import SCALAR_CACHE
from tensordispatch.transforms.functionalize.wrapper import FunctionalTensor
from tensordispatch.transforms.vmap import batched

COUNTERS = ("lazy::add", "lazy::sub", "lazy::mul", "lazy::div", "CreateLtcTensor",
            "DeviceDataCacheMiss")  # fmt: skip


@pytest.fixture
def methods() -> Iterator[None]:
    """Fresh inlined methods (nothing learnt yet)."""
    saved = {name: FunctionalTensor.__dict__.get(name) for name in shortcut.FAST_METHODS}
    handle = shortcut.install_methods()
    yield
    handle.remove()
    for name, method in saved.items():
        if method is not None:
            setattr(FunctionalTensor, name, method)


@pytest.fixture
def fast_calls(monkeypatch: pytest.MonkeyPatch, methods: None) -> list[int]:
    """How many calls went through the fast method (not inlined): the list grows by one each."""
    calls: list[int] = []
    real = shortcut._fast_wrap

    def counted(t: Any) -> Any:
        calls.append(1)
        return real(t)

    monkeypatch.setattr(shortcut, "_fast_wrap", counted)
    return calls


def _without_methods(fn: Callable[[], Any]) -> Any:
    """``fn()`` with FunctionalTensor's plain Tensor methods (the dispatcher path)."""
    saved = {name: FunctionalTensor.__dict__.get(name) for name in shortcut.FAST_METHODS}
    for name in saved:
        setattr(FunctionalTensor, name, getattr(td.Tensor, name))
    try:
        return fn()
    finally:
        for name, method in saved.items():
            if method is None:
                delattr(FunctionalTensor, name)
            else:
                setattr(FunctionalTensor, name, method)


def _node(t: Any) -> Any:
    return t._data.ir


def _same_node(a: Any, b: Any) -> None:
    na, nb = _node(a), _node(b)
    assert type(na) is type(nb)
    assert (na.op, na.overload, na.args, na.shapes, na.returns, na.data, na.hash) == (
        nb.op, nb.overload, nb.args, nb.shapes, nb.returns, nb.data, nb.hash,
    )  # fmt: skip
    assert len(na.operands) == len(nb.operands)
    for va, vb in zip(na.operands, nb.operands, strict=True):
        assert va.index == vb.index
        pa, pb = va.node, vb.node
        assert pa is pb or (pa.hash == pb.hash and pa.op == pb.op)
    for wa, wb in ((a, b), (a._data, b._data)):
        assert type(wa) is type(wb)
        assert (wa._key_set, wa._shape, wa._strides, wa._offset, wa.dtype, wa.device) == (
            wb._key_set, wb._shape, wb._strides, wb._offset, wb.dtype, wb.device,
        )  # fmt: skip


_CALLS: dict[str, Callable[[Any, Any], Any]] = {
    "add_float": lambda y, z: y + 0.5,
    "sub_int": lambda y, z: y - 3,
    "mul_float": lambda y, z: y * 0.999,
    "div_int": lambda y, z: y / 7,
    "add_tensor": lambda y, z: y + z,
    "mul_broadcast": lambda y, z: y * z[0],
    "div_tensor": lambda y, z: y / z,
}


@pytest.mark.parametrize("name", sorted(_CALLS))
def test_second_call_is_inlined_and_builds_the_dispatchers_node(
    fast_calls: list[int], name: str
) -> None:
    call = _CALLS[name]
    y = td.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]]).to("lazy") * 1.0  # pending IR
    z = td.tensor([[2.0, 4.0, -8.0], [1.0, 3.0, 5.0]]).to("lazy") * 1.0
    first = call(y, z)
    fast_calls.clear()
    second = call(y, z)
    assert fast_calls == []  # inlined
    expected = _without_methods(lambda: call(y, z))
    _same_node(first, expected)
    _same_node(second, expected)
    assert second.cpu().tolist() == expected.cpu().tolist()


def test_counters_and_graph_match_the_dispatcher(methods: None) -> None:
    x = td.from_numpy(np.linspace(-1, 1, 6, dtype=np.float32)).to("lazy")

    def program() -> tuple[str, dict[str, int | None], list[float]]:
        lazy.metrics.reset_metrics()
        y = x * 1.0
        for i in range(8):
            y = y + 0.5 if i % 2 == 0 else y * 0.999
        y = y - y / 3 * 2
        counters = {n: lazy.metrics.counter_value(n) for n in COUNTERS[:5]}
        return lazy.debug.dump_ir([y]), counters, y.cpu().tolist()

    program()  # learn
    inlined = program()
    expected = _without_methods(program)
    assert inlined == expected
    assert inlined[1] == {
        "lazy::add": 4, "lazy::sub": 1, "lazy::mul": 6, "lazy::div": 1, "CreateLtcTensor": 12
    }  # fmt: skip


def test_chain_matches_torch_lazy(methods: None) -> None:
    data = np.linspace(-1, 1, 8, dtype=np.float32)
    results = []
    for lib in (td, torch):
        y = lib.from_numpy(data.copy()).to("lazy")
        for _ in range(3):
            for i in range(6):
                y = y + 0.5 if i % 2 == 0 else y * 0.999
            y = y - y / 2
        results.append(y.cpu().numpy())
    np.testing.assert_array_equal(results[0], results[1])


def test_an_evicted_scalar_misses_as_on_the_dispatcher_path(methods: None) -> None:
    x = td.ones(3).to("lazy") * 1.0
    x * 0.25  # learnt
    for i in range(200):  # evicts 0.25 (and its record) from the scalar cache
        x * (1000.5 + i)
    lazy.metrics.reset_metrics()
    y = x * 0.25
    assert lazy.metrics.counter_value("DeviceDataCacheMiss") == 1
    assert _node(y).operands[1] is SCALAR_CACHE[(td.float64, float, 0.25)]


def test_keywords_keep_the_tensor_methods_signature(methods: None) -> None:
    assert inspect.signature(FunctionalTensor.__add__) == inspect.signature(td.Tensor.__add__)
    assert inspect.signature(FunctionalTensor.__mul__) == inspect.signature(td.Tensor.__mul__)
    x = td.tensor([1.0, 2.0]).to("lazy") * 1.0
    x.sub(x, alpha=2)
    assert x.__sub__(x, alpha=2).cpu().tolist() == [-1.0, -2.0]
    assert x.__truediv__(3, rounding_mode="floor").cpu().tolist() == [0.0, 0.0]


def test_inference_mode_after_warm_up_takes_the_normal_path(
    fast_calls: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    fallbacks: list[str] = []
    real = shortcut.functionalize_fallback

    def fallback(op: Any, *args: Any, **kwargs: Any) -> Any:
        fallbacks.append(str(op))
        return real(op, *args, **kwargs)

    x = td.ones(2).to("lazy") * 1.0
    x + 1.0
    x + 1.0
    monkeypatch.setattr(shortcut, "functionalize_fallback", fallback)
    with td.inference_mode():
        y = x + 1.0
    assert fallbacks == ["aten.add.Tensor"]  # the shortcut kernel saw inference mode
    assert y.cpu().tolist() == [2.0, 2.0]

    def forced() -> tuple[list[str], list[float]]:
        lazy.clear_compile_cache()
        x = td.ones(2).to("lazy") * 1.0
        x + 1.0  # learnt, when the methods are installed
        lazy.metrics.reset_metrics()
        with lazy.config.force_fallback("aten::add"):
            z = x + 1.0
        return lazy.metrics.counter_names(), z.cpu().tolist()

    assert forced() == _without_methods(forced)
    assert "aten::add.Tensor" in forced()[0]


def test_stale_or_grad_operands_take_the_normal_path(fast_calls: list[int]) -> None:
    x = td.zeros(4).to("lazy") * 1.0
    x * 2.0
    x * 2.0
    x.view(2, 2).add_(1)  # x is stale until synced
    assert (x * 2.0).cpu().tolist() == [2.0] * 4
    w = (td.ones(4).to("lazy") * 1.0).requires_grad_()
    (w * 2.0).sum().backward()
    assert w.grad.cpu().tolist() == [2.0] * 4


def test_flushes_counts_when_removed() -> None:
    handle = shortcut.install_methods()
    x = td.ones(2).to("lazy") * 1.0
    lazy.metrics.reset_metrics()
    x * 3.0
    x * 3.0
    handle.remove()
    assert lazy.metrics.counter_value("lazy::mul") == 2
    assert not any(r.pending() for r in inline_methods._RECORDS)


def test_fresh_values_and_new_shapes_are_inlined_like_the_dispatcher(
    fast_calls: list[int],
) -> None:
    warm = td.ones(3).to("lazy") * 1.0
    for _ in range(2):  # the numbers are learnt (twice: the first may evict from the cache)
        (warm + 0.5) * 0.999
    (warm + warm) * 1.0  # validated for two wrappers; shapes will come from the rule

    def program(size: int) -> tuple[dict[str, int], list[float], list[float]]:
        lazy.mark_step()
        lazy.clear_compile_cache()
        x = td.from_numpy(np.arange(size, dtype=np.float32)).to("lazy")  # CPU data, no IR
        lazy.metrics.reset_metrics()
        y = (x + 0.5) * 0.999
        z = y + x
        lazy.mark_step()
        counters = {n: lazy.metrics.counter_value(n) or 0 for n in lazy.metrics.counter_names()}
        return counters, y.cpu().tolist(), z.cpu().tolist()

    fast_calls.clear()
    got = program(7)
    assert fast_calls == []  # all three inlined
    assert got == _without_methods(lambda: program(7))
    assert got[0]["SyncedTensorsWithIR"] >= 1


@pytest.mark.parametrize("other", [2, 0.5], ids=["int", "float"])
def test_integer_tensors_learn_their_shapes_per_number_type(
    fast_calls: list[int], other: Any
) -> None:
    y = td.tensor([1, 2, 3]).to("lazy") * 1  # int64, pending IR
    first = y + other
    fast_calls.clear()
    second = y + other
    assert fast_calls == []
    expected = _without_methods(lambda: y + other)
    _same_node(first, expected)
    _same_node(second, expected)
    assert second.cpu().tolist() == expected.cpu().tolist()


class _Seen(td.dispatch.DispatchMode):
    """A pass-through mode recording the operators it saw."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        self.seen.append(str(func))
        return func(*args, **(kwargs or {}))


def _inlined() -> int:
    """Inlined calls counted so far and not yet flushed into the counters."""
    return sum(r.pending() for r in inline_methods._RECORDS)


@contextlib.contextmanager
def _level() -> Iterator[None]:
    """A grad transform level on the thread's transform stack (and nothing else)."""
    level = batched.push_level(batched.GradLevel)
    try:
        yield
    finally:
        batched.pop_level(level)


_STATES: dict[str, Callable[[], Any]] = {
    "mode": _Seen,
    "inference_mode": td.inference_mode,
    "vmap_mode": lambda: td.dispatch.IncludeDispatchKeyGuard(
        td.dispatch.DispatchKey.FuncTorchVmapMode
    ),
    "force_fallback": lambda: lazy.config.force_fallback("aten::add"),
    "exclude_autograd": lambda: td.dispatch.ExcludeDispatchKeyGuard(
        td.dispatch.DispatchKey.AutogradLazy
    ),
    "include_python": lambda: td.dispatch.IncludeDispatchKeyGuard(
        td.dispatch.DispatchKey.PythonTLSSnapshot
    ),
    "force_words": lambda: td.dispatch.ForceDispatchKeyGuard(
        td.dispatch.tls_local_include_set(),
        td.dispatch.tls_local_exclude_set()
        | td.dispatch.DispatchKeySet(td.dispatch.DispatchKey.AutogradLazy),
    ),
}


@pytest.mark.parametrize("name", sorted(_STATES))
def test_default_state_test_sends_other_states_to_the_normal_path(methods: None, name: str) -> None:
    """Note [The default-state test]: inside each non-default state the call is not inlined
    (the result equals the dispatcher path's); after the state is restored it is again."""
    x = td.ones(2).to("lazy") * 1.0
    x + 1.0  # learnt
    before = _inlined()
    x + 1.0
    assert _inlined() == before + 1
    with _STATES[name]() as entered:
        y = x + 1.0
        assert _inlined() == before + 1, name
    if isinstance(entered, _Seen):
        assert entered.seen == ["aten.add.Tensor"]
    assert y.cpu().tolist() == [2.0, 2.0]
    if name == "force_fallback":  # forcing dropped the validations: one call validates again
        x + 1.0
    x + 1.0
    assert _inlined() == before + 2, f"{name}: not inlined after the state was restored"


def test_a_grad_level_alone_routes_nothing_so_the_call_is_still_inlined(
    fast_calls: list[int],
) -> None:
    """Note [The default-state test]: the transform stack is not tested. A grad level over
    operands that need no grad changes no kernel the dispatcher picks, so the inlined call
    builds the dispatcher path's node under the level too."""
    y = td.tensor([1.0, -2.0, 3.0]).to("lazy") * 1.0
    y + 0.5  # learnt
    with _level():
        assert batched.current_levels()
        fast_calls.clear()
        inlined = y + 0.5
        assert fast_calls == []
        expected = _without_methods(lambda: y + 0.5)
    _same_node(inlined, expected)
    assert inlined.cpu().tolist() == expected.cpu().tolist() == [1.5, -1.5, 3.5]


def test_grad_of_a_function_using_a_captured_lazy_constant_matches_torch(methods: None) -> None:
    """Inside td.func.grad the captured constant's ``c + 0.5`` may be inlined (a grad level
    alone routes nothing); the gradient is torch's."""
    c = td.tensor([1.0, -2.0, 3.0]).to("lazy") * 1.0
    c + 0.5  # learnt
    x = td.tensor([0.5, 1.5, 2.5]).to("lazy")
    ours = td.func.grad(lambda x: (x * (c + 0.5)).sum())(x)
    ct, xt = torch.tensor([1.0, -2.0, 3.0]), torch.tensor([0.5, 1.5, 2.5])
    theirs = torch.func.grad(lambda x: (x * (ct + 0.5)).sum())(xt)
    assert ours.cpu().tolist() == theirs.tolist()


def test_a_thread_forcing_a_fallback_stops_inlining_everywhere_until_it_ends(
    methods: None,
) -> None:
    """Note [The default-state test]: forcing is not tested per call; while any thread
    forces, no inlined method takes a call (the fast method reads each thread's setting)."""
    x = td.ones(2).to("lazy") * 1.0
    x + 1.0  # learnt
    started, release, done = threading.Event(), threading.Event(), threading.Event()
    seen: list[Any] = []

    def forcing() -> None:
        with lazy.config.force_fallback("aten::add"):
            started.set()
            release.wait(10)
            calls = _inlined()
            z = x + 1.0  # after the other thread's calls: still not inlined here
            seen.extend([_inlined() - calls, z.cpu().tolist()])
        done.set()

    thread = threading.Thread(target=forcing)
    thread.start()
    assert started.wait(10)
    before = _inlined()
    for _ in range(3):  # this thread does not force: traced, through the fast method
        y = x + 1.0
        assert _node(y).op == "aten::add.Tensor"
    assert _inlined() == before
    release.set()
    thread.join(10)
    assert done.is_set() and seen == [0, [2.0, 2.0]]
    x + 1.0  # validates again
    x + 1.0
    assert _inlined() == before + 1
    assert (x + 1.0).cpu().tolist() == [2.0, 2.0]


def test_default_state_test_with_grad_mode_off_still_inlines(methods: None) -> None:
    x = td.ones(2).to("lazy") * 1.0
    x * 2.0
    before = _inlined()
    with td.no_grad():
        y = x * 2.0
    assert _inlined() == before + 1
    assert y.cpu().tolist() == [2.0, 2.0]


def test_pending_counts_are_stable_and_flushed_exactly(fast_calls: list[int]) -> None:
    x = td.ones(2).to("lazy") * 1.0
    x * 3.0  # learns
    lazy.metrics.reset_metrics()  # flushes
    fast_calls.clear()
    for _ in range(5):
        x * 3.0
    assert fast_calls == []  # all five inlined
    assert _inlined() == 5 and _inlined() == 5  # reading takes nothing from the count
    assert lazy.metrics.counter_value("lazy::mul") == 5
    assert _inlined() == 0


def test_counts_stay_exact_when_threads_trace_at_once(methods: None) -> None:
    import threading

    x = td.ones(2).to("lazy") * 1.0
    x * 3.0  # learns
    lazy.metrics.reset_metrics()

    def trace() -> None:
        for _ in range(3000):
            x * 3.0

    threads = [threading.Thread(target=trace) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert lazy.metrics.counter_value("lazy::mul") == 4 * 3000
