"""Registration semantics: handles, newest-wins, inactive kernels, entry lifetime, dumps in
torch's format, debug strings, decorator forms, the override warning."""

from __future__ import annotations

import gc
import re
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
import torch
from dispatch_oracle import fresh
from hypothesis import given
from hypothesis import strategies as st

import tensordispatch.library as tdlib
from tensordispatch import ops
from tensordispatch.dispatch import (
    DISPATCHER,
    BackendComponent,
    DispatchKey,
    backend_tensor_keyset,
    check_invariants,
    dump,
    dump_table,
    find_dangling_impls,
    has_kernel,
    has_kernel_for_dispatch_key,
    kernel_for_dispatch_key_is_fallthrough,
)
from tensordispatch.dispatch.kernel import KernelFunction, KernelKind
from tensordispatch.dispatch.table import (
    compute_reference_table,
    compute_table_and_fallthroughs,
)
from tensordispatch.library import Library, fallthrough_kernel


class T:
    __slots__ = ("_key_set",)

    def __init__(self) -> None:
        self._key_set = backend_tensor_keyset(BackendComponent.CPUBit).raw


@pytest.fixture
def lib() -> Iterator[Library]:
    lib = Library(fresh("lib"), "DEF")
    yield lib
    lib._destroy()


def _kernels(lib: Library, name: str = "f") -> list[str]:
    return [
        line
        for line in dump(f"{lib.ns}::{name}").splitlines()
        if "::" in line.split(":")[0] or " :: " in line
    ]


