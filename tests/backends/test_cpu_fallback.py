"""The boxed CPU fallback on a minimal backend ("fbdev" on PrivateUse2, payloads copied NumPy
arrays): transfers, write-back identity, views, strict mode, counters, plans, call_fallback,
the before-composite knob. The real example backend (torch storage) is tested in
tests/examples. Expected values come from the same operator on CPU tensors."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import tensordispatch as td
from tensordispatch.backends import fallback_plan
from tensordispatch.dispatch.kernel import fallthrough_kernel
from tensordispatch.dispatch.keys import BackendComponent
from tensordispatch.library import Library
from tensordispatch.tensor import Tensor
from tensordispatch.tensor.device import register_device_type
from tensordispatch.tensor.tensor import contiguous_strides

KEY = "PrivateUse2"

# The module by path: tensordispatch.backends may re-export the function under its name.
cf = importlib.import_module("tensordispatch.backends.boxed_fallback")


class Hooks:
    """fbdev's transfer hooks, recording every call."""

    def __init__(self) -> None:
        self.to_cpu_calls: list[list[Tensor]] = []
        self.from_cpu_calls: list[list[Tensor]] = []
        self.logged: list[tuple[str, int]] = []

    def to_cpu(self, tensors: list[Tensor]) -> list[Tensor]:
        self.to_cpu_calls.append(list(tensors))
        return [Tensor._wrap_numpy(np.array(t._data, copy=True), t.dtype) for t in tensors]

    def from_cpu(self, tensors: list[Tensor], device: Any) -> list[Tensor]:
        self.from_cpu_calls.append(list(tensors))
        return [_on_device(t._data, t.dtype, device) for t in tensors]

    def copy_from_cpu(self, src: Tensor, dst: Tensor) -> None:
        if dst._shape != src._shape:
            fresh = _on_device(np.zeros(src._shape, src._data.dtype), dst.dtype, dst.device)
            dst._data, dst._shape, dst._strides = fresh._data, fresh._shape, fresh._strides
        np.copyto(dst._data, src._data)

    def log(self, op: Any, tensors: list[Tensor]) -> None:
        self.logged.append((op.name(), len(tensors)))


def _on_device(array: Any, dtype: Any, device: Any) -> Tensor:
    data = np.array(array, copy=True, order="C")
    return Tensor._make(data, data.shape, contiguous_strides(data.shape), 0, dtype, device)


@pytest.fixture(scope="module")
def fbdev() -> Iterator[Any]:
    handle = register_device_type("fbdev", BackendComponent.PrivateUse2Bit)
    # torch has no global AutogradPrivateUse2 fallback either; a backend on that key adds one.
    autograd = Library("_", "IMPL")
    autograd.fallback(fallthrough_kernel, "AutogradPrivateUse2")
    yield td.device("fbdev", 0)
    autograd._destroy()
    handle.remove()


@pytest.fixture
def hooks(fbdev: Any) -> Iterator[Hooks]:
    h = Hooks()
    reg = cf.register_cpu_fallback(_backend(h), KEY)
    cf.reset_fallback_counts()
    yield h
    reg.remove()
    cf.reset_fallback_counts()


def _backend(h: Hooks, **kw: Any) -> cf.FallbackBackend:
    return cf.FallbackBackend(
        "fbdev",
        BackendComponent.PrivateUse2Bit,
        h.to_cpu,
        h.from_cpu,
        h.copy_from_cpu,
        log=h.log,
        **kw,
    )


def dev(values: Any, fbdev: Any) -> Tensor:
    cpu = td.tensor(values)
    return _on_device(cpu._data, cpu.dtype, fbdev)


@pytest.fixture
def testlib() -> Iterator[Library]:
    lib = Library("fbtest", "DEF")
    lib.define("combine(Tensor x, Tensor[] xs, Tensor? w=None, Tensor? b=None) -> Tensor")
    lib.define("pick(Tensor?[] xs) -> Tensor[]")
    lib.define("myview(Tensor(a) x) -> Tensor(a)")

    def combine(x: Tensor, xs: list[Tensor], w: Tensor | None = None, b: Tensor | None = None):
        assert all(t.device.type == "cpu" for t in [x, *xs])
        out = x
        for t in xs:
            out = out + t
        if w is not None:
            out = out * w
        if b is not None:
            out = out - b
        return out

    lib.impl("combine", combine, "CPU")
    lib.impl("pick", lambda xs: [t.neg() for t in xs if t is not None], "CPU")
    lib.impl("myview", lambda x: x.view(-1), "CPU")
    yield lib
    lib._destroy()


