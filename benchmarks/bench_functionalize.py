"""functionalize(f) vs f, for tensordispatch and for torch.func.functionalize, in one run.

    python benchmarks/bench_functionalize.py

The program is the reference spec's (section 4): on 64 floats, clone, view + transpose +
select then mul_, slice add_, view + diagonal zero_, sum: ~10 aliasing or mutating ops.
For each library we print the plain time per call, the functionalized time per call for
both ``remove`` modes, and the slowdown factor (functionalized / plain). The issue's target
is our slowdown <= 1/3 of torch's: the last lines print (our slowdown) / (torch's slowdown).
"exact" rows run ours with Note [Skipping unobserved replays] (wrapper.py) switched off, i.e.
torch's exact sequence of operators below Functionalize (what a tracer or lazy sees); the
"ours" rows are the default, which skips replays nobody can observe.
Rounds alternate between the variants, best of each is kept (the machine's load drifts).
Times are the calling thread's CPU time (``time.thread_time``): on a machine shared with
other jobs, wall-clock time also counts the time spent waiting for a CPU, which varies from
round to round far more than the programs do (torch runs with one thread, so its CPU time
is its whole cost too).
"""

from __future__ import annotations

import time
import timeit
from collections.abc import Callable
from typing import Any

import torch

import tensordispatch as td
from tensordispatch.transforms.functionalize import functionalize
from tensordispatch.transforms.functionalize.wrapper import set_replay_skipping

torch.set_num_threads(1)


def prog(t: Any) -> Any:
    b = t.clone()
    v = b.view(4, 16).transpose(0, 1)[3]
    v.mul_(2)
    b[1:5].add_(1)
    w = b.view(8, 8)
    w.diagonal().zero_()
    return b.sum() + w[0, 0]


def _exact(f: Callable[[Any], Any], x: Any) -> Any:
    """``f(x)`` running torch's exact operator sequence (Note [Skipping unobserved replays]
    in wrapper.py off; the two switch calls cost ~0.2 us)."""
    set_replay_skipping(False)
    try:
        return f(x)
    finally:
        set_replay_skipping(True)


def best_of_rounds(
    fns: dict[str, Callable[[], object]], number: int, rounds: int
) -> dict[str, float]:
    """Best CPU microseconds per call of each function, over alternating rounds."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            timer = timeit.Timer(fn, timer=time.thread_time)
            times[name].append(timer.timeit(number) / number * 1e6)
    return {k: min(v) for k, v in times.items()}


def main(number: int = 200, rounds: int = 15) -> None:
    tx = torch.randn(64)
    dx = td.tensor(tx.tolist())
    t_m = torch.func.functionalize(prog)
    t_mv = torch.func.functionalize(prog, remove="mutations_and_views")
    d_m = functionalize(prog)
    d_mv = functionalize(prog, remove="mutations_and_views")
    expected = float(prog(tx))
    for f in (t_m, t_mv):
        assert abs(float(f(tx)) - expected) < 1e-4
    for g in (d_m, d_mv):
        assert abs(float(prog(dx)) - expected) < 1e-4
        assert abs(float(g(dx)) - expected) < 1e-4
    times = best_of_rounds(
        {
            "torch plain": lambda: prog(tx),
            "torch mutations": lambda: t_m(tx),
            "torch mutations_and_views": lambda: t_mv(tx),
            "ours plain": lambda: prog(dx),
            "ours mutations": lambda: d_m(dx),
            "ours mutations_and_views": lambda: d_mv(dx),
            "exact mutations": lambda: _exact(d_m, dx),
            "exact mutations_and_views": lambda: _exact(d_mv, dx),
        },
        number,
        rounds,
    )
    print(
        f"program of the spec (section 4) on 64 floats; best of {rounds} rounds x {number}; "
        "thread CPU time"
    )
    times["exact plain"] = times["ours plain"]
    for lib in ("torch", "ours", "exact"):
        plain = times[f"{lib} plain"]
        line = [f"{lib:5s}: plain {plain:8.1f} us"]
        for mode in ("mutations", "mutations_and_views"):
            t = times[f"{lib} {mode}"]
            line.append(f"{mode} {t:8.1f} us ({t / plain:5.2f}x)")
        print(" | ".join(line))
    for lib in ("ours", "exact"):
        for mode in ("mutations", "mutations_and_views"):
            ours = times[f"{lib} {mode}"] / times[f"{lib} plain"]
            theirs = times[f"torch {mode}"] / times["torch plain"]
            print(
                f"slowdown ratio ({lib}, {mode}): {ours:.2f}x / torch {theirs:.2f}x = "
                f"{ours / theirs:.3f} (target <= 0.333)"
            )
    print(
        f"absolute: ours functionalized / torch functionalized = "
        f"{times['ours mutations'] / times['torch mutations']:.2f}x (mutations)"
    )


if __name__ == "__main__":
    main()
