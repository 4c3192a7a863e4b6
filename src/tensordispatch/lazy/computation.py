"""torch._lazy.computation: a graph's hash, its device-data inputs, and running a compiled
graph from the cache on inputs given as CPU tensors (what torch's LTC-to-FX bridge,
extract_compiled_graph, is built on).

Owns the conversions between the compile cache's calling convention (NumPy arrays and
Python numbers, executor.SIGNATURES) and CPU tensors. Must not trace or compile: a graph
runs here only if a sync compiled it before (`sync_multi`, `mark_step`, `.cpu()`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tensordispatch.lazy import executor
from tensordispatch.lazy.api import lazy_value_of
from tensordispatch.lazy.executor import graph_of
from tensordispatch.lazy.ir import Value

__all__ = ["get_graph_hash", "get_tensors_ts_device_data_node", "run_cached_graph"]

_HASH_BYTES = 16  # torch's hash_t is 128 bits; ours (a Python hash) fits in it


def _values(tensors: Sequence[Any], what: str) -> list[Value]:
    values = []
    for t in tensors:
        value = lazy_value_of(t)
        if value is None:
            raise TypeError(
                f"{what}: expected lazy tensors, got a {type(t).__name__} on device "
                f"'{getattr(t, 'device', '?')}'; move it with .to('lazy') first"
            )
        values.append(value.ir_value())
    return values


def get_graph_hash(tensors: Sequence[Any]) -> bytes:
    """The hash a sync of exactly ``tensors`` looks the compile cache up with (Note [Graph
    hash]), as 16 opaque bytes like torch's; `run_cached_graph` takes it back.

    >>> import tensordispatch as td, tensordispatch.lazy as lazy
    >>> handle = lazy.init()
    >>> a, b = td.ones(3).to("lazy"), td.zeros(3).to("lazy"); lazy.mark_step()
    >>> h = get_graph_hash([a * 2.0 + 3.0])
    >>> type(h).__name__, len(h), h == get_graph_hash([b * 3.0 + 5.0])
    ('bytes', 16, True)
    >>> handle.remove()
    """
    key = graph_of(_values(tensors, "get_graph_hash")).hash
    return key.to_bytes(_HASH_BYTES, "little", signed=True)


def get_tensors_ts_device_data_node(tensors: Sequence[Any]) -> tuple[list[int], list[Any]]:
    """The device-data inputs of the graph computing ``tensors``, in the order a compiled
    graph takes them: the ids of the lazy tensors they hold the values of (-1 for constants
    such as the numbers of ``x * 2``) and their values as CPU tensors (torch's name: the
    TorchScript backend's, kept so code written for torch runs unchanged).

    >>> import tensordispatch as td, tensordispatch.lazy as lazy
    >>> handle = lazy.init()
    >>> x = td.ones(2).to("lazy"); lazy.mark_step()
    >>> ids, values = get_tensors_ts_device_data_node([x * 3.0])
    >>> ids == [lazy.get_tensor_id(x), -1], [v.tolist() for v in values]
    (True, [[1.0, 1.0], 3.0])
    >>> handle.remove()
    """
    from tensordispatch.tensor.creation import tensor as make_tensor

    graph = graph_of(_values(tensors, "get_tensors_ts_device_data_node"))
    ids = [p.tensor_id for p in graph.parameters]
    values = [
        make_tensor(np.array(p.value, copy=True) if isinstance(p.value, np.ndarray) else p.value,
                    dtype=p.shape.dtype)
        for p in graph.parameters
    ]  # fmt: skip
    return ids, values


def run_cached_graph(hash_str: bytes, graph_inputs: Sequence[Any]) -> list[Any]:
    """Run the compiled graph of hash ``hash_str`` (`get_graph_hash`) on ``graph_inputs``
    (CPU tensors or numbers, in `get_tensors_ts_device_data_node`'s order); its outputs as
    new CPU tensors. The graph must have been compiled by a sync of the same tensors.

    >>> import tensordispatch as td, tensordispatch.lazy as lazy
    >>> handle = lazy.init()
    >>> x = td.ones(2).to("lazy"); lazy.mark_step()
    >>> z = x * 3.0 + 1.0
    >>> h = get_graph_hash([z]); ids, inputs = get_tensors_ts_device_data_node([z])
    >>> lazy.sync_multi([z], [])  # compiles the graph of exactly [z]
    >>> inputs[ids.index(lazy.get_tensor_id(x))] = td.tensor([2.0, 5.0])
    >>> [t.tolist() for t in run_cached_graph(h, inputs)]
    [[7.0, 16.0]]
    >>> handle.remove()
    """
    key = int.from_bytes(hash_str, "little", signed=True)
    fn = executor._CACHE.get(key)
    signature = executor.SIGNATURES.get(key)
    if fn is None or signature is None:
        raise RuntimeError(
            "Failed to get computation by hash. Maybe the entry get kicked out of the LRU cache"
        )
    params, outputs = signature
    if len(graph_inputs) != len(params):
        raise ValueError(
            f"run_cached_graph: the graph takes {len(params)} inputs, {len(graph_inputs)} "
            "were given (get_tensors_ts_device_data_node lists them)"
        )
    args = [_argument(i, x, shape) for i, (x, shape) in enumerate(zip(graph_inputs, params))]
    results = fn(*args)
    return [_cpu_tensor(r, shape) for r, shape in zip(results, outputs, strict=True)]


def _argument(i: int, given: Any, shape: Any) -> Any:
    """Input ``i`` as the compiled graph takes it: a number, or an array of ``shape``."""
    from tensordispatch.tensor.tensor import Tensor

    if isinstance(given, Tensor):
        if given.device.type != "cpu":
            given = given.to("cpu")  # type: ignore[attr-defined]
        array = given.detach().numpy()
    else:
        array = np.asarray(given)
    if shape is None:  # a number in the graph
        if array.ndim != 0:
            raise ValueError(
                f"run_cached_graph: input {i} must be a number or a 0-dim tensor, got "
                f"shape {list(array.shape)}"
            )
        return array.item()
    if tuple(array.shape) != shape.sizes:
        raise ValueError(
            f"run_cached_graph: input {i} must have shape {list(shape.sizes)}, got "
            f"{list(array.shape)}"
        )
    return np.ascontiguousarray(array, dtype=shape.dtype._numpy)


def _cpu_tensor(result: Any, shape: Any) -> Any:
    from tensordispatch.tensor.creation import from_numpy

    array = np.array(result, dtype=shape.dtype._numpy, copy=True).reshape(shape.sizes)
    return from_numpy(array)
