"""inference_mode against torch 2.13 (grad_mode.py): torch's thread-local include/exclude
sets (spec 4.4), and in-place writes to normal tensors inside it still bump versions."""

from __future__ import annotations

from typing import Any

import torch

import tensordispatch as td
from tensordispatch.dispatch.tls import tls_local_exclude_set, tls_local_include_set


def test_inference_mode_sets_torchs_thread_local_key_sets() -> None:
    with torch.inference_mode():
        theirs = (
            str(torch._C._dispatch_tls_local_include_set()),
            str(torch._C._dispatch_tls_local_exclude_set()),
        )
    with td.inference_mode():
        ours = (str(tls_local_include_set()), str(tls_local_exclude_set()))
    assert ours[0] == theirs[0] == "DispatchKeySet(BackendSelect)"

    # the same keys (our printout of the Autocast keys may order them differently)
    def keys(s: str) -> set[str]:
        return set(s.removeprefix("DispatchKeySet(").removesuffix(")").split(", "))

    assert keys(ours[1]) == keys(theirs[1])


def test_inference_mode_false_inside_restores_the_normal_key_sets() -> None:
    before = (tls_local_include_set(), tls_local_exclude_set())
    with td.inference_mode(), td.inference_mode(False):
        inner = (tls_local_include_set(), tls_local_exclude_set())
    with torch.inference_mode(), torch.inference_mode(False):
        torch_inner = str(torch._C._dispatch_tls_local_include_set())
    assert inner == before
    assert str(inner[0]) == torch_inner == "DispatchKeySet(BackendSelect, ADInplaceOrView)"
    assert (tls_local_include_set(), tls_local_exclude_set()) == before


def _grad_modes(lib: Any) -> tuple[bool, bool]:
    with lib.no_grad(), lib.autograd.grad_mode.inference_mode(False):
        first = lib.is_grad_enabled()
    with lib.autograd.grad_mode.inference_mode(), lib.autograd.grad_mode.inference_mode(False):
        second = lib.is_grad_enabled()
    return (first, second)


def test_inference_mode_false_enables_grad_mode() -> None:
    assert _grad_modes(td) == _grad_modes(torch) == (True, True)


def _versions(lib: Any) -> tuple[int, ...]:
    y = lib.ones(3)
    with lib.inference_mode():
        y.add_(1)
        first = y._version
        v = y[:2]
        v.mul_(2)
    return (first, y._version, v._version)


def test_inplace_on_a_normal_tensor_inside_bumps_its_version() -> None:
    assert _versions(td) == _versions(torch) == (1, 2, 2)


def _written_inside(lib: Any) -> tuple[str, int]:
    x = lib.ones(3, requires_grad=True).clone()
    with lib.inference_mode():
        x.mul_(2)
    return (type(x.grad_fn).__name__, x._version)


def test_inplace_inside_records_nothing_but_bumps() -> None:
    assert _written_inside(td) == _written_inside(torch) == ("CloneBackward0", 1)


def test_top_level_is_inference_mode_enabled_as_torch() -> None:
    def states(m: Any) -> list[bool]:
        seen = [m.is_inference_mode_enabled()]
        with m.inference_mode():
            seen.append(m.is_inference_mode_enabled())
            with m.inference_mode(False):
                seen.append(m.is_inference_mode_enabled())
        seen.append(m.is_inference_mode_enabled())
        return seen

    assert states(td) == states(torch) == [False, True, False, False]
