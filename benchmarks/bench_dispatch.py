"""Dispatch overhead: tensordispatch vs torch, side by side in one run (issue 3, section 8).

Run: python benchmarks/bench_dispatch.py [--number N] [--repeat R]

Every row times a call of a 2-tensor operator ``f(Tensor a, Tensor b) -> Tensor`` whose
kernel is a no-op Python function returning its first argument, so what is measured is the
machinery around the kernel, not the kernel:

* plain call: ``ops.<ns>.f.default(a, b)`` on real tensordispatch CPU tensors (key set
  CPU | AutogradCPU | ...) vs a torch.library operator with a Python CPU kernel on torch CPU
  tensors (target <= 0.2x torch);
* the same call under a trivial DispatchMode vs a trivial TorchDispatchMode, each handler
  just ``return func(*args, **kwargs)`` (target <= 0.2x torch);
* a boxed kernel ``fn(op, keyset, stack)`` vs the unboxed kernel on the same operator
  (target <= 1.15x), and vs calling the kernels directly;
* the dispatch overhead in ns: call through the operator minus calling the kernel itself.

Times are best-of-R of timeit loops of N calls (ns per call); ratios come from the same
run. Process CPU time is used (steadier than wall clock on a busy machine).
"""

from __future__ import annotations

import argparse
import time
import timeit
from collections.abc import Callable
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

import tensordispatch as td
import tensordispatch.ops as td_ops
from tensordispatch.dispatch.modes import DispatchMode
from tensordispatch.library import Library


def kernel(a: Any, b: Any) -> Any:
    return a


def boxed_kernel(op: Any, keyset: Any, stack: list[Any]) -> Any:
    return stack[0]


class TdMode(DispatchMode):
    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        return func(*args, **(kwargs or {}))


class TorchMode(TorchDispatchMode):
    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        return func(*args, **(kwargs or {}))


def best_ns(fn: Callable[[], Any], number: int, repeat: int) -> float:
    """Best of ``repeat`` loops of ``number`` calls, in ns per call (process CPU time)."""
    timer = timeit.Timer(fn, timer=time.process_time)
    return min(timer.repeat(repeat=repeat, number=number)) / number * 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=7)
    opts = parser.parse_args()
    n, r = opts.number, opts.repeat

    td_lib = Library("bench_dispatch", "DEF")
    td_lib.define("f(Tensor a, Tensor b) -> Tensor")
    td_lib.define("g(Tensor a, Tensor b) -> Tensor")
    td_lib.impl("f", kernel, "CPU")
    td_lib.impl("g", boxed_kernel, "CPU", boxed=True)
    torch_lib = torch.library.Library("bench_dispatch", "DEF")
    torch_lib.define("f(Tensor a, Tensor b) -> Tensor")
    torch_lib.impl("f", kernel, "CPU")

    ta, tb = td.tensor([1.0, 2.0]), td.tensor([3.0, 4.0])
    pa, pb = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])
    td_f, td_g = td_ops.bench_dispatch.f.default, td_ops.bench_dispatch.g.default
    torch_f = torch.ops.bench_dispatch.f.default
    assert td_f(ta, tb) is ta and td_g(ta, tb) is ta and torch_f(pa, pb) is pa
    stack = [ta, tb]
    keyset = td.DispatchKeySet(td.DispatchKey.CPU)

    rows: dict[str, float] = {}
    rows["kernel called directly"] = best_ns(lambda: kernel(ta, tb), n, r)
    rows["boxed kernel called directly"] = best_ns(
        lambda: boxed_kernel(td_f, keyset, [ta, tb]), n, r
    )
    rows["td call, unboxed kernel"] = best_ns(lambda: td_f(ta, tb), n, r)
    rows["td call, boxed kernel"] = best_ns(lambda: td_g(ta, tb), n, r)
    rows["torch call, Python kernel"] = best_ns(lambda: torch_f(pa, pb), n, r)
    with TdMode():
        assert td_f(ta, tb) is ta
        rows["td call under trivial mode"] = best_ns(lambda: td_f(ta, tb), n // 4, r)
    with TorchMode():
        assert torch_f(pa, pb) is pa
        rows["torch call under trivial mode"] = best_ns(lambda: torch_f(pa, pb), n // 4, r)
    del stack
    td_lib._destroy()
    torch_lib._destroy()

    print(f"{'call':<34}{'ns/call':>10}")
    for name, ns in rows.items():
        print(f"{name:<34}{ns:>10.0f}")
    print()
    ratios = [
        (
            "td / torch, plain call",
            rows["td call, unboxed kernel"],
            rows["torch call, Python kernel"],
            0.2,
        ),
        (
            "td / torch, trivial mode",
            rows["td call under trivial mode"],
            rows["torch call under trivial mode"],
            0.2,
        ),
        (
            "boxed / unboxed path",
            rows["td call, boxed kernel"],
            rows["td call, unboxed kernel"],
            1.15,
        ),
    ]
    print(f"{'ratio':<34}{'value':>8}{'target':>9}  ok")
    for name, num, den, target in ratios:
        value = num / den
        print(
            f"{name:<34}{value:>8.3f}{'<= ' + str(target):>9}  {'yes' if value <= target else 'NO'}"
        )
    print()
    overhead = rows["td call, unboxed kernel"] - rows["kernel called directly"]
    torch_overhead = rows["torch call, Python kernel"] - rows["kernel called directly"]
    boxed_overhead = rows["td call, boxed kernel"] - rows["boxed kernel called directly"]
    tail = f"(boxed kernel {boxed_overhead:.0f} ns), torch {torch_overhead:.0f} ns"
    print(f"dispatch overhead over calling the kernel: td {overhead:.0f} ns {tail}")


if __name__ == "__main__":
    main()
