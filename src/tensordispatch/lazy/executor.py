"""The graph executor: cutting graphs, hashing them, compiling or fetching, running (3.3-3.4).

Owns `sync_tensors` (materialise given lazy values in one graph), `mark_step` (sync every
live lazy value with pending IR, then drop that IR), the `Graph` handed to a lowering, the
graph hash and the compile cache. Must not know how a graph is lowered: that is the
backend's `compile(graph) -> callable` (lowering.py).

Note [Graph hash]
One sync's graph hash combines, in order, the hash of each root value (Note [Node hashes])
and the parameter sequence: walking the post-order, every device-data node gets the index of
its buffer among the graph's distinct buffers (deduplicated by buffer identity). So the same
program on new data hashes equal, ``a+a`` and ``a+b`` differ, and root order matters, as in
LTC. A tensor that still carries IR and the same tensor materialised give different graphs.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tensordispatch.lazy import metrics
from tensordispatch.lazy.closures import _ASYNC as _ASYNC_CLOSURES
from tensordispatch.lazy.closures import _STEP as _STEP_CLOSURES
from tensordispatch.lazy.closures import run_step_closures
from tensordispatch.lazy.ir import BackendData, Node, Output, Shape, Value
from tensordispatch.lazy.tensor import STEPPED_AT, LazyTensor, live_data, weaken

__all__ = [
    "Graph",
    "compile_cache_size",
    "graph_of",
    "mark_step",
    "set_backend",
    "sync_tensors",
    "wait_device_ops",
]

_COMPILE_CACHE_SIZE = 1024
_CACHE: OrderedDict[int, Callable[..., Sequence[Any]]] = OrderedDict()
#: per cached graph: each parameter's Shape (None: a Python number) and each output's Shape,
#: what computation.run_cached_graph needs to call it with CPU tensors
SIGNATURES: dict[int, tuple[tuple[Shape | None, ...], tuple[Shape, ...]]] = {}
_LOCK = threading.RLock()
_COUNTERS = metrics.COUNTERS


@dataclass(frozen=True, slots=True)
class Graph:
    """What a lowering compiles: ``nodes`` in post-order (operands before users),
    ``parameters`` the distinct device buffers read (the compiled callable's arguments, in
    order), ``param_index`` the parameter index of each device-data node (by node id), and
    ``outputs`` the values to return, in order. ``hash`` is Note [Graph hash]'s."""

    nodes: tuple[Node, ...]
    parameters: tuple[BackendData, ...]
    param_index: dict[int, int]
    outputs: tuple[Value, ...]
    hash: int


def graph_of(outputs: Sequence[Value]) -> Graph:
    """The graph computing ``outputs``: post-order, parameters and hash.

    A depth-first walk, operands in order: a node's operands come before it, leaves
    (device data) are emitted where they are first met without being pushed, and each
    stacked node has an iterator over its operands on a parallel stack, so returning to it
    resumes there (the stack is one path of the DAG, so no node is on it twice; two plain
    stacks are ~25% cheaper than one of (node, iterator) pairs). ``seen`` holds the nodes
    themselves: nodes compare and hash by identity (no __eq__/__hash__ of their own, checked
    by a test), ~35% cheaper than a set of ids. Leaves are also collected on the way, in
    post-order, for the parameters (only device-data nodes have data, and they are leaves).
    """
    order, leaves = _walk(outputs)
    params, sequence, h = _parameters(outputs, leaves)
    return Graph(tuple(order), tuple(params), _param_index(leaves, sequence), tuple(outputs), h)


