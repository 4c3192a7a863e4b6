"""The conformance catalogue: registration scenarios with spot checks from spec section 5.

Each scenario is run on torch and on tensordispatch and the whole normalised state is
compared after every step; ``expect`` rows additionally pin the rule the scenario is
about (checked on both sides, so a wrong expectation here fails against torch too).
Expectation syntax: ``"<kernel name> [<label>]"``, ``"fallthrough <name> [<label>]"``,
``"<global> [backend fallback]"`` (a built-in fallback) or ``"-"`` (no row: missing).
"""

from __future__ import annotations

from .scenario import (
    CEA,
    CEANF,
    CIA,
    CIANT,
    GLOBAL_FB,
    MATH,
    Case,
    D,
    Destroy,
    Fallback,
    FallthroughFallback,
    FallthroughImpl,
    Impl,
    case,
)
from .scenarios_alias import ALIAS_ALONE, ALIAS_COMBOS

__all__ = ["CASES", "Case"]

CATCH_ALL = [
    case("catchall_alone", D, Impl("", "ca"), Undefined="ca [math kernel]"),
    case(
        "catchall_with_cpu",
        D,
        Impl("", "ca"),
        Impl("CPU", "cpu"),
        CPU="cpu [kernel]",
        AutogradCPU=GLOBAL_FB,
        CUDA="ca [math kernel]",
    ),
    case(
        "catchall_with_autograd",
        D,
        Impl("", "ca"),
        Impl("Autograd", "ag"),
        AutogradCPU="ca [math kernel]",
    ),
    case("impl_only_no_schema", Impl("CPU", "cpu"), Impl("Autograd", "ag")),
    case("def_only", D),
    case("def_then_undef_keeps_kernels", D, Impl("CPU", "cpu"), Destroy(0)),
]

FALLBACKS = [
    case("fallback_xla", D, Fallback("XLA", "fbx"), XLA="fbx [backend fallback]"),
    case(
        "fallback_xla_loses_to_xla_kernel",
        D,
        Fallback("XLA", "fbx"),
        Impl("XLA", "xla"),
        XLA="xla [kernel]",
    ),
    case("fallback_xla_loses_to_cia", D, Fallback("XLA", "fbx"), Impl(CIA, "cia"), XLA=MATH),
    case(
        "fallback_xla_loses_to_cea",
        D,
        Impl(CEA, "cea"),
        Fallback("XLA", "fbx"),
        XLA="cea [default backend kernel]",
    ),
    case(
        "fallback_xla_with_ceanf",
        D,
        Impl(CEANF, "nf"),
        Fallback("XLA", "fbx"),
        XLA="fbx [backend fallback]",
        CPU="nf [default backend kernel]",
    ),
    case(
        "fallback_autogradxla_duplicate_fails",
        D,
        Impl("XLA", "xla"),
        Fallback("AutogradXLA", "fbagx"),
        failing=(2,),
        AutogradXLA=GLOBAL_FB,
    ),
    case("fallback_autograd_alias_fails", D, Fallback("Autograd", "fbag"), failing=(1,)),
    case(
        "fallback_ciant_alias",
        D,
        Impl("CPU", "cpu"),
        Fallback(CIANT, "fbnt"),
        NestedTensorCPU="fbnt [backend fallback]",
        AutogradNestedTensor="fbnt [backend fallback]",
    ),
    case(
        "fallback_autogradprivateuse2_with_cia",
        D,
        Fallback("AutogradPrivateUse2", "fbp"),
        Impl("PrivateUse2", "p2"),
        Impl(CIA, "cia"),
        AutogradPrivateUse2="fbp [backend fallback]",
    ),
    case(
        "fallback_twice_same_key_fails",
        D,
        Fallback("XLA", "fb1"),
        Fallback("XLA", "fb2"),
        failing=(2,),
        XLA="fb1 [backend fallback]",
    ),
    case("fallback_removed", D, Impl("CPU", "cpu"), Fallback("XLA", "fbx"), Destroy(2), XLA="-"),
]

FALLTHROUGHS = [
    case(
        "fallthrough_autogradcpu",
        D,
        Impl("CPU", "cpu"),
        FallthroughImpl("AutogradCPU", "ft"),
        AutogradCPU="fallthrough ft [kernel]",
    ),
    case(
        "fallthrough_autograd_alias",
        D,
        Impl("CPU", "cpu"),
        FallthroughImpl("Autograd", "ft"),
        AutogradXLA="fallthrough ft [autograd kernel]",
    ),
    case(
        "fallthrough_cia_alias",
        D,
        Impl("CPU", "cpu"),
        FallthroughImpl(CIA, "ft"),
        Undefined="fallthrough ft [math kernel]",
    ),
    case(
        "fallthrough_autogradmeta",
        D,
        Impl("CPU", "cpu"),
        Impl("Meta", "meta"),
        Impl("AutogradCPU", "agc"),
        FallthroughImpl("AutogradMeta", "ft"),
    ),
    case(
        "fallthrough_fallback_xla",
        D,
        Impl("CPU", "cpu"),
        FallthroughFallback("XLA", "ftx"),
        XLA="fallthrough ftx [backend fallback]",
    ),
    case(
        "fallthrough_fallback_cuda_loses_to_cea",
        D,
        FallthroughFallback("CUDA", "ftc"),
        Impl(CEA, "cea"),
        CUDA="cea [default backend kernel]",
    ),
    case(
        "fallthrough_fallback_autogradprivateuse3_with_cia",
        D,
        Impl(CIA, "cia"),
        FallthroughFallback("AutogradPrivateUse3", "fth"),
        AutogradPrivateUse3=MATH,
    ),
]

