"""Per-layer cost of small eager CPU operators, side by side with torch and NumPy (issue 4).

Run: python benchmarks/bench_op_layers.py [--rounds R] [--number N]

Every row times one callable as the best of R timeit loops of N calls each, all rows of a
table interleaved loop by loop, with thread CPU time (time.thread_time) rather than wall time
so that other processes on a shared machine distort little; a lambda doing nothing is timed
alongside and subtracted. Rows of a table are cumulative: each calls one layer directly, from
the NumPy call up to the Python binding, so the difference between two rows is one layer's
own cost. Tables:

* ``td.add(a, b)`` on 3-element float32 tensors: np.add, the floor sketch (np.add plus the
  barest Tensor), the fused CPU kernel (Note [Fused functional kernels]) next to the unfused
  meta + fresh path it replaced, the kernel below the Autograd key (redispatch), the
  dispatcher entry, the OpOverload, the binding; then torch.add and torch's aten op;
* the same for ``td.sin(a)`` (a unary op that silences NumPy's FP warnings: the prepared
  quiet context, Note [Quiet context], next to the set/reset of NumPy's error state);
* views of a 3x4 float32 tensor (view, transpose, select, slice, t) vs torch, and a view
  array built from the storage (Tensor._view_array) vs NumPy's own reshape;
* a few other small ops vs torch (broadcast add, add of transposed operands, mul by a
  Python scalar, sum, ones_like, clone) and the 20-op chain of bench_ops.py.
"""

from __future__ import annotations

import argparse
import sys
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

import tensordispatch as td
from tensordispatch.backends.aten import op
from tensordispatch.backends.cpu.fpstate import FP_QUIET, FP_STATE, QUIET_RUN
from tensordispatch.backends.cpu.fresh import CPU_FRESH_KERNELS, CPU_FUNCTIONAL_KERNELS
from tensordispatch.backends.meta import META_FUNCTIONS
from tensordispatch.backends.views import VIEW_KERNELS
from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import DispatchKeySet
from tensordispatch.tensor.tensor import Tensor

sys.path.insert(0, str(Path(__file__).parent))
from bench_ops import chain  # the 20-op chain, shared with bench_ops.py

Fns = dict[str, Callable[[], Any]]


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


def show(title: str, ns: dict[str, float], ref: str | None = None) -> None:
    """Print one table; with ``ref``, every row's ratio to that row."""
    print(f"\n{title}")
    for label, t in ns.items():
        ratio = f"{t / ns[ref]:6.2f}x {ref}" if ref else ""
        print(f"  {label:52} {t:8.0f} ns  {ratio}")


def bare_tensor(a: Tensor, data: Any) -> Tensor:
    """Not library code: the least a NumPy-backed result can be (one 12-slot Tensor)."""
    t = object.__new__(Tensor)
    t._data = data
    t._key_set, t._shape, t._strides, t._offset = a._key_set, a._shape, a._strides, 0
    t.dtype, t.device, t._storage, t._vc, t._base = a.dtype, a.device, None, None, None
    t._wrapped_number, t._autograd_meta = False, None
    return t


def below_autograd() -> DispatchKeySet:
    """The key set the Autograd kernel redispatches a plain CPU call with."""
    return DispatchKeySet(DispatchKey.CPU)


