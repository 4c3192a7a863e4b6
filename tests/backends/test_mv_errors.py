"""mv's errors and meta dtype are torch's (its addmv checks on CPU, shorter ones on meta)."""

from __future__ import annotations

import pytest
import torch

import tensordispatch as td

CASES = [
    ((4, 16), "float32", (15,), "float64"),
    ((4, 16), "float32", (15,), "float32"),
    ((4, 16), "float64", (16,), "float32"),
    ((4, 16), "float32", (16,), "float64"),
    ((4, 16), "int64", (16,), "int64"),
    ((4, 16), "float32", (16, 2), "float32"),
    ((4,), "float32", (4,), "float32"),
    ((0, 3), "float32", (3,), "float32"),
]


def _run(lib, device, a, da, b, db):  # type: ignore[no-untyped-def]
    x = lib.ones(*a, dtype=getattr(lib, da), device=device)
    v = lib.ones(*b, dtype=getattr(lib, db), device=device)
    try:
        r = x.mv(v)
    except RuntimeError as e:
        return ("error", str(e))
    values = r.tolist() if device == "cpu" else None
    return ("ok", tuple(r.shape), str(r.dtype).rsplit(".", 1)[-1], values)


@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize(("a", "da", "b", "db"), CASES)
def test_mv_matches_torch(device: str, a: tuple, da: str, b: tuple, db: str) -> None:
    assert _run(td, device, a, da, b, db) == _run(torch, device, a, da, b, db)
