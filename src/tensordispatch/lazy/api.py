"""torch._lazy's functions over lazy tensors: syncing a list of tensors (`sync_multi`),
their ids (`get_tensor_id`) and copying a structure of them to CPU (`to_cpu`).

Owns `lazy_value_of`, the one way from a user's tensor (a functional wrapper over a lazy
tensor, or a bare lazy tensor) to the lazy value below it. Must not trace: syncing goes
through executor.sync_tensors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tensordispatch.lazy.executor import sync_tensors
from tensordispatch.lazy.tensor import LazyTensor
from tensordispatch.transforms.vmap.pytree import tree_flatten, tree_unflatten

__all__ = ["get_tensor_id", "lazy_value_of", "sync_multi", "to_cpu"]


def lazy_value_of(t: Any, *, synced: bool = True) -> LazyTensor | None:
    """The lazy tensor holding ``t``'s value, below its functional wrappers (``synced``: each
    synced first, so a view's pending updates through its base are applied; else the value
    it holds now); None if ``t`` is not lazy."""
    from tensordispatch.transforms.functionalize import is_functional, sync

    inner = t
    while is_functional(inner):  # functional wrappers hold the lazy tensor below them
        if synced:
            sync(inner)
        inner = inner._data
    return inner if isinstance(inner, LazyTensor) else None


def sync_multi(tensors: Sequence[Any], devices: Sequence[str] = ()) -> None:
    """Compute the lazy ``tensors`` with one graph (compiled or fetched from the cache) and
    replace their IR by device data, as torch._lazy.sync_multi (no step is counted; other
    tensors keep their IR). Tensors that are not lazy are left alone.

    >>> import tensordispatch as td, tensordispatch.lazy as lazy
    >>> handle = lazy.init()
    >>> y = td.ones(2).to("lazy") + 1.0
    >>> lazy.sync_multi([y], []); lazy.debug.dump_ir([y])
    'IR {\\n  %0 = Float[2] lazy_tensors::device_data(), ROOT=0\\n}'
    >>> handle.remove()
    """
    values = [v for v in map(lazy_value_of, tensors) if v is not None]
    if values:
        sync_tensors(values, mark_step=True)


def get_tensor_id(tensor: Any) -> int:
    """The id of the lazy value ``tensor`` holds now (torch._lazy.get_tensor_id): unique
    per value, so it changes when an in-place operator gives the tensor a new value (a view
    of it keeps its own until it is next read and so regenerated, as torch's).

    >>> import tensordispatch as td, tensordispatch.lazy as lazy
    >>> handle = lazy.init()
    >>> x = td.ones(2).to("lazy")
    >>> before = lazy.get_tensor_id(x); _ = x.add_(1.0)
    >>> lazy.get_tensor_id(x) == before, lazy.get_tensor_id(x) == lazy.get_tensor_id(x)
    (False, True)
    >>> handle.remove()
    """
    value = lazy_value_of(tensor, synced=False)
    if value is None:
        raise TypeError(
            f"get_tensor_id: expected a lazy tensor, got "
            f"{_described(tensor)}; move it with .to('lazy') first"
        )
    return value.id


def to_cpu(tensors: Any, devices: Sequence[str] | None = None) -> Any:
    """``tensors`` (a tensor, or lists, tuples and dicts of them) copied to CPU, the lazy ones
    synced with one graph first (torch._lazy.to_cpu); other leaves are returned as they are.

    >>> import tensordispatch as td, tensordispatch.lazy as lazy
    >>> handle = lazy.init()
    >>> x = td.ones(2).to("lazy")
    >>> out = lazy.to_cpu({"a": [x * 2.0, x + 1.0]})
    >>> {k: [t.device.type for t in v] for k, v in out.items()}, out["a"][0].tolist()
    ({'a': ['cpu', 'cpu']}, [2.0, 2.0])
    >>> handle.remove()
    """
    from tensordispatch.tensor.tensor import Tensor

    leaves, spec = tree_flatten(tensors)
    sync_multi([t for t in leaves if isinstance(t, Tensor)], devices or ["lazy"])
    cpu = [t.to("cpu") if isinstance(t, Tensor) else t for t in leaves]  # type: ignore[attr-defined]
    return tree_unflatten(cpu, spec)


def _described(t: Any) -> str:
    device = getattr(t, "device", None)
    where = f" on device '{device}'" if device is not None else ""
    return f"a {type(t).__name__}{where}"
