"""An operator with no kernels resolves to the same global fallbacks as in torch 2.13."""

from __future__ import annotations

from . import known
from .scenario import Define
from .td_side import TdSide
from .torch_side import TorchSide

STEPS = (Define(),)


def _tables() -> tuple[dict[str, str], dict[str, str]]:
    with TorchSide("py") as t, TdSide("py") as o:
        t.apply(0, STEPS[0])
        o.apply(0, STEPS[0])
        return t.table(STEPS), o.table(STEPS)


def test_torch_has_38_global_fallback_rows() -> None:
    with TorchSide("py") as t:
        t.apply(0, STEPS[0])
        torch_table = t.table(STEPS)
    assert len(torch_table) == 38
    assert set(torch_table.values()) == {
        "<global> [backend fallback]",
        "fallthrough <global> [backend fallback]",
    }


@known.xfail_if_known("fallback_rows")
def test_same_keys_in_the_same_order() -> None:
    torch_table, ours = _tables()
    assert list(ours) == list(torch_table)


@known.xfail_if_known("fallback_fallthrough")
def test_same_fallthrough_fallbacks() -> None:
    torch_table, ours = _tables()
    assert {k: v for k, v in ours.items() if k in torch_table} == {
        k: v for k, v in torch_table.items() if k in ours
    }
