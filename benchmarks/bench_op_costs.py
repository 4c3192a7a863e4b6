"""Per-op cost of factories, copies, in-place and broadcast pointwise ops on CPU, side by side
with torch (one thread) in one run, and where each td call's time goes, layer by layer.

Run: python benchmarks/bench_op_costs.py [--rounds R] [--number N]

Every row is the best of R timeit loops of N calls, all rows of a table interleaved loop by
loop, in thread CPU time (time.thread_time: other processes on a shared machine distort
little), minus an empty lambda. The first table is the goal table (4x4 float32 unless
said; td/torch per row). The layer tables are cumulative: each row calls one layer
directly, from the kernel up to the binding, so the difference between two rows is one
layer's own cost:

* zeros(4, 4): the array, the tensor made around it, the binding's one hop (Note [One-hop
  factory bindings] in backends/composite_fast.py), the binding; indented rows (not
  cumulative) are the full dispatch the hop stands for: the composite kernel (the direct
  path to our empty/fill_ CPU kernels, Note [Composite factories call known kernels
  directly]), its redispatch at CPU, the entry and BackendSelect kernel under the binding's
  thread-local words;
* arange(10): NumPy's arange, the kernel the composite calls directly (arange_cpu), the
  binding's one hop (Note [One-hop factory bindings], the arange paragraph), the binding;
  indented: the full dispatch's layers and the float row's hop and kernel;
* a.copy_(b), a.add_(b): the NumPy write, our CPU kernel (Note [copy_ of one dtype and
  shape], the fused in-place kernel), the method's one hop (Note [One-hop in-place methods]
  in backends/composite_fast_inplace.py), the method; indented: the full dispatch's layers
  (redispatch at CPU, at ADInplaceOrView with the version bump, the entry with the Autograd
  kernel);
* a * c, c = b[0] (a (4,) row): NumPy's broadcasting multiply, the fused kernel (Note
  [Broadcast operands in the fused kernels]), the binding; b[0] itself (indexing, P2's);
* tensor([1., 2, 3]): NumPy's array of the list, the flat-list path (Note [Flat lists of
  Python numbers]), the public call.
"""

from __future__ import annotations

import argparse
import time
import timeit
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import tensordispatch as td
from tensordispatch.backends import composite_fast as fast
from tensordispatch.backends import composite_fast_arange as fast_arange
from tensordispatch.backends import composite_fast_inplace as fresh_hop
from tensordispatch.backends.aten import below_ad_inplace_or_view, op
from tensordispatch.backends.composite import COMPOSITE_KERNELS
from tensordispatch.backends.cpu.fresh import CPU_FUNCTIONAL_KERNELS, CPU_INPLACE_KERNELS
from tensordispatch.backends.cpu.kernels import copy_ as cpu_copy_
from tensordispatch.backends.cpu.layout import arange_cpu
from tensordispatch.dispatch.calling import NOT_GIVEN
from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import AFTER_AUTOGRAD_RAW, DispatchKeySet
from tensordispatch.tensor import creation
from tensordispatch.tensor.tensor import new_cpu_tensor

Fns = dict[str, Callable[[], Any]]
CPU_RAW = DispatchKeySet(DispatchKey.CPU).raw


def best_ns(fns: Fns, number: int, rounds: int) -> dict[str, float]:
    """Thread-CPU ns per call of each function, best of ``rounds`` interleaved loops, minus
    the cost of calling an empty lambda."""
    fns = {**fns, "<empty lambda>": lambda: None}
    timers = {k: timeit.Timer(f, timer=time.thread_time) for k, f in fns.items()}
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(rounds):
        for name, timer in timers.items():
            best[name] = min(best[name], timer.timeit(number) / number * 1e9)
    floor = best.pop("<empty lambda>")
    return {k: v - floor for k, v in best.items()}


