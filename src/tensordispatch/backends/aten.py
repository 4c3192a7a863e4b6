"""Calling operators from kernels: cached OpOverloads and wrapped Python numbers.

Composite kernels call other operators through the dispatcher (so every layer above the
backend sees them), by ``op("add.Tensor")(...)``; the OpOverload is looked up once.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensordispatch.dispatch.keyset import (
    AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW as _BELOW_AD,
)
from tensordispatch.dispatch.tls import local_state
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.device import CPU
from tensordispatch.tensor.device import device as _make_device
from tensordispatch.tensor.tensor import Tensor, new_cpu_tensor

__all__ = [
    "backend_select_entry",
    "backend_select_keyset",
    "below_ad_inplace_or_view",
    "op",
    "wrap_argument",
    "wrap_number",
]

_CACHE: dict[str, Any] = {}
_STATE = local_state()  # one object for every thread (Note [Thread-local state] in tls.py)


def below_ad_inplace_or_view(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` with the autograd and ADInplaceOrView keys excluded, as torch's
    factory functions (``torch::zeros``, what ``torch.zeros`` calls) hold
    AutoDispatchBelowADInplaceOrView: the fill of a fresh tensor is not a user's in-place
    write, so the result keeps version 0.

    >>> op("zeros")([2])._version, below_ad_inplace_or_view(op("zeros"), [2])._version
    (1, 0)
    """
    state = _STATE
    saved = state.excluded
    state.excluded = saved | _BELOW_AD
    try:
        return fn(*args, **kwargs)
    finally:
        state.excluded = saved


def op(name: str) -> Any:
    """The OpOverload of ``aten::<name>`` (``"add.Tensor"``, ``"neg"`` for default).

    >>> op("neg")
    <OpOverload(op='aten.neg', overload='default')>
    """
    found = _CACHE.get(name)
    if found is None:
        from tensordispatch import ops

        base, _, overload = name.partition(".")
        if base.startswith("__"):  # ops.aten.<dunder> is refused by the namespace
            from tensordispatch.dispatch.dispatcher import DISPATCHER

            packet: Any = DISPATCHER.packet(f"aten::{base}")
        else:
            packet = getattr(ops.aten, base)
        found = getattr(packet, overload or "default")
        _CACHE[name] = found
    return found


_NUMBER_DTYPES = {bool: _dt.bool, int: _dt.int64, float: _dt.float64, complex: _dt.complex128}


def wrap_number(value: Any) -> Tensor:
    """A 0-dim CPU tensor marked as a wrapped number, as torch's Python binding makes from a
    number passed where a Tensor is expected (type promotion ranks it below tensors).

    >>> t = wrap_number(2.5); t.dtype, t._wrapped_number
    (tensordispatch.float64, True)
    """
    dt = _NUMBER_DTYPES.get(type(value))
    if dt is None:
        if isinstance(value, Tensor):
            return value
        if isinstance(value, (np.generic,)):
            value = value.item()
            return wrap_number(value)
        raise TypeError(
            f"expected a Tensor or a Python number (bool, int, float, complex), got "
            f"{type(value).__name__}"
        )
    try:
        data = _array(value, dt._numpy)
    except OverflowError:
        raise _int_overflow(value) from None
    t = new_cpu_tensor(data, (), (), dt)
    t._wrapped_number = True
    return t


def _int_overflow(value: int) -> OverflowError:
    """torch's error for a Python int no 64-bit scalar holds; torch takes [2**63, 2**64) as a
    uint64 scalar, a dtype tensordispatch does not have, so that range gets its own text."""
    if value >= 2**64:
        return OverflowError("int too big to convert")
    if value < -(2**63):
        return OverflowError("can't convert negative int to unsigned")
    return OverflowError(
        f"Python int {value} is in [2**63, 2**64): torch takes it as a uint64 scalar, and "
        "tensordispatch has no uint64 dtype; pass it as a float, or reduce it below 2**63"
    )


_array = np.array


def wrap_argument(value: Any) -> Any:
    """``value`` as a Python binding passes it where a Tensor is expected: a number (or
    numpy scalar) becomes a wrapped-number tensor, anything else is left for the operator to
    reject (the binding turns that into torch's TypeError).

    >>> wrap_argument(2)._wrapped_number, wrap_argument("a")
    (True, 'a')
    """
    if type(value) in _NUMBER_DTYPES or isinstance(value, np.generic):
        return wrap_number(value)
    return value


def _after_backend_select() -> int:
    from tensordispatch.dispatch.keys import DispatchKey
    from tensordispatch.dispatch.keyset import full_after_raw

    return int(full_after_raw(DispatchKey.BackendSelect))


_AFTER_BACKEND_SELECT = _after_backend_select()


def backend_select_entry(name: str, dtype: Any, layout: Any, device: Any, *tensors: Any) -> Any:
    """What a factory's BackendSelect kernel calls: the redispatch entry of ``aten::<name>``
    for ``backend_select_keyset(dtype, layout, device, *tensors)``, looked up as
    ``OpOverload.redispatch`` does (the generated kernel then calls it with the arguments,
    without packing them into a redispatch call).

    >>> backend_select_entry("empty.memory_format", None, None, "meta")([2]).device
    device(type='meta')
    """
    state = op(name)._entry.state
    raw = backend_select_keyset(dtype, layout, device, *tensors)
    try:
        return state.redispatch_cache[raw]
    except KeyError:
        return state.redispatch_miss(raw)


def backend_select_keyset(dtype: Any, layout: Any, device: Any, *tensors: Any) -> int:
    """The key set a factory's BackendSelect kernel redispatches with: the backend of
    ``device`` (default CPU) and of any tensor arguments, below BackendSelect (dispatcher
    spec 10.1; only strided layouts exist, and dtype does not choose a backend here).

    >>> from tensordispatch.dispatch.keyset import DispatchKeySet
    >>> DispatchKeySet.from_raw(backend_select_keyset(None, None, "meta"))
    DispatchKeySet(Meta)
    """
    if device is None:
        raw = CPU._key_set
    elif isinstance(device, str):
        raw = _make_device(device)._key_set
    else:
        raw = device._key_set
    for t in tensors:
        raw |= t._key_set
    return raw & _AFTER_BACKEND_SELECT
