"""The dispatch table: every compute() rule (spec 5.2) and the consequences of spec 5.3,
each compared with torch 2.13's recomputed table for the same registrations."""

from __future__ import annotations

import pytest
from dispatch_oracle import Reg, td_registrations, td_table, torch_table

from tensordispatch.dispatch import (
    DISPATCHER,
    DispatchKey,
    check_invariants,
    dump_table,
    has_computed_kernel_for_dispatch_key,
)
from tensordispatch.dispatch.table import fallthrough_masks

SCHEMA = "f(Tensor x) -> Tensor"
CIA = "CompositeImplicitAutograd"
CEA = "CompositeExplicitAutograd"
CEANF = "CompositeExplicitAutogradNonFunctional"
CIANT = "CompositeImplicitAutogradNestedTensor"
FTBD = "FuncTorchBatchedDecomposition"

SCENARIOS = {
    "direct_kernel": [Reg("CPU", "cpu")],
    "direct_beats_alias": [Reg("CPU", "cpu"), Reg(CIA, "cia"), Reg(CEA, "cea")],
    "ceanf_beats_cea": [Reg(CEA, "cea"), Reg(CEANF, "nf")],
    "cea_alone": [Reg(CEA, "cea")],
    "cia_alone": [Reg(CIA, "cia")],
    "catch_all_is_cia": [Reg("", "ca")],
    "cia_blocked_per_backend": [Reg("CPU", "cpu"), Reg("XLA", "xla"), Reg(CIA, "cia")],
    "cia_beats_autograd_alias": [Reg("CPU", "cpu"), Reg("Autograd", "ag"), Reg(CIA, "cia")],
    "cea_blocks_cia_everywhere": [Reg(CEA, "cea"), Reg(CIA, "cia")],
    "ceanf_does_not_block_cia": [Reg(CEANF, "nf"), Reg(CIA, "cia")],
    "mtia_never_blocks": [Reg("MTIA", "mtia"), Reg(CIA, "cia")],
    "nested_blocks_autograd_nested": [Reg("NestedTensorCPU", "nt"), Reg(CIA, "cia")],
    "nested_does_not_block_autograd": [Reg("NestedTensorCPU", "nt"), Reg("Autograd", "ag")],
    "ambiguity_quantized": [Reg(CIA, "cia"), Reg("QuantizedCPU", "q")],
    "ambiguity_sparse": [Reg(CIA, "cia"), Reg("SparseCPU", "s")],
    "direct_autogradother_beats_ambiguity": [
        Reg(CIA, "cia"),
        Reg("SparseCPU", "s"),
        Reg("AutogradOther", "ao"),
    ],
    "ciant_before_cia": [Reg(CIANT, "nt"), Reg(CIA, "cia")],
    "autograd_alias_alone": [Reg("Autograd", "ag")],
    "ftbd_only_functorch_batched": [Reg(FTBD, "bd")],
    "building_block_dense": [Reg("Dense", "dense"), Reg(CIA, "cia")],
    "every_alias": [
        Reg("Autograd", "ag"),
        Reg(CIA, "cia"),
        Reg(CEA, "cea"),
        Reg(CEANF, "nf"),
        Reg(CIANT, "nt"),
        Reg(FTBD, "bd"),
    ],
    "fallthrough_direct": [Reg("CPU", "cpu"), Reg("AutogradCPU", "ft", fallthrough=True)],
    "fallthrough_under_alias": [Reg("CPU", "cpu"), Reg("Autograd", "ft", fallthrough=True)],
    "fallthrough_backendselect": [Reg("BackendSelect", "bs"), Reg("CPU", "cpu")],
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_table_equals_torch_recomputed_table(name: str) -> None:
    regs = SCENARIOS[name]
    assert td_table(SCHEMA, regs) == torch_table(SCHEMA, regs)


def test_operator_without_kernels_has_torchs_38_fallback_rows() -> None:
    ours, theirs = td_table(SCHEMA, []), torch_table(SCHEMA, [])
    assert len(ours) == 38
    assert ours == theirs


def test_undefined_slot_filled_only_by_composites() -> None:
    table = td_table(SCHEMA, [Reg("CPU", "cpu"), Reg("Autograd", "ag"), Reg(FTBD, "bd")])
    assert "Undefined" not in table
    assert td_table(SCHEMA, [Reg(CEANF, "nf")])["Undefined"] == "nf [default backend kernel]"


def test_cia_beats_autograd_alias_except_where_a_backend_kernel_blocks_it() -> None:
    table = td_table(SCHEMA, [Reg("CPU", "cpu"), Reg("Autograd", "ag"), Reg(CIA, "cia")])
    assert table["AutogradCPU"] == "ag [autograd kernel]"
    assert table["AutogradCUDA"] == "cia [math kernel]"
    assert table["AutogradOther"] == "cia [math kernel]"


def test_cea_kernel_leaves_nested_keys_missing() -> None:
    table = td_table(SCHEMA, [Reg(CEA, "cea"), Reg(CIA, "cia")])
    assert "NestedTensorCPU" not in table
    assert "AutogradNestedTensor" not in table
    assert table["AutogradCPU"] == "FALLBACK [backend fallback]"


def test_ambiguity_marker_at_autogradother_only() -> None:
    table = td_table(SCHEMA, [Reg(CIA, "cia"), Reg("QuantizedCPU", "q")])
    assert table["AutogradOther"] == "ambiguous_autogradother [ambiguous autogradother]"
    assert table["AutogradCPU"] == "cia [math kernel]"


def test_table_is_recomputed_after_deregistration_in_torchs_stale_orders() -> None:
    # torch goes stale here (spec 5.6): CEA + CIA, then CEA removed.
    name, libs = td_registrations(SCHEMA, [Reg(CIA, "cia"), Reg(CEA, "cea")])
    assert not has_computed_kernel_for_dispatch_key(name, "AutogradNestedTensor")
    libs[2]._destroy()
    assert has_computed_kernel_for_dispatch_key(name, "AutogradNestedTensor")
    assert "AutogradNestedTensor: cia [math kernel]" in dump_table(name)
    check_invariants(name)
    for lib in libs:
        lib._destroy()


def test_ambiguity_appears_when_backend_kernel_added_after_cia() -> None:
    name, libs = td_registrations(SCHEMA, [Reg(CIA, "cia"), Reg("SparseCPU", "s")])
    assert "AutogradOther: ambiguous_autogradother [ambiguous autogradother]" in dump_table(name)
    libs[2]._destroy()
    assert "AutogradOther: cia [math kernel]" in dump_table(name)
    for lib in libs:
        lib._destroy()


def _masks(regs: list[Reg]) -> tuple[int, tuple[int, ...], bool]:
    name, libs = td_registrations(SCHEMA, regs)
    entry = DISPATCHER.find(name)
    assert entry is not None
    masks = fallthrough_masks(entry.table)
    for lib in libs:
        lib._destroy()
    return masks


def _bit(key: DispatchKey) -> int:
    from tensordispatch.dispatch.keyset import keyset_raw

    return keyset_raw(key) & ~0xFFFF


def test_global_fallthroughs_clear_their_bits_in_every_mask() -> None:
    shared, per, mode = _masks([])
    assert not mode
    for key in (DispatchKey.BackendSelect, DispatchKey.ADInplaceOrView, DispatchKey.AutocastCPU):
        assert shared & _bit(key) == 0
        assert all(m & _bit(key) == 0 for m in per)
    assert shared & _bit(DispatchKey.Python)


def test_per_backend_fallthrough_switches_to_per_backend_masks() -> None:
    _shared, per, mode = _masks([Reg("AutogradMeta", "ft", fallthrough=True)])
    autograd = _bit(DispatchKey.AutogradCPU)
    assert mode
    assert per[15] & autograd == 0  # Meta is backend index 15
    assert per[0] & autograd


def test_fallthrough_under_every_backend_keeps_shared_mask() -> None:
    shared, _per, mode = _masks([Reg("Autograd", "ft", fallthrough=True)])
    assert not mode
    assert shared & _bit(DispatchKey.AutogradCPU) == 0
    assert shared & _bit(DispatchKey.AutogradOther) == 0


@pytest.mark.parametrize("name", ["direct_beats_alias", "cea_blocks_cia_everywhere", "every_alias"])
def test_fallback_changes_keep_every_table_equal_to_compute(name: str) -> None:
    from tensordispatch.library import Library

    op, libs = td_registrations(SCHEMA, SCENARIOS[name])
    fb = Library("_", "IMPL")
    before = dump_table(op)
    h1 = fb.fallback(lambda o, *a: None, "XLA", debug="xla_fb")
    h2 = fb.fallback(lambda o, *a: None, "CompositeImplicitAutogradNestedTensor", debug="nt_fb")
    check_invariants(op)
    assert ("XLA: xla_fb [backend fallback]" in dump_table(op)) == ("XLA: " not in before)
    h1.remove()
    check_invariants(op)
    h2.remove()
    check_invariants(op)
    assert dump_table(op) == before
    for lib in libs:
        lib._destroy()
