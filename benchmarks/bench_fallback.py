"""add through the CPU fallback vs the example backend's native kernel vs CPU directly.

Run: python benchmarks/bench_fallback.py   (needs torch, for examples/torchdev)

Per tensor size, in one run, the best of 40 rounds of ~2 ms loops, the columns' loops
interleaved round by round, timed in THREAD CPU TIME (``time.thread_time``): time the process
spends preempted is not counted, so a loaded machine does not inflate the columns unevenly
(on a shared 2-CPU machine, a wall-clock loop longer than a scheduler slice came out up to
3x slower: 5000-call loops of ``np.ones(3)`` took 2.4 us a call, 100-call loops 0.8 us).
Every column is warmed up once after its registration context is entered. Microseconds per
call:

* cpu       td.add on tensordispatch CPU tensors (the direct call);
* kernel    add's CPU kernel called directly (what the fallback calls on the CPU copies);
* native    td.add on torchdev tensors: torchdev's add.Tensor kernel (torch computes);
* fallback  td.add on torchdev tensors with torchdev's add.Tensor registration removed
            around the column's loops, so add reaches torchdev's PrivateUse1 fallback
            exactly as an operator torchdev does not implement: one to_cpu call for both
            arguments, add on CPU, one from_cpu call for the result;
* ideal     td.add on torchdev tensors with an ideal fallback registered as add.Tensor's
            PrivateUse1 kernel around the column's loops: a function with the schema's
            parameters that only calls the hooks and the CPU kernel (log, to_cpu, kernel,
            from_cpu), reached through the dispatcher as the fallback's runner is;
* copies    torchdev's two transfers, each timed alone: to_cpu([a, b]) + from_cpu([r]);
* log       torchdev's logging hook timed alone;
* pipe      the ideal kernel's body as a plain function, called directly;
* null, nideal, ncopies, npipe
            the same four on a backend whose transfers copy nothing (payloads are the CPU
            arrays, transfers re-wrap them, no logging hook).

Ratios. The fallback's own overhead excluding the two device copies (issue 6: <= 1.2x the
direct CPU call), two ways for each backend:

* (fallback - copies) / cpu and (null - ncopies) / cpu: the copies timed alone;
* in situ: (fallback - pipe + kernel) / cpu and (null - npipe + kernel) / cpu: the copies
  timed in the sequence they run in inside the fallback. fallback - pipe is what the
  dispatcher and the fallback's runner add to that sequence; adding kernel (the CPU work)
  and dividing by cpu (dispatcher + the same CPU work) gives the ratio. Every column carries
  one call from the timing loop; the pipe function's own call (~0.03 us) counts as copies.

and, to show what the first way charges to any fallback, the first way applied to the ideal
kernel: (ideal - copies) / cpu, (nideal - ncopies) / cpu. The last table prints, in us, the
fallback's own cost in situ (fallback - ideal: its key set tests, counter, optional-argument
test) and how much more the hooks and the kernel cost run in sequence than timed alone
(pipe - (copies + log + kernel)).

Why the two ways differ. Code timed alone in a tight loop keeps its code and data in the
first-level caches; run in sequence, the same code does not fit and runs slower. Counted on
the null backend at n = 3 with callgrind (instructions and simulated caches, 5000 calls each,
per call):

* to_cpu then the kernel execute the same instructions as the two run alone (20,490 vs
  20,567) but miss the L1 instruction cache 649 times against 370 + 89, the L1 data cache
  210 times against 71 + 41; to_cpu then a bare ``np.add`` on the same arrays: 16,125
  instructions against 12,379 + 3,742, 548 instruction-cache misses against 89 + 154;
* the whole fallback call (null) against the direct call (cpu): (null - ncopies) / cpu is
  1.12x counted in instructions, where it reads ~1.35x timed;
* the runner executes ~850 instructions more than the same function without its checks
  (2000 calls): its two key set tests ~400 (big-int comparisons), the counter ~260, the
  omitted-alpha test ~130. Timed alone these are ~30, ~18 and ~5 ns; each is needed (the
  fast branch's guard, ``fallback_counts``, the caller's alpha).

Timed (thread CPU time), to_cpu then the kernel costs ~0.14 us more than the two alone, and
even allocating one object before a NumPy ufunc call costs ~0.05 us more. So
(null - ncopies) / cpu charges ~0.2 us at n = 3 (~0.2x of a ~1.2 us direct call) to any
fallback calling these hooks: the ideal kernel reads ~1.25x there too, and the fallback is
~0.1 us above it. torchdev's hooks call torch and NumPy and their sequence penalty is larger
(~0.4 us; ~1.6 us before they lost their td.from_numpy and Tensor.numpy() calls), and
(fallback - copies) also charges torchdev's logging hook (~0.2 us) to the fallback. At 1e6
elements the fallback's fixed cost (~1 us) is lost in the 4 MB buffers' allocation and page
faults, which differ between columns by tens of us either way: the ratios there are ~1 by
construction and the in-situ torchdev figure is noise.
"""

