"""The harness itself: its normalisations are exactly the documented ones, and it does
report a discrepancy when our side differs (so a green conformance run means something)."""

from __future__ import annotations

import pytest

from . import harness
from .harness import run_both
from .normalise import first_clause, missing_kernel_summary, normalise_dump, parse_table
from .scenarios import CASES
from .td_side import TdSide


def test_dump_normalisation_rewrites_namespace_def_debug_and_hook_tail_only() -> None:
    raw = (
        "name: ns7x::foo\n"
        "schema: ns7x::foo(Tensor x) -> Tensor\n"
        "debug: registered at /dev/null:0\n"
        "alias analysis kind: FROM_SCHEMA\n"
        "CPU: fn_cpu :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]\n"
        "AutogradCPU: registered at ft:0 :: (none) [ fallthrough boxed ]\n"
    )
    assert normalise_dump(raw, "ns7x") == (
        "name: test::foo\n"
        "schema: test::foo(Tensor x) -> Tensor\n"
        "debug: <def>\n"
        "alias analysis kind: FROM_SCHEMA\n"
        "CPU: fn_cpu :: (none) [ boxed ]\n"
        "AutogradCPU: registered at ft:0 :: (none) [ fallthrough boxed ]"
    )


def test_table_normalisation_hides_only_builtin_fallback_locations() -> None:
    raw = (
        "CPU: fn_cpu [kernel]\n"
        "XLA: registered at fbx:0 [backend fallback]\n"
        "BackendSelect: fallthrough registered at /src/BackendSelectFallbackKernel.cpp:3"
        " [backend fallback]\n"
        "AutogradCPU: registered at /src/VariableFallbackKernel.cpp:66 [backend fallback]\n"
    )
    assert parse_table(raw, "ns", frozenset({"registered at fbx:0"})) == {
        "CPU": "fn_cpu [kernel]",
        "XLA": "registered at fbx:0 [backend fallback]",
        "BackendSelect": "fallthrough <global> [backend fallback]",
        "AutogradCPU": "<global> [backend fallback]",
    }


def test_error_first_clause_drops_locations() -> None:
    message = (
        "Tried to register multiple backend fallbacks for the same dispatch key XLA; "
        "previous registration registered at a.py:1, new registration registered at b.py:2"
    )
    assert first_clause(message, "ns") == (
        "Tried to register multiple backend fallbacks for the same dispatch key XLA"
    )


def test_missing_kernel_summary_keeps_first_sentence_and_key_list() -> None:
    message = (
        "Could not run 'ns3x::foo' with arguments from the 'XLA' backend. This could be "
        "because the operator doesn't exist for this backend. 'ns3x::foo' is only available "
        "for these backends: [CPU, Meta]. Advice.\n\nCPU: cpu [kernel]"
    )
    assert missing_kernel_summary(message, "ns3x") == (
        "Could not run 'test::foo' with arguments from the 'XLA' backend | [CPU, Meta]"
    )


class _WrongTable(TdSide):
    def table(self, steps: tuple[object, ...]) -> dict[str, str]:
        rows = super().table(steps)
        if "CPU" in rows:
            rows["CPU"] = "someone else [kernel]"
        return rows


class _WrongCall(TdSide):
    def call(self, raw: int, exclude: str | None = None) -> str:
        return "ran nobody"


def _case(name: str) -> object:
    return next(c for c in CASES if str(c) == name)


def test_harness_reports_a_table_difference(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(harness, "TdSide", _WrongTable)
    report = run_both(_case("cia_with_cpu_kernel"), "py")  # type: ignore[arg-type]
    assert any("dump_table CPU: torch='registered at cpu:0 [kernel]'" in p for p in report.problems)


def test_harness_reports_a_call_difference(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(harness, "TdSide", _WrongCall)
    report = run_both(_case("cia_with_cpu_kernel"), "py", calls=True)  # type: ignore[arg-type]
    assert any("call on cpu: torch ran cpu, ours ran nobody" in p for p in report.problems)


def test_fallbacks_of_backends_initialised_elsewhere_are_not_compared() -> None:
    """Rewrite 6: a global fallback at a key torch 2.13 has none for by default (torch's
    lazy TS backend, our lazy layer) is dropped; a built-in one and a scenario's stay."""
    raw = "\n".join(
        [
            "Lazy: registered at /somewhere/ts_backend.cpp:1 [backend fallback]",
            "XLA: registered at fbx:0 [backend fallback]",
            "Meta: registered at /somewhere/meta.cpp:1 [backend fallback]",
            "CPU: registered at cpu:0 [kernel]",
        ]
    )
    assert parse_table(raw, "ns", frozenset({"registered at fbx:0"})) == {
        "XLA": "registered at fbx:0 [backend fallback]",
        "Meta": "<global> [backend fallback]",
        "CPU": "registered at cpu:0 [kernel]",
    }