def _walk(outputs: Sequence[Value]) -> tuple[list[Node], list[Node]]:
    """`graph_of`'s walk: the nodes in post-order and the leaves among them."""
    order: list[Node] = []
    leaves: list[Node] = []
    seen: set[Node] = set()
    add_seen = seen.add
    emit = order.append
    leaf = leaves.append
    for root in outputs:
        root = root.node
        if root in seen:
            continue
        operands = root.operands  # a property building a tuple for slotted nodes: read once
        if not operands:
            add_seen(root)
            emit(root)
            leaf(root)
            continue
        # the node being visited and its operand iterator are locals; the stacks hold its
        # ancestors (~10% cheaper than reading the top of the stacks on every visit)
        nodes: list[Node] = []
        iters: list[Iterator[Value]] = []
        push_node, push_iter, pop_node, pop_iter = nodes.append, iters.append, nodes.pop, iters.pop
        node, it = root, iter(operands)
        while True:
            child: Any
            for child in it:  # resumes where the last visit of this node stopped
                if child in seen:  # (an Output is never in it: it is not a node)
                    continue
                if child.__class__ is Output:  # else a node is its own Value (Note [Values])
                    child = child.node
                    if child in seen:
                        continue
                operands = child.operands
                if operands:
                    push_node(node)
                    push_iter(it)
                    node, it = child, iter(operands)
                    break
                add_seen(child)
                emit(child)
                leaf(child)
            else:
                add_seen(node)
                emit(node)
                if not nodes:
                    break
                node, it = pop_node(), pop_iter()
    return order, leaves


def _parameters(
    outputs: Sequence[Value], leaves: list[Node]
) -> tuple[list[BackendData], list[int], int]:
    """The distinct buffers read (in post-order), the parameter index of each device-data
    leaf (in post-order) and the graph hash (Note [Graph hash])."""
    params: list[BackendData] = []
    index_of: dict[int, int] = {}
    sequence: list[int] = []
    for node in leaves:
        data = node.data
        if data is not None:
            index = index_of.get(id(data))
            if index is None:
                index = index_of[id(data)] = len(params)
                params.append(data)
            sequence.append(index)
    roots = (outputs[0].hash,) if len(outputs) == 1 else tuple([v.hash for v in outputs])
    return params, sequence, hash((roots, tuple(sequence)))


def _param_index(leaves: list[Node], sequence: list[int]) -> dict[int, int]:
    """Graph.param_index: each device-data node's parameter index, by node id."""
    data_leaves = [node for node in leaves if node.data is not None]
    return {id(node): index for node, index in zip(data_leaves, sequence, strict=True)}


# -- the backend and the compile cache --------------------------------------------------------

_BACKEND: list[Any] = []


def set_backend(backend: Any) -> Any:
    """Use ``backend`` (anything with ``compile(graph) -> callable``) for later compiles;
    clears the compile cache. Returns the previous backend."""
    with _LOCK:
        previous = get_backend()
        _BACKEND[:] = [backend]
        _CACHE.clear()
        SIGNATURES.clear()
        return previous


def get_backend() -> Any:
    """The lowering backend in use (default: the NumPy source generator)."""
    if not _BACKEND:
        from tensordispatch.lazy.lowering import NumpyBackend

        _BACKEND.append(NumpyBackend())
    return _BACKEND[0]


def compile_cache_size() -> int:
    """How many compiled graphs the cache holds."""
    return len(_CACHE)


def clear_compile_cache() -> None:
    """Forget every compiled graph (the next sync of each graph is an UncachedCompile)."""
    with _LOCK:
        _CACHE.clear()
        SIGNATURES.clear()


def _compiled(
    outputs: list[Value],
    order: list[Node],
    params: list[BackendData],
    leaves: list[Node],
    sequence: list[int],
    key: int,
) -> Callable[..., Sequence[Any]]:
    """The compiled graph of hash ``key``: from the cache, else compiled now (the Graph is
    built only then)."""
    fn = _CACHE.get(key)
    if fn is not None:
        _COUNTERS["CachedCompile"] += 1
        _CACHE.move_to_end(key)
        return fn
    _COUNTERS["UncachedCompile"] += 1
    param_index = _param_index(leaves, sequence)
    graph = Graph(tuple(order), tuple(params), param_index, tuple(outputs), key)
    fn = get_backend().compile(graph)
    metrics.record("TensorsGraphSize", len(order))
    _CACHE[key] = fn
    SIGNATURES[key] = (
        tuple([p.shape if isinstance(p.value, np.ndarray) else None for p in params]),
        tuple([v.shape for v in outputs]),
    )
    if len(_CACHE) > _COMPILE_CACHE_SIZE:
        SIGNATURES.pop(_CACHE.popitem(last=False)[0], None)
    return fn


