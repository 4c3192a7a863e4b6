"""Lazy tensors never carry the conjugate / negative bit, as torch's LTC: functionalization
replays _conj / _neg_view as their *_copy operators, which run through the eager fallback."""

from __future__ import annotations

import torch

import tensordispatch as td
from tensordispatch import lazy

from .conftest import td_counters, torch_counters


def test_neg_view_of_a_lazy_tensor_is_materialized_as_torchs() -> None:
    got = []
    for m, counters in ((torch, torch_counters), (td, td_counters)):
        n = m.tensor([1.0, 2.0]).to("lazy")._neg_view()
        values = ((n * 2).cpu().tolist(), n.cpu().tolist(), n.is_neg(), n.cpu().is_neg())
        got.append((values, counters("aten::_neg_view_copy")))
    assert got[1] == got[0]
    assert got[1][1] == {"aten::_neg_view_copy": 1}


def test_conj_of_a_lazy_tensor_has_no_bit_and_torchs_values() -> None:
    got = []
    for m in (torch, td):
        c = m.tensor([1j, 3 + 1j]).to("lazy").conj()
        got.append((c.is_conj(), (c * 2).cpu().tolist(), c.cpu().tolist()))
    assert got[1] == got[0]
    assert lazy.metrics.counter_value("aten::_conj_copy") == 1


def test_a_conj_cpu_tensor_moved_or_copied_to_lazy_is_resolved_as_torch() -> None:
    got = []
    for m in (torch, td):
        c = m.tensor([1 + 2j, 3j]).conj()
        moved = c.to("lazy")
        copied = m.zeros(2, dtype=m.complex64).to("lazy")
        copied.copy_(c)
        got.append([(t.is_conj(), t.cpu().tolist()) for t in (moved, copied)])
    assert got[1] == got[0]