def goal_table(number: int, rounds: int) -> None:
    a, b, ta, tb = td.ones(4, 4), td.ones(4, 4), torch.ones(4, 4), torch.ones(4, 4)
    c, tc = b[0], tb[0]
    a.add_(b)  # a version counter, as any tensor written before has
    pairs: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {
        "zeros(4, 4)": (lambda: td.zeros(4, 4), lambda: torch.zeros(4, 4)),
        "zeros(4, 4, device='cpu')": (
            lambda: td.zeros(4, 4, device="cpu"),
            lambda: torch.zeros(4, 4, device="cpu"),
        ),
        "full((4, 4), 2.0)": (lambda: td.full((4, 4), 2.0), lambda: torch.full((4, 4), 2.0)),
        "ones_like(a)": (lambda: td.ones_like(a), lambda: torch.ones_like(ta)),
        "empty_strided((4, 4), (4, 1))": (
            lambda: td.empty_strided((4, 4), (4, 1)),
            lambda: torch.empty_strided((4, 4), (4, 1)),
        ),
        "empty_strided([4, 4], [4, 1]) (lists)": (
            lambda: td.empty_strided([4, 4], [4, 1]),
            lambda: torch.empty_strided([4, 4], [4, 1]),
        ),
        "a.copy_(b)": (lambda: a.copy_(b), lambda: ta.copy_(tb)),
        "a.add_(b)": (lambda: a.add_(b), lambda: ta.add_(tb)),
        "a * b[0] (broadcast, with indexing)": (lambda: a * b[0], lambda: ta * tb[0]),
        "a * c (broadcast row, c = b[0])": (lambda: a * c, lambda: ta * tc),
        "tensor([1., 2, 3])": (lambda: td.tensor([1.0, 2, 3]), lambda: torch.tensor([1.0, 2, 3])),
        "arange(10)": (lambda: td.arange(10), lambda: torch.arange(10)),
        "arange(10.)": (lambda: td.arange(10.0), lambda: torch.arange(10.0)),
        "arange(1, 10, 2)": (lambda: td.arange(1, 10, 2), lambda: torch.arange(1, 10, 2)),
        "linspace(0, 1, 5)": (lambda: td.linspace(0, 1, 5), lambda: torch.linspace(0, 1, 5)),
        "cat([a, b])": (lambda: td.cat([a, b]), lambda: torch.cat([ta, tb])),
        "a.mean()": (lambda: a.mean(), lambda: ta.mean()),
        "a.sum()": (lambda: a.sum(), lambda: ta.sum()),
        "zeros_like(a)": (lambda: td.zeros_like(a), lambda: torch.zeros_like(ta)),
        "a.to(a.dtype)": (lambda: a.to(td.float32), lambda: ta.to(torch.float32)),
        "a.to('cpu')": (lambda: a.to("cpu"), lambda: ta.to("cpu")),
        "a.contiguous()": (lambda: a.contiguous(), lambda: ta.contiguous()),
        "a.reshape(16)": (lambda: a.reshape(16), lambda: ta.reshape(16)),
        "a.reshape(2, -1)": (lambda: a.reshape(2, -1), lambda: ta.reshape(2, -1)),
        "a.flatten()": (lambda: a.flatten(), lambda: ta.flatten()),
        "rand(4, 4)": (lambda: td.rand(4, 4), lambda: torch.rand(4, 4)),
        "a.uniform_()": (lambda: a.uniform_(), lambda: ta.uniform_()),
        "a.uniform_(-1.0, 1.0)": (lambda: a.uniform_(-1.0, 1.0), lambda: ta.uniform_(-1.0, 1.0)),
        "a.random_(0, 10)": (lambda: a.random_(0, 10), lambda: ta.random_(0, 10)),
        "a.detach()": (lambda: a.detach(), lambda: ta.detach()),
        "a.view(16) (reference)": (lambda: a.view(16), lambda: ta.view(16)),
        "a + 1 (reference)": (lambda: a + 1, lambda: ta + 1),
        "a.clone() (reference)": (lambda: a.clone(), lambda: ta.clone()),
    }
    fns: Fns = {}
    for label, (ours, theirs) in pairs.items():
        fns[f"td {label}"], fns[f"torch {label}"] = ours, theirs
    ns = best_ns(fns, number, rounds)
    print("\nper-op cost, 4x4 float32: td vs torch (one thread)")
    for label in pairs:
        ours, theirs = ns[f"td {label}"], ns[f"torch {label}"]
        print(f"  {label:40} td {ours:7.0f} ns  torch {theirs:7.0f} ns  {ours / theirs:5.2f}x")


