"""copy_'s memory-overlap rules (torch's TensorIterator checks), compared with torch."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import tensordispatch as td

CASES: dict[str, Callable[[Any, Any], Any]] = {
    "transposed source, same memory": lambda L, x: x.copy_(x.t()),
    "itself": lambda L, x: x.copy_(x),
    "other row": lambda L, x: x[0].copy_(x[1]),
    "shifted by one element": lambda L, x: x.view(-1)[1:].copy_(x.view(-1)[:3]),
    "non-dense columns (too hard to decide)": lambda L, x: x[:, :1].copy_(x[:, 1:]),
    "expanded destination": lambda L, x: L.zeros(1).expand(3).copy_(L.ones(3)),
    "same elements, another view": lambda L, x: x.view(4).copy_(x.view(4)),
    "expanded source": lambda L, x: x.copy_(L.ones(1).expand(2, 2)),
}


def _run(lib: Any, case: Callable[[Any, Any], Any]) -> tuple[str, Any]:
    x = lib.arange(4.0).view(2, 2)
    try:
        case(lib, x)
    except RuntimeError as e:
        return "error", str(e)
    return "ok", x.tolist()


@pytest.mark.parametrize("name", CASES)
def test_copy_overlap_matches_torch(name: str) -> None:
    assert _run(td, CASES[name]) == _run(torch, CASES[name])


def test_partial_overlap_message() -> None:
    x = td.arange(4.0).view(2, 2)
    with pytest.raises(RuntimeError) as info:
        x.copy_(x.t())
    assert str(info.value) == (
        "unsupported operation: some elements of the input tensor and the written-to tensor "
        "refer to a single memory location. Please clone() the tensor before performing the "
        "operation."
    )
    assert x.tolist() == [[0.0, 1.0], [2.0, 3.0]]  # nothing written
