"""Lazy tensors made in inference_mode are inference tensors, as torch._lazy's (every tensor
allocated in the mode is one); compared with torch._lazy on the TorchScript backend."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import tensordispatch as td


def _flags(lib: Any) -> tuple[bool, ...]:
    x = lib.ones(3).to("lazy")
    with lib.inference_mode():
        traced = x + 1  # a traced result
        factory = lib.ones(3, device="lazy")
        moved = lib.ones(3).to("lazy")  # a transfer
    after = traced * 2  # made outside the mode from an inference tensor
    return (
        traced.is_inference(), factory.is_inference(), moved.is_inference(),
        x.is_inference(), after.is_inference(),
    )  # fmt: skip


def test_lazy_tensors_made_in_inference_mode_are_inference_tensors() -> None:
    assert _flags(td) == _flags(torch) == (True, True, True, False, False)


def test_inplace_on_a_lazy_inference_tensor_outside_the_mode_raises() -> None:
    messages = []
    for lib in (torch, td):
        with lib.inference_mode():
            y = lib.ones(3).to("lazy") + 1
        with pytest.raises(RuntimeError) as info:
            y.add_(1)
        messages.append(str(info.value).split(".")[0])
    expected = "Inplace update to inference tensor outside InferenceMode is not allowed"
    assert messages == [expected, expected]


def test_values_computed_in_inference_mode_are_the_eager_ones() -> None:
    found = []
    for lib in (torch, td):
        x = lib.arange(4.0).to("lazy")
        with lib.inference_mode():
            y = (x * 3 + 1).cpu()
        found.append((y.tolist(), y.is_inference()))
    assert found[1] == found[0] == ([1.0, 4.0, 7.0, 10.0], True)
