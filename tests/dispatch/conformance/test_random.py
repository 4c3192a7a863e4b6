"""Seeded random scenarios against torch 2.13: tables, canonical state and calls after every
step, and random registration sets through the permutation harness."""

from __future__ import annotations

import random

import pytest

from .harness import run_both
from .permute import commute
from .random_scenarios import random_cases, random_registration_set
from .scenario import Flavour

# both dispatchers warn (once per process) when a second kernel lands on the same key
pytestmark = pytest.mark.filterwarnings("ignore:Warning only once for all operators")

CHUNKS = 4
PER_CHUNK = 20


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_random_scenarios_match_torch(chunk: int) -> None:
    problems: list[str] = []
    calls = 0
    flavours: tuple[Flavour, ...] = ("py", "hook")
    for case in random_cases(seed=1000 + chunk, count=PER_CHUNK):
        for flavour in flavours:
            report = run_both(case, flavour, calls=flavour == "py")
            calls += report.calls_compared
            problems += [f"{case} {case.scenario.steps} [{flavour}] {p}" for p in report.problems]
    assert calls > 0
    assert not problems, "\n".join(problems[:20])


@pytest.mark.parametrize("seed", range(3))
def test_random_registration_sets_commute(seed: int) -> None:
    regs = random_registration_set(random.Random(seed), 5)
    result = commute(regs, samples=60, seed=seed)
    assert set(result.torch_states) == set(result.states)
    assert len(result.states) > len(regs)