def add_table(number: int, rounds: int) -> None:
    na = np.arange(3, dtype=np.float32)
    nb = na + 1
    a, b = td.from_numpy(na), td.from_numpy(nb)
    ta, tb = torch.from_numpy(na), torch.from_numpy(nb)
    overload = op("add.Tensor")
    td.add(a, b)  # the entry function is generated on first use
    entry = overload._entry.entry_function
    fused = CPU_FUNCTIONAL_KERNELS["add.Tensor"]
    meta, fresh = META_FUNCTIONS["add.Tensor"], CPU_FRESH_KERNELS["add_out"]
    ks = below_autograd()

    def unfused(x: Tensor, y: Tensor) -> Tensor:  # the generated wrapper before the fusion
        specs, pre = meta(None, x, y, 1)
        return fresh(pre, specs[0], x, y, 1)

    ns = best_ns(
        {
            "np.add(na, nb)": lambda: np.add(na, nb),
            "floor sketch: np.add + bare Tensor": lambda: bare_tensor(a, np.add(na, nb)),
            "fused CPU kernel add.Tensor(a, b)": lambda: fused(a, b),
            "  (unfused: meta + fresh kernel, as before)": lambda: unfused(a, b),
            "redispatch below Autograd (CPU kernel)": lambda: overload.redispatch(ks, a, b),
            "dispatcher entry (keyset, Autograd, CPU)": lambda: entry(a, b),
            "OpOverload aten.add.Tensor(a, b)": lambda: overload(a, b),
            "binding td.add(a, b)": lambda: td.add(a, b),
            "torch.add(ta, tb)": lambda: torch.add(ta, tb),
            "torch.ops.aten.add.Tensor(ta, tb)": lambda: torch.ops.aten.add.Tensor(ta, tb),
        },
        number,
        rounds,
    )
    show("td.add(a, b), 3 x float32, layer by layer (cumulative)", ns, "torch.add(ta, tb)")
    own = [
        ("NumPy ufunc", "np.add(na, nb)", None),
        ("result Tensor + fast-path checks", "fused CPU kernel add.Tensor(a, b)", "np.add(na, nb)"),
        (
            "redispatch hop",
            "redispatch below Autograd (CPU kernel)",
            "fused CPU kernel add.Tensor(a, b)",
        ),
        (
            "dispatcher entry + Autograd kernel",
            "dispatcher entry (keyset, Autograd, CPU)",
            "fused CPU kernel add.Tensor(a, b)",
        ),
        (
            "OpOverload __call__",
            "OpOverload aten.add.Tensor(a, b)",
            "dispatcher entry (keyset, Autograd, CPU)",
        ),
        ("binding", "binding td.add(a, b)", "OpOverload aten.add.Tensor(a, b)"),
    ]
    print("  own cost per layer:")
    for label, outer, inner in own:
        print(f"    {label:50} {ns[outer] - (ns[inner] if inner else 0):8.0f} ns")
    print(f"  td.add / np.add: {ns['binding td.add(a, b)'] / ns['np.add(na, nb)']:.2f}x")


def sin_table(number: int, rounds: int) -> None:
    na = np.linspace(0, 1, 3, dtype=np.float32)
    a, ta = td.from_numpy(na), torch.from_numpy(na)
    fused = CPU_FUNCTIONAL_KERNELS["sin"]

    def set_reset() -> Any:
        token = FP_STATE.set(FP_QUIET)
        try:
            return np.sin(na)
        finally:
            FP_STATE.reset(token)

    ns = best_ns(
        {
            "np.sin(na)": lambda: np.sin(na),
            "np.sin, quiet: FP_STATE set/reset (before)": set_reset,
            "np.sin, quiet: QUIET_RUN (prepared context)": lambda: QUIET_RUN(np.sin, na),
            "fused CPU kernel sin(a)": lambda: fused(a),
            "binding td.sin(a)": lambda: td.sin(a),
            "torch.sin(ta)": lambda: torch.sin(ta),
        },
        number,
        rounds,
    )
    show(
        "td.sin(a), 3 x float32 (NumPy's FP warnings off, as torch never warns)",
        ns,
        "torch.sin(ta)",
    )


