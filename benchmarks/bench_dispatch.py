"""Dispatch overhead: tensordispatch vs torch, side by side in one run (issue 3, section 8).

Run: python benchmarks/bench_dispatch.py [--number N] [--rounds R]

Every row times a call of a 2-tensor operator ``f(Tensor a, Tensor b) -> Tensor`` whose
kernel is a no-op Python function returning its first argument, so what is measured is the
machinery around the kernel, not the kernel:

* plain call: ``ops.<ns>.f.default(a, b)`` on real tensordispatch CPU tensors (key set
  CPU | AutogradCPU | ...) vs a torch.library operator with a Python CPU kernel on torch CPU
  tensors (target <= 0.2x torch);
* the same call under a trivial DispatchMode vs a trivial TorchDispatchMode, each handler
  just ``return func(*args, **kwargs)`` (target <= 0.2x torch);
* a boxed kernel ``fn(op, keyset, stack)`` vs an unboxed kernel (target <= 1.15x), on two
  operators with the same schema and tensors, one per kind: the whole calls (which include
  the boxed kernel's own dearer call, three arguments and a list index, ~27 ns more than
  the unboxed kernel's when both are called directly) and the dispatch overheads alone
  (each call minus calling its kernel directly). An operator whose default calls reach a
  boxed kernel runs its boxed-first entry (calling.py, Note [Boxed-first entries]). The
  script prints the whole-call ratio a boxed path with no extra dispatch cost would have
  (the floor set by the kernel's own convention);
* the same comparison on ONE operator whose calls reach both kinds (an unboxed CPU kernel
  and a boxed Meta kernel, called on stand-in tensors with those key sets): its boxed calls
  pay the boxing adapter's frame (Note [Boxing adapters]);
* the dispatch overhead in ns: call through the operator minus calling the kernel itself.

Times are the best of R timeit loops of N calls (ns per call), the rows interleaved loop by
loop so that load on a shared machine hits them alike; ratios come from the same run.
"""

from __future__ import annotations

import argparse
import timeit
from collections.abc import Callable
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

import tensordispatch as td
import tensordispatch.ops as td_ops
from tensordispatch.dispatch import BackendComponent, backend_tensor_keyset
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


class StandIn:
    """A stand-in tensor of a given backend: the dispatcher only reads ``_key_set``."""

    __slots__ = ("_key_set",)

    def __init__(self, backend: BackendComponent) -> None:
        self._key_set = backend_tensor_keyset(backend).raw


def best_ns(fns: dict[str, Callable[[], Any]], number: int, rounds: int) -> dict[str, float]:
    """ns per call of each function: the best of ``rounds`` timeit loops of ``number`` calls,
    the functions interleaved round by round so that a busy machine slows all alike."""
    timers = {name: timeit.Timer(fn) for name, fn in fns.items()}
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(rounds):
        for name, timer in timers.items():
            best[name] = min(best[name], timer.timeit(number))
    return {name: t / number * 1e9 for name, t in best.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=1000, help="calls per timing loop")
    parser.add_argument("--rounds", type=int, default=200, help="timing loops (best is kept)")
    opts = parser.parse_args()
    n, r = opts.number, opts.rounds

    td_lib = Library("bench_dispatch", "DEF")
    td_lib.define("f(Tensor a, Tensor b) -> Tensor")
    td_lib.define("g(Tensor a, Tensor b) -> Tensor")
    td_lib.impl("f", kernel, "CPU")
    td_lib.impl("g", boxed_kernel, "CPU", boxed=True)
    td_lib.define("h(Tensor a, Tensor b) -> Tensor")
    td_lib.impl("h", kernel, "CPU")
    td_lib.impl("h", boxed_kernel, "Meta", boxed=True)
    torch_lib = torch.library.Library("bench_dispatch", "DEF")
    torch_lib.define("f(Tensor a, Tensor b) -> Tensor")
    torch_lib.impl("f", kernel, "CPU")

    ta, tb = td.tensor([1.0, 2.0]), td.tensor([3.0, 4.0])
    pa, pb = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])
    td_f, td_g = td_ops.bench_dispatch.f.default, td_ops.bench_dispatch.g.default
    torch_f = torch.ops.bench_dispatch.f.default
    assert td_f(ta, tb) is ta and td_g(ta, tb) is ta and torch_f(pa, pb) is pa
    td_h = td_ops.bench_dispatch.h.default
    cpu, meta = StandIn(BackendComponent.CPUBit), StandIn(BackendComponent.MetaBit)
    assert td_h(cpu, cpu) is cpu and td_h(meta, meta) is meta
    keyset = td.DispatchKeySet(td.DispatchKey.CPU)

    rows = best_ns(
        {
            "kernel called directly": lambda: kernel(ta, tb),
            "boxed kernel called directly": lambda: boxed_kernel(td_g, keyset, [ta, tb]),
            "td call, unboxed kernel": lambda: td_f(ta, tb),
            "td call, boxed kernel": lambda: td_g(ta, tb),
            "one op, unboxed kernel (CPU)": lambda: td_h(cpu, cpu),
            "one op, boxed kernel (Meta)": lambda: td_h(meta, meta),
            "torch call, Python kernel": lambda: torch_f(pa, pb),
        },
        n,
        r,
    )
    with TdMode():
        assert td_f(ta, tb) is ta
        rows |= best_ns({"td call under trivial mode": lambda: td_f(ta, tb)}, n, r)
    with TorchMode():
        assert torch_f(pa, pb) is pa
        rows |= best_ns({"torch call under trivial mode": lambda: torch_f(pa, pb)}, n, r)
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
    ratios.append(
        (
            "one op with both kinds",
            rows["one op, boxed kernel (Meta)"],
            rows["one op, unboxed kernel (CPU)"],
            1.15,
        )
    )
    overhead = rows["td call, unboxed kernel"] - rows["kernel called directly"]
    boxed_overhead = rows["td call, boxed kernel"] - rows["boxed kernel called directly"]
    ratios.append(("boxed / unboxed, overhead only", boxed_overhead, overhead, 1.15))
    print(f"{'ratio':<34}{'value':>8}{'target':>9}  ok")
    for name, num, den, target in ratios:
        value = num / den
        print(
            f"{name:<34}{value:>8.3f}{'<= ' + str(target):>9}  {'yes' if value <= target else 'NO'}"
        )
    print()
    convention = rows["boxed kernel called directly"] - rows["kernel called directly"]
    floor = (rows["td call, unboxed kernel"] + convention) / rows["td call, unboxed kernel"]
    print(
        f"the boxed convention itself costs {convention:.0f} ns (list, third argument, index):"
        f" a boxed path with no extra dispatch cost would be {floor:.3f}x the unboxed call"
    )
    torch_overhead = rows["torch call, Python kernel"] - rows["kernel called directly"]
    tail = f"(boxed kernel {boxed_overhead:.0f} ns), torch {torch_overhead:.0f} ns"
    print(f"dispatch overhead over calling the kernel: td {overhead:.0f} ns {tail}")


if __name__ == "__main__":
    main()
