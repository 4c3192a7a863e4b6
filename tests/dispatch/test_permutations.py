"""Registration order independence: every ctor x dtor permutation of small registration sets.

See ``conformance/permute.py`` for the harness. Sets of up to four registrations run
exhaustively (576 paths for four); five-registration sets run every registration order and
every deregistration order (120 paths) plus a seeded sample of pairs. Each
reachable set of active registrations is also compared with torch 2.13's state.
"""

from __future__ import annotations

from typing import Any

import pytest

try:  # tests/dispatch may or may not become a package; work either way
    from .conformance import known
    from .conformance.permute import Commute, commute
    from .conformance.scenario import (
        Define,
        Fallback,
        FallthroughFallback,
        FallthroughImpl,
        Impl,
        Registration,
    )
except ImportError:
    from conformance import known
    from conformance.permute import Commute, commute
    from conformance.scenario import (
        Define,
        Fallback,
        FallthroughFallback,
        FallthroughImpl,
        Impl,
        Registration,
    )

# both dispatchers warn (once per process) when a second kernel lands on the same key
pytestmark = pytest.mark.filterwarnings("ignore:Warning only once for all operators")

CIA = "CompositeImplicitAutograd"
CEA = "CompositeExplicitAutograd"
CEANF = "CompositeExplicitAutogradNonFunctional"
CIANT = "CompositeImplicitAutogradNestedTensor"
D = Define()

SETS: dict[str, tuple[Registration, ...]] = {
    # torch's test_def / test_computed_table shape, five registrations (sampled)
    "def_cpu_autograd_autogradcpu_cia": (
        D,
        Impl("CPU", "cpu"),
        Impl("Autograd", "ag"),
        Impl("AutogradCPU", "agc"),
        Impl(CIA, "cia"),
    ),
    # torch's stored table goes stale in 10800/14400 of these orders (spec 5.6); ours may not
    "cpu_autograd_cia_cea": (
        D,
        Impl("CPU", "cpu"),
        Impl("Autograd", "ag"),
        Impl(CIA, "cia"),
        Impl(CEA, "cea"),
    ),
    "ambiguity_autogradother_quantized_cia": (
        D,
        Impl(CIA, "cia"),
        Impl("QuantizedCPU", "q"),
        Impl("AutogradOther", "ao"),
    ),
    "nested_ceanf_ciant": (
        D,
        Impl(CEANF, "nf"),
        Impl(CIANT, "nt"),
        Impl("NestedTensorCPU", "ntc"),
    ),
    "fallbacks_and_fallthroughs": (
        D,
        Impl("CPU", "cpu"),
        Fallback("XLA", "fbx"),
        FallthroughFallback("AutogradPrivateUse2", "ftp"),
        FallthroughImpl("AutogradCPU", "ft"),
    ),
    # a fallthrough CIA kernel that CEA must block, plus a backend kernel
    "fallthrough_cia_with_cea_and_cpu": (
        D,
        FallthroughImpl(CIA, "ftc"),
        Impl(CEA, "cea"),
        Impl("CPU", "cpu"),
    ),
    "alias_fallthrough_sparse_cia": (
        D,
        FallthroughImpl("Autograd", "ft"),
        Impl(CIA, "cia"),
        Impl("SparseCPU", "sp"),
    ),
    "impl_only_catchall_cpu_autograd": (
        Impl("", "ca"),
        Impl("CPU", "cpu"),
        Impl("Autograd", "ag"),
    ),
    # global fallbacks refresh every operator in the process (hundreds of ATen ones), so
    # the sets with fallbacks are kept small
    "alias_fallback_ciant_with_nested_kernels": (
        Fallback(CIANT, "fbnt"),
        Impl("NestedTensorCPU", "ntc"),
        Impl(CIA, "cia"),
    ),
    # failing registrations: which one fails depends on the order, the state must not
    "duplicate_fallback_xla": (Fallback("XLA", "fb1"), Fallback("XLA", "fb2"), Impl("XLA", "xla")),
    "duplicate_def": (D, Impl("CPU", "cpu"), Define()),
    "fallback_on_key_torch_already_has": (
        D,
        Impl("XLA", "xla"),
        Fallback("AutogradXLA", "fbagx"),
    ),
}


_RESULTS: dict[str, Commute] = {}


def _commute(name: str) -> Commute:
    if name not in _RESULTS:
        regs = SETS[name]
        with_fallbacks = any(isinstance(r, (Fallback, FallthroughFallback)) for r in regs)
        _RESULTS[name] = commute(regs, samples=0 if with_fallbacks else 100, seed=len(name))
    return _RESULTS[name]


def _params() -> list[Any]:
    out: list[Any] = []
    for name in SETS:
        reason = known.OTHER.get(f"perm:{name}")
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(name, id=name, marks=marks))
    return out


@pytest.mark.parametrize("name", _params())
def test_state_depends_only_on_the_set_of_active_registrations(name: str) -> None:
    regs = SETS[name]
    result = _commute(name)
    if len(regs) <= 5 and not result.errors:
        # every ctor order ran, and every subset is a prefix of some ctor order
        assert len(result.states) == 2 ** len(regs)
    assert frozenset() in result.states
    # each reachable set was also compared with torch's state for that set
    assert set(result.torch_states) == set(result.states)


def test_failing_registrations_were_exercised() -> None:
    result = _commute("duplicate_fallback_xla")
    assert result.errors, "no registration failed: the duplicate fallback went unnoticed"
    # whichever of the two fallbacks came second failed; both one-fallback sets exist
    assert {frozenset({0, 2}), frozenset({1, 2})} <= set(result.states)
    assert frozenset({0, 1}) not in result.states


def test_schema_mismatch_fails_whichever_of_def_and_impl_comes_second() -> None:
    # ours only (torch does not check Python kernels): the def or the impl fails depending
    # on the order, the failure leaves no trace and its text does not depend on the order
    regs = (D, Impl("CPU", "bad", bad_signature=True), Impl("XLA", "xla"))
    result = commute(regs, compare_torch=False)
    assert result.runs == 36
    assert {frozenset({0, 1}), frozenset({0, 1, 2})} & set(result.states) == set()
    assert {frozenset({0, 2}), frozenset({1, 2})} <= set(result.states)
    assert {text.split("\n")[0] for text, _ in result.errors.values()} == {
        "The kernel's Python signature doesn't match the operator schema."
    }