DEREGISTRATION = [
    case(
        "remove_active_reexposes_older",
        D,
        Impl("CPU", "a"),
        Impl("CPU", "b"),
        Destroy(2),
        CPU="a [kernel]",
    ),
    case(
        "remove_middle_of_stack",
        D,
        Impl("CPU", "f1"),
        Impl("CPU", "f2"),
        Impl("CPU", "f3"),
        Destroy(2),
        Destroy(3),
        CPU="f1 [kernel]",
    ),
    case(
        "remove_inactive_changes_nothing",
        D,
        Impl("CPU", "a"),
        Impl("CPU", "b"),
        Destroy(1),
        CPU="b [kernel]",
    ),
    case(
        "remove_cia_alias",
        D,
        Impl("CPU", "cpu"),
        Impl(CIA, "cia"),
        Destroy(2),
        CUDA="-",
        Undefined="-",
    ),
    case(
        "remove_autograd_alias_keeps_autogradcpu",
        D,
        Impl("Autograd", "ag"),
        Impl("AutogradCPU", "agc"),
        Destroy(1),
        AutogradCUDA=GLOBAL_FB,
        AutogradCPU="agc [kernel]",
    ),
    case(
        "remove_cea_reexposes_cia",
        D,
        Impl(CEA, "cea"),
        Impl(CIA, "cia"),
        Destroy(1),
        NestedTensorCPU=MATH,
        AutogradCPU=MATH,
    ),
    case(
        "remove_sparse_clears_ambiguity",
        D,
        Impl("SparseCPU", "sp"),
        Impl(CIA, "cia"),
        Destroy(1),
        AutogradOther=MATH,
    ),
    case(
        "remove_nested_cpu_reexposes_cia",
        D,
        Impl("NestedTensorCPU", "ntc"),
        Impl(CIA, "cia"),
        Destroy(1),
        AutogradNestedTensor=MATH,
    ),
    case(
        "remove_everything",
        D,
        Impl("CPU", "cpu"),
        Impl(CIA, "cia"),
        Destroy(2),
        Destroy(1),
        Destroy(0),
    ),
    case("duplicate_def_fails", D, Impl("CPU", "cpu"), D, failing=(2,)),
]

OTHER_KEYS = [
    case(
        "direct_adinplaceorview",
        D,
        Impl("CPU", "cpu"),
        Impl("ADInplaceOrView", "adiov"),
        ADInplaceOrView="adiov [kernel]",
    ),
    case(
        "direct_backendselect",
        D,
        Impl("BackendSelect", "bs"),
        Impl("CPU", "cpu"),
        BackendSelect="bs [kernel]",
    ),
    case(
        "autocastcpu_kernel_is_tls_excluded",
        D,
        Impl("AutocastCPU", "ac"),
        Impl("CPU", "cpu"),
        AutocastCPU="ac [kernel]",
    ),
    case(
        "functionalize_not_covered_by_cia",
        D,
        Impl(CIA, "cia"),
        Impl("Functionalize", "fz"),
        Functionalize="fz [kernel]",
        Python=GLOBAL_FB,
    ),
    case(
        "per_backend_fallthrough_cuda_with_cea",
        D,
        Impl(CEA, "cea"),
        FallthroughImpl("CUDA", "ft"),
        CUDA="fallthrough ft [kernel]",
        CPU="cea [default backend kernel]",
    ),
    case(
        "fallthrough_meta_with_cpu_kernel",
        D,
        Impl("CPU", "cpu"),
        FallthroughImpl("Meta", "ftm"),
        Meta="fallthrough ftm [kernel]",
    ),
    case("catchall_and_cia_share_a_stack", D, Impl("", "ca"), Impl(CIA, "cia"), Undefined=MATH),
    # torch.library's Meta-vs-CIA lookup raises when the operator has no entry yet
    case("meta_impl_before_any_entry", Impl("Meta", "meta"), failing=(0,)),
    case(
        "meta_impl_refused_over_cia",
        D,
        Impl(CIA, "cia"),
        Impl("Meta", "meta"),
        failing=(2,),
        Meta=MATH,
    ),
    case(
        "quantized_kernel_with_cea",
        D,
        Impl("QuantizedCPU", "q"),
        Impl(CEA, "cea"),
        QuantizedCPU="q [kernel]",
        QuantizedCUDA="cea [default backend kernel]",
        AutogradOther=GLOBAL_FB,
    ),
]

KS = True  # with_keyset: kernels record the key set they receive (compared in call tests)
KEYSETS = [
    case(
        "keyset_cpu_and_autogradcpu",
        D,
        Impl("CPU", "cpu", KS),
        Impl("AutogradCPU", "agc", KS),
        Impl("Meta", "meta", KS),
    ),
    case(
        "keyset_fallback_xla",
        D,
        Impl("CPU", "cpu", KS),
        Fallback("XLA", "fbx", KS),
        XLA="fbx [backend fallback]",
    ),
    case("keyset_cea_reaches_undefined", D, Impl(CEA, "cea", KS)),
    case(
        "keyset_after_fallthrough_autogradmeta",
        D,
        Impl("Meta", "meta", KS),
        FallthroughImpl("AutogradMeta", "ft"),
        Impl("CPU", "cpu", KS),
    ),
    case("keyset_cia_everywhere", D, Impl(CIA, "cia", KS)),
    case(
        "keyset_autograd_alias_and_nested",
        D,
        Impl("Autograd", "ag", KS),
        Impl("NestedTensorCPU", "ntc", KS),
        Impl(CIANT, "nt", KS),
    ),
]

CASES: list[Case] = KEYSETS + (
    OTHER_KEYS + ALIAS_ALONE + ALIAS_COMBOS + CATCH_ALL + FALLBACKS + FALLTHROUGHS + DEREGISTRATION
)
