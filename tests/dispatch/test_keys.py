"""Dispatch keys against torch 2.13: values, names, parsing, per-key facts, alias expansion."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
import torch

from tensordispatch.dispatch.keys import (
    ALIAS_KEYS,
    NUM_RUNTIME_ENTRIES,
    PER_BACKEND_FUNCTIONALITIES,
    RUNTIME_KEYS,
    BackendComponent,
    DispatchKey,
    DispatchKeyError,
    alias_runtime_keys,
    autograd_key_of,
    backends_of,
    component_of,
    error_key_name,
    functionality_of,
    functionality_to_backend_keys,
    is_alias_key,
    is_backend_key,
    is_included_in_alias,
    is_per_backend_functionality,
    is_runtime_key,
    key_name,
    key_of_slot,
    parse_dispatch_key,
    runtime_key,
    slot_of,
)
from tensordispatch.dispatch.tls import tls_is_pristine

TK = torch._C.DispatchKey
TKS = torch._C.DispatchKeySet
ALL_VALUES = range(156)


@pytest.fixture(autouse=True)
def _pristine_tls() -> Iterator[None]:
    yield
    assert tls_is_pristine()


def _torch_parse(name: str) -> int | None:
    key = torch._C._parse_dispatch_key(name)
    return None if key is None else int(key)


def _ours_parse(name: str) -> int | None:
    try:
        return int(parse_dispatch_key(name))
    except DispatchKeyError:
        return None


def _torch_full_order() -> list[str]:
    text = repr(torch._C._dispatch_keyset_full())
    return text[len("DispatchKeySet(") : -1].split(", ")


def test_enum_covers_torch_values_exactly() -> None:
    assert sorted({int(k) for k in DispatchKey}) == list(ALL_VALUES)


def test_printed_names_match_torch() -> None:
    for v in ALL_VALUES:
        assert str(DispatchKey(v)) == torch._C._dispatch_key_name(TK(v)), v
        assert key_name(v) == str(DispatchKey(v))


def test_members_torch_binds_by_name_have_torchs_values() -> None:
    for name, member in TK.__members__.items():
        assert int(DispatchKey[name]) == int(member), name


def test_format_uses_printed_name() -> None:
    assert f"{DispatchKey.StartOfSparseBackends}|{DispatchKey.CPU:>5}" == "SparseUndefined|  CPU"
    assert f"{BackendComponent.MetaBit}" == "MetaBit"


def test_parse_accepts_exactly_torchs_names() -> None:
    names = {torch._C._dispatch_key_name(TK(v)) for v in ALL_VALUES}
    names |= {m.name for m in DispatchKey.__members__.values()} | set(DispatchKey.__members__)
    names |= {"CatchAll", "Autocast", "CPUTensorId", "DefaultBackend", "Math", "cpu", "", " CPU"}
    names |= {"PrivateUse1_PreAutograd", "UnknownUnknown", "EndOfFunctionalityKeys"}
    for name in sorted(names):
        assert _ours_parse(name) == _torch_parse(name), name


def test_parse_round_trips_every_parseable_key() -> None:
    parseable = [DispatchKey(v) for v in ALL_VALUES if _torch_parse(key_name(v)) == v]
    # torch rejects 42 per-backend names, the sentinel and the placeholders (the Dense one
    # prints "Undefined", which parses as the real Undefined).
    assert len(parseable) == 156 - 42 - 1 - 6
    for k in parseable:
        assert parse_dispatch_key(str(k)) is k
    assert parse_dispatch_key(str(DispatchKey.StartOfDenseBackends)) is DispatchKey.Undefined


def test_parse_error_message() -> None:
    with pytest.raises(DispatchKeyError) as info:
        parse_dispatch_key("NotAKey")
    assert str(info.value) == "could not parse dispatch key: NotAKey"
    assert isinstance(info.value, RuntimeError)
    with pytest.raises(RuntimeError) as torch_info:
        torch._C._dispatch_key_parse("NotAKey")
    assert str(torch_info.value) == str(info.value)


def test_functionality_and_component_match_torch_bits() -> None:
    # torch's single-key set holds exactly the functionality bit and the backend bit.
    for v in ALL_VALUES:
        if v == 0 or is_alias_key(v):
            continue
        raw = TKS(TK(v)).raw_repr()
        assert int(functionality_of(v)) == (raw >> 16).bit_length(), v
        assert int(component_of(v)) == (raw & 0xFFFF).bit_length(), v


def test_aliases_have_no_functionality() -> None:
    assert {functionality_of(a) for a in ALIAS_KEYS} == {DispatchKey.Undefined}
    assert {component_of(a) for a in ALIAS_KEYS} == {BackendComponent.InvalidBit}


def test_runtime_key_inverts_functionality_and_component() -> None:
    for k in RUNTIME_KEYS:
        if is_per_backend_functionality(functionality_of(k)):
            assert runtime_key(functionality_of(k), component_of(k)) is k
    assert runtime_key(DispatchKey.Quantized, BackendComponent.InvalidBit) is (
        DispatchKey.StartOfQuantizedBackends
    )


def test_runtime_key_error_message() -> None:
    with pytest.raises(DispatchKeyError) as info:
        runtime_key(DispatchKey.Python, BackendComponent.CPUBit)
    assert str(info.value) == (
        "runtime_key(Python, CPUBit): only the per-backend functionalities (Dense, Quantized, "
        "Sparse, SparseCsr, NestedTensor, AutogradFunctionality) have one runtime key per "
        "backend; use the functionality key itself"
    )


def test_functionality_to_backend_keys_matches_torch() -> None:
    for v in ALL_VALUES:
        expected = [int(k) for k in torch._C._functionality_to_backend_keys(TK(v))]
        assert [int(k) for k in functionality_to_backend_keys(v)] == expected, v


def test_per_backend_functionalities() -> None:
    expected = {"Dense", "Quantized", "Sparse", "SparseCsr", "NestedTensor"}
    expected.add("AutogradFunctionality")
    assert {k.name for k in PER_BACKEND_FUNCTIONALITIES} == expected
    assert [v for v in ALL_VALUES if is_per_backend_functionality(v)] == [1, 5, 8, 9, 10, 21]


def test_is_alias_key_matches_torch() -> None:
    for v in ALL_VALUES:
        assert is_alias_key(v) == torch._C._dispatch_is_alias_key(TK(v)), v
    assert [int(a) for a in ALIAS_KEYS] == list(range(150, 156))


def test_runtime_keys_in_torch_full_set_order() -> None:
    assert [str(k) for k in RUNTIME_KEYS] == _torch_full_order()
    assert len(RUNTIME_KEYS) == 136
    assert NUM_RUNTIME_ENTRIES == 137


def test_runtime_keys_in_dump_table_order() -> None:
    lib = torch.library.Library("td_h3_keys", "DEF")
    try:
        lib.define("foo(Tensor x) -> Tensor")
        lib.impl("foo", lambda x: x, "CompositeImplicitAutograd")
        dumped = [
            line.split(":")[0]
            for line in torch._C._dispatch_dump_table("td_h3_keys::foo").splitlines()
        ]
    finally:
        lib._destroy()
    order = ["Undefined"] + [str(k) for k in RUNTIME_KEYS]
    positions = [order.index(name) for name in dumped]
    assert len(dumped) > 100
    assert positions == sorted(positions)


def test_is_runtime_key_exactly_the_runtime_keys() -> None:
    assert [v for v in ALL_VALUES if is_runtime_key(v)] == sorted(int(k) for k in RUNTIME_KEYS)


def test_slots_follow_iteration_order() -> None:
    assert slot_of(DispatchKey.Undefined) == 0
    assert key_of_slot(0) is DispatchKey.Undefined
    for i, k in enumerate(RUNTIME_KEYS, start=1):
        assert slot_of(k) == i
        assert key_of_slot(i) is k
    assert slot_of(DispatchKey.PythonDispatcher) == 136


def test_slot_offsets_of_the_spec_table() -> None:
    # Spec 1.2: first slot of each per-backend block and of a few singletons.
    assert slot_of(DispatchKey.CPU) == 1
    assert slot_of(DispatchKey.QuantizedCPU) == 20
    assert slot_of(DispatchKey.SparseCPU) == 38
    assert slot_of(DispatchKey.SparseCsrCPU) == 54
    assert slot_of(DispatchKey.NestedTensorCPU) == 70
    assert slot_of(DispatchKey.BackendSelect) == 86
    assert slot_of(DispatchKey.AutogradOther) == 95
    assert slot_of(DispatchKey.AutogradCPU) == 96
    assert slot_of(DispatchKey.AutogradMeta) == 111
    assert slot_of(DispatchKey.AutogradNestedTensor) == 112


def test_slot_of_error_message() -> None:
    with pytest.raises(DispatchKeyError) as info:
        slot_of(DispatchKey.CompositeImplicitAutograd)
    assert str(info.value) == (
        "slot_of(CompositeImplicitAutograd): only runtime keys and Undefined have a "
        "dispatch-table slot; expand an alias with alias_runtime_keys() first"
    )
    with pytest.raises(DispatchKeyError):
        slot_of(DispatchKey.Dense)


def test_is_included_in_alias_matches_torch_for_every_pair() -> None:
    included = torch._C._dispatch_is_included_in_alias
    for alias in range(1, 156):
        for k in ALL_VALUES:
            assert is_included_in_alias(k, alias) == included(TK(k), TK(alias)), (k, alias)


def test_is_included_in_alias_undefined_alias_rejected() -> None:
    with pytest.raises(RuntimeError):
        torch._C._dispatch_is_included_in_alias(TK.CPU, TK.Undefined)
    with pytest.raises(DispatchKeyError) as info:
        is_included_in_alias(DispatchKey.CPU, DispatchKey.Undefined)
    assert str(info.value) == (
        "alias_runtime_keys(Undefined): Undefined is neither an alias nor a runtime key; "
        "pass an alias key such as CompositeImplicitAutograd"
    )


def test_alias_runtime_keys_match_torch_membership() -> None:
    included = torch._C._dispatch_is_included_in_alias
    for alias in ALIAS_KEYS:
        expected = [k for k in RUNTIME_KEYS if included(TK(int(k)), TK(int(alias)))]
        assert list(alias_runtime_keys(alias)) == expected, alias


def test_alias_runtime_key_counts() -> None:
    counts = {a.name: len(list(alias_runtime_keys(a))) for a in ALIAS_KEYS}
    assert counts == {
        "Autograd": 18,
        "CompositeImplicitAutograd": 103,
        "FuncTorchBatchedDecomposition": 1,
        "CompositeImplicitAutogradNestedTensor": 17,
        "CompositeExplicitAutograd": 69,
        "CompositeExplicitAutogradNonFunctional": 47,
    }


def test_alias_runtime_keys_of_a_runtime_key_is_itself() -> None:
    assert list(alias_runtime_keys(DispatchKey.AutogradXLA)) == [DispatchKey.AutogradXLA]


def test_backends_of_matches_torch() -> None:
    for v in ALL_VALUES:
        expected = torch._C._dispatch_get_backend_keyset_from_autograd(TK(v)).raw_repr()
        assert backends_of(v).raw == expected, v


def test_autograd_key_of_every_component() -> None:
    # Spec 3.3; the CPU, Meta and Lazy rows are also visible on real torch tensors.
    other = {BackendComponent.InvalidBit, BackendComponent.HIPBit, BackendComponent.VEBit}
    for c in BackendComponent:
        got = autograd_key_of(c)
        if c in other:
            assert got is DispatchKey.AutogradOther
        else:
            assert str(got) == "Autograd" + c.name.removesuffix("Bit")
    cpu_keys = repr(torch._C._dispatch_keys(torch.ones(1)))
    meta_keys = repr(torch._C._dispatch_keys(torch.ones(1, device="meta")))
    assert str(autograd_key_of(BackendComponent.CPUBit)) in cpu_keys
    assert str(autograd_key_of(BackendComponent.MetaBit)) in meta_keys


def test_is_backend_key_is_torchs_composite_explicit_membership() -> None:
    # For runtime keys, "backend key" is exactly CompositeExplicitAutograd's expansion.
    included = torch._C._dispatch_is_included_in_alias
    cea = TK.CompositeExplicitAutograd
    for k in RUNTIME_KEYS:
        assert is_backend_key(k) == included(TK(int(k)), cea), k
    assert not is_backend_key(DispatchKey.Undefined)
    assert not any(is_backend_key(a) for a in ALIAS_KEYS)
    assert not is_backend_key(DispatchKey.NestedTensorCPU)


def test_backend_component_values() -> None:
    assert [c.name for c in BackendComponent][1:] == [
        f"{torch._C._dispatch_key_name(TK(v))}Bit" for v in range(49, 65)
    ]
    assert int(BackendComponent.MetaBit) == 16


_RENAMED_BACKEND_ERRORS = """
import torch
lib = torch.library.Library("td_h3_pu1", "DEF")
lib.define("foo(Tensor x) -> Tensor")
lib.impl("foo", lambda x: x, "CPU")
x = torch.ones(1)
torch.utils.rename_privateuse1_backend("npu")
for name in ("PrivateUse1", "SparsePrivateUse1", "QuantizedPrivateUse1", "NestedTensorPrivateUse1"):
    with torch._C._IncludeDispatchKeyGuard(getattr(torch._C.DispatchKey, name)):
        try:
            torch.ops.td_h3_pu1.foo(x)
        except NotImplementedError as e:
            print(name, str(e).split("'")[3])
"""


def test_error_key_name_matches_torch_after_privateuse1_rename() -> None:
    # Renaming is process-global and permanent in torch: observe it in a subprocess.
    out = subprocess.run(
        [sys.executable, "-c", _RENAMED_BACKEND_ERRORS], capture_output=True, text=True, check=True
    )
    seen = dict(line.split() for line in out.stdout.splitlines())
    assert len(seen) == 4
    for name, shown in seen.items():
        assert error_key_name(parse_dispatch_key(name), "npu") == shown


def test_error_key_name_default_is_the_plain_name() -> None:
    for v in ALL_VALUES:
        assert error_key_name(v) == key_name(v)
