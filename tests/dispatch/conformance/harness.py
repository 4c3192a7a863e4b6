"""Run one scenario on torch and on tensordispatch and collect every discrepancy.

After every step both sides are compared: the normalised ``dump`` text exactly, the
normalised ``dump_table`` key by key (row order included), whether the step raised (and
the location-free first clause of the message), and optionally which kernel a call runs
for each probe input. Discrepancies are collected rather than raised one at a time so a
failing scenario reports everything it saw.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .normalise import first_clause, table_diff
from .scenario import (
    Destroy,
    Fallback,
    FallthroughFallback,
    FallthroughImpl,
    Flavour,
    Impl,
    Registration,
    Step,
    debug_of,
)
from .scenarios import Case
from .td_side import TdSide, Undo
from .torch_side import (
    PROBES,
    REDISPATCH_KEYSETS,
    TorchSide,
    probe_keyset,
    redispatch_keyset,
)


@dataclass(slots=True)
class Report:
    """Everything one scenario run found."""

    problems: list[str] = field(default_factory=list)
    calls_compared: int = 0

    def add(self, where: str, what: str) -> None:
        self.problems.append(f"[{where}] {what}")


def resolve_expect(case: Case, flavour: Flavour) -> dict[str, str | None]:
    """Spot checks with kernel names turned into the debug strings of ``flavour``."""
    by_name = {
        s.name: s for s in case.scenario.steps if not isinstance(s, Destroy) and hasattr(s, "name")
    }
    resolved: dict[str, str | None] = {}
    for key, value in case.expect:
        if value == "-":
            resolved[key] = None
            continue
        body, _, label = value.rpartition(" [")
        prefix = "fallthrough " if body.startswith("fallthrough ") else ""
        name = body[len(prefix) :]
        if name in by_name:
            name = debug_of(by_name[name], flavour)
        resolved[key] = f"{prefix}{name} [{label}"
    return resolved


def check_expect(case: Case, flavour: Flavour, table: dict[str, str], side: str) -> list[str]:
    """Spot-check failures of one side's final table."""
    out = []
    for key, want in resolve_expect(case, flavour).items():
        got = table.get(key)
        if got != want:
            out.append(f"{side} spot check {key}: expected {want!r}, got {got!r}")
    return out


def _try_apply(side: TorchSide | TdSide, index: int, step: Registration) -> BaseException | None:
    try:
        side.apply(index, step)
    except (RuntimeError, ValueError, TypeError, NotImplementedError) as e:
        return e
    return None


def run_torch(case: Case, flavour: Flavour) -> dict[str, str]:
    """Apply a scenario to torch alone and return its final normalised table."""
    steps = case.scenario.steps
    with TorchSide(flavour) as t:
        for i, step in enumerate(steps):
            if isinstance(step, Destroy):
                t.destroy(step.index)
                continue
            err = _try_apply(t, i, step)
            if (err is not None) != (i in case.scenario.failing):
                raise AssertionError(f"torch: step {i} {step} raised {err!r}")
        return t.table(steps)


def _compare_step(
    i: int, step: Step, t: TorchSide, o: TdSide, failing: frozenset[int], report: Report
) -> None:
    where = f"step {i} {step}"
    if isinstance(step, Destroy):
        t.destroy(step.index)
        o.destroy(step.index)
        return
    t_err = _try_apply(t, i, step)
    o_err = _try_apply(o, i, step)
    if (t_err is None) != (i not in failing):
        raise AssertionError(f"torch: {where} raised {t_err!r} (scenario is wrong)")
    if (t_err is None) != (o_err is None):
        report.add(where, f"torch raised {t_err!r}, ours raised {o_err!r}")
    elif t_err is not None and o_err is not None:
        if not isinstance(o_err, type(t_err)):
            report.add(where, f"error type: torch {type(t_err).__name__}, ours {o_err!r}")
        want, got = first_clause(str(t_err), t.namespace), first_clause(str(o_err), o.namespace)
        if want != got:
            report.add(where, f"error text: torch {want!r}, ours {got!r}")


def _compare_state(
    where: str, steps: tuple[Step, ...], t: TorchSide, o: TdSide, report: Report
) -> dict[str, str]:
    t_dump, o_dump = t.dump(), o.dump()
    if t_dump != o_dump:
        report.add(where, f"dump differs:\n--- torch\n{t_dump}\n--- ours\n{o_dump}")
    t_table, o_table = t.table(steps), o.table(steps)
    for diff in table_diff(t_table, o_table):
        report.add(where, f"dump_table {diff}")
    try:
        o.check_invariants()
    except Exception as e:  # noqa: BLE001 - any failure is a finding
        report.add(where, f"check_invariants raised {e!r}")
    return o_table