def test_add_runs_on_cpu_and_comes_back_on_the_device(hooks: Hooks, fbdev: Any) -> None:
    a, b = dev([1.0, 2.0], fbdev), dev([10.0, 20.0], fbdev)
    r = td.add(a, b, alpha=2)
    assert r.device == fbdev
    assert (
        r._data.tolist() == td.add(td.tensor([1.0, 2.0]), td.tensor([10.0, 20.0]), alpha=2).tolist()
    )
    assert cf.fallback_counts() == {"aten::add.Tensor": 1}
    assert cf.fallback_counts("fbdev") == {"aten::add.Tensor": 1}


def test_all_tensor_arguments_move_in_one_to_cpu_call(
    hooks: Hooks, fbdev: Any, testlib: Library
) -> None:
    x, y, z, w = (dev([v], fbdev) for v in (1.0, 2.0, 3.0, 4.0))
    r = td.ops.fbtest.combine(x, [y, z], w=w)
    assert len(hooks.to_cpu_calls) == 1
    assert [t._data.tolist() for t in hooks.to_cpu_calls[0]] == [[1.0], [2.0], [3.0], [4.0]]
    assert r._data.tolist() == [(1.0 + 2.0 + 3.0) * 4.0] and r.device == fbdev


def test_optional_tensors_that_are_none_stay_none(
    hooks: Hooks, fbdev: Any, testlib: Library
) -> None:
    a, b = dev([1.0], fbdev), dev([2.0], fbdev)
    r = td.ops.fbtest.pick([a, None, b])
    assert [t._data.tolist() for t in hooks.to_cpu_calls[0]] == [[1.0], [2.0]]
    assert [t._data.tolist() for t in r] == [[-1.0], [-2.0]]
    assert all(t.device == fbdev for t in r)
    assert len(hooks.from_cpu_calls) == 1  # both outputs move back in one call


def test_cpu_arguments_are_not_moved(hooks: Hooks, fbdev: Any) -> None:
    a = dev([1.0, 2.0], fbdev)
    r = td.add(a, td.tensor(3.0))  # a 0-dim CPU tensor may join a device tensor
    assert [len(c) for c in hooks.to_cpu_calls] == [1]
    assert r._data.tolist() == [4.0, 5.0]


def test_inplace_returns_the_same_object_and_views_see_it(hooks: Hooks, fbdev: Any) -> None:
    x = dev([[1.0, 2.0], [3.0, 4.0]], fbdev)
    row = x.select(0, 1)  # a view (composite kernel, no fallback)
    r = row.mul_(td.tensor(10.0))
    assert r is row
    assert x._data.tolist() == [[1.0, 2.0], [30.0, 40.0]]
    assert cf.fallback_counts() == {"aten::mul_.Tensor": 1}


def test_out_argument_is_resized_and_returned(hooks: Hooks, fbdev: Any) -> None:
    out = dev([], fbdev)
    r = td.add(dev([1.0, 2.0], fbdev), dev([3.0, 4.0], fbdev), out=out)
    assert r is out and out._data.tolist() == [4.0, 6.0] and out.shape == (2,)


def test_two_written_arguments_keep_their_identity(hooks: Hooks, fbdev: Any) -> None:
    mn, mx = dev(0.0, fbdev), dev(0.0, fbdev)
    r = td.ops.aten.aminmax.out(dev([3.0, -1.0, 7.0], fbdev), min=mn, max=mx)
    assert r[0] is mn and r[1] is mx
    assert (mn._data.item(), mx._data.item()) == (-1.0, 7.0)


def test_view_operator_raises(hooks: Hooks, fbdev: Any, testlib: Library) -> None:
    with pytest.raises(cf.FallbackViewError) as info:
        td.ops.fbtest.myview(dev([1.0], fbdev))
    assert str(info.value) == (
        "The operator fbtest::myview appears to be a view operator, but it has no "
        'implementation for the backend "fbdev:0". View operators don\'t support falling back '
        "to run on the CPU, since the tensor's storage cannot be shared across devices. "
        "Implement fbtest::myview for the backend (list it in its backend yaml)."
    )
    assert hooks.to_cpu_calls == []


