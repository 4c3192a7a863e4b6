"""Devices against torch.device, and the device-type registry."""

from __future__ import annotations

import pickle

import pytest
import torch

import tensordispatch.tensor as tdt
from tensordispatch.dispatch.keys import BackendComponent
from tensordispatch.dispatch.keyset import DispatchKeySet, backend_tensor_keyset

SPECS: list[tuple[object, ...]] = [
    ("cpu",),
    ("meta",),
    ("lazy",),
    ("xla",),
    ("privateuseone",),
    ("cpu:0",),
    ("lazy:3",),
    ("cpu", 0),
    ("cuda", 1),
    ("meta", None),
]


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_repr_str_type_index_match_torch(spec: tuple[object, ...]) -> None:
    ours, theirs = tdt.device(*spec), torch.device(*spec)  # type: ignore[arg-type]
    assert (repr(ours), str(ours), ours.type, ours.index) == (
        repr(theirs),
        str(theirs),
        theirs.type,
        theirs.index,
    )


def test_equality_matches_torch() -> None:
    for a in SPECS:
        for b in SPECS:
            ours = tdt.device(*a) == tdt.device(*b)  # type: ignore[arg-type]
            theirs = torch.device(*a) == torch.device(*b)  # type: ignore[arg-type]
            assert ours == theirs, (a, b)


def test_device_from_device_and_keywords() -> None:
    cpu = tdt.device("cpu")
    assert tdt.device(cpu) == cpu
    assert tdt.device(type="lazy", index=1) == tdt.device("lazy:1")


def test_equal_devices_hash_equal_and_pickle() -> None:
    assert hash(tdt.device("cpu", 0)) == hash(tdt.device("cpu:0"))
    assert pickle.loads(pickle.dumps(tdt.device("lazy:2"))) == tdt.device("lazy", 2)


def test_device_is_immutable() -> None:
    with pytest.raises(AttributeError):
        tdt.device("cpu").type = "meta"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("name", "component"),
    [
        ("cpu", BackendComponent.CPUBit),
        ("meta", BackendComponent.MetaBit),
        ("lazy", BackendComponent.LazyBit),
        ("xla", BackendComponent.XLABit),
        ("privateuseone", BackendComponent.PrivateUse1Bit),
    ],
)
def test_device_type_maps_to_backend_component_and_key_set(
    name: str, component: BackendComponent
) -> None:
    dev = tdt.device(name)
    assert tdt.backend_component_of(dev) is component
    assert dev._key_set == backend_tensor_keyset(component).raw


def test_cpu_device_key_set_is_torchs() -> None:
    keys = DispatchKeySet.from_raw(tdt.device("cpu")._key_set)
    assert repr(keys) == "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)"
    # torch's plain CPU tensor carries the same keys
    assert repr(torch._C._dispatch_keys(torch.ones(1))) == repr(keys)


def test_meta_device_key_set_is_torchs() -> None:
    keys = DispatchKeySet.from_raw(tdt.device("meta")._key_set)
    assert repr(torch._C._dispatch_keys(torch.ones(1, device="meta"))) == repr(keys)


def test_unknown_device_type_error() -> None:
    with pytest.raises(RuntimeError) as info:
        tdt.device("foo")
    assert str(info.value) == (
        "device('foo'): unknown device type 'foo'; expected one of cpu, cuda, ipu, xpu, hip, "
        "ve, maia, xla, lazy, mps, meta, hpu, mtia, privateuseone, or register it with "
        "register_device_type"
    )
    with pytest.raises(RuntimeError):
        torch.device("foo")


@pytest.mark.parametrize("spec", ["cpu:x", "cpu:-1", "cpu:0:1", "", ":0"])
def test_invalid_device_string_error(spec: str) -> None:
    with pytest.raises(RuntimeError) as info:
        tdt.device(spec)
    assert str(info.value) == (
        f"device({spec!r}): invalid device string; expected 'type' or 'type:index' with a "
        "non-negative integer index, such as 'cpu' or 'lazy:0'"
    )
    with pytest.raises(RuntimeError):
        torch.device(spec)


def test_negative_index_error() -> None:
    with pytest.raises(RuntimeError) as info:
        tdt.device("cpu", -1)
    assert str(info.value) == (
        "device('cpu', -1): a device index must not be negative; pass an index >= 0 or None"
    )
    with pytest.raises(RuntimeError):
        torch.device("cpu", -1)


def test_non_int_index_error() -> None:
    with pytest.raises(TypeError) as info:
        tdt.device("cpu", 0.5)  # type: ignore[arg-type]
    assert str(info.value) == (
        "device('cpu', 0.5): the index must be an int (given float); pass an int or None"
    )
    with pytest.raises(TypeError):
        torch.device("cpu", 0.5)  # type: ignore[call-overload]


def test_index_given_twice_error() -> None:
    with pytest.raises(RuntimeError) as info:
        tdt.device("cpu:0", 1)
    assert str(info.value) == (
        "device('cpu:0', 1): the index is given twice (in the string and as an argument); "
        "pass it once"
    )


def test_non_string_error() -> None:
    with pytest.raises(TypeError) as info:
        tdt.device(3)  # type: ignore[arg-type]
    assert str(info.value) == (
        "device(): expected a device type string such as 'cpu' or a device (given int); "
        "pass device('cpu')"
    )


def test_register_device_type_and_remove() -> None:
    handle = tdt.register_device_type("npu", BackendComponent.PrivateUse1Bit)
    try:
        dev = tdt.device("npu:0")
        assert dev._key_set == backend_tensor_keyset(BackendComponent.PrivateUse1Bit).raw
        assert "npu" in tdt.device_types()
    finally:
        handle.remove()
    assert "npu" not in tdt.device_types()
    with pytest.raises(RuntimeError):
        tdt.device("npu")


def test_register_device_type_twice_is_an_error() -> None:
    with pytest.raises(ValueError) as info:
        tdt.register_device_type("lazy", BackendComponent.PrivateUse1Bit)
    assert str(info.value) == (
        "register_device_type('lazy'): the device type is already registered for LazyBit; "
        "remove the earlier registration first"
    )


def test_register_device_type_needs_a_real_component() -> None:
    with pytest.raises(ValueError) as info:
        tdt.register_device_type("npu", BackendComponent.InvalidBit)
    assert str(info.value) == (
        "register_device_type('npu', <BackendComponent.InvalidBit: 0>): the component must "
        "be a BackendComponent other than InvalidBit; pass e.g. BackendComponent.PrivateUse1Bit"
    )
    assert "npu" not in tdt.device_types()


def test_register_device_type_rejects_bad_names() -> None:
    with pytest.raises(ValueError) as info:
        tdt.register_device_type("npu:0", BackendComponent.PrivateUse1Bit)
    assert str(info.value) == (
        "register_device_type('npu:0'): a device type must be an identifier without an "
        "index; pass a name such as 'npu'"
    )
