"""Per-op cost of indexing and views on small CPU tensors, side by side with torch (issue 4).

Run: python benchmarks/bench_indexing.py [--rounds R] [--number N]

Every row times one callable as the best of R timeit loops of N calls each, all rows of a
table interleaved loop by loop, with thread CPU time (time.thread_time) so that other
processes on a shared machine distort little; a lambda doing nothing is timed alongside and
subtracted. torch runs single-threaded. Tables:

* ``td / torch``: basic indexing (int, slice, column, None), views (view, t), advanced
  indexing (list, int tensor, bool mask) and assignments (basic and advanced) on a 4x4
  float32 tensor, each row with its ratio to torch's;
* layers of ``a[1:3]``, ``a[[0, 1]]`` and ``a[1:3] = b``: NumPy's own operation, the one-hop
  paths (ops/indexing_fast.py, ops/indexing_advanced.py), the view kernel alone, the
  operator through the dispatcher, the general path of ``__getitem__`` (one-hop paths off)
  and the whole call, next to torch's.
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
from tensordispatch.backends import views
from tensordispatch.backends.aten import op
from tensordispatch.ops import indexing, indexing_advanced, indexing_fast

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


def side_by_side(
    pairs: dict[str, tuple[Callable[[], Any], Callable[[], Any]]], n: int, r: int
) -> None:
    fns: Fns = {}
    for label, (ours, theirs) in pairs.items():
        fns[f"td {label}"] = ours
        fns[f"torch {label}"] = theirs
    ns = best_ns(fns, n, r)
    print(f"\n{'expression (4x4 float32)':28} {'td ns':>9} {'torch ns':>9} {'td/torch':>9}")
    for label in pairs:
        ours, theirs = ns[f"td {label}"], ns[f"torch {label}"]
        print(f"  {label:26} {ours:9.0f} {theirs:9.0f} {ours / theirs:8.2f}x")


def layers(title: str, fns: Fns, ref: str, n: int, r: int) -> None:
    ns = best_ns(fns, n, r)
    print(f"\n{title}")
    for label, t in ns.items():
        print(f"  {label:58} {t:8.0f} ns  {t / ns[ref]:6.2f}x {ref}")


def _general_path(fn: Callable[[], Any]) -> Callable[[], Any]:
    """``fn`` with the one-hop paths declined (plain_cpu answers False)."""

    def call() -> Any:
        saved = indexing.plain_cpu
        indexing.plain_cpu = lambda t: False
        try:
            return fn()
        finally:
            indexing.plain_cpu = saved

    return call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--number", type=int, default=2000)
    args = parser.parse_args()
    n, r = args.number, args.rounds
    torch.set_num_threads(1)

    arr = np.arange(16, dtype=np.float32).reshape(4, 4)
    a, ta = td.tensor(arr.copy()), torch.tensor(arr.copy())
    b, tb = td.zeros(2, 4), torch.zeros(2, 4)
    m, tm = a > 5, ta > 5
    i, ti = td.tensor([0, 2]), torch.tensor([0, 2])
    v, tv = td.ones(2, 4), torch.ones(2, 4)

    def setter(x: Any, key: Any, value: Any) -> Callable[[], None]:
        def call() -> None:
            x[key] = value

        return call

    sl, rows = slice(1, 3), [0, 1]
    side_by_side(
        {
            "a[1]": (lambda: a[1], lambda: ta[1]),
            "a[1:3]": (lambda: a[1:3], lambda: ta[1:3]),
            "a[:, 1]": (lambda: a[:, 1], lambda: ta[:, 1]),
            "a[1, 2]": (lambda: a[1, 2], lambda: ta[1, 2]),
            "a[..., None]": (lambda: a[..., None], lambda: ta[..., None]),
            "a[::2, 1:]": (lambda: a[::2, 1:], lambda: ta[::2, 1:]),
            "a.view(16)": (lambda: a.view(16), lambda: ta.view(16)),
            "a.t()": (lambda: a.t(), lambda: ta.t()),
            "a.transpose(0, 1)": (lambda: a.transpose(0, 1), lambda: ta.transpose(0, 1)),
            "a[[0, 1]]": (lambda: a[rows], lambda: ta[rows]),
            "a[i] (int64 tensor)": (lambda: a[i], lambda: ta[ti]),
            "a[m] (bool mask)": (lambda: a[m], lambda: ta[tm]),
            "a[1:3] = b": (setter(a, sl, b), setter(ta, sl, tb)),
            "a[0] = 1.0": (setter(a, 0, 1.0), setter(ta, 0, 1.0)),
            "a[:, 1] = 2.0": (setter(a, (slice(None), 1), 2.0), setter(ta, (slice(None), 1), 2.0)),
            "a[m] = 0": (setter(a, m, 0), setter(ta, tm, 0)),
            "a[[0, 1]] = v": (setter(a, rows, v), setter(ta, rows, tv)),
            "a[i] = v": (setter(a, i, v), setter(ta, ti, tv)),
        },
        n,
        r,
    )

    slice_op, index_op, copy_op = op("slice.Tensor"), op("index.Tensor"), op("copy_")
    layers(
        "a[1:3], layer by layer",
        {
            "numpy arr[1:3]": lambda: arr[1:3],
            "one-hop view (indexing_fast.basic_view)": lambda: indexing_fast.basic_view(a, sl),
            "view kernel (backends/views.slice)": lambda: views.slice(a, 0, 1, 3, 1),
            "op slice.Tensor (dispatcher, autograd entry, kernel)": lambda: slice_op(a, 0, 1, 3),
            "a[1:3], general path (parse + op)": _general_path(lambda: a[1:3]),
            "a[1:3]": lambda: a[1:3],
            "torch ta[1:3]": lambda: ta[1:3],
        },
        "torch ta[1:3]",
        n,
        r,
    )
    li = td.tensor(rows)
    layers(
        "a[[0, 1]], layer by layer",
        {
            "numpy arr.take([0, 1], axis=0)": lambda: arr.take(rows, axis=0),
            "one-hop (indexing_advanced.advanced_index)": lambda: indexing_advanced.advanced_index(
                a, rows
            ),
            "td.tensor([0, 1]) (the general path's index)": lambda: td.tensor(rows),
            "op index.Tensor (dispatcher, meta, kernel)": lambda: index_op(a, [li]),
            "a[[0, 1]], general path": _general_path(lambda: a[rows]),
            "a[[0, 1]]": lambda: a[rows],
            "torch ta[[0, 1]]": lambda: ta[rows],
        },
        "torch ta[[0, 1]]",
        n,
        r,
    )
    view = a[1:3]
    layers(
        "a[1:3] = b, layer by layer",
        {
            "numpy arr[1:3] = barr": setter(arr, sl, b._data),
            "one-hop (indexing_fast.assign)": lambda: indexing_fast.assign(a, sl, b),
            "op copy_ on the view (dispatcher, autograd, ADInplaceOrView)": lambda: copy_op(
                view, b
            ),
            "a[1:3] = b, general path": _general_path(setter(a, sl, b)),
            "a[1:3] = b": setter(a, sl, b),
            "torch ta[1:3] = tb": setter(ta, sl, tb),
        },
        "torch ta[1:3] = tb",
        n,
        r,
    )


if __name__ == "__main__":
    main()
