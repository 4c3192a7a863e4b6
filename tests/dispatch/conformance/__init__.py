"""Conformance of the dispatcher against torch 2.13 (issue 3, sections 6-7).

Layout:
- scenario.py          the step vocabulary (Define, Impl, FallthroughImpl, Fallback,
                       FallthroughFallback, Destroy) and the debug strings both sides use
- scenarios.py         the hand-written catalogue, each case with spot checks of spec 5
- random_scenarios.py  seeded random scenarios and registration sets
- torch_side.py        applies steps to torch (raw library binding + C++ test hooks), probes
- td_side.py           applies steps to tensordispatch through its public API
- normalise.py         the only rewrites applied before comparing (Note [Conformance
                       normalisations])
- harness.py           runs a scenario on both sides, comparing after every step
- permute.py           order independence: ctor x dtor permutations, per-subset states
- known.py             strict xfails for known discrepancies (empty when there are none)
- report.py            developer tool: ``python3 -m conformance.report [--calls]``
"""
