"""backends/math_bits.py: the Conjugate / Negative fallbacks and fallthrough lists against
torch 2.13's (Note [The math-bit fallback])."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import torch
import torch.library

import tensordispatch as td
from tensordispatch.backends import math_bits
from tensordispatch.dispatch import dump_table
from tensordispatch.dispatch.dispatcher import DISPATCHER
from tensordispatch.library import Library

# torch's Conjugate fallthroughs our NumPy kernels do not honour (module docstring)
_BLAS = {"addmm", "addmm.out", "addmm_", "baddbmm", "baddbmm.out", "baddbmm_", "bmm", "bmm.out",
         "mm", "mm.out", "vdot", "vdot.out"}  # fmt: skip


def _torch_fallthroughs(key: str) -> set[str]:
    names = torch._C._dispatch_get_registrations_for_dispatch_key(key)
    return {n.split("::")[1] for n in names if n.startswith("aten::")}


def _ours(names: set[str]) -> set[str]:
    """The names among ``names`` that we define (defining them, as a lookup does)."""
    found = set()
    for name in names:
        base, _, overload = name.partition(".")
        if DISPATCHER.find(f"aten::{base}", overload) is not None or f"aten::{base}" in (
            DISPATCHER.pending_operators("aten")
        ):
            found.add(name)
    return found


@pytest.mark.parametrize(
    ("key", "ours"),
    [
        ("Conjugate", math_bits.CONJUGATE_FALLTHROUGHS),
        ("Negative", math_bits.NEGATIVE_FALLTHROUGHS),
    ],
)
def test_fallthrough_lists_are_torchs(key: str, ours: frozenset[str]) -> None:
    torchs = _torch_fallthroughs(key) - (_BLAS if key == "Conjugate" else set())
    assert set(ours) == torchs


@pytest.mark.parametrize("key", ["Conjugate", "Negative"])
def test_tables_of_defined_operators_show_torchs_rows(key: str) -> None:
    math_bits.install()
    torchs = _torch_fallthroughs(key) - (_BLAS if key == "Conjugate" else set())
    for name in sorted(_ours(torchs)):
        base, _, overload = name.partition(".")
        td.ops.aten.__getattr__(base).__getattr__(overload or "default")  # defines it
        rows = [r for r in dump_table(f"aten::{name}").splitlines() if r.startswith(f"{key}:")]
        line = math_bits._on_definition.__code__.co_firstlineno
        expected = f"{key}: fallthrough registered at tensordispatch/backends/math_bits.py:{line}"
        assert rows == [f"{expected} [kernel]"], name


def test_other_operators_show_the_fallback_row() -> None:
    math_bits.install()
    rows = [r for r in dump_table("aten::add.Tensor").splitlines() if r.startswith("Conj")]
    line = math_bits._make_fallback.__code__.co_firstlineno + 3  # the inner function's def
    site = f"tensordispatch/backends/math_bits.py:{line}"
    assert rows == [f"Conjugate: registered at {site} [backend fallback]"]
    t_rows = [
        r for r in torch._C._dispatch_dump_table("aten::add.Tensor").splitlines()
        if r.startswith("Conj")
    ]  # fmt: skip
    assert t_rows[0].endswith("[backend fallback]")


@pytest.fixture(scope="module")
def libs() -> Iterator[tuple[Any, Any]]:
    t_lib = torch.library.Library("cjtest", "DEF")
    lib = Library("cjtest", "DEF")
    for m_lib in (t_lib, lib):
        m_lib.define("two(Tensor(a!) x, Tensor(b!) y) -> ()")
        m_lib.define("mix(Tensor(a!) x, Tensor(b) y) -> Tensor(b)")
        m_lib.define("lst(Tensor(a!)[] xs) -> ()")
        m_lib.impl("two", lambda x, y: None, "CPU")
        m_lib.impl("mix", lambda x, y: y, "CPU")
        m_lib.impl("lst", lambda xs: None, "CPU")
    yield t_lib, lib
    lib._destroy()
    t_lib._destroy()


CALLS = {
    "two mutable": lambda m, a, b: m.ops.cjtest.two(a, b),
    "mixed aliasing": lambda m, a, b: m.ops.cjtest.mix(a, b),
    "mutable list": lambda m, a, b: m.ops.cjtest.lst([a]),
}


@pytest.mark.parametrize("name", CALLS)
@pytest.mark.parametrize("bit", ["conj", "neg"])
def test_fallback_errors_are_torchs(libs: Any, name: str, bit: str) -> None:
    messages = []
    for m in (torch, td):
        if bit == "conj":
            a, b = m.tensor([1j]).conj(), m.tensor([2j]).conj()
        else:
            a, b = m.tensor([1.0])._neg_view(), m.tensor([2.0])._neg_view()
        with pytest.raises(RuntimeError) as info:
            CALLS[name](m, a, b)
        messages.append(str(info.value))
    assert messages[1] == messages[0]


def test_fallback_error_golden_text(libs: Any) -> None:
    a, b = td.tensor([1j]).conj(), td.tensor([2j]).conj()
    with pytest.raises(RuntimeError) as info:
        td.ops.cjtest.two(a, b)
    assert str(info.value) == (
        "conjugate fallback does not support operators with more than one mutable tensors "
        "with conjugatebit set to true."
    )


def test_install_is_idempotent_and_uninstall_restores_the_import_time_fallbacks() -> None:
    math_bits.install()
    math_bits.install()
    try:
        math_bits.uninstall()
        rows = [r for r in dump_table("aten::view").splitlines() if r.startswith("Conj")]
        assert rows == [
            "Conjugate: registered at tensordispatch/dispatch/fallbacks.py:119 [backend fallback]"
        ]
    finally:
        math_bits.install()
    assert td.tensor([1j]).conj().add(1).tolist() == [1 - 1j]


def test_dispatch_mode_sees_torchs_calls() -> None:
    from torch.utils._python_dispatch import TorchDispatchMode

    def program(x: Any) -> list[Any]:
        c = x.conj()
        y = c * 2
        c.add_(1)
        w = c.imag + 1
        return [y.tolist(), x.tolist(), w.tolist()]

    seen: list[list[str]] = [[], []]

    class TorchMode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            seen[0].append(str(func))
            return func(*args, **(kwargs or {}))

    class OurMode(td.DispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            seen[1].append(str(func))
            return func(*args, **(kwargs or {}))

    xt, x = torch.tensor([1 + 2j, 3j]), td.tensor([1 + 2j, 3j])  # (made outside: lift_fresh)
    with TorchMode():
        expected = program(xt)
    with OurMode():
        got = program(x)
    assert got == expected
    assert seen[1] == seen[0]
    assert seen[1][:6] == [
        "aten._conj.default", "aten.clone.default", "aten.mul.Tensor", "aten.clone.default",
        "aten.add_.Tensor", "aten.copy_.default",
    ]  # fmt: skip


def test_dispatch_trace_shows_the_fallback_hop_and_its_clone() -> None:
    c = td.tensor([1j]).conj()
    with td.dispatch.dispatch_trace() as trace:
        c * 2
    hops = [("  " * h.depth) + f"{h.op} -> {h.key.name}" for h in trace.hops]
    assert hops == [
        "aten::mul.Tensor -> AutogradCPU",
        "  aten::mul.Tensor -> Conjugate",
        "    aten::clone -> AutogradCPU",
        "      aten::clone -> CPU",
        "        aten::empty_strided -> BackendSelect",
        "          aten::empty_strided -> CPU",
        "        aten::copy_ -> AutogradCPU",
        "          aten::copy_ -> ADInplaceOrView",
        "            aten::copy_ -> CPU",
        "    aten::mul.Tensor -> CPU",
    ]
    assert trace.hops[1].debug.startswith("registered at tensordispatch/backends/math_bits.py:")


def test_dispatch_trace_skips_the_key_for_a_fallthrough() -> None:
    c = td.tensor([1j, 2j]).conj()
    with td.dispatch.dispatch_trace() as trace:
        c.view(2, 1)
    assert [h.key.name for h in trace.hops] == ["AutogradCPU", "CPU"]
    assert all("Conjugate" not in str(h.keyset) for h in trace.hops)  # masked out