def canonical_order(regs: dict[int, Registration]) -> list[int]:
    """An order in which torch's stored table ends up equal to its computed one.

    torch's incremental refresh (spec 5.6) goes stale only when a kernel that rule 4/6
    reads (a backend kernel, a CEA kernel) changes after the CIA kernel, or on removals.
    Replaying the live registrations without removals and with CIA / catch-all impls last
    (their relative order kept: they share one kernel stack) recomputes every slot CIA
    reaches after everything it depends on is in place. torch's own check cannot tell us
    when a state is stale: ``_dispatch_check_invariants`` compares kernel wrapper pointers,
    and every Python kernel has the same wrapper.
    """

    def last(ix: int) -> bool:
        step = regs[ix]
        cia = ("", "CompositeImplicitAutograd")
        return isinstance(step, (Impl, FallthroughImpl)) and step.key in cia

    return sorted(regs, key=lambda ix: (last(ix), ix))


def _compare_calls(
    where: str,
    live: dict[int, Registration],
    t: TorchSide,
    o: TdSide,
    hooks: set[str],
    report: Report,
) -> None:
    # a replay recreates a state reached legally; the order change must not trip
    # torch.library's order-sensitive Meta rule, so only the dispatcher's rules apply
    with TorchSide("py", python_rules=False) as fresh:
        fresh.ran = t.ran  # the live fallbacks are t's kernels and record into t.ran
        for ix in canonical_order(live):
            # process-wide fallbacks are already live in torch (the main side holds them)
            if not isinstance(live[ix], (Fallback, FallthroughFallback)):
                fresh.apply(ix, live[ix])
        if not fresh.has_schema():
            return
        if not fresh.stored_table_is_fresh():
            raise AssertionError(f"{where}: torch replay left a stale table")
        for probe in PROBES:
            want = fresh.call(probe)
            got = o.call(probe_keyset(probe), probe.exclude)
            if got.startswith("ran ") and got[4:].split(" ")[0] in hooks:
                got = "ran <unrecorded>"
            report.calls_compared += 1
            if want != got:
                report.add(where, f"call on {probe.name}: torch {want}, ours {got}")
        for names in REDISPATCH_KEYSETS:
            want = fresh.redispatch(names)
            got = o.redispatch(redispatch_keyset(names).raw_repr())
            if got.startswith("ran ") and got[4:].split(" ")[0] in hooks:
                got = "ran <unrecorded>"
            report.calls_compared += 1
            if want != got:
                report.add(where, f"call redispatch {names}: torch {want}, ours {got}")


def run_both(case: Case, flavour: Flavour, *, calls: bool = False) -> Report:
    """Run ``case`` on both sides, comparing after the initial state and every step."""
    scenario = case.scenario
    steps = scenario.steps
    hooks = {s.name for s in steps if isinstance(s, Impl) and s.key == ""}
    report = Report()
    # the two flavours also alternate how our side undoes a step: Library._destroy() for
    # "py", the registration handle's remove() (then _destroy(), a no-op) for "hook"
    undo: Undo = "handle" if flavour == "hook" else "destroy"
    with TorchSide(flavour) as t, TdSide(flavour, undo) as o:
        _compare_state("initial", steps, t, o, report)
        o_table: dict[str, str] = {}
        live: dict[int, Registration] = {}
        for i, step in enumerate(steps):
            _compare_step(i, step, t, o, scenario.failing, report)
            if isinstance(step, Destroy):
                live.pop(step.index, None)
            elif i not in scenario.failing:
                live[i] = step
            where = f"after step {i} {step}"
            o_table = _compare_state(where, steps, t, o, report)
            if calls:
                _compare_calls(where, live, t, o, hooks, report)
        for problem in check_expect(case, flavour, t.table(steps), "torch"):
            raise AssertionError(f"{case}: scenario expectation wrong against torch: {problem}")
        report.problems.extend(check_expect(case, flavour, o_table, "ours"))
    return report


_REPORTS: dict[tuple[str, str], Report] = {}


def run_cached(case: Case, flavour: Flavour) -> Report:
    """``run_both`` once per (case, flavour), with calls for the "py" flavour; the table
    tests and the call tests read the same run, each asserting its own part."""
    key = (str(case), flavour)
    if key not in _REPORTS:
        _REPORTS[key] = run_both(case, flavour, calls=flavour == "py")
    return _REPORTS[key]