def test_strict_mode_raises_instead_of_falling_back(hooks: Hooks, fbdev: Any) -> None:
    x = dev([1.0], fbdev)
    with cf.strict_fallback(), pytest.raises(cf.FallbackStrictError) as info:
        td.sin(x)
    assert str(info.value) == (
        'aten::sin: no kernel for the backend "fbdev:0" and the CPU fallback is in strict '
        "mode, so it was not run on CPU. Implement the operator for the backend (list it in "
        "its backend yaml), or leave strict mode to let it fall back."
    )
    assert cf.fallback_counts() == {}
    assert td.sin(x)._data.tolist() == td.sin(td.tensor([1.0])).tolist()


def test_strict_backend_configuration(fbdev: Any) -> None:
    h = Hooks()
    reg = cf.register_cpu_fallback(_backend(h, strict=True), KEY)
    try:
        with pytest.raises(cf.FallbackStrictError):
            td.neg(dev([1.0], fbdev))
    finally:
        reg.remove()


def test_counters_and_logging_hook(hooks: Hooks, fbdev: Any) -> None:
    x = dev([1.0, 2.0], fbdev)
    td.sin(x), td.sin(x), td.cos(x)
    assert cf.fallback_counts() == {"aten::sin": 2, "aten::cos": 1}
    assert hooks.logged == [("aten::sin", 1), ("aten::sin", 1), ("aten::cos", 1)]
    cf.reset_fallback_counts("fbdev")
    assert cf.fallback_counts() == {}


def test_plan_is_computed_once_per_operator(hooks: Hooks, fbdev: Any, monkeypatch: Any) -> None:
    computed: list[str] = []
    original = fallback_plan.compute_plan
    monkeypatch.setattr(
        fallback_plan, "compute_plan", lambda op: computed.append(op.name()) or original(op)
    )
    fallback_plan.PLANS.pop(td.ops.aten.sub.Tensor._entry, None)
    x = dev([1.0], fbdev)
    for _ in range(5):
        td.sub(x, x)
    assert computed == ["aten::sub.Tensor"]


def test_factory_device_argument_runs_on_cpu_and_moves(hooks: Hooks, fbdev: Any) -> None:
    t = td.empty(2, 3, dtype=td.int32, device=fbdev)
    assert (t.device, t.shape, t.dtype) == (fbdev, (2, 3), td.int32)
    assert hooks.to_cpu_calls == []  # no device tensor to move
    assert cf.fallback_counts() == {"aten::empty.memory_format": 1}


def test_call_fallback_from_a_backend_kernel(hooks: Hooks, fbdev: Any) -> None:
    lib = Library("aten", "IMPL")

    def mul(self: Tensor, other: Tensor) -> Tensor:  # "native" only for float64
        if self.dtype == td.float64:
            return _on_device(self._data * other._data, self.dtype, self.device)
        return cf.call_fallback(cf.cpu_fallback, td.ops.aten.mul.Tensor, self, other)

    lib.impl("mul.Tensor", mul, KEY)
    try:
        i = dev([2, 3], fbdev)
        assert td.mul(i, i)._data.tolist() == [4, 9]
        f = _on_device(np.array([2.0]), td.float64, fbdev)
        assert td.mul(f, f)._data.tolist() == [4.0]
        assert cf.fallback_counts() == {"aten::mul.Tensor": 1}
    finally:
        lib._destroy()


def test_before_composite_skips_the_composite_kernel(fbdev: Any) -> None:
    def run(before: bool) -> dict[str, int]:
        reg = cf.register_cpu_fallback(_backend(Hooks()), KEY, before_composite=before)
        cf.reset_fallback_counts()
        try:
            t = td.zeros(3, device=fbdev)
            assert t.device == fbdev and t._data.tolist() == [0.0, 0.0, 0.0]
            if before:
                assert "aten::zeros" in reg.composite_overrides
                assert "aten::transpose.int" not in reg.composite_overrides  # a view
            return cf.fallback_counts()
        finally:
            reg.remove()
            cf.reset_fallback_counts()

    assert run(True) == {"aten::zeros": 1}
    assert "aten::zeros" not in run(False)  # composite zeros ran, its callees fell back


