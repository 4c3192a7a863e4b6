"""The CPU fallback's unboxed runner (Note [The unboxed fallback]) on fbdev: which tensors move,
keyword and optional arguments, strict mode, in-place and out= runners, the forwarder.
Expected values come from the same operator on CPU tensors or the boxed fallback."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import tensordispatch as td
from tensordispatch.library import Library
from tensordispatch.tensor import Tensor

from .fbdev_backend import (
    KEY,
    Hooks,
    _backend,
    cf,
    dev,
)


def test_unboxed_fast_path_moves_only_device_tensors(hooks: Hooks, fbdev: Any) -> None:
    x = dev([1.0, 2.0], fbdev)
    out = td.ops.aten.add.Tensor(x, td.tensor([10.0, 20.0]), alpha=2)  # one CPU argument
    assert out.device == fbdev and out._data.tolist() == [21.0, 42.0]
    assert [len(c) for c in hooks.to_cpu_calls] == [1]
    assert cf.fallback_counts() == {"aten::add.Tensor": 1}


def test_unboxed_fast_path_handles_keyword_tensor_arguments(hooks: Hooks, fbdev: Any) -> None:
    x, y = dev([1.0, 2.0], fbdev), dev([5.0, 7.0], fbdev)
    out = td.ops.aten.sub.Tensor(other=y, self=x)  # by name, in another order
    assert out.device == fbdev and out._data.tolist() == [-4.0, -5.0]
    assert [[t._data.tolist() for t in c] for c in hooks.to_cpu_calls] == [[[1.0, 2.0], [5.0, 7.0]]]
    assert cf.fallback_counts() == {"aten::sub.Tensor": 1}


def test_unboxed_fast_path_passes_keyword_only_arguments(hooks: Hooks, fbdev: Any) -> None:
    x, y = dev([1.0, 2.0], fbdev), dev([10.0, 20.0], fbdev)
    out = td.ops.aten.sub.Tensor(x, y, alpha=0.5)
    assert (
        out._data.tolist()
        == td.sub(td.tensor([1.0, 2.0]), td.tensor([10.0, 20.0]), alpha=0.5).tolist()
    )
    assert [len(c) for c in hooks.to_cpu_calls] == [2] and len(hooks.from_cpu_calls) == 1


@pytest.fixture
def optlib() -> Iterator[Library]:
    """An operator with an optional tensor and a keyword-only argument (CPU kernel only)."""
    lib = Library("fbopt", "DEF")
    lib.define("scaled(Tensor x, Tensor? w=None, *, float scale=1.0) -> Tensor")

    def scaled(x: Tensor, w: Tensor | None = None, *, scale: float = 1.0) -> Tensor:
        assert x.device.type == "cpu" and (w is None or w.device.type == "cpu")
        return td.mul(x if w is None else td.mul(x, w), scale)

    lib.impl("scaled", scaled, "CPU")
    yield lib
    lib._destroy()


@pytest.mark.parametrize(
    ("call", "expected", "moved"),
    [
        (lambda x, w: td.ops.fbopt.scaled(x), [1.0, 2.0], [1]),
        (lambda x, w: td.ops.fbopt.scaled(x, None), [1.0, 2.0], [1]),
        (lambda x, w: td.ops.fbopt.scaled(x, w), [3.0, 8.0], [2]),
        (lambda x, w: td.ops.fbopt.scaled(x, w=w, scale=2.0), [6.0, 16.0], [2]),
        (lambda x, w: td.ops.fbopt.scaled(x, scale=3.0), [3.0, 6.0], [1]),
        (lambda x, w: td.ops.fbopt.scaled(x, td.tensor([3.0, 4.0])), [3.0, 8.0], [1]),
    ],
    ids=["omitted", "none", "given", "keywords", "scale-only", "cpu-weight"],
)
def test_optional_tensor_and_keyword_arguments_on_the_fast_runner(
    hooks: Hooks, fbdev: Any, optlib: Library, call: Any, expected: list[float], moved: list[int]
) -> None:
    x, w = dev([1.0, 2.0], fbdev), dev([3.0, 4.0], fbdev)
    out = call(x, w)
    assert out.device == fbdev and out._data.tolist() == expected
    assert [len(c) for c in hooks.to_cpu_calls] == moved
    assert cf.fallback_counts() == {"fbopt::scaled": 1}


def test_tensors_on_separately_made_device_objects_take_the_fast_branch(fbdev: Any) -> None:
    h = Hooks()
    reg = cf.register_cpu_fallback(_backend(h), KEY)
    try:
        run = reg.kernel.specializer(td.ops.aten.mul.Tensor, 0)  # what the dispatcher caches
        slow_calls: list[Any] = []
        slow = run.__globals__["_fb_slow"]
        run.__globals__["_fb_slow"] = lambda values: slow_calls.append(values) or slow(values)
        x = dev([3.0], td.device("fbdev", 0))
        y = dev([2.0], td.device("fbdev:0"))
        assert x.device is not y.device
        assert run(x, y)._data.tolist() == [6.0] and slow_calls == []
        assert run(x, td.tensor(2.0))._data.tolist() == [6.0] and len(slow_calls) == 1
    finally:
        reg.remove()
        cf.reset_fallback_counts()


def test_strict_mode_covers_runners_made_inside_the_block(hooks: Hooks, fbdev: Any) -> None:
    x = dev([1.0], fbdev)
    with cf.strict_fallback(), pytest.raises(cf.FallbackStrictError):
        td.maximum(x, x)  # first call of this operator: its runner is made strict
    assert cf.fallback_counts() == {}
    assert td.maximum(x, x)._data.tolist() == [1.0]
    assert cf.fallback_counts() == {"aten::maximum": 1}


def test_unboxed_fast_path_respects_strict_mode(hooks: Hooks, fbdev: Any) -> None:
    x = dev([1.0], fbdev)
    td.mul(x, x)  # the fast runner exists now
    with cf.strict_fallback(), pytest.raises(cf.FallbackStrictError):
        td.mul(x, x)
    assert cf.fallback_counts() == {"aten::mul.Tensor": 1}


def test_unboxed_fast_path_runs_the_current_cpu_kernel(
    hooks: Hooks, fbdev: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tensordispatch.dispatch.dispatcher import DISPATCHER

    # the override warning is once per process: an earlier test may have spent it
    monkeypatch.setattr(DISPATCHER, "override_warned", False)
    x = dev([3.0], fbdev)
    assert td.mul(x, x)._data.tolist() == [9.0]
    lib = Library("aten", "IMPL")
    with pytest.warns(UserWarning):
        lib.impl("mul.Tensor", lambda a, b: td.ops.aten.add.Tensor(a, b), "CPU")
    try:
        assert td.mul(x, x)._data.tolist() == [6.0]
    finally:
        lib._destroy()


def test_strict_mode_in_one_thread_does_not_affect_another(hooks: Hooks, fbdev: Any) -> None:
    import threading

    x = dev([2.0], fbdev)
    td.mul(x, x)  # the fast runner exists now
    inside, release = threading.Event(), threading.Event()
    seen: list[str] = []

    def strict_thread() -> None:
        with cf.strict_fallback():
            inside.set()
            release.wait(10)
            try:
                td.mul(x, x)
            except cf.FallbackStrictError:
                seen.append("refused")

    thread = threading.Thread(target=strict_thread)
    thread.start()
    inside.wait(10)
    try:
        assert td.mul(x, x)._data.tolist() == [4.0]  # this thread is not strict
    finally:
        release.set()
        thread.join(10)
    assert seen == ["refused"]


def test_forwarder_passes_optional_arguments_as_the_dispatcher_does() -> None:
    from tensordispatch.backends.fallback_unboxed import _NO, forwarder

    forward = forwarder(td.ops.aten.clamp.default._entry.facts)  # (self, min=None, max=None)

    def seen(*args: Any, **kwargs: Any) -> Any:
        return args, kwargs

    assert forward(seen, "x", _NO, _NO) == (("x",), {})
    assert forward(seen, "x", 0, _NO) == (("x", 0), {})
    assert forward(seen, "x", _NO, 1) == (("x",), {"max": 1})  # after a gap: by name
    assert forward(seen, "x", 0, 1) == (("x", 0, 1), {})


@pytest.mark.parametrize(
    "kwargs", [{"max": 1.5}, {"min": 1.5}, {"min": 0.5, "max": 1.5}], ids=["max", "min", "both"]
)
def test_optional_scalars_reach_the_cpu_kernel(
    hooks: Hooks, fbdev: Any, kwargs: dict[str, float]
) -> None:
    values = [0.0, 1.0, 2.0]
    out = td.clamp(dev(values, fbdev), **kwargs)
    assert out.device == fbdev
    assert out._data.tolist() == td.clamp(td.tensor(values), **kwargs).tolist()
    assert cf.fallback_counts() == {"aten::clamp": 1}


def test_runner_binds_tensors_passed_by_name(fbdev: Any) -> None:
    h = Hooks()
    reg = cf.register_cpu_fallback(_backend(h), KEY)
    try:
        run = reg.kernel.specializer(td.ops.aten.sub.Tensor, 0)  # what the dispatcher caches
        x, y = dev([1.0, 2.0], fbdev), dev([5.0, 7.0], fbdev)
        out = run(other=y, self=x, alpha=2)
        assert out.device == fbdev and out._data.tolist() == [-9.0, -12.0]
        assert [[t._data.tolist() for t in c] for c in h.to_cpu_calls] == [[[1.0, 2.0], [5.0, 7.0]]]
    finally:
        reg.remove()
        cf.reset_fallback_counts()


def _inplace_program(fbdev: Any) -> list[Any]:
    """In-place and out= calls on device tensors (the fast in-place runner's shape), and what
    the caller sees after each: identity of the result, the values of the base tensor."""
    x = dev([[1.0, 2.0], [3.0, 4.0]], fbdev)
    row = x.select(0, 1)  # a view (composite kernel, no fallback)
    y = dev([0.5, -0.5], fbdev)
    out = dev([], fbdev)  # resized by the out= call
    steps = [
        lambda: td.add(row, dev([1.0, 1.0], fbdev), alpha=3, out=out) is out,
        lambda: row.mul_(dev([10.0, 100.0], fbdev)) is row,
        lambda: x.add_(dev([[1.0, 1.0], [1.0, 1.0]], fbdev), alpha=2) is x,
        lambda: x.clamp_(max=40.0) is x,
        lambda: x.sub_(x) is x,  # the same tensor twice
        lambda: td.ops.aten.clamp_.default(y, -0.25) is y,
    ]
    seen = [(step(), x._data.tolist()) for step in steps]
    return [*seen, row._data.tolist(), y._data.tolist(), out._data.tolist()]


def test_inplace_runner_matches_the_boxed_fallback(fbdev: Any) -> None:
    results = []
    for boxed in (False, True):
        h = Hooks()
        kw = {"fallback_fn": cf.cpu_fallback} if boxed else {}
        reg = cf.register_cpu_fallback(_backend(h), KEY, **kw)
        cf.reset_fallback_counts()
        try:
            results.append((_inplace_program(fbdev), cf.fallback_counts(), h.logged))
        finally:
            reg.remove()
            cf.reset_fallback_counts()
    assert results[0] == results[1]
    program, counts, _ = results[0]
    zeros = [[0.0, 0.0], [0.0, 0.0]]
    assert program == [
        (True, [[1.0, 2.0], [3.0, 4.0]]),
        (True, [[1.0, 2.0], [30.0, 400.0]]),
        (True, [[3.0, 4.0], [32.0, 402.0]]),
        (True, [[3.0, 4.0], [32.0, 40.0]]),
        (True, zeros),
        (True, zeros),
        [0.0, 0.0],
        [0.5, -0.25],
        [6.0, 7.0],
    ]
    assert counts == {
        "aten::add.out": 1,
        "aten::mul_.Tensor": 1,
        "aten::add_.Tensor": 1,
        "aten::clamp_": 2,
        "aten::sub_.Tensor": 1,
    }


def test_inplace_and_out_runners_move_once_and_write_back(hooks: Hooks, fbdev: Any) -> None:
    x = dev([[1.0, 2.0], [3.0, 4.0]], fbdev)
    row = x.select(0, 0)
    assert row.mul_(dev([3.0, 3.0], fbdev)) is row
    assert row.mul_(dev([2.0, 0.5], fbdev)) is row
    assert x._data.tolist() == [[6.0, 3.0], [3.0, 4.0]]
    out = dev([], fbdev)
    assert td.add(row, row, out=out) is out and out._data.tolist() == [12.0, 6.0]
    assert [len(c) for c in hooks.to_cpu_calls] == [2, 2, 3] and hooks.from_cpu_calls == []
    assert cf.fallback_counts() == {"aten::mul_.Tensor": 2, "aten::add.out": 1}
    assert cf._COUNTS.get("fbdev", {}) == {}  # none took the general path


def test_operators_whose_names_clash_with_the_runner_take_the_general_path(
    hooks: Hooks, fbdev: Any
) -> None:
    lib = Library("fbnames", "DEF")
    lib.define("f(Tensor len, Tensor _fb_k) -> Tensor")
    lib.impl("f", lambda a, b: td.sub(a, b), "CPU")
    try:
        out = td.ops.fbnames.f(dev([5.0], fbdev), dev([2.0], fbdev))
        assert out.device == fbdev and out._data.tolist() == [3.0]
        assert cf._COUNTS["fbdev"] == {"fbnames::f": 1}  # counted by the general path
    finally:
        lib._destroy()