# -- syncing ----------------------------------------------------------------------------------


def sync_tensors(datas: Sequence[LazyTensor], *, mark_step: bool = False) -> int:
    """Materialise ``datas`` (deduplicated, those already holding data skipped) with one
    graph; with ``mark_step`` their IR is dropped afterwards (the graph is cut). Returns
    how many values were synced."""
    with _LOCK:
        roots: list[LazyTensor] = []
        seen: set[int] = set()
        for d in datas:
            if d.id in seen or d.handle is not None or d.ir is None:
                continue
            seen.add(d.id)
            roots.append(d)
        if roots:
            weaken()  # the roots get device data: tensor.py Note [Strong entries for ...]
            _run(roots, mark_step)
        return len(roots)


def _run(roots: list[LazyTensor], cut: bool) -> None:
    """Compute ``roots`` (distinct, pending, no handle) with one graph; ``cut``: drop their
    IR afterwards. The caller holds _LOCK."""
    _COUNTERS["SyncedTensorsWithIR"] += len(roots)
    outputs: list[Value] = [d.ir for d in roots]  # type: ignore[misc]
    order, leaves = _walk(outputs)
    params, sequence, key = _parameters(outputs, leaves)
    fn = _compiled(outputs, order, params, leaves, sequence, key)
    results = fn(*[p.value for p in params])
    for d, array in zip(roots, results, strict=True):
        shape = d.lazy_shape
        expected = shape.dtype._numpy
        found = getattr(array, "dtype", expected)
        if found is not expected and found != expected:  # a lowering's promotion slip
            array = np.asarray(array).astype(expected)
        d.handle = BackendData(array, shape, d.id)
        if cut:
            d.ir = None


def mark_step(device: str = "", wait: bool = False) -> None:
    """Sync every live lazy tensor with pending IR in one graph (compiled once per distinct
    graph, then fetched from the cache), replace that IR by device data, count a step, then
    run the step closures queued since the last step (torch._lazy.mark_step; closures.py).
    Graphs run synchronously here, so ``wait`` changes nothing.

    >>> import tensordispatch as td, tensordispatch.lazy as lazy
    >>> handle = lazy.init()
    >>> x = td.tensor([1.0, 2.0]).to("lazy")
    >>> y = x * 2 + 1
    >>> lazy.mark_step(); y.cpu().tolist()
    [3.0, 5.0]
    >>> handle.remove()
    """
    with _LOCK:
        pending: list[LazyTensor] = []
        uploads: list[LazyTensor] = []
        cut: list[LazyTensor] = []
        newest = None
        for d in live_data():  # one pass, each value once; CPU data is never pending
            newest = d
            if d.handle is None:
                if d.ir is not None:
                    pending.append(d)
                elif d.tensor_data is not None:
                    uploads.append(d)
            elif d.ir is not None and d.ir.node.data is None:
                cut.append(d)  # synced earlier by .cpu(): keeps its IR until the step cuts it
        if pending:
            _run(pending, True)
        if uploads:
            for d in uploads:
                d.upload()
            _COUNTERS["SyncTensorsToData"] += len(uploads)
        if newest is not None:  # every live value's IR is cut: Note [Trimming the graph]
            STEPPED_AT[0] = newest.id
        for d in cut:
            d.ir = None
        _COUNTERS["MarkStep"] += 1
    if _STEP_CLOSURES or _ASYNC_CLOSURES:  # Note [Step closures]: outside the lock
        run_step_closures()


def wait_device_ops(devices: Sequence[str] = ()) -> None:
    """Wait for pending device work: graphs run synchronously here, so nothing to wait for."""