def test_registering_hooks_twice_is_refused(hooks: Hooks) -> None:
    with pytest.raises(ValueError) as info:
        cf.register_fallback_backend(_backend(Hooks()))
    assert str(info.value) == (
        "register_fallback_backend('fbdev'): backend component PrivateUse2Bit already has CPU "
        "fallback hooks (registered for 'fbdev'); remove that registration first"
    )


def test_removed_registration_leaves_no_fallback(fbdev: Any) -> None:
    reg = cf.register_cpu_fallback(_backend(Hooks()), KEY)
    reg.remove()
    with pytest.raises(NotImplementedError):
        td.sin(dev([1.0], fbdev))


def test_fallback_without_hooks_says_how_to_register(fbdev: Any) -> None:
    lib = Library("_", "IMPL")
    lib.fallback(cf.cpu_fallback, KEY, boxed=True)
    try:
        with pytest.raises(RuntimeError) as info:
            td.sin(dev([1.0], fbdev))
        assert str(info.value) == (
            "aten::sin: the CPU fallback ran for backend component PrivateUse2Bit, which has no "
            "CPU fallback hooks; register them with register_cpu_fallback (or "
            "register_fallback_backend) before registering cpu_fallback as a kernel"
        )
    finally:
        lib._destroy()


def test_to_cpu_hook_must_return_one_tensor_per_input(fbdev: Any) -> None:
    h = Hooks()
    backend = cf.FallbackBackend(
        "fbdev", BackendComponent.PrivateUse2Bit, lambda ts: [], h.from_cpu, h.copy_from_cpu
    )
    reg = cf.register_cpu_fallback(backend, KEY)
    try:
        with pytest.raises(RuntimeError) as info:
            td.sin(dev([1.0], fbdev))
        assert str(info.value) == (
            "aten::sin: the backend's to_cpu hook returned 0 tensor(s) for 1 device tensor(s); "
            "it must return one CPU tensor per input, in order"
        )
    finally:
        reg.remove()


def test_before_composite_covers_operators_defined_later(fbdev: Any) -> None:
    reg = cf.register_cpu_fallback(_backend(Hooks()), KEY, before_composite=True)
    lib = Library("fb_later", "DEF")
    try:
        lib.define("twice(Tensor x) -> Tensor")
        lib.impl("twice", lambda x: td.add(x, x), "CompositeExplicitAutograd")
        lib.impl("twice", lambda x: td.add(x, x), "CPU")
        cf.reset_fallback_counts()
        out = td.ops.fb_later.twice(dev([1.0, 2.0], fbdev))
        assert out.device == fbdev and out._data.tolist() == [2.0, 4.0]
        assert "fb_later::twice" in reg.composite_overrides
        assert cf.fallback_counts() == {"fb_later::twice": 1}  # not add.Tensor: no extra hop
    finally:
        reg.remove()
        lib._destroy()
        cf.reset_fallback_counts()


def test_before_composite_kernels_run_the_cached_runner(
    fbdev: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tensordispatch.backends import fallback_unboxed

    reg = cf.register_cpu_fallback(_backend(Hooks()), KEY, before_composite=True)
    try:
        x = dev([1.0, -2.0], fbdev)
        td.zeros_like(x)  # the dispatcher has cached the runner now
        made: list[Any] = []
        original = fallback_unboxed._cpu_kernel
        monkeypatch.setattr(  # looked up when a runner is specialized or runs its slow branch
            fallback_unboxed, "_cpu_kernel", lambda e: made.append(e) or original(e)
        )
        for _ in range(3):
            assert td.zeros_like(x)._data.tolist() == [0.0, 0.0]
        assert made == []
        assert cf.fallback_counts() == {"aten::zeros_like": 4}
    finally:
        reg.remove()
        cf.reset_fallback_counts()


def test_removed_before_composite_registration_stops_overriding(fbdev: Any) -> None:
    reg = cf.register_cpu_fallback(_backend(Hooks()), KEY, before_composite=True)
    reg.remove()
    lib = Library("fb_after", "DEF")
    try:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x, "CompositeExplicitAutograd")
        entry = td.ops.fb_after.f.default._entry
        assert [k.name for k in entry.kernels] == ["CompositeExplicitAutograd"]
    finally:
        lib._destroy()


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