def view_table(number: int, rounds: int) -> None:
    n = np.arange(12, dtype=np.float32).reshape(3, 4)
    a, t = td.from_numpy(n), torch.from_numpy(n)
    f32 = a.dtype
    view = VIEW_KERNELS["view"]
    ns = best_ns(
        {
            "np reshape (NumPy-derived view data)": lambda: n.reshape((4, 3)),
            "Tensor._view_array (built over the storage)": lambda: a._view_array(
                (4, 3), (3, 1), 0, f32
            ),
            "Tensor._make_view(..., data=None): builds it": lambda: a._make_view((4, 3), (3, 1), 0),
            "view kernel (CPU) view(a, (4, 3))": lambda: view(a, (4, 3)),
            "td a.view(4, 3)": lambda: a.view(4, 3),
            "torch t.view(4, 3)": lambda: t.view(4, 3),
            "td a.transpose(0, 1)": lambda: a.transpose(0, 1),
            "torch t.transpose(0, 1)": lambda: t.transpose(0, 1),
            "td a.select(0, 1)": lambda: a.select(0, 1),
            "torch t.select(0, 1)": lambda: t.select(0, 1),
            "td a.t()": lambda: a.t(),
            "torch t.t()": lambda: t.t(),
            "td a[1:3]": lambda: a[1:3],
            "torch t[1:3]": lambda: t[1:3],
        },
        number,
        rounds,
    )
    show("views of a 3x4 float32 tensor", ns)
    for name in ("view(4, 3)", "transpose(0, 1)", "select(0, 1)", "t()"):
        ours, theirs = ns[f"td a.{name}"], ns[f"torch t.{name}"]
        print(f"  {name:16} td/torch {ours / theirs:5.2f}x")
    print(f"  {'[1:3]':16} td/torch {ns['td a[1:3]'] / ns['torch t[1:3]']:5.2f}x")


def other_table(number: int, rounds: int) -> None:
    n = np.arange(12, dtype=np.float32).reshape(3, 4)
    r = np.arange(4, dtype=np.float32)
    a, ar, t, tr = td.from_numpy(n), td.from_numpy(r), torch.from_numpy(n), torch.from_numpy(r)
    rng = np.random.default_rng(0)
    xs = [rng.random(3, dtype=np.float32) for _ in range(3)]
    xs[1] += 1
    dx, dy, dz = (td.from_numpy(v) for v in xs)
    tx, ty, tz = (torch.from_numpy(v) for v in xs)
    acc_d, acc_t = td.from_numpy(n.copy()), torch.from_numpy(n.copy())  # in-place targets
    pairs: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {
        "add_ (3, 4) += (3, 4), in place": (lambda: acc_d.add_(a), lambda: acc_t.add_(t)),
        "add (3, 4) + (4,) broadcast": (lambda: td.add(a, ar), lambda: torch.add(t, tr)),
        "add of transposed (4, 3)": (lambda: td.add(a.t(), a.t()), lambda: torch.add(t.t(), t.t())),
        "mul (3, 4) * 2.0": (lambda: td.mul(a, 2.0), lambda: torch.mul(t, 2.0)),
        "sum (3, 4)": (lambda: td.sum(a), lambda: torch.sum(t)),
        "ones_like (3, 4)": (lambda: td.ones_like(a), lambda: torch.ones_like(t)),
        "clone (3, 4)": (lambda: a.clone(), lambda: t.clone()),
        "20-op chain, 3 x f32 (per op)": (
            lambda: chain(td, dx, dy, dz),
            lambda: chain(torch, tx, ty, tz),
        ),
    }
    fns: Fns = {}
    for label, (ours, theirs) in pairs.items():
        fns[f"td {label}"], fns[f"torch {label}"] = ours, theirs
    ns = best_ns(fns, number, rounds)
    print("\nother small ops: td vs torch")
    for label in pairs:
        ours, theirs = ns[f"td {label}"], ns[f"torch {label}"]
        per = 20 if "chain" in label else 1
        print(f"  {label:36} td {ours / per:8.0f} ns  torch {theirs / per:8.0f} ns  "
              f"{ours / theirs:5.2f}x")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=60, help="timing loops (best is kept)")
    parser.add_argument("--number", type=int, default=200, help="calls per loop")
    opts = parser.parse_args()
    print("thread CPU time per call, best of", opts.rounds, "loops of", opts.number, "calls")
    add_table(opts.number, opts.rounds)
    sin_table(opts.number, opts.rounds)
    view_table(opts.number, opts.rounds)
    other_table(max(opts.number // 10, 5), opts.rounds)


if __name__ == "__main__":
    main()
