"""Our dispatch-key vocabulary for native_functions.yaml equals torchgen's tables."""

from __future__ import annotations

from torchgen import model as tgm

from tensordispatch.schema import native_keys as nk


def test_all_dispatch_key_names_match_torchgen_in_order() -> None:
    assert list(nk.ALL_DISPATCH_KEYS) == list(tgm.DispatchKey.__members__)


def test_native_allow_list_matches_torchgen_in_order() -> None:
    assert list(nk.NATIVE_DISPATCH_KEYS) == [str(k) for k in tgm.dispatch_keys]


def test_structured_and_ufunc_keys_match_torchgen() -> None:
    assert nk.STRUCTURED_DISPATCH_KEYS == {str(k) for k in tgm.STRUCTURED_DISPATCH_KEYS}
    assert set(nk.UFUNC_DISPATCH_KEYS) == {str(k) for k in tgm.UFUNC_DISPATCH_KEYS}


def test_device_guard_keys_are_torchgens_cuda_and_xpu_keys() -> None:
    expected = {
        name
        for name, key in tgm.DispatchKey.__members__.items()
        if tgm.is_cuda_dispatch_key(key) or tgm.is_xpu_dispatch_key(key)
    }
    assert expected == nk.DEVICE_GUARD_DISPATCH_KEYS


def test_composite_keys_are_torchgens_generic_keys() -> None:
    expected = {
        name
        for name, key in tgm.DispatchKey.__members__.items()
        if tgm.is_generic_dispatch_key(key)
    }
    assert expected == nk.COMPOSITE_DISPATCH_KEYS


def test_key_predicates() -> None:
    assert (nk.is_dispatch_key("AutogradXLA"), nk.is_dispatch_key("Cuda")) == (True, False)
    assert (nk.is_native_dispatch_key("XLA"), nk.is_native_dispatch_key("ZeroTensor")) == (
        False,
        True,
    )