def layers(title: str, fns: Fns, number: int, rounds: int) -> None:
    """Print a cumulative layer table: each row's time and its own cost over the row above."""
    ns = best_ns(fns, number, rounds)
    print(f"\n{title}")
    previous = None
    for label, t in ns.items():
        own = (
            "" if previous is None or label.startswith(("torch", "  ")) else f"{t - previous:+8.0f}"
        )
        print(f"  {label:52} {t:8.0f} ns {own}")
        if not label.startswith(("torch", "  ")):
            previous = t


def zeros_layers(number: int, rounds: int) -> None:
    zeros, entry = COMPOSITE_KERNELS["zeros"], op("zeros")
    f32 = td.float32
    layers(
        "td.zeros(4, 4), layer by layer (cumulative; own cost on the right)",
        {
            "np.zeros((4, 4), float32)": lambda: np.zeros((4, 4), np.float32),
            "new_cpu_tensor(np.zeros(...))": lambda: new_cpu_tensor(
                np.zeros((4, 4), np.float32), (4, 4), (4, 1), f32
            ),
            "one hop composite_fast.zeros([4, 4])": lambda: fast.zeros([4, 4], NOT_GIVEN),
            "binding td.zeros(4, 4)": lambda: td.zeros(4, 4),
            "  full path: composite zeros (direct CPU kernels)": lambda: below_ad_inplace_or_view(
                zeros, [4, 4]
            ),
            "  full path: redispatch at CPU (-> composite)": lambda: below_ad_inplace_or_view(
                entry.redispatch, CPU_RAW, [4, 4]
            ),
            "  full path: entry + BackendSelect (binding's words)": lambda: (
                below_ad_inplace_or_view(entry, [4, 4])
            ),
            "torch.zeros(4, 4)": lambda: torch.zeros(4, 4),
        },
        number,
        rounds,
    )


def arange_layers(number: int, rounds: int) -> None:
    entry, composite = op("arange"), COMPOSITE_KERNELS["arange"]
    i64, f32 = td.int64, td.float32
    layers(
        "td.arange(10), layer by layer (cumulative; own cost on the right)",
        {
            "np.arange(10, dtype=int64)": lambda: np.arange(10, dtype=np.int64),
            "arange_cpu(0, 10, 1, 10, int64)": lambda: arange_cpu(0, 10, 1, 10, i64),
            "one hop composite_fast_arange.arange((10,), None)": lambda: fast_arange.arange(
                (10,), None
            ),
            "binding td.arange(10)": lambda: td.arange(10),
            "  full path: composite arange (direct arange_cpu)": lambda: below_ad_inplace_or_view(
                composite, 10
            ),
            "  full path: entry + BackendSelect (binding's words)": lambda: (
                below_ad_inplace_or_view(entry, 10)
            ),
            "  arange(10.): one hop": lambda: fast_arange.arange((10.0,), None),
            "  arange(10.): arange_cpu (float32, via float64)": lambda: arange_cpu(
                0, 10.0, 1, 10, f32
            ),
            "torch.arange(10)": lambda: torch.arange(10),
        },
        number,
        rounds,
    )


