"""Dispatch tables and canonical state match torch 2.13 after every step of every scenario."""

from __future__ import annotations

import pytest

from . import known
from .harness import run_cached, run_torch
from .scenario import Flavour
from .scenarios import CASES, Case

# both dispatchers warn (once per process) when a second kernel lands on the same key
pytestmark = pytest.mark.filterwarnings("ignore:Warning only once for all operators")


def test_catalogue_has_at_least_40_scenarios_with_unique_names() -> None:
    names = [str(c) for c in CASES]
    assert len(names) >= 40
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("flavour", ["py", "hook"])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_spot_checks_hold_on_torch(case: Case, flavour: Flavour) -> None:
    # Guards the catalogue itself: every expectation is true of torch 2.13.
    from .harness import check_expect

    assert check_expect(case, flavour, run_torch(case, flavour), "torch") == []


@pytest.mark.parametrize("flavour", ["py", "hook"])
@pytest.mark.parametrize("case", known.params(CASES, known.TABLE))
def test_state_matches_torch_after_every_step(case: Case, flavour: Flavour) -> None:
    report = run_cached(case, flavour)
    problems = [p for p in report.problems if "call on" not in p]
    assert not problems, "\n".join(problems)
