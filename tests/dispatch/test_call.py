"""The call path: key set extraction, thread-local sets, fallthrough masks, redispatch,
calling conventions and boxing, with a stand-in object carrying ``_key_set``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import torch
from dispatch_oracle import fresh

from tensordispatch import ops
from tensordispatch.dispatch import (
    AFTER_AUTOGRAD,
    BackendComponent,
    DispatchKey,
    DispatchKeySet,
    ExcludeDispatchKeyGuard,
    IncludeDispatchKeyGuard,
    _AutoDispatchBelowAutograd,
    backend_tensor_keyset,
)
from tensordispatch.dispatch.errors import FallthroughExecutedError
from tensordispatch.library import Library, fallthrough_kernel


class T:
    """A stand-in tensor: the dispatcher only reads ``_key_set``."""

    __slots__ = ("_key_set", "tag")

    def __init__(self, ks: DispatchKeySet, tag: str = "") -> None:
        self._key_set = ks.raw
        self.tag = tag


CPU = backend_tensor_keyset(BackendComponent.CPUBit)
META = backend_tensor_keyset(BackendComponent.MetaBit)
XLA = backend_tensor_keyset(BackendComponent.XLABit)


@pytest.fixture
def lib() -> Iterator[Library]:
    lib = Library(fresh("call"), "DEF")
    yield lib
    lib._destroy()


def _op(lib: Library, name: str) -> Any:
    return getattr(getattr(ops, lib.ns), name).default


def test_call_runs_the_backend_kernel_of_the_tensor(lib: Library) -> None:
    lib.define("f(Tensor x, Tensor y) -> Tensor")
    lib.impl("f", lambda x, y: ("cpu", x.tag, y.tag), "CPU")
    lib.impl("f", lambda x, y: ("meta", x.tag, y.tag), "Meta")
    f = _op(lib, "f")
    assert f(T(CPU, "a"), T(CPU, "b")) == ("cpu", "a", "b")
    assert f(T(CPU, "a"), T(META, "b")) == ("meta", "a", "b")  # Meta is the highest backend


def _received_keysets(key: str, call_with_torch: bool) -> list[str]:
    seen: list[str] = []
    if call_with_torch:
        ns = fresh("tk")
        tlib = torch.library.Library(ns, "DEF")
        tlib.define("f(Tensor x) -> Tensor")
        if key != "CPU":
            tlib.impl("f", lambda x: x, "CPU")

        def spy_t(ks: Any, x: Any) -> Any:
            seen.append(repr(ks))
            return x

        tlib.impl("f", spy_t, key, with_keyset=True)
        getattr(torch.ops, ns).f(torch.ones(1))
        tlib._destroy()
        return seen
    lib = Library(fresh("tdk"), "DEF")
    lib.define("f(Tensor x) -> Tensor")
    if key != "CPU":
        lib.impl("f", lambda x: x, "CPU")

    def spy(ks: DispatchKeySet, x: Any) -> Any:
        seen.append(repr(ks))
        return x

    lib.impl("f", spy, key, with_keyset=True)
    _op(lib, "f")(T(CPU))
    lib._destroy()
    return seen


@pytest.mark.parametrize("key", ["CPU", "AutogradCPU"])
def test_with_keyset_kernel_receives_the_same_keyset_as_torch(key: str) -> None:
    ours = _received_keysets(key, call_with_torch=False)
    assert ours == _received_keysets(key, call_with_torch=True)
    assert ours == (
        ["DispatchKeySet(CPU)"] if key == "CPU" else ["DispatchKeySet(CPU, AutogradCPU)"]
    )


def test_tls_include_adds_a_backend(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "cpu", "CPU")
    lib.impl("f", lambda x: "xla", "XLA")
    f = _op(lib, "f")
    with IncludeDispatchKeyGuard(DispatchKeySet(DispatchKey.XLA)):
        assert f(T(CPU)) == "xla"
    assert f(T(CPU)) == "cpu"


def test_excluding_cpu_excludes_dense_for_every_backend(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    seen = []
    lib.impl("f", lambda x: "meta", "Meta")

    def cea(ks: DispatchKeySet, x: Any) -> str:
        seen.append(ks)
        return "cea"

    lib.impl("f", cea, "CompositeExplicitAutograd", with_keyset=True)
    with ExcludeDispatchKeyGuard(DispatchKeySet(DispatchKey.CPU)):
        assert _op(lib, "f")(T(META)) == "cea"
    assert repr(seen[0]) == "DispatchKeySet()"


def test_below_autograd_guard_skips_autograd_kernels(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "cpu", "CPU")
    lib.impl("f", lambda x: "autograd", "Autograd")
    f = _op(lib, "f")
    assert f(T(CPU)) == "autograd"
    with _AutoDispatchBelowAutograd():
        assert f(T(CPU)) == "cpu"


def test_per_backend_fallthrough_skips_only_that_backend(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    seen = []
    lib.impl("f", lambda x: "cpu", "CPU")
    lib.impl("f", lambda ks, x: seen.append(repr(ks)) or "meta", "Meta", with_keyset=True)
    lib.impl("f", lambda x: "autogradcpu", "AutogradCPU")
    lib.impl("f", fallthrough_kernel, "AutogradMeta")
    f = _op(lib, "f")
    assert f(T(CPU)) == "autogradcpu"
    assert f(T(META)) == "meta"
    assert seen == ["DispatchKeySet(Meta)"]


def test_redispatch_continues_below_the_masked_key(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "cpu", "CPU")
    f = _op(lib, "f")
    lib.impl(
        "f",
        lambda ks, x: ("ag", f.redispatch(ks & AFTER_AUTOGRAD, x)),
        "AutogradCPU",
        with_keyset=True,
    )
    assert f(T(CPU)) == ("ag", "cpu")


def test_redispatch_ignores_tls_exclusion(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "autogradcpu", "AutogradCPU")
    f = _op(lib, "f")
    with _AutoDispatchBelowAutograd():
        assert f.redispatch(DispatchKeySet(DispatchKey.AutogradCPU), T(CPU)) == "autogradcpu"


def test_redispatch_onto_a_fallthrough_raises(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", fallthrough_kernel, "AutogradCPU")
    with pytest.raises(FallthroughExecutedError):
        _op(lib, "f").redispatch(DispatchKeySet(DispatchKey.AutogradCPU), T(CPU))


def test_fallback_calling_conventions() -> None:
    ns = fresh("fbc")
    lib = Library(ns, "DEF")
    lib.define("f(Tensor x, *, int n=0) -> Tensor")
    fb = Library("_", "IMPL")
    seen: list[Any] = []
    fb.fallback(lambda op, *a, **k: seen.append((op.name(), len(a), k)), "XLA")
    fb.fallback(lambda ks, op, *a, **k: seen.append(repr(ks)), "QuantizedCUDA", with_keyset=True)
    try:
        f = _op(lib, "f")
        f(T(XLA), n=3)
        assert seen == [(f"{ns}::f", 1, {"n": 3})]
        f(T(DispatchKeySet(DispatchKey.QuantizedCUDA)))
        assert seen[1] == "DispatchKeySet(QuantizedCUDA)"
    finally:
        fb._destroy()
        lib._destroy()


def test_kernel_sees_only_the_arguments_the_caller_gave(lib: Library) -> None:
    lib.define("f(Tensor x, Tensor y, int a=1, int b=2, *, int c=3) -> Tensor")
    lib.impl("f", lambda *args, **kwargs: (len(args), sorted(kwargs)), "CPU")
    f = _op(lib, "f")
    x = T(CPU)
    assert f(x, x) == (2, [])
    assert f(x, y=x) == (2, [])  # positional arguments go positionally, as in torch
    assert f(x, x, 5) == (3, [])
    assert f(x, x, b=5) == (4, [])  # a left out: its default goes in front of b, as in torch
    assert f(x, x, c=0) == (2, ["c"])


def test_required_argument_after_an_optional_one(lib: Library) -> None:
    lib.define("f(Tensor x, int a=1, Tensor y) -> Tensor")
    lib.impl("f", lambda *args, **kwargs: (len(args), sorted(kwargs)), "CPU")
    f = _op(lib, "f")
    x = T(CPU)
    assert f(x, 2, x) == (3, [])
    assert f(x, y=x) == (3, [])  # a's default goes in front of y (torch rejects this schema)
    with pytest.raises(TypeError) as info:
        f(x)
    assert str(info.value) == "f() missing required argument: 'y'"


def test_every_tensor_form_and_position_contributes_to_the_keyset(lib: Library) -> None:
    lib.define("f(Tensor[] xs, Tensor?[] ys, Tensor? z=None, *, Tensor(a!) out) -> Tensor(a!)")
    lib.impl("f", lambda *a, **k: "cpu", "CPU")
    lib.impl("f", lambda *a, **k: "meta", "Meta")
    f = _op(lib, "f")
    c, m = T(CPU), T(META)
    assert f([c], [None], None, out=c) == "cpu"
    assert f([c, m], [None], out=c) == "meta"
    assert f([c], [None, m], out=c) == "meta"
    assert f([c], [], m, out=c) == "meta"
    assert f([c], [], out=m) == "meta"


def test_boxed_kernel_gets_the_full_stack(lib: Library) -> None:
    lib.define("f(Tensor x, int a=1, *, int[] b=[2,3]) -> Tensor")
    seen = []

    def boxed(op: Any, ks: DispatchKeySet, stack: list[Any]) -> str:
        seen.append((op.name(), repr(ks), stack[1:]))
        return "boxed"

    lib.impl("f", boxed, "CPU", boxed=True)
    f = _op(lib, "f")
    assert f(T(CPU)) == "boxed"
    assert f(T(CPU), 7, b=[]) == "boxed"
    assert seen == [
        (f"{lib.ns}::f", "DispatchKeySet(CPU)", [1, [2, 3]]),
        (f"{lib.ns}::f", "DispatchKeySet(CPU)", [7, []]),
    ]


def test_boxed_call_reaches_unboxed_kernel_without_defaults(lib: Library) -> None:
    lib.define("f(Tensor x, int a=1, *, int b=2) -> Tensor")
    lib.impl("f", lambda *args, **kwargs: (len(args), kwargs), "CPU")
    f = _op(lib, "f")
    assert f._call_boxed([T(CPU), 1, 2]) == (1, {})
    assert f._call_boxed([T(CPU), 5, 6]) == (2, {"b": 6})


def test_backend_select_kernel_picks_the_backend_of_a_factory(lib: Library) -> None:
    lib.define("make(int n, *, str device='cpu') -> Tensor")
    lib.impl("make", lambda n, device="cpu": ("cpu", n), "CPU")
    lib.impl("make", lambda n, device="cpu": ("meta", n), "Meta")
    make = _op(lib, "make")

    def backend_select(ks: DispatchKeySet, n: int, device: str = "cpu") -> Any:
        key = DispatchKey.Meta if device == "meta" else DispatchKey.CPU
        return make.redispatch(DispatchKeySet(key), n, device=device)

    lib.impl("make", backend_select, "BackendSelect", with_keyset=True)
    assert make(3) == ("cpu", 3)
    assert make(4, device="meta") == ("meta", 4)


def test_replacing_the_autograd_global_fallback_is_an_ordinary_registration(
    lib: Library,
) -> None:
    from tensordispatch.dispatch import global_fallback_handle, restore_global_fallback

    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "cpu", "CPU")
    f = _op(lib, "f")
    assert f(T(CPU)) == "cpu"
    handle = global_fallback_handle(DispatchKey.AutogradCPU)
    handle.remove()
    fb = Library("_", "IMPL")
    try:
        fb.fallback(lambda op, *a: "mine", "AutogradCPU")
        assert f(T(CPU)) == "mine"
    finally:
        fb._destroy()
        restore_global_fallback(DispatchKey.AutogradCPU)
    assert f(T(CPU)) == "cpu"