def copy_layers(number: int, rounds: int) -> None:
    a, b, ta, tb = td.ones(4, 4), td.ones(4, 4), torch.ones(4, 4), torch.ones(4, 4)
    entry = op("copy_")
    below_autograd = a._key_set & AFTER_AUTOGRAD_RAW
    a.copy_(b)  # a version counter (made by the full path), or the hop would decline
    layers(
        "a.copy_(b), layer by layer",
        {
            "a._data[...] = b._data": lambda: a._data.__setitem__(Ellipsis, b._data),
            "CPU kernel copy_": lambda: cpu_copy_(a, b),
            "one hop composite_fast_inplace.copy_ (+ version bump)": lambda: fresh_hop.copy_(a, b),
            "method a.copy_(b)": lambda: a.copy_(b),
            "  full path: redispatch at CPU": lambda: entry.redispatch(CPU_RAW, a, b),
            "  full path: redispatch at ADInplaceOrView (bump)": lambda: entry.redispatch(
                below_autograd, a, b
            ),
            "  full path: entry (Autograd kernel)": lambda: entry(a, b),
            "torch ta.copy_(tb)": lambda: ta.copy_(tb),
        },
        number,
        rounds,
    )


def add_layers(number: int, rounds: int) -> None:
    a, b, ta, tb = td.ones(4, 4), td.ones(4, 4), torch.ones(4, 4), torch.ones(4, 4)
    na, nb = a._data, b._data
    entry, kernel = op("add_.Tensor"), CPU_INPLACE_KERNELS["add_.Tensor"]
    below_autograd = a._key_set & AFTER_AUTOGRAD_RAW
    a.add_(b)  # a version counter (made by the full path), or the hop would decline
    layers(
        "a.add_(b), layer by layer",
        {
            "np.add(na, nb, out=na)": lambda: np.add(na, nb, out=na),
            "fused CPU kernel add_": lambda: kernel(a, b),
            "one hop composite_fast_inplace.add_ (+ version bump)": lambda: fresh_hop.add_(a, b),
            "method a.add_(b)": lambda: a.add_(b),
            "  full path: redispatch at CPU": lambda: entry.redispatch(CPU_RAW, a, b),
            "  full path: redispatch at ADInplaceOrView (bump)": lambda: entry.redispatch(
                below_autograd, a, b
            ),
            "  full path: entry (Autograd kernel)": lambda: entry(a, b),
            "torch ta.add_(tb)": lambda: ta.add_(tb),
        },
        number,
        rounds,
    )


def broadcast_layers(number: int, rounds: int) -> None:
    a, b, ta, tb = td.ones(4, 4), td.ones(4, 4), torch.ones(4, 4), torch.ones(4, 4)
    c, tc = b[0], tb[0]
    na, nc = a._data, c._data
    fused = CPU_FUNCTIONAL_KERNELS["mul.Tensor"]
    layers(
        "a * c (4x4 times a (4,) row), layer by layer",
        {
            "np.multiply(na, nc) (NumPy broadcasts)": lambda: np.multiply(na, nc),
            "fused CPU kernel mul (cached broadcast plan)": lambda: fused(a, c),
            "binding a * c": lambda: a * c,
            "torch ta * tc": lambda: ta * tc,
            "  td b[0] (indexing, P2's)": lambda: b[0],
            "torch tb[0]": lambda: tb[0],
        },
        number,
        rounds,
    )


def tensor_layers(number: int, rounds: int) -> None:
    data = [1.0, 2, 3]
    layers(
        "tensor([1., 2, 3]), layer by layer",
        {
            "np.array(data) (float64)": lambda: np.array(data),
            "_flat_numbers(data) (float32 array)": lambda: creation._flat_numbers(data),
            "td.tensor(data)": lambda: td.tensor(data),
            "torch.tensor(data)": lambda: torch.tensor(data),
        },
        number,
        rounds,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40, help="timing loops (best is kept)")
    parser.add_argument("--number", type=int, default=200, help="calls per loop")
    opts = parser.parse_args()
    torch.set_num_threads(1)
    print("thread CPU time per call, best of", opts.rounds, "loops of", opts.number, "calls")
    goal_table(opts.number, opts.rounds)
    zeros_layers(opts.number, opts.rounds)
    arange_layers(opts.number, opts.rounds)
    copy_layers(opts.number, opts.rounds)
    add_layers(opts.number, opts.rounds)
    broadcast_layers(opts.number, opts.rounds)
    tensor_layers(opts.number, opts.rounds)


if __name__ == "__main__":
    main()
