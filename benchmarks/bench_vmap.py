"""vmap speed side by side with torch.func, in one run, printing ratios (ours / torch).

    python benchmarks/bench_vmap.py

1. vmap of a 10-operator pointwise + reduction function over a batch of 64 samples of
   shape [32] vs torch.func.vmap (issue 7 target: <= 1.0x);
2. one operator through its batching rule vs through the for-loop fallback (the rule
   removed from the table for the measurement), batch 64: the ratio;
3. per-sample gradients of an MLP 16-32-4 over a batch of 64 (vmap(grad(loss))) vs
   torch.func (target: <= 1.0x).

Times are the best of 40 short alternating rounds (the machine's load drifts; many short
rounds give both sides the same chances of a quiet moment); ratios are printed.
"""

from __future__ import annotations

import timeit
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
import torch.func as tf

import tensordispatch as td
from tensordispatch.transforms.vmap import RULES, grad, reset_vmap_fallback_counts, vmap

torch.set_num_threads(1)


def best(fn: Callable[[], object], number: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=1)) / number * 1e6


def side_by_side(
    theirs: Callable[[], object], ours: Callable[[], object], number: int, rounds: int = 40
) -> tuple[float, float]:
    t, d = [], []
    for _ in range(rounds):
        t.append(best(theirs, number))
        d.append(best(ours, number))
    return min(t), min(d)


def report(label: str, theirs: float, ours: float) -> None:
    print(
        f"{label:<44} torch {theirs:9.1f} us  ours {ours:9.1f} us  ours/torch {ours / theirs:6.2f}x"
    )


def pointwise_reduction(lib: Any) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:  # 10 operators
        y = x * 2.0
        y = y + 1.0
        y = lib.sin(y)
        y = y * x
        y = lib.exp(y)
        y = y - x
        y = lib.tanh(y)
        y = y / 3.0
        s = y.sum(0)
        return s * 0.5

    return f


def bench_pointwise() -> None:
    a = np.random.default_rng(0).standard_normal((64, 32)).astype(np.float32)
    tx, dx = torch.from_numpy(a.copy()), td.from_numpy(a.copy())
    tfn, dfn = tf.vmap(pointwise_reduction(torch)), vmap(pointwise_reduction(td))
    np.testing.assert_allclose(dfn(dx).numpy(), tfn(tx).numpy(), rtol=1e-5)
    t, d = side_by_side(lambda: tfn(tx), lambda: dfn(dx), 20)
    report("vmap 10-op pointwise+reduction, batch 64", t, d)


def bench_rule_vs_fallback() -> None:
    a = np.random.default_rng(1).standard_normal((64, 32)).astype(np.float32)
    dx = td.from_numpy(a.copy())
    fn = vmap(lambda r: r.sin())
    fn(dx)  # installs the table
    rule_times, loop_times = [], []
    for _ in range(15):  # alternating rounds, as side_by_side
        rule_times.append(best(lambda: fn(dx), 50))
        saved = RULES.pop("aten::sin")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                loop_times.append(best(lambda: fn(dx), 3))
        finally:
            RULES["aten::sin"] = saved
    reset_vmap_fallback_counts()
    rule_time, loop_time = min(rule_times), min(loop_times)
    print(
        f"{'sin, batch 64: rule vs for-loop fallback':<44} rule {rule_time:9.1f} us  loop "
        f"{loop_time:9.1f} us  loop/rule {loop_time / rule_time:6.2f}x"
    )


def mlp_loss(lib: Any) -> Callable[..., Any]:
    def loss(w1: Any, b1: Any, w2: Any, b2: Any, x: Any, y: Any) -> Any:
        h = lib.tanh(x @ w1 + b1)
        out = h @ w2 + b2
        return ((out - y) ** 2).mean()

    return loss


def bench_per_sample_grads() -> None:
    rng = np.random.default_rng(2)
    shapes = [(16, 32), (32,), (32, 4), (4,), (64, 16), (64, 4)]
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    targs = [torch.from_numpy(a.copy()) for a in arrays]
    dargs = [td.from_numpy(a.copy()) for a in arrays]
    dims = (None, None, None, None, 0, 0)
    tfn = tf.vmap(tf.grad(mlp_loss(torch), argnums=(0, 1, 2, 3)), in_dims=dims)
    dfn = vmap(grad(mlp_loss(td), argnums=(0, 1, 2, 3)), in_dims=dims)
    for o, r in zip(dfn(*dargs), tfn(*targs), strict=True):
        np.testing.assert_allclose(o.numpy(), r.numpy(), rtol=1e-4, atol=1e-5)
    t, d = side_by_side(lambda: tfn(*targs), lambda: dfn(*dargs), 5)
    report("per-sample grads MLP 16-32-4, batch 64", t, d)


if __name__ == "__main__":
    bench_pointwise()
    bench_rule_vs_fallback()
    bench_per_sample_grads()
