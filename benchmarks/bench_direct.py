"""Direct per-key entry points (ops.cpu.add.Tensor, torch's at::cpu::add) vs dispatched calls.

Run: python benchmarks/bench_direct.py

Per tensor size, in one run, the best of 40 rounds of ~2 ms loops, the columns interleaved
round by round (microseconds per call):

* dispatched   td.add(a, b): binding, key set, table lookup, autograd kernel, CPU kernel;
* aten         td.ops.aten.add.Tensor(a, b): the OpOverload (no binding layer);
* direct       td.ops.cpu.add.Tensor(a, b): the CPU kernel itself (no dispatch, no autograd);
* packet       td.ops.cpu.add(a, b): the same after resolving the overload per call;
* torch        torch.add on torch CPU tensors, for scale.

Printed ratios: direct/dispatched (what skipping the dispatcher saves) and packet/direct.
"""

from __future__ import annotations

import timeit
from typing import Any

import numpy as np

import tensordispatch as td

SIZES = (3, 10_000, 1_000_000)


def calibrate(fn: Any, budget: float) -> int:
    """A loop count for which one timeit loop of ``fn`` takes about ``budget`` seconds."""
    n = 1
    while timeit.timeit(fn, number=n) < budget and n < 1_000_000:
        n *= 2
    return n


def interleaved(fns: list[Any], rounds: int = 40, budget: float = 0.002) -> list[float]:
    """Best per-call microseconds of each function over ``rounds`` rounds of ~2 ms loops
    (shorter than a scheduler time slice), interleaved round by round."""
    numbers = [calibrate(fn, budget) for fn in fns]
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, (fn, number) in enumerate(zip(fns, numbers, strict=True)):
            best[i] = min(best[i], timeit.timeit(fn, number=number) / number * 1e6)
    return best


def main() -> None:
    import torch

    torch.set_num_threads(1)
    print("add(a, b), float32, microseconds per call (best of 40 interleaved 2 ms loops)")
    print(
        f"{'n':>9} {'dispatched':>11} {'aten':>8} {'direct':>8} {'packet':>8} {'torch':>8}"
        "   direct/dispatched  packet/direct"
    )
    direct, packet = td.ops.cpu.add.Tensor, td.ops.cpu.add
    aten_op, add = td.ops.aten.add.Tensor, td.add
    for n in SIZES:
        a = td.from_numpy(np.linspace(0, 1, n, dtype=np.float32))
        b = td.from_numpy(np.linspace(1, 2, n, dtype=np.float32))
        ta, tb = torch.from_numpy(a.numpy()), torch.from_numpy(b.numpy())
        fns = [
            lambda a=a, b=b: add(a, b),
            lambda a=a, b=b: aten_op(a, b),
            lambda a=a, b=b: direct(a, b),
            lambda a=a, b=b: packet(a, b),
            lambda ta=ta, tb=tb: torch.add(ta, tb),
        ]
        d, at, dr, pk, tt = interleaved(fns)
        print(
            f"{n:>9} {d:11.2f} {at:8.2f} {dr:8.2f} {pk:8.2f} {tt:8.2f}"
            f"   {dr / d:16.2f}x {pk / dr:13.2f}x"
        )


if __name__ == "__main__":
    main()
