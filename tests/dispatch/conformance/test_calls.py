"""The kernel a call runs matches torch 2.13 for tensors of several backends.

torch side: real tensors (CPU, Meta, sparse, quantized, nested, MKLDNN), CPU tensors with
XLA / CUDA / MTIA included in TLS, and CPU / Meta tensors with AutogradCPU / CPU excluded in
TLS; our side: a stand-in carrying torch's raw key-set word for the same input, under our
own exclude guard. Each kernel records its name. Also ``op.redispatch(keyset, x)`` for a
list of key sets (spec 10.2), compared the same way. torch calls read its stored table, which goes
stale in some orders (spec 5.6), so torch's side of every comparison is a fresh replay of
the live registrations in an order that keeps it exact (``harness.canonical_order``).
"""

from __future__ import annotations

import pytest

from . import known
from .harness import run_cached
from .scenario import Define
from .scenarios import CASES, Case

# both dispatchers warn (once per process) when a second kernel lands on the same key
pytestmark = pytest.mark.filterwarnings("ignore:Warning only once for all operators")


@pytest.mark.parametrize("case", known.params(CASES, known.CALLS))
def test_calls_run_the_same_kernel_as_torch(case: Case) -> None:
    report = run_cached(case, "py")
    has_def = any(isinstance(step, Define) for step in case.scenario.steps)
    assert report.calls_compared > 0 or not has_def
    calls = [p for p in report.problems if "call on" in p]
    assert not calls, "\n".join(calls)
