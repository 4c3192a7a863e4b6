"""Lazy tensors: record operators into an IR graph, compile it once, run it on mark_step.

``init()`` registers the lazy backend (device 'lazy', dispatch keys Lazy and AutogradLazy;
importing this package registers nothing, as torch needs torch._lazy.ts_backend.init()):
tensors made with ``x.to('lazy')`` or a factory with ``device='lazy'`` trace
the operators listed in backend.yaml into IR nodes; ``mark_step()`` syncs every live lazy
tensor with one graph per step, compiled by the lowering backend (default: generated NumPy
source) and cached by graph hash, then runs the step closures queued with
``add_step_closure``; ``.cpu()``, ``.numpy()``, ``.item()`` and printing sync one tensor's
graph, ``sync_multi`` / ``to_cpu`` several at once; other operators fall back to eager CPU.
``computation`` gives a graph's hash and inputs and runs a cached graph (torch._lazy's
names throughout). See docs/LAZY.md.

>>> import tensordispatch as td, tensordispatch.lazy as lazy
>>> handle = lazy.init()
>>> x = td.tensor([1.0, 2.0, 3.0]).to("lazy")
>>> y = (x * 2).exp().log()
>>> lazy.mark_step(); y.cpu().tolist()
[2.0, 4.0, 6.0]
>>> handle.remove()
"""

from __future__ import annotations

from tensordispatch.lazy import computation, config, debug, metrics
from tensordispatch.lazy.api import get_tensor_id, sync_multi, to_cpu
from tensordispatch.lazy.closures import add_step_closure, run_step_closures
from tensordispatch.lazy.executor import (
    Graph,
    clear_compile_cache,
    get_backend,
    mark_step,
    set_backend,
    sync_tensors,
    wait_device_ops,
)
from tensordispatch.lazy.lowering import NumpyBackend
from tensordispatch.lazy.registration import LazyInit, init, install, installed, uninstall
from tensordispatch.lazy.tensor import LAZY, LazyTensor

__all__ = [
    "LAZY",
    "Graph",
    "LazyInit",
    "LazyTensor",
    "NumpyBackend",
    "add_step_closure",
    "clear_compile_cache",
    "computation",
    "config",
    "debug",
    "get_backend",
    "get_tensor_id",
    "init",
    "install",
    "installed",
    "mark_step",
    "metrics",
    "run_step_closures",
    "set_backend",
    "sync_multi",
    "sync_tensors",
    "to_cpu",
    "uninstall",
    "wait_device_ops",
]
