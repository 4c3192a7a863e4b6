"""The boxed CPU fallback on a minimal backend ("fbdev" on PrivateUse2, payloads copied NumPy
arrays): transfers, write-back identity, views, strict mode, counters, plans, call_fallback,
the before-composite knob. The real example backend (torch storage) is tested in
tests/examples. Expected values come from the same operator on CPU tensors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensordispatch as td
from tensordispatch.backends import fallback_plan
from tensordispatch.dispatch.keys import BackendComponent
from tensordispatch.library import Library
from tensordispatch.tensor import Tensor

from .fbdev_backend import (
    KEY,
    Hooks,
    _backend,
    _on_device,
    cf,
    dev,
)


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
