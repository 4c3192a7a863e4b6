"""functionalize over the conjugate and negative bits against torch.func.functionalize: the
wrapper of a conjugate view carries the bit, mutations through it reach the input, and
remove='mutations_and_views' replays the views as _conj_copy (no bit), as torch's."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import tensordispatch as td

X = [[1j, 2j], [3 + 1j, 4 + 0j]]


def _program(x: Any) -> Any:
    y = x.conj()
    z = y * 2
    y.add_(1)
    return z, y.is_conj()  # (torch's functionalize refuses y.imag: view_as_real of a conj)


@pytest.mark.parametrize("remove", ["mutations", "mutations_and_views"])
def test_program_matches_torch(remove: str) -> None:
    got = []
    for m in (torch, td):
        x = m.tensor(X)
        z, is_conj = m.func.functionalize(_program, remove=remove)(x)
        got.append((z.tolist(), is_conj, x.tolist()))
    assert got[1] == got[0]


def test_negative_view_matches_torch() -> None:
    got = []
    for m in (torch, td):
        x = m.tensor([1.0, 2.0])
        r = m.func.functionalize(lambda t: t._neg_view() * 2)(x)
        got.append(r.tolist())
    assert got[1] == got[0] == [-2.0, -4.0]
