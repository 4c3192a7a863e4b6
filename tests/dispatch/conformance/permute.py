"""Registration-order independence (spec 6.9, 8.1): our version of torch's commute harness.

For a list of up to five registrations, ``commute`` runs ctor permutations x dtor
permutations (all of them up to four registrations, a seeded sample beyond) on
tensordispatch. After every step the observable state, ``(dump, dump_table)`` normalised,
is keyed by the *set* of active registrations: the first path to reach a set defines the
expectation and every other path must reproduce it exactly. A registration that raises
must leave the state exactly as before, and its error text (location-free first clause)
must not depend on the path either. Optionally each set's state is also compared with
torch's state for the same set (applied once, in index order: it only has to be computed
once per set, which keeps torch affordable).
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field
from typing import Literal

from .normalise import first_clause
from .scenario import Registration
from .td_side import TdSide, Undo
from .torch_side import TorchSide

State = tuple[str, tuple[tuple[str, str], ...]]
EMPTY: State = ("", ())


@dataclass(slots=True)
class Commute:
    """Shared expectations of one ``commute`` call."""

    regs: tuple[Registration, ...]
    compare_torch: bool
    states: dict[frozenset[int], tuple[State, str]] = field(default_factory=dict)
    errors: dict[frozenset[int], tuple[str, str]] = field(default_factory=dict)
    torch_states: dict[frozenset[int], State] = field(default_factory=dict)
    torch_errors: dict[frozenset[int], str] = field(default_factory=dict)
    runs: int = 0
    checks: int = 0

    def torch_state(self, active: frozenset[int]) -> State:
        if active not in self.torch_states:
            # a state replay: torch.library's order-sensitive Meta rule does not apply
            with TorchSide("py", python_rules=False) as t:
                for ix in sorted(active):
                    t.apply(ix, self.regs[ix])
                self.torch_states[active] = (t.dump(), tuple(t.table(self.regs).items()))
        return self.torch_states[active]

    def torch_error(self, regs: frozenset[int]) -> str:
        """First clause of the error torch raises applying ``regs`` in index order."""
        if regs not in self.torch_errors:
            with TorchSide("py") as t:
                try:
                    for ix in sorted(regs):
                        t.apply(ix, self.regs[ix])
                except RuntimeError as e:
                    self.torch_errors[regs] = first_clause(str(e), t.namespace)
                else:
                    self.torch_errors[regs] = "<no error>"
        return self.torch_errors[regs]


def _state(o: TdSide, regs: tuple[Registration, ...]) -> State:
    return (o.dump(), tuple(o.table(regs).items()))


def _explain(want: State, got: State) -> str:
    if want[0] != got[0]:
        return f"dump:\n--- expected\n{want[0]}\n--- actual\n{got[0]}"
    w, g = dict(want[1]), dict(got[1])
    diffs = [f"{k}: {w.get(k)!r} vs {g.get(k)!r}" for k in {**w, **g} if w.get(k) != g.get(k)]
    return "dump_table: " + "; ".join(sorted(diffs)) if diffs else "row order"


def _check(c: Commute, o: TdSide, active: frozenset[int], provenance: str) -> None:
    got = _state(o, c.regs)
    c.checks += 1
    want, first = c.states.setdefault(active, (got, provenance))
    if got != want:
        raise AssertionError(
            f"order dependence for set {sorted(active)}: expected from {first}, actual from "
            f"{provenance}\n{_explain(want, got)}"
        )
    if c.compare_torch and got != c.torch_state(active):
        raise AssertionError(
            f"set {sorted(active)} differs from torch ({provenance})\n"
            f"{_explain(c.torch_state(active), got)}"
        )


def run_ops(c: Commute, ctor: tuple[int, ...], dtor: tuple[int, ...], undo: Undo) -> None:
    """One path: register in ``ctor`` order, then undo in ``dtor`` order, checking each step."""
    c.runs += 1
    active: set[int] = set()
    with TdSide("py", undo) as o:
        _check(c, o, frozenset(), "initial state")
        if c.states[frozenset()][0] != EMPTY:
            raise AssertionError(f"initial state is not empty: {c.states[frozenset()][0]}")
        for n, ix in enumerate(ctor):
            try:
                o.apply(ix, c.regs[ix])
            except (RuntimeError, ValueError, TypeError) as e:
                where = f"ctors {list(ctor[: n + 1])} ({undo})"
                key = frozenset(active | {ix})
                text = first_clause(str(e), o.namespace)
                want, first = c.errors.setdefault(key, (text, where))
                if text != want:
                    raise AssertionError(
                        f"error text differs: {want!r} ({first}) vs {text!r} ({where})"
                    )
                if c.compare_torch and c.torch_error(key) != text:
                    raise AssertionError(
                        f"{where}: ours raised {text!r}, torch {c.torch_error(key)!r}"
                    )
                _check(c, o, frozenset(active), f"failed ctor {ix} after {list(ctor[:n])}")
                break
            active.add(ix)
            _check(c, o, frozenset(active), f"ctors {list(ctor[: n + 1])} ({undo})")
        done = [ix for ix in ctor if ix in active]
        for n, ix in enumerate(dtor):
            if ix not in active:
                continue
            o.destroy(ix)
            active.discard(ix)
            _check(c, o, frozenset(active), f"ctors {done}, dtors {list(dtor[: n + 1])} ({undo})")


Mode = Literal["full", "sample"]


def orders(n: int, samples: int, seed: int) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """All (ctor, dtor) pairs for ``n <= 4``. Beyond, all n! pairs would be too slow for
    the suite (14,400 paths for five), so: every ctor order once and every dtor order once
    (paired by a fixed stride, so the pairs differ from the identity), plus ``samples``
    seeded random pairs."""
    perms = list(itertools.permutations(range(n)))
    if n <= 4:
        return [(a, b) for a in perms for b in perms]
    stride = 7 if len(perms) % 7 else 1  # coprime with 5! = 120: a permutation of indices
    every = [(perms[i], perms[(i * stride + 3) % len(perms)]) for i in range(len(perms))]
    rng = random.Random(seed)
    return every + [(rng.choice(perms), rng.choice(perms)) for _ in range(samples)]


def commute(
    regs: tuple[Registration, ...],
    *,
    compare_torch: bool = True,
    samples: int = 120,
    seed: int = 0,
) -> Commute:
    """Run every (or a sample of) ctor x dtor order; undo alternates destroy / handle."""
    c = Commute(regs, compare_torch)
    for i, (ctor, dtor) in enumerate(orders(len(regs), samples, seed)):
        run_ops(c, ctor, dtor, "handle" if i % 2 else "destroy")
    return c
