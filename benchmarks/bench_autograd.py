"""Autograd speed side by side with torch, in one run, printing ratios against issue 5's targets.

    python benchmarks/bench_autograd.py

Every ratio is ours / the reference's time (lower is faster), as issue 5 words its targets:

1. forward + backward of ``(a * b + c).sum()`` on 3-element tensors: ours / torch <= 0.6x
   (ours takes at most 0.6 times torch's time);
2. the no-grad call ``td.add(a, b)`` with the autograd kernels registered / removed (the
   call before issue 5): <= 1.1x;
3. one training step (forward, backward, SGD update) of an MLP 64-128-10 on a batch of 32:
   ours / torch <= 1.0x.

``--cpu`` times with the process's CPU time (time.process_time) instead of the wall clock: on
a machine shared with other jobs, waiting for a CPU then counts for neither side (both run
single-threaded here), so the ratios move less with the load.
"""

from __future__ import annotations

import sys
import time
import timeit
from collections.abc import Callable

import torch

import tensordispatch as td
import tensordispatch.autograd
from tensordispatch.autograd import registration

torch.set_num_threads(1)


TIMER = time.process_time if "--cpu" in sys.argv else time.perf_counter


def best(fn: Callable[[], object], number: int, repeat: int = 7) -> float:
    """Best time per call in microseconds."""
    return min(timeit.repeat(fn, number=number, repeat=repeat, timer=TIMER)) / number * 1e6


def side_by_side(
    theirs: Callable[[], object], ours: Callable[[], object], number: int, rounds: int = 7
) -> tuple[float, float]:
    """Best time of each, measured in alternating rounds (the machine's load drifts)."""
    t, d = [], []
    for _ in range(rounds):
        t.append(best(theirs, number, 1))
        d.append(best(ours, number, 1))
    return min(t), min(d)


def verdict(ratio: float, target: float) -> str:
    """``ratio`` against its target, e.g. ``1.71x (target <= 0.6x: NOT met)``."""
    met = "met" if ratio <= target else "NOT met"
    return f"{ratio:5.2f}x (target <= {target}x: {met})"


def fwd_bwd() -> None:
    ta, tb, tc = (torch.tensor([1.0, 2.0, 3.0], requires_grad=True) for _ in range(3))
    da, db, dc = (td.tensor([1.0, 2.0, 3.0]).requires_grad_() for _ in range(3))

    def t_step() -> None:
        (ta * tb + tc).sum().backward()

    def d_step() -> None:
        (da * db + dc).sum().backward()

    t, d = side_by_side(t_step, d_step, 2000)
    print(
        f"fwd+bwd (a*b+c).sum() 3 elems: torch {t:7.2f} us  ours {d:7.2f} us  "
        f"ours/torch {verdict(d / t, 0.6)}"
    )


def no_grad_overhead() -> None:
    a, b = td.tensor([1.0, 2.0, 3.0]), td.tensor([1.0, 2.0, 3.0])
    with_ag, without = [], []
    for _ in range(9):  # interleaved: the machine's load drifts
        with_ag.append(best(lambda: td.add(a, b), 20000, 3))
        registration.uninstall()
        without.append(best(lambda: td.add(a, b), 20000, 3))
        registration.install()
    w, wo = min(with_ag), min(without)
    ta, tb = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0, 3.0])
    t = best(lambda: torch.add(ta, tb), 20000)
    print(
        f"no-grad td.add 3 elems: with autograd kernels {w:6.2f} us  without {wo:6.2f} us  "
        f"with/without {verdict(w / wo, 1.1)}  (torch.add {t:5.2f} us)"
    )


