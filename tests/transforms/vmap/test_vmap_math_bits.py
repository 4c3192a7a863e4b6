"""vmap over the conjugate and negative bits against torch.func.vmap: the BatchedTensor of a
conjugate view carries the bit (a direct rule for _conj / _neg_view), results resolve it."""

from __future__ import annotations

import warnings
from typing import Any

import torch

import tensordispatch as td

X = [[1j, 2j], [3 + 1j, 4 + 0j]]


def _both(fn: Any) -> list[Any]:
    out = []
    for m in (torch, td):
        seen: list[bool] = []
        r = m.func.vmap(lambda t, seen=seen: fn(t, seen))(m.tensor(X))
        out.append((r.tolist(), r.is_conj(), r.is_neg(), seen))
    return out


def test_conj_inside_vmap_is_a_conjugate_view_as_torch() -> None:
    got = _both(lambda t, seen: (seen.append(t.conj().is_conj()), t.conj())[1])
    assert got[1] == got[0]
    assert got[1][1] is True and got[1][3] == [True]


def test_ops_on_conj_views_inside_vmap_match_torch() -> None:
    got = _both(lambda t, seen: t.conj() * 2 + t.conj().sum())  # (torch has no rule for imag's
    # _neg_view under vmap)
    assert got[1] == got[0]


def test_conj_input_to_vmap_matches_torch() -> None:
    got = []
    for m in (torch, td):
        seen: list[bool] = []

        def double(t: Any, seen: list[bool] = seen) -> Any:
            seen.append(t.is_conj())
            return t * 2

        r = m.func.vmap(double)(m.tensor(X).conj())
        got.append((r.tolist(), seen))
    assert got[1] == got[0]
    assert got[1][1] == [True]


def test_conj_has_a_batching_rule() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the for-loop fallback warns
        td.vmap(lambda t: t.conj())(td.tensor(X))
