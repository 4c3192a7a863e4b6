"""explain() and dispatch_trace() (issue 3 section 5)."""

from __future__ import annotations

import re
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
    check_invariants,
    dispatch_trace,
    explain,
)
from tensordispatch.library import Library


class T:
    __slots__ = ("_key_set",)

    def __init__(self) -> None:
        self._key_set = backend_tensor_keyset(BackendComponent.CPUBit).raw


@pytest.fixture
def lib() -> Iterator[Library]:
    lib = Library(fresh("intro"), "DEF")
    yield lib
    lib._destroy()


def _plain(text: str, ns: str) -> str:
    text = re.sub(r"registered at tensordispatch/dispatch/fallbacks\.py:\d+", "FALLBACK", text)
    return text.replace(ns, "ns")


def test_trace_shows_every_hop_as_a_tree(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    lib.define("g(Tensor x) -> Tensor")
    g = getattr(ops, lib.ns).g.default
    lib.impl("f", lambda x: g(x), "CPU", debug="f_cpu")
    lib.impl("g", lambda x: x, "CPU", debug="g_cpu")
    f = getattr(ops, lib.ns).f.default
    with dispatch_trace() as trace:
        f(T())
    assert _plain(str(trace), lib.ns) == "\n".join(  # noqa: FLY002 - one line per hop reads best
        [
            "ns::f DispatchKeySet(CPU, AutogradCPU) -> AutogradCPU: FALLBACK [backend fallback]",
            "  ns::f DispatchKeySet(CPU) -> CPU: f_cpu [kernel]",
            "    ns::g DispatchKeySet(CPU, AutogradCPU) -> AutogradCPU: FALLBACK [backend fallback]",
            "      ns::g DispatchKeySet(CPU) -> CPU: g_cpu [kernel]",
        ]
    )
    assert [h.depth for h in trace.hops] == [0, 1, 2, 3]


def test_trace_is_off_after_the_block(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, "CPU")
    f = getattr(ops, lib.ns).f.default
    with dispatch_trace() as trace:
        f(T())
    f(T())
    assert len(trace.hops) == 2
    assert DISPATCHER.tracer is None
    entry = f._entry
    assert entry.state.tracer is None


def test_explain_names_the_rule_that_chose_the_kernel(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, "CPU", debug="fn_cpu")
    lib.impl("f", lambda x: x, "Autograd", debug="fn_ag")
    lib.impl("f", lambda x: x, "CompositeImplicitAutograd", debug="fn_math")
    text = explain(f"{lib.ns}::f", DispatchKey.AutogradCUDA)
    assert _plain(text, lib.ns) == "\n".join(  # noqa: FLY002 - one line per hop reads best
        [
            "ns::f at AutogradCUDA (slot 97): fn_math [math kernel]",
            "  1. kernel for AutogradCUDA: none registered",
            "  2. CompositeExplicitAutogradNonFunctional: does not cover AutogradCUDA",
            "  3. CompositeExplicitAutograd: does not cover AutogradCUDA",
            "  5. CompositeImplicitAutogradNestedTensor: does not cover AutogradCUDA",
            "  6. CompositeImplicitAutograd: fn_math -- chosen",
            "  7. Autograd: fn_ag -- outranked",
            "  8. FuncTorchBatchedDecomposition: does not cover AutogradCUDA",
            "  9. backend fallback: FALLBACK -- outranked",
        ]
    )
    blocked = explain(f"{lib.ns}::f", DispatchKey.AutogradCPU)
    assert "6. CompositeImplicitAutograd: fn_math -- declined: a kernel for CPU (a backend" in (
        blocked
    )
    assert "7. Autograd: fn_ag -- chosen" in blocked


def test_explain_lists_inactive_kernels(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    DISPATCHER.override_warned = True  # silence the once-per-process warning
    lib.impl("f", lambda x: x, "CPU", debug="old")
    lib.impl("f", lambda x: x, "CPU", debug="new")
    text = explain(f"{lib.ns}::f", DispatchKey.CPU)
    assert "  1. kernel for CPU: new (and 1 inactive: old) -- chosen" in text


def test_explain_of_a_missing_slot(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    text: Any = explain(f"{lib.ns}::f", DispatchKey.XLA)
    assert text.splitlines()[0] == f"{lib.ns}::f at XLA (slot 4): missing"
    assert text.splitlines()[-1] == "  9. backend fallback: none registered"


def test_check_invariants_holds_for_an_operator_with_checked_arguments(lib: Library) -> None:
    # facts recomputed from the schema carry fresh converter closures; they still compare equal
    lib.define("g(Tensor x, int n, float[] f, ScalarType? t=None) -> Tensor")
    lib.impl("g", lambda x, n, f, t=None: x, "CPU")
    check_invariants(f"{lib.ns}::g")
