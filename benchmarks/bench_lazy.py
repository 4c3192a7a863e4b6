"""Lazy tensors: tensordispatch.lazy side by side with torch._lazy (TorchScript backend).

Run: python benchmarks/bench_lazy.py [--quick] [--best] [--cpu]   (needs torch)

Program (issue 9): N alternating ``y = y + 0.5`` / ``y = y * 0.999`` on a 1024-element
float32 vector, N = 10, 100, 1000; medians over trials, both libraries in the same run
(5 trials at N = 1000, 11 at N <= 100, where a trial is short; the two libraries' trials
alternate, since this shared machine runs slow for stretches of a few hundred ms, which
would otherwise sway one library's median only; ``--best``: the best trial
or step of each instead, for a loaded machine, where a trial of a few ms is often preempted
once; both libraries are measured the same way):

* trace       tracing the N ops (no execution), per op;
* uncached    the first mark_step of a graph never seen (a fresh vector size per trial;
              our code-object cache is cleared too, so nothing compiled before is reused).
              Our first run is interpreted, the source is compiled on the second
              (Note [First run interpreted]); "at once" is our uncached mark_step with
              ``lazy.config.compile_on_first_run()``, i.e. compiled before the first run;
* 2nd mark    the mark_step of that graph's second run: ours compiles the source there,
              TorchScript profiles and optimises on it; also as a ratio to torch._lazy's
              cached (steady) mark_step;
* steady      a cached step: trace + mark_step, median of repeated identical steps;
* eager       the same program eagerly on CPU (torch and tensordispatch); torch's is timed
              between the trials too (four runs per trial), so the steady-vs-eager ratio
              compares the same stretches of time.

Printed ratios (targets from issue 9): trace per op vs torch._lazy (<= 0.25x), uncached
mark_step vs torch._lazy (<= 0.25x: the default tier, what a user gets), our steady step vs
torch eager (<= 1.0x), and on a 4M-element vector with N = 100 our compiled step vs our eager
program (>= 1.5x faster). The "at once" tier's ratio is printed without a verdict: it is an
opt-in trade (a slower first step for a compiled one), and at N = 10 its cost is CPython's
compile() of the ~10-line source, ~70-100 us, against torch's ~0.5-0.9 ms (0.35-0.50x);
sessions 4-7 held it to the 0.25x line too, which it meets at N = 100 and 1000 only.
``--cpu`` times with the process's CPU time (all threads) instead of the wall clock: on a
loaded machine preemption then does not count (use it with the load average printed).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
import torch._lazy
import torch._lazy.metrics
import torch._lazy.ts_backend

import tensordispatch as td
from tensordispatch import lazy

torch._lazy.ts_backend.init()
lazy.init()
QUICK = "--quick" in sys.argv
TRIALS = 3 if QUICK else 5
#: trials at N <= 100, where one trial is short and a preempted one sways a median of 5
SHORT_TRIALS = 3 if QUICK else 11
STEADY = 5 if QUICK else 20
med = min if "--best" in sys.argv else statistics.median
clock = time.process_time if "--cpu" in sys.argv else time.perf_counter


def chain(y: Any, n: int) -> Any:
    for i in range(n):
        y = y + 0.5 if i % 2 == 0 else y * 0.999
    return y


def _lib_step(lib: Any) -> Callable[[], None]:
    if lib is td:
        return lazy.mark_step

    def step() -> None:
        torch._lazy.mark_step()
        torch._lazy.wait_device_ops()

    return step


def _fresh(lib: Any, n: int, numel: int, seed: int) -> Any:
    """A lazy vector of a size no earlier graph had (so its graphs are new), synced."""
    data = np.random.default_rng(seed).standard_normal(numel + seed + 7 * n)
    x = lib.from_numpy(data.astype(np.float32)).to("lazy")
    _lib_step(lib)()
    if lib is td:  # a cold compile: no code object cached for this source either
        lazy.get_backend().clear_code_cache()
    return x


def _timed_step(lib: Any, x: Any, n: int) -> tuple[float, float]:
    """(trace, mark_step) times of one step of the program on ``x``."""
    step = _lib_step(lib)
    t0 = clock()
    y = chain(x, n)
    t1 = clock()
    step()
    t2 = clock()
    del y
    return t1 - t0, t2 - t1


def _trial(lib: Any, n: int, numel: int, trial: int, found: dict[str, list[float]]) -> None:
    """One trial of ``lib`` at ``n`` ops: its times appended to ``found``."""
    if lib is td:  # our other tier first, on a graph of its own
        with lazy.config.compile_on_first_run():
            found["at_once"].append(_timed_step(td, _fresh(td, n, numel, 100 + trial), n)[1])
    x = _fresh(lib, n, numel, trial)
    trace, uncached = _timed_step(lib, x, n)
    found["trace"].append(trace)
    found["uncached"].append(uncached)
    found["second"].append(_timed_step(lib, x, n)[1])  # compiles / optimises, see above
    for _ in range(STEADY):
        trace, mark = _timed_step(lib, x, n)
        found["steady"].append(trace + mark)
        found["steady_mark"].append(mark)


def measure(n: int, numel: int = 1024) -> tuple[dict[str, float], dict[str, float]]:
    """(ours, torch's) medians at ``n`` ops. The libraries' trials alternate, so a stretch
    of time where the machine runs slow falls on both (Note in the module docstring)."""
    keys = ("trace", "uncached", "at_once", "second", "steady", "steady_mark")
    found: dict[Any, dict[str, list[float]]] = {lib: {k: [] for k in keys} for lib in (td, torch)}
    for trial in range(TRIALS if n > 100 else SHORT_TRIALS):
        for lib in (td, torch):
            _trial(lib, n, numel, trial, found[lib])
        # torch's eager program too, so the steady-vs-eager ratio compares the same stretches
        found[torch]["eager"] = found[torch].get("eager", []) + _eager_times(torch, n, numel, 4)
    ours, theirs = ({k: med(v) for k, v in found[lib].items() if v} for lib in (td, torch))
    return ours, theirs


def _eager_times(lib: Any, n: int, numel: int = 1024, reps: int = 20) -> list[float]:
    x = lib.from_numpy(np.random.default_rng(0).standard_normal(numel).astype(np.float32))
    times = []
    for _ in range(reps):
        t0 = clock()
        chain(x, n)
        times.append(clock() - t0)
    return times


def eager(lib: Any, n: int, numel: int = 1024, reps: int = 20) -> float:
    return med(_eager_times(lib, n, numel, reps))


def big_vector(n: int = 100, numel: int = 4 * 1024 * 1024, reps: int = 7) -> tuple[float, float]:
    """Our compiled cached step vs our eager program on a 4M-element vector."""
    data = np.random.default_rng(1).standard_normal(numel).astype(np.float32)
    x = td.from_numpy(data).to("lazy")
    lazy.mark_step()
    y = chain(x, n)
    lazy.mark_step()  # compile
    compiled = []
    for _ in range(reps):
        t0 = clock()
        y = chain(x, n)
        lazy.mark_step()
        compiled.append(clock() - t0)
    del y
    return med(compiled), eager(td, n, numel, reps)


def _against(ratio: float, target: float, *, at_least: bool = False) -> str:
    """``ratio`` against its issue-9 target, e.g. ``0.87x (<= 0.25x: NOT met)``."""
    met = ratio >= target if at_least else ratio <= target
    return f"{ratio:.2f}x ({'>=' if at_least else '<='} {target}x: {'met' if met else 'NOT met'})"


def main() -> None:
    load = os.getloadavg()[0]
    print(
        "tensordispatch.lazy vs torch._lazy (TorchScript backend); 1024 float32, ms unless "
        f"noted; {'best' if med is min else 'median'} of trials; "
        f"{'process CPU time' if clock is time.process_time else 'wall clock'}; "
        f"load average {load:.2f} at start"
    )
    header = (
        "N | trace us/op td / torch (ratio) | uncached ms td / torch (ratio) | "
        "uncached at once ms td (ratio) | 2nd mark ms td / torch (td / torch cached mark) | "
        "steady ms td | eager ms torch / td | steady td / eager torch"
    )
    print(header)
    for n in (10, 100) if QUICK else (10, 100, 1000):
        ours, theirs = measure(n)
        e_torch, e_td = theirs["eager"], eager(td, n)
        print(
            f"{n} | {ours['trace'] / n * 1e6:.2f} / {theirs['trace'] / n * 1e6:.2f} "
            f"{_against(ours['trace'] / theirs['trace'], 0.25)} | "
            f"{ours['uncached'] * 1e3:.3f} / {theirs['uncached'] * 1e3:.3f} "
            f"{_against(ours['uncached'] / theirs['uncached'], 0.25)} | "
            f"{ours['at_once'] * 1e3:.3f} {ours['at_once'] / theirs['uncached']:.2f}x (opt-in) | "
            f"{ours['second'] * 1e3:.3f} / {theirs['second'] * 1e3:.3f} "
            f"({ours['second'] / theirs['steady_mark']:.2f}x) | "
            f"{ours['steady'] * 1e3:.3f} | {e_torch * 1e3:.3f} / {e_td * 1e3:.3f} | "
            f"{_against(ours['steady'] / e_torch, 1.0)}"
        )
    compiled, eager_td = big_vector()
    print(
        f"4M float32, N=100: compiled step {compiled * 1e3:.1f} ms, tensordispatch eager "
        f"{eager_td * 1e3:.1f} ms: compiled is {_against(eager_td / compiled, 1.5, at_least=True)}"
        " faster"
    )
    print(f"load average {os.getloadavg()[0]:.2f} at the end (2 CPUs: above ~1.5 is loaded)")


if __name__ == "__main__":
    main()
