"""Operator speed: tensordispatch vs torch and NumPy, side by side in one run (issue 4, section 6).

Run: python benchmarks/bench_ops.py [--rounds R] [--quick] [--breakdown]

Rows (each timed as the best of R timeit loops, the rows of a group interleaved loop by loop
so that load on a shared machine hits them alike; every ratio comes from the same run):

* ``td.add(a, b)`` on 3-element float32 tensors vs ``torch.add`` (target <= 0.35x) and vs
  ``np.add`` on the same arrays (target <= 2.0x);
* a chain of 20 small pointwise ops (add/mul/sub/div/neg/exp/sin on 3-element float32
  tensors), one program run on both libraries, vs torch (target <= 0.5x);
* 1000x1000 float32 matmul and a 10M-element float32 add vs NumPy (target <= 1.1x);
* (the small rows use short loops, 100 calls or 5 chains, and 5 R rounds: on a loaded
  shared machine the best short loop is the one that ran unpreempted);
* ``import tensordispatch`` vs ``import torch`` in fresh interpreters (target <= 0.1x): the best
  of several runs, timed inside the child around the import statement, with
  PYTHONDONTWRITEBYTECODE removed from the child's environment (otherwise every import
  recompiles the package from source); the ``python -c pass`` process time is printed as the
  baseline. Operators are defined on first use (Note [Operators defined on first lookup] in
  codegen/gen_registrations.py), so an extra row, without a target, times the import plus
  the first ``add`` of two 3-element tensors on both libraries: what the deferral moved.

The closing summary names every target with its measured ratio and "met" / "NOT met".

``--breakdown`` instead times ``td.add(a, b)`` on 3-element float32 tensors layer by layer
(each row calls one layer directly, cumulative from the NumPy call up to the Python binding;
the difference between two rows is one layer's own cost), next to torch.add and np.add: the
add table of benchmarks/bench_op_layers.py, which has more ops and views.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import timeit
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import torch

import tensordispatch as td

Row = tuple[str, float, float, float | None]  # (label, ours ns, theirs ns, target ratio or None)


def best_ns(fns: dict[str, Callable[[], Any]], number: int, rounds: int) -> dict[str, float]:
    """ns per call of each function: the best of ``rounds`` timeit loops of ``number`` calls,
    the functions interleaved round by round."""
    timers = {name: timeit.Timer(fn) for name, fn in fns.items()}
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(rounds):
        for name, timer in timers.items():
            best[name] = min(best[name], timer.timeit(number))
    return {name: t / number * 1e9 for name, t in best.items()}


def chain(m: ModuleType, x: Any, y: Any, z: Any) -> Any:
    """20 pointwise ops; x, z in [0, 1) and y in [1, 2) keep every exp argument small."""
    t = m.add(x, y)
    t = m.mul(t, z)
    t = m.sin(t)
    t = m.sub(t, x)
    t = m.div(t, y)
    t = m.neg(t)
    t = m.exp(t)
    t = m.mul(t, x)
    t = m.sin(t)
    t = m.add(t, z)
    t = m.div(t, y)
    t = m.sub(t, z)
    t = m.neg(t)
    t = m.exp(t)
    t = m.sin(t)
    t = m.mul(t, y)
    t = m.add(t, x)
    t = m.sin(t)
    t = m.div(t, y)
    return m.exp(t)


def small_rows(rounds: int) -> list[Row]:
    """td.add vs torch.add vs np.add on 3 elements, and the 20-op chain."""
    rng = np.random.default_rng(0)
    xs = [rng.random(3, dtype=np.float32) for _ in range(3)]
    xs[1] += 1
    na, nb = xs[0], xs[1]
    ta, tb = torch.from_numpy(na), torch.from_numpy(nb)
    da, db = td.from_numpy(na), td.from_numpy(nb)
    tx, ty, tz = (torch.from_numpy(v) for v in xs)
    dx, dy, dz = (td.from_numpy(v) for v in xs)
    got, want = chain(td, dx, dy, dz).numpy(), chain(torch, tx, ty, tz).numpy()
    if not np.allclose(got, want, rtol=1e-5):
        raise SystemExit(f"bench_ops: the chain differs: td {got} vs torch {want}")
    ns = best_ns(
        {
            "td.add": lambda: td.add(da, db),
            "torch.add": lambda: torch.add(ta, tb),
            "np.add": lambda: np.add(na, nb),
        },
        number=100,
        rounds=rounds * 5,
    )
    chain_ns = best_ns(
        {"td": lambda: chain(td, dx, dy, dz), "torch": lambda: chain(torch, tx, ty, tz)},
        number=5,
        rounds=rounds * 5,
    )
    return [
        ("add, 3 x f32: td vs torch", ns["td.add"], ns["torch.add"], 0.35),
        ("add, 3 x f32: td vs np.add", ns["td.add"], ns["np.add"], 2.0),
        ("20-op pointwise chain, 3 x f32: td vs torch", chain_ns["td"], chain_ns["torch"], 0.5),
    ]


def large_rows(rounds: int) -> list[Row]:
    """1000x1000 matmul and a 10M-element add vs NumPy on the same arrays."""
    rng = np.random.default_rng(1)
    ma, mb = (rng.random((1000, 1000), dtype=np.float32) for _ in range(2))
    va, vb = (rng.random(10_000_000, dtype=np.float32) for _ in range(2))
    dma, dmb, dva, dvb = (td.from_numpy(v) for v in (ma, mb, va, vb))
    ns = best_ns(
        {
            "td.matmul": lambda: td.matmul(dma, dmb),
            "np.matmul": lambda: np.matmul(ma, mb),
            "td.add": lambda: td.add(dva, dvb),
            "np.add": lambda: np.add(va, vb),
        },
        number=1,
        rounds=max(20, rounds // 5),
    )
    return [
        ("matmul 1000x1000 f32: td vs np", ns["td.matmul"], ns["np.matmul"], 1.1),
        ("add 10M f32: td vs np", ns["td.add"], ns["np.add"], 1.1),
    ]


def child_env() -> dict[str, str]:
    """This environment without PYTHONDONTWRITEBYTECODE, so imports use cached bytecode."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