from __future__ import annotations

import contextlib
import importlib
import pathlib
import sys
import time
import timeit
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples" / "torchdev"))

import torchdev

import tensordispatch as td
from tensordispatch.dispatch.dispatcher import DISPATCHER
from tensordispatch.dispatch.kernel import fallthrough_kernel
from tensordispatch.dispatch.keys import BackendComponent, DispatchKey
from tensordispatch.library import Library
from tensordispatch.tensor import Tensor
from tensordispatch.tensor.device import register_device_type

# The modules by path: tensordispatch.backends may re-export functions under their names.
cf = importlib.import_module("tensordispatch.backends.boxed_fallback")
unboxed = importlib.import_module("tensordispatch.backends.fallback_unboxed")

SIZES = (3, 10_000, 1_000_000)
CLOCK = time.thread_time


def calibrate(fn: Callable[[], Any], budget: float) -> int:
    """A loop count for which one timed loop of ``fn`` takes about ``budget`` seconds."""
    timer = timeit.Timer(fn, timer=CLOCK)
    n = 1
    while timer.timeit(n) < budget and n < 1_000_000:
        n *= 2
    return n


def interleaved(
    fns: dict[str, Callable[[], Any]],
    rounds: int = 40,
    budget: float = 0.002,
    around: dict[str, Callable[[], Any]] | None = None,
) -> dict[str, float]:
    """Best per-call microseconds (thread CPU time) of each function over ``rounds`` rounds,
    the functions' short loops interleaved round by round, so load on a shared machine hits
    every column alike. ``around[name]`` is a context manager factory entered around that
    column's loops (outside the timing); each column runs once untimed after entering it."""
    around = around or {}
    nullctx = contextlib.nullcontext
    numbers = {}
    for k, fn in fns.items():
        with around.get(k, nullctx)():
            fn()
            numbers[k] = calibrate(fn, budget)
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(rounds):
        for k, fn in fns.items():
            with around.get(k, nullctx)():
                fn()
                timer = timeit.Timer(fn, timer=CLOCK)
                best[k] = min(best[k], timer.timeit(numbers[k]) / numbers[k] * 1e6)
    return best


def null_backend() -> tuple[Callable[[Tensor], Tensor], list[Any], Any]:
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
    return (lambda t: wrap(t, dev)), handles, backend


class WithoutNativeAdd:
    """Context manager factory: torchdev's add.Tensor kernel unregistered inside, the same
    kernel registered again on exit (the handle goes to torchdev's library, so
    ``torchdev.uninstall()`` still removes it)."""

    def __init__(self) -> None:
        registration = torchdev._INSTALLED[1]
        name = "impl aten::add.Tensor PrivateUse1"
        self.library = next(
            lib
            for lib in registration.libraries
            if any(h.description == name and not h.removed for h in lib.handles)
        )
        self.handle = next(
            h for h in self.library.handles if h.description == name and not h.removed
        )
        entry = DISPATCHER.find("aten::add", "Tensor")
        assert entry is not None
        self.kernel = entry.kernels[DispatchKey.PrivateUse1][0]

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        self.handle.remove()
        try:
            yield
        finally:
            self.handle = DISPATCHER.register_impl(
                "aten::add", "Tensor", DispatchKey.PrivateUse1, self.kernel
            )
            self.library.handles.append(self.handle)
            torchdev.FALLBACK_LOG.clear()  # the logging hook's list grows a line a call


