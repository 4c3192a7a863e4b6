"""add through the boxed CPU fallback vs the example backend's native kernel vs CPU directly.

Run: python benchmarks/bench_fallback.py   (needs torch, for examples/torchdev)

Per tensor size, in one run, the best of 40 rounds of ~2 ms loops (shorter than a scheduler
time slice), the columns' loops interleaved round by round (us per call):

* cpu        td.add on tensordispatch CPU tensors (the direct call);
* native     td.add on torchdev tensors: torchdev's add.Tensor kernel (torch computes);
* fallback   td.add on torchdev tensors with add.Tensor routed to torchdev's boxed CPU
             fallback (its native kernel overridden for the measurement): to_cpu of both
             arguments in one call, add on CPU, from_cpu of the result;
* copies     the two device copies alone: torchdev's to_cpu([a, b]) + from_cpu([r]);
* null       the same fallback on a backend whose transfers copy nothing (payloads are the
             CPU arrays, transfers re-wrap them): the fallback's own cost plus the CPU add;
* ncopies    that backend's two transfers alone (to_cpu([a, b]) + from_cpu([r])).

Printed ratios: fallback/native, fallback/cpu, and the fallback's own overhead excluding the
device copies, measured two ways: (fallback - copies)/cpu and (null - ncopies)/cpu.
Target <= 1.2x (issue 6).
"""

from __future__ import annotations

import contextlib
import importlib
import pathlib
import sys
import timeit
import warnings
from functools import partial
from typing import Any

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples" / "torchdev"))

import torchdev

import tensordispatch as td
from tensordispatch.dispatch.kernel import fallthrough_kernel
from tensordispatch.dispatch.keys import BackendComponent
from tensordispatch.library import Library
from tensordispatch.tensor import Tensor
from tensordispatch.tensor.device import register_device_type

# The module by path: tensordispatch.backends may re-export the function under its name.
cf = importlib.import_module("tensordispatch.backends.boxed_fallback")

SIZES = (3, 10_000, 1_000_000)


def calibrate(fn: Any, budget: float) -> int:
    """A loop count for which one timeit loop of ``fn`` takes about ``budget`` seconds."""
    n = 1
    while timeit.timeit(fn, number=n) < budget and n < 1_000_000:
        n *= 2
    return n


def interleaved(
    fns: dict[str, Any],
    rounds: int = 40,
    budget: float = 0.002,
    around: dict[str, Any] | None = None,
) -> dict[str, float]:
    """Best per-call microseconds of each function over ``rounds`` rounds, the functions'
    short loops interleaved round by round: load on a shared machine then hits every column
    alike, and the best loop of each is one that ran unpreempted. ``around[name]`` is a
    context manager factory entered around that column's loops (outside the timing)."""
    around = around or {}
    nullctx = contextlib.nullcontext
    numbers = {}
    for k, fn in fns.items():
        with around.get(k, nullctx)():
            numbers[k] = calibrate(fn, budget)
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(rounds):
        for k, fn in fns.items():
            with around.get(k, nullctx)():
                best[k] = min(best[k], timeit.timeit(fn, number=numbers[k]) / numbers[k] * 1e6)
    return best


def null_backend() -> tuple[Any, list[Any], Any]:
    """PrivateUse2 backend 'nullcopy': payloads are NumPy arrays, transfers re-wrap them."""
    handles: list[Any] = [register_device_type("nullcopy", BackendComponent.PrivateUse2Bit)]
    dev = td.device("nullcopy", 0)

    def wrap(t: Tensor, device: Any) -> Tensor:
        return Tensor._make(t._data, t._shape, t._strides, 0, t.dtype, device)

    def to_cpu(ts: list[Tensor]) -> list[Tensor]:
        return [Tensor._wrap_numpy(t._data, t.dtype) for t in ts]

    def from_cpu(ts: list[Tensor], device: Any) -> list[Tensor]:
        return [wrap(t, device) for t in ts]

    backend = cf.FallbackBackend(
        "nullcopy", BackendComponent.PrivateUse2Bit, to_cpu, from_cpu, lambda s, d: None
    )
    autograd = Library("_", "IMPL")
    autograd.fallback(fallthrough_kernel, "AutogradPrivateUse2")
    handles += [autograd, cf.register_cpu_fallback(backend, "PrivateUse2")]
    return (lambda t: wrap(t, dev)), handles, (to_cpu, from_cpu)


def measure(n: int, to_null: Any, null_hooks: Any) -> tuple[float, ...]:
    """(n, cpu, native, fallback, copies, null, null copies) for float32 tensors of n
    elements."""
    a_cpu = td.from_numpy(np.linspace(0, 1, n, dtype=np.float32))
    b_cpu = td.from_numpy(np.linspace(1, 2, n, dtype=np.float32))
    a, b = torchdev.to_device(a_cpu), torchdev.to_device(b_cpu)
    an, bn = to_null(a_cpu), to_null(b_cpu)
    add = td.add
    add_op = td.ops.aten.add.Tensor
    r = add(a_cpu, b_cpu)
    rn = to_null(r)
    runtime = torchdev.runtime
    registration = torchdev._INSTALLED[2]

    @contextlib.contextmanager
    def through_fallback() -> Any:
        """add.Tensor on torchdev routed to torchdev's registered fallback kernel."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the override warning
            over = Library("aten", "IMPL")
            over.impl("add.Tensor", partial(registration.kernel, add_op), "PrivateUse1")
        try:
            yield
        finally:
            over._destroy()

    t = interleaved(
        {
            "cpu": lambda: add(a_cpu, b_cpu),
            "native": lambda: add(a, b),
            "fallback": lambda: add(a, b),
            "to_cpu": lambda: runtime.batched_to_cpu([a, b]),
            "from_cpu": lambda: runtime.batched_from_cpu([r], torchdev.DEVICE),
            "null": lambda: add(an, bn),
            "null_to_cpu": lambda: null_hooks[0]([an, bn]),
            "null_from_cpu": lambda: null_hooks[1]([r], rn.device),
        },
        around={"fallback": through_fallback},
    )
    cpu = t["cpu"]
    copies = t["to_cpu"] + t["from_cpu"]
    null_copies = t["null_to_cpu"] + t["null_from_cpu"]
    return (n, cpu, t["native"], t["fallback"], copies, t["null"], null_copies)


def main() -> None:
    import torch

    # One thread, like our NumPy kernels; a busy machine makes torch's thread pool spin.
    torch.set_num_threads(1)
    to_null, handles, null_hooks = null_backend()
    rows = [measure(n, to_null, null_hooks) for n in SIZES]
    for h in reversed(handles):
        h._destroy() if isinstance(h, Library) else h.remove()

    print("add(a, b), float32, microseconds per call (best of 40 interleaved 2 ms loops)")
    head = f"{'n':>9} {'cpu':>8} {'native':>8} {'fallback':>9} {'copies':>8} {'null':>8}"
    head += f" {'ncopies':>8}"
    print(head + "   fb/native  fb/cpu  (fb-copies)/cpu  (null-ncopies)/cpu")
    for n, cpu, native, fallback, copies, null, ncopies in rows:
        print(
            f"{n:>9} {cpu:8.2f} {native:8.2f} {fallback:9.2f} {copies:8.2f} {null:8.2f}"
            f" {ncopies:8.2f}   {fallback / native:8.2f}x {fallback / cpu:6.2f}x "
            f"{(fallback - copies) / cpu:14.2f}x {(null - ncopies) / cpu:16.2f}x"
        )


if __name__ == "__main__":
    main()