_FIRST_ADD = "import {m} as _m; _m.add(_m.ones(3), _m.ones(3))"


def import_ns(module: str | None, runs: int, first_add: bool = False) -> tuple[float, float]:
    """(best in-process import time, best whole-process wall time) in ns over ``runs`` fresh
    interpreters; ``module=None`` runs ``pass``; ``first_add`` also times a first ``add``."""
    stmt = "pass" if module is None else f"import {module}"
    if first_add and module is not None:
        stmt = _FIRST_ADD.format(m=module)
    code = f"import time; _t = time.perf_counter()\n{stmt}\nprint(time.perf_counter() - _t)"
    env = child_env()
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)
    best_in, best_wall = float("inf"), float("inf")
    for _ in range(runs):
        start = timeit.default_timer()
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True
        )
        best_wall = min(best_wall, timeit.default_timer() - start)
        best_in = min(best_in, float(out.stdout))
    return best_in * 1e9, best_wall * 1e9


def import_rows(runs: int) -> list[Row]:
    """Import times of tensordispatch and torch, runs interleaved."""
    best: dict[str, tuple[float, float]] = {}
    for _ in range(runs):
        for name in ("pass", "tensordispatch", "torch", "tensordispatch+add", "torch+add"):
            module, _, add = name.partition("+")
            inner, wall = import_ns(None if name == "pass" else module, 1, bool(add))
            old = best.get(name, (float("inf"), float("inf")))
            best[name] = (min(old[0], inner), min(old[1], wall))
    was = "set" if "PYTHONDONTWRITEBYTECODE" in os.environ else "not set"
    print(
        f"import timing: {runs} fresh interpreters each, PYTHONDONTWRITEBYTECODE unset in the"
        f" children (it is {was} here); baseline `python -c pass` process:"
        f" {fmt(best['pass'][1])}"
    )
    base = best["pass"][1]
    return [
        ("import (in-process): td vs torch", best["tensordispatch"][0], best["torch"][0], 0.1),
        (
            "import (process wall - pass): td vs torch",
            best["tensordispatch"][1] - base,
            best["torch"][1] - base,
            0.1,
        ),
        (
            "import + first add (in-process): td vs torch",
            best["tensordispatch+add"][0],
            best["torch+add"][0],
            None,
        ),
    ]


def fmt(ns: float) -> str:
    """A duration with a readable unit."""
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.2f} {unit}"
    return f"{ns:.0f} ns"


def breakdown(rounds: int) -> None:
    """ns per layer of ``td.add(a, b)`` on 3-element float32 tensors: the add table of
    bench_op_layers.py (cumulative rows, thread CPU time, next to torch.add and np.add)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_op_layers import add_table

    add_table(number=100, rounds=rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200, help="timing loops (best is kept)")
    parser.add_argument("--imports", type=int, default=10, help="fresh interpreters per import")
    parser.add_argument("--quick", action="store_true", help="few rounds, for a smoke run")
    parser.add_argument("--breakdown", action="store_true", help="td.add layer by layer")
    parser.add_argument("--imports-only", action="store_true", help="only the import rows")
    opts = parser.parse_args()
    if opts.breakdown:
        breakdown(opts.rounds)
        return
    rounds, imports = (10, 2) if opts.quick else (opts.rounds, opts.imports)
    if opts.imports_only:
        rows = import_rows(imports)
    else:
        rows = small_rows(rounds) + large_rows(rounds) + import_rows(imports)
    print(f"\n{'measurement':46} {'ours':>10} {'theirs':>10} {'ratio':>7} {'target':>7}")
    for label, ours, theirs, target in rows:
        ratio = ours / theirs
        goal = "-" if target is None else f"{target:6.2f}x"
        print(f"{label:46} {fmt(ours):>10} {fmt(theirs):>10} {ratio:6.2f}x {goal:>7}")
    print("\nsummary:")
    for label, ours, theirs, target in rows:
        if target is None:
            continue
        ratio = ours / theirs
        verdict = "met" if ratio <= target else "NOT met"
        print(f"  {label}: {ratio:.2f}x (target <= {target}x) {verdict}")


if __name__ == "__main__":
    main()