def pipeline(backend: Any, kernel: Callable[..., Any]) -> Callable[[Tensor, Tensor], Tensor]:
    """What an ideal fallback does for add on ``backend``: its hooks and the CPU kernel."""
    to_cpu, from_cpu, log = backend.to_cpu, backend.from_cpu, backend.log
    op = td.ops.aten.add.Tensor
    if log is None:

        def run(x: Tensor, y: Tensor) -> Tensor:
            cx, cy = to_cpu([x, y])
            return from_cpu([kernel(cx, cy)], x.device)[0]

        return run

    def run_logged(x: Tensor, y: Tensor) -> Tensor:
        moved = [x, y]
        log(op, moved)
        cx, cy = to_cpu(moved)
        return from_cpu([kernel(cx, cy)], x.device)[0]

    return run_logged


def ideal_kernel(backend: Any, kernel: Callable[..., Any]) -> Callable[..., Tensor]:
    """The pipe's body as add.Tensor's kernel of ``backend`` (the schema's parameters): an
    ideal fallback, reached through the dispatcher as the real one is, that costs nothing
    itself. ``alpha`` is never passed here."""
    to_cpu, from_cpu, log = backend.to_cpu, backend.from_cpu, backend.log
    op = td.ops.aten.add.Tensor
    if log is None:

        def ideal(self: Tensor, other: Tensor, *, alpha: Any = 1) -> Tensor:
            cx, cy = to_cpu([self, other])
            return from_cpu([kernel(cx, cy)], self.device)[0]

        return ideal

    def ideal_logged(self: Tensor, other: Tensor, *, alpha: Any = 1) -> Tensor:
        moved = [self, other]
        log(op, moved)
        cx, cy = to_cpu(moved)
        return from_cpu([kernel(cx, cy)], self.device)[0]

    return ideal_logged


class WithKernel:
    """Context manager factory: ``fn`` registered as add.Tensor's kernel for ``key`` inside
    (over torchdev's own kernel, which is back on exit)."""

    def __init__(self, fn: Callable[..., Any], key: str) -> None:
        self.fn, self.key = fn, key

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        lib = Library("aten", "IMPL")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "overriding a previously registered kernel"
            lib.impl("add.Tensor", self.fn, self.key)
        try:
            yield
        finally:
            lib._destroy()
            torchdev.FALLBACK_LOG.clear()


def measure(n: int, to_null: Any, null: Any, without_add: WithoutNativeAdd) -> dict[str, float]:
    """Every column for float32 tensors of n elements (us per call)."""
    a_cpu = td.from_numpy(np.linspace(0, 1, n, dtype=np.float32))
    b_cpu = td.from_numpy(np.linspace(1, 2, n, dtype=np.float32))
    a, b = torchdev.to_device(a_cpu), torchdev.to_device(b_cpu)
    an, bn = to_null(a_cpu), to_null(b_cpu)
    add = td.add
    r = add(a_cpu, b_cpu)
    rn = to_null(r)
    kernel = unboxed._cpu_kernel(td.ops.aten.add.Tensor._entry)
    backend = torchdev.BACKEND
    pipe, npipe = pipeline(backend, kernel), pipeline(null, kernel)
    with_ideal = WithKernel(ideal_kernel(backend, kernel), "PrivateUse1")
    with_nideal = WithKernel(ideal_kernel(null, kernel), "PrivateUse2")
    to_cpu, from_cpu, dev = backend.to_cpu, backend.from_cpu, torchdev.DEVICE
    log, op = backend.log, td.ops.aten.add.Tensor
    nto_cpu, nfrom_cpu, ndev = null.to_cpu, null.from_cpu, rn.device
    t = interleaved(
        {
            "cpu": lambda: add(a_cpu, b_cpu),
            "kernel": lambda: kernel(a_cpu, b_cpu),
            "native": lambda: add(a, b),
            "fallback": lambda: add(a, b),
            "ideal": lambda: add(a, b),
            "to_cpu": lambda: to_cpu([a, b]),
            "from_cpu": lambda: from_cpu([r], dev),
            "log": lambda: log(op, [a, b]),
            "pipe": lambda: pipe(a, b),
            "null": lambda: add(an, bn),
            "nideal": lambda: add(an, bn),
            "nto_cpu": lambda: nto_cpu([an, bn]),
            "nfrom_cpu": lambda: nfrom_cpu([r], ndev),
            "npipe": lambda: npipe(an, bn),
        },
        around={
            "fallback": without_add,
            "pipe": without_add,
            "ideal": with_ideal,
            "nideal": with_nideal,
        },
    )
    torchdev.FALLBACK_LOG.clear()
    t["copies"] = t.pop("to_cpu") + t.pop("from_cpu")
    t["ncopies"] = t.pop("nto_cpu") + t.pop("nfrom_cpu")
    return t