def mlp_step() -> None:
    try:
        from tensordispatch import nn, optim
    except ImportError:
        print("MLP step: tensordispatch.nn / optim not available")
        return
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 64)).astype(np.float32)
    y = rng.integers(0, 10, 32)
    tm = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    dm = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    topt = torch.optim.SGD(tm.parameters(), lr=0.1)
    dopt = optim.SGD(dm.parameters(), lr=0.1)
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)
    dx, dy = td.from_numpy(x), td.from_numpy(y)
    tloss, dloss = torch.nn.CrossEntropyLoss(), nn.CrossEntropyLoss()

    def t_step() -> None:
        topt.zero_grad()
        tloss(tm(tx), ty).backward()
        topt.step()

    def d_step() -> None:
        dopt.zero_grad()
        dloss(dm(dx), dy).backward()
        dopt.step()

    t, d = side_by_side(t_step, d_step, 50)
    print(
        f"MLP 64-128-10 batch 32 SGD step: torch {t:8.1f} us  ours {d:8.1f} us  "
        f"ours/torch {verdict(d / t, 1.0)}"
    )


def breakdown() -> None:
    """Where fwd+bwd's time goes, per layer (``--breakdown``; torch alongside where it has
    the same step): the plain forward, each op recorded, backward() on a kept graph, and the
    engine's node applies run alone on it (the engine's own cost is the difference)."""
    from tensordispatch.autograd import engine, no_grad

    da, db, dc = (td.tensor([1.0, 2.0, 3.0]).requires_grad_() for _ in range(3))
    ta, tb, tc = (torch.tensor([1.0, 2.0, 3.0], requires_grad=True) for _ in range(3))
    pa, pb, pc = (t.detach() for t in (da, db, dc))
    qa, qb, qc = (t.detach() for t in (ta, tb, tc))
    rows: list[tuple[str, Callable[[], object], Callable[[], object] | None]] = [
        ("plain forward (a*b+c).sum()", lambda: (pa * pb + pc).sum(), lambda: (qa * qb + qc).sum()),
        ("  a * b, plain", lambda: pa * pb, lambda: qa * qb),
        ("  x.sum(), plain", lambda: pa.sum(), lambda: qa.sum()),
        ("recorded forward", lambda: (da * db + dc).sum(), lambda: (ta * tb + tc).sum()),
        ("  a * b, recorded", lambda: da * db, lambda: ta * tb),
        ("  x.sum(), recorded", lambda: da.sum(), lambda: ta.sum()),
        ("fwd + bwd", lambda: (da * db + dc).sum().backward(),
         lambda: (ta * tb + tc).sum().backward()),
    ]  # fmt: skip
    loss = (da * db + dc).sum()
    sum_node = loss.grad_fn
    add_node = sum_node.next_functions[0][0]
    mul_node, acc_c = (n for n, _ in add_node.next_functions)
    seed = engine._ones(loss)
    with no_grad():  # what the engine runs them under (create_graph=False)
        g = sum_node.apply([seed])[0]
        applies = [
            ("  SumBackward0.apply", lambda: sum_node.apply([seed])),
            ("  AddBackward0.apply", lambda: add_node.apply([g])),
            ("  MulBackward0.apply", lambda: mul_node.apply([g])),
            ("  AccumulateGrad.apply (+= into .grad)", lambda: acc_c.apply([g])),
            ("  seed (ones)", lambda: engine._ones(loss)),
        ]
        timed = [(name, best(fn, 3000)) for name, fn in applies]
    # the whole backward() on a kept graph: minus the applies and the seed, the engine's own
    kept, tkept = (da * db + dc).sum(), (ta * tb + tc).sum()
    rows.append(
        (
            "backward(retain_graph=True), kept graph",
            lambda: kept.backward(retain_graph=True),
            lambda: tkept.backward(retain_graph=True),
        )
    )
    for name, ours, theirs in rows:
        t = f"{best(theirs, 3000):7.2f}" if theirs is not None else "      -"
        print(f"{name:40s} ours {best(ours, 3000):7.2f} us   torch {t} us")
    for name, us in timed:
        print(f"{name:40s} ours {us:7.2f} us")


if __name__ == "__main__":
    print(f"timer: {'CPU time (--cpu)' if TIMER is time.process_time else 'wall clock'}")
    if "--breakdown" in sys.argv:
        breakdown()
    fwd_bwd()
    no_grad_overhead()
    mlp_step()