def test_newest_kernel_wins_and_older_ones_are_inactive(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        h1 = lib.impl("f", lambda x: 1, "CPU", debug="fn1")
        h2 = lib.impl("f", lambda x: 2, "CPU", debug="fn2")
        h3 = lib.impl("f", lambda x: 3, "CPU", debug="fn3")
    f = getattr(ops, lib.ns).f.default
    assert _kernels(lib) == [
        "CPU: fn3 :: (none) [ boxed ]",
        "CPU (inactive): fn2 :: (none) [ boxed ]",
        "CPU (inactive): fn1 :: (none) [ boxed ]",
    ]
    assert f(T()) == 3
    h2.remove()  # removing an inactive kernel changes nothing visible
    assert f(T()) == 3
    h3.remove()
    assert f(T()) == 1
    h1.remove()
    assert not has_kernel_for_dispatch_key(f"{lib.ns}::f", "CPU")


def test_handle_removal_is_idempotent(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    h = lib.impl("f", lambda x: x, "CPU")
    h.remove()
    h.remove()
    assert h.removed


def test_entry_disappears_when_no_def_and_no_impl_remain() -> None:
    ns = fresh("life")
    d = Library(ns, "DEF")
    d.define("f(Tensor x) -> Tensor")
    i = Library(ns, "FRAGMENT")
    i.impl("f", lambda x: x, "CPU", debug="k")
    d._destroy()
    assert dump(f"{ns}::f") == f"name: {ns}::f\nschema: (none)\nCPU: k :: (none) [ boxed ]\n"
    assert find_dangling_impls() == [dump(f"{ns}::f")]
    i._destroy()
    assert dump(f"{ns}::f") == ""
    assert not has_kernel(f"{ns}::f")


def test_opoverload_held_across_undef_works_after_redefinition() -> None:
    ns = fresh("revive")
    d = Library(ns, "DEF")
    d.define("f(Tensor x) -> Tensor")
    d.impl("f", lambda x: "first", "CPU")
    f = getattr(ops, ns).f.default
    d._destroy()
    d2 = Library(ns, "DEF")
    d2.define("f(Tensor x) -> Tensor")
    d2.impl("f", lambda x: "second", "CPU")
    assert f(T()) == "second"
    d2._destroy()


def test_library_is_destroyed_when_garbage_collected() -> None:
    ns = fresh("gc")
    lib = Library(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    del lib
    gc.collect()
    assert dump(f"{ns}::f") == ""
    Library(ns, "DEF")._destroy()  # the namespace claim was released too


def test_def_returns_the_bare_name_and_fills_the_namespace(lib: Library) -> None:
    assert lib.define("g.over(Tensor x) -> Tensor") == "g"
    assert lib.define(f"{lib.ns}::h(Tensor x) -> Tensor") == "h"
    assert str(getattr(ops, lib.ns).g.over._schema) == f"{lib.ns}::g.over(Tensor x) -> Tensor"


def test_dump_format_matches_torch_for_python_kernels(lib: Library) -> None:
    ns = fresh("tdump")
    tlib = torch.library.Library(ns, "DEF")
    tlib.define("f(Tensor x) -> Tensor")
    tlib.impl("f", lambda x: x, "CPU")
    tlib.impl("f", lambda x: x, "AutogradCPU")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tlib.impl("f", torch.library.fallthrough_kernel, "AutogradCPU")
    tlib.impl("f", lambda x: x, "Autograd")
    theirs = torch._C._dispatch_dump(f"{ns}::f")
    tlib._destroy()
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, "CPU")
    lib.impl("f", lambda x: x, "AutogradCPU")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lib.impl("f", fallthrough_kernel, "AutogradCPU")
    lib.impl("f", lambda x: x, "Autograd")
    ours = dump(f"{lib.ns}::f")

    def shape(text: str, name: str) -> str:
        return re.sub(r"registered at \S+:\d+", "SITE", text.replace(name, "NS"))

    assert shape(ours, lib.ns) == shape(theirs, ns)


def test_debug_string_is_the_registration_site(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    line = _line_of_next_statement()
    lib.impl("f", lambda x: x, "CPU")
    assert f"CPU: registered at {__file__}:{line} :: (none) [ boxed ]" in dump(f"{lib.ns}::f")


def _line_of_next_statement() -> int:
    import sys

    return sys._getframe(1).f_lineno + 1


def test_fallthrough_impl_is_flagged(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", fallthrough_kernel, "AutogradCPU", debug="ft")
    assert "AutogradCPU: ft :: (none) [ fallthrough boxed ]" in dump(f"{lib.ns}::f")
    assert "AutogradCPU: fallthrough ft [kernel]" in dump_table(f"{lib.ns}::f")
    assert kernel_for_dispatch_key_is_fallthrough(f"{lib.ns}::f", "AutogradCPU")


def test_catch_all_registers_under_cia(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, debug="ca")
    lib.impl("g", lambda x: x, "Undefined", debug="ca2")
    assert "CompositeImplicitAutograd[alias]: ca :: (none) [ boxed ]" in dump(f"{lib.ns}::f")
    assert "CompositeImplicitAutograd[alias]: ca2" in dump(f"{lib.ns}::g")


def test_override_warning_once_with_torch_text(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    DISPATCHER.override_warned = False
    lib.impl("f", lambda x: x, "CUDA", debug="old")
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for debug in ("new", "newer"):
            lib.impl("f", lambda x: x, "CUDA", debug=debug)
    assert len(record) == 1
    assert record[0].category is UserWarning
    text = re.sub(r"registered at \S+:\d+", "registered at SITE", str(record[0].message))
    assert text == "\n".join(
        [
            "Warning only once for all operators,  other operators may also be overridden.",
            (
                "  Overriding a previously registered kernel for the same operator and the "
                "same dispatch key"
            ),
            f"  operator: {lib.ns}::f(Tensor x) -> Tensor",
            "    registered at SITE",
            "  dispatch key: CUDA",
            "  previous kernel: no debug info",
            "       new kernel: new",
        ]
    )


def test_default_overload_name_is_rejected_with_torch_text(lib: Library) -> None:
    with pytest.raises(RuntimeError) as e:
        lib.define("q.default(Tensor x) -> Tensor")
    assert str(e.value) == " ".join(
        [
            "default is not a legal overload name for aten operators.",
            "Drop '.default' from 'q.default': the default overload is the one without a name",
        ]
    )


def test_module_level_decorators(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")

    @tdlib.impl(f"{lib.ns}::f", ["cpu", "AutogradCPU"], lib=lib)
    def kernel(x: Any) -> str:
        return "decorated"

    assert has_kernel_for_dispatch_key(f"{lib.ns}::f", "CPU")
    assert has_kernel_for_dispatch_key(f"{lib.ns}::f", "AutogradCPU")

    @tdlib.define(lib, "g(Tensor x) -> Tensor")
    def g(x: Any) -> str:
        return "legacy"

    assert getattr(ops, lib.ns).g(T()) == "legacy"

    @tdlib.impl(lib, "g", "CPU")
    def g_cpu(x: Any) -> str:
        return "legacy cpu"

    assert getattr(ops, lib.ns).g(T()) == "legacy cpu"


def test_fallback_for_an_alias_fills_every_covered_slot() -> None:
    ns = fresh("fba")
    lib = Library(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    fb = Library("_", "IMPL")
    fb.fallback(lambda op, *a: None, "CompositeImplicitAutogradNestedTensor", debug="nt_fb")
    try:
        table = dump_table(f"{ns}::f")
        assert "NestedTensorCPU: nt_fb [backend fallback]" in table
        assert "AutogradNestedTensor: nt_fb [backend fallback]" in table
        assert table.count("nt_fb") == 17
        check_invariants(f"{ns}::f")
    finally:
        fb._destroy()
    assert "nt_fb" not in dump_table(f"{ns}::f")
    assert "NestedTensorCPU" not in dump_table(f"{ns}::f")
    lib._destroy()


_POOL = [
    "CPU",
    "XLA",
    "MTIA",
    "Meta",
    "AutogradCPU",
    "AutogradOther",
    "QuantizedCPU",
    "SparseCPU",
    "NestedTensorCPU",
    "Dense",
    "Autograd",
    "CompositeImplicitAutograd",
    "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional",
    "CompositeImplicitAutogradNestedTensor",
    "FuncTorchBatchedDecomposition",
    "BackendSelect",
]


@given(st.lists(st.tuples(st.sampled_from(_POOL), st.booleans()), max_size=6))
def test_layered_table_equals_slot_by_slot_compute(regs: list[tuple[str, bool]]) -> None:
    kernels: dict[DispatchKey, list[KernelFunction]] = {}
    for i, (key, ft) in enumerate(regs):
        kind = KernelKind.FALLTHROUGH if ft else KernelKind.UNBOXED
        kernels.setdefault(DispatchKey[key], []).insert(0, KernelFunction(len, kind, f"k{i}"))
    table, ft = compute_table_and_fallthroughs(kernels, DISPATCHER.fallbacks)
    assert table == compute_reference_table(kernels, DISPATCHER.fallbacks)
    assert ft == tuple(i for i, e in enumerate(table) if e is not None and e[0].is_fallthrough)


def test_finalizer_removal_waits_for_the_lock_holder(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    handle = lib.impl("f", lambda x: x, "CPU")
    assert DISPATCHER.lock.try_enter()
    try:
        handle._remove_from_finalizer()  # as if garbage collection ran mid-registration
        assert not handle.removed
        assert has_kernel_for_dispatch_key(f"{lib.ns}::f", "CPU")
    finally:
        DISPATCHER.lock.release()
    with DISPATCHER.lock:  # the next holder applies it first
        pass
    assert handle.removed
    assert not has_kernel_for_dispatch_key(f"{lib.ns}::f", "CPU")


def test_optional_tensor_none_has_no_tensor_arguments(lib: Library) -> None:
    from tensordispatch.dispatch import NoTensorArgumentsError

    lib.define("f(Tensor? x) -> Tensor")
    lib.impl("f", lambda x: x, "CPU")
    with pytest.raises(NoTensorArgumentsError):
        getattr(ops, lib.ns).f.default(None)
    lib.impl("f", lambda x: "cea", "CompositeExplicitAutograd")
    assert getattr(ops, lib.ns).f.default(None) == "cea"
