"""view's plans for contiguous sources (Note [Views of contiguous tensors by plan] in
backends/views.py): the same views as torch on the planned calls, each call's own offset
and data, the checks kept for non-contiguous sources and bad sizes."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import tensordispatch as td
from tensordispatch.backends import views

CASES: list[tuple[Any, Any]] = [
    (lambda m: m.arange(16.0).view(4, 4), (16,)),
    (lambda m: m.arange(16.0).view(4, 4), (-1,)),
    (lambda m: m.arange(16.0).view(4, 4), (2, -1, 2)),
    (lambda m: m.arange(32.0).view(8, 4)[4:], (2, 8)),  # an offset
    (lambda m: m.arange(6.0).view(1, 6), (6, 1)),
    (lambda m: m.zeros(0, 3), (3, 0)),
    (lambda m: m.ones(()), (1, 1)),
]


def _outcome(t: Any, size: Any) -> Any:
    try:
        r = t.view(*size)
    except Exception as e:  # noqa: BLE001 - compared
        return type(e).__name__, str(e)
    return r.tolist(), tuple(r.shape), r.stride(), r.storage_offset()


@pytest.mark.parametrize("case", range(len(CASES)))
def test_planned_views_match_torch_every_time(case: int) -> None:
    build, size = CASES[case]
    for _ in range(3):  # the first call plans, the next ones use the plan
        assert _outcome(build(td), size) == _outcome(build(torch), size)


def test_a_plan_uses_each_calls_offset_and_data() -> None:
    a = td.arange(32.0).view(8, 4)
    first, second = a[0:2].view(8), a[6:8].view(8)
    assert first.tolist() == list(range(8)) and second.tolist() == list(range(24, 32))
    assert second.storage_offset() == 24 and second._base is a._base


def test_a_non_contiguous_source_with_a_planned_shape_still_errors() -> None:
    td.arange(16.0).view(4, 4).view(16)  # plans ((4, 4), (16,))
    with pytest.raises(RuntimeError) as ours:
        td.arange(16.0).view(4, 4).t().view(16)
    with pytest.raises(RuntimeError) as theirs:
        torch.arange(16.0).view(4, 4).t().view(16)
    assert str(ours.value) == str(theirs.value)


def test_a_bad_size_is_never_planned() -> None:
    for _ in range(2):
        with pytest.raises(RuntimeError) as ours:
            td.arange(6.0).view(2, 3).view(4, -1)
        with pytest.raises(RuntimeError) as theirs:
            torch.arange(6.0).view(2, 3).view(4, -1)
        assert str(ours.value) == str(theirs.value)
    assert ((2, 3), (4, -1)) not in views._VIEW_PLANS


def test_view_plans_are_bounded() -> None:
    for n in range(1, 4200):
        assert td.zeros(n).view(1, n).shape == (1, n)
    assert len(views._VIEW_PLANS) <= 4096