def main() -> None:
    import torch

    # One thread, like our NumPy kernels; a busy machine makes torch's thread pool spin.
    torch.set_num_threads(1)
    to_null, handles, null = null_backend()
    without_add = WithoutNativeAdd()
    rows = [(n, measure(n, to_null, null, without_add)) for n in SIZES]
    for h in reversed(handles):
        h._destroy() if isinstance(h, Library) else h.remove()

    print("add(a, b), float32, us per call (thread CPU time, best of 40 interleaved ~2 ms loops)")
    cols = (
        "cpu", "kernel", "native", "fallback", "ideal", "copies", "log", "pipe",
        "null", "nideal", "ncopies", "npipe",
    )  # fmt: skip
    print(f"{'n':>9} " + " ".join(f"{c:>8}" for c in cols))
    for n, t in rows:
        print(f"{n:>9} " + " ".join(f"{t[c]:8.2f}" for c in cols))
    print()
    print("fallback's own overhead excluding the copies, / cpu (target <= 1.2x):")
    print(
        f"{'n':>9} {'fb/native':>10} {'fb/cpu':>8}   copies timed alone:  in situ:"
        "            alone, ideal kernel:"
    )
    head = f"{'torchdev':>9} {'null':>6}   "
    print(f"{'':>9} {'':>10} {'':>8}   {head}{head}{head}")
    for n, t in rows:
        cpu = t["cpu"]
        alone = ((t["fallback"] - t["copies"]) / cpu, (t["null"] - t["ncopies"]) / cpu)
        situ = (
            (t["fallback"] - t["pipe"] + t["kernel"]) / cpu,
            (t["null"] - t["npipe"] + t["kernel"]) / cpu,
        )
        # The first measure applied to the ideal kernel: its floor for any fallback.
        floor = ((t["ideal"] - t["copies"]) / cpu, (t["nideal"] - t["ncopies"]) / cpu)
        print(
            f"{n:>9} {t['fallback'] / t['native']:9.2f}x {t['fallback'] / cpu:7.2f}x   "
            f"{alone[0]:8.2f}x {alone[1]:5.2f}x   {situ[0]:8.2f}x {situ[1]:5.2f}x   "
            f"{floor[0]:8.2f}x {floor[1]:5.2f}x"
        )
    print()
    print("us per call: the fallback's own cost, fallback - ideal; what the hooks and kernel")
    print("cost in sequence beyond their times alone, pipe - (copies + log + kernel):")
    print(f"{'n':>9}   own cost: {head}sequence: {head}")
    for n, t in rows:
        own = (t["fallback"] - t["ideal"], t["null"] - t["nideal"])
        seq = (
            t["pipe"] - t["copies"] - t["log"] - t["kernel"],
            t["npipe"] - t["ncopies"] - t["kernel"],
        )
        print(f"{n:>9}   {'':>9} {own[0]:9.2f} {own[1]:6.2f}   {'':>9} {seq[0]:9.2f} {seq[1]:6.2f}")


if __name__ == "__main__":
    main()
