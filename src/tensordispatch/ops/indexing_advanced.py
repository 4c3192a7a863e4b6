"""The one-hop path of the commonest advanced keys: ``x[[0, 2]]``, ``x[idx]``, ``x[mask]``
and assignments to them (``x[mask] = 0.0``, ``x[idx] = v``).

Used by ops/indexing.py after the basic path declined; must not change what any key gives.

Note [Advanced indexing in one hop]
torch turns ``x[idx]`` into ``index.Tensor(x, [idx])`` and ``x[idx] = v`` into
``index_put_(x, [idx], v)``; ours reach, for plain CPU tensors under the default words,
the autograd kernel's no-grad redispatch, then the generated CPU wrapper of ``index.Tensor``
(meta function, allocation, backends/cpu/layout.py's ``index_out``), or ADInplaceOrView's
bump around the composite ``index_put_`` and ``_index_put_impl_``'s CPU kernel. For one
index on dim 0 (a non-empty list of Python ints, an int64/int32 tensor, or a bool mask
over leading dims) all of that computes NumPy's ``take`` / boolean indexing of ``x``'s array
(a fresh C-contiguous result, as the allocated output is when the dims after the index are
in memory order) or one NumPy assignment and a version bump, which is what is done here. The conditions are those of Note [Basic indexing
in one hop] (ops/indexing_fast.py, which has the guards) plus: the index is a plain CPU
tensor or a list; for assignment ``x`` has no stride-0 dim (torch refuses writes through
internal overlap), and the value is a Python number into a floating ``x`` or a plain CPU
tensor of ``x``'s dtype, not requiring grad, over another storage, that broadcasts to the
indexed shape with no leading size-1 dim (torch views those away first). Anything else, an index out of range included,
takes the general path and its messages; NumPy checks every index before it writes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensordispatch.dispatch.keyset import AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW
from tensordispatch.ops.indexing_fast import (
    _CPU_RAW,
    _DI,
    _DX,
    FunctionalGuard,
    Guard,
    InplaceGuard,
    fits,
)
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.tensor import Tensor

__all__ = ["advanced_assign", "advanced_index"]

_ndarray = np.ndarray
_INDEX_DTYPES = (_dt.int64, _dt.int32, _dt.bool)
_BELOW_ADIOV = AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW
_INT64 = np.int64
_BOOL = np.dtype(np.bool_)


class _ImplGuard(Guard):
    """``_index_put_impl_`` as the composite ``index_put_`` calls it (autograd keys and
    ADInplaceOrView excluded): backends/cpu/layout.py's kernel."""

    __slots__ = ()

    def chain(self, state: Any) -> Any:
        from tensordispatch.backends.cpu import layout as _layout  # loads on first use

        final = state.final_keyset(_DX | _BELOW_ADIOV, _CPU_RAW | _DI)
        try:
            kernel, _ = state.resolve(final)
        except Exception:  # noqa: BLE001 - a missing kernel: the general path reports it
            return None
        return kernel.fn if kernel.fn is _layout.index_put_impl_ else None


class _IndexPutGuard(InplaceGuard):
    """``index_put_``: an InplaceGuard whose CPU kernel is the composite of
    backends/composite_layout.py (it calls ``_index_put_impl_``, guarded by _ImplGuard)."""

    __slots__ = ()

    def chain(self, state: Any) -> Any:
        fn = InplaceGuard.chain(self, state)
        if getattr(fn, "__module__", None) == "tensordispatch.backends.composite_layout":
            return fn
        return None


INDEX = FunctionalGuard(
    "index.Tensor", "tensordispatch.generated.registrations", "wrapper_CPU_index_Tensor"
)
INDEX_PUT_ = _IndexPutGuard("index_put_")
INDEX_PUT_IMPL_ = _ImplGuard("_index_put_impl_")


def _index_array(key: Any) -> Any:
    """The NumPy index of dim 0 a key stands for (int64/int32 or bool array), or None."""
    if type(key) is list:
        if not key:
            return None
        for v in key:
            if type(v) is not int:
                return None  # bools, nested lists, slices...: the general path
        try:
            return np.array(key, dtype=_INT64)
        except OverflowError:
            return None
    if (
        type(key) is Tensor
        and key._key_set == _CPU_RAW
        and key._shape
        and key.dtype in _INDEX_DTYPES
        and type(key._data) is _ndarray
    ):
        return key._data
    return None


def _rest_in_order(strides: tuple[int, ...]) -> bool:
    """Whether the dims after the index are laid out outer to inner (strictly decreasing
    positive strides): then torch's output, whose dims follow the input's order, is
    C-contiguous as NumPy's result is (any other order: the general path)."""
    prev = None
    for s in strides:
        if s <= 0 or (prev is not None and s >= prev):
            return False
        prev = s
    return True


def advanced_index(self: Tensor, key: Any) -> Tensor | None:
    """``self[key]`` for a plain CPU ``self`` (``indexing_fast.plain_cpu``) and one index
    on dim 0, or None (Note [Advanced indexing in one hop]).

    >>> import tensordispatch as td
    >>> x = td.arange(6.0).view(3, 2)
    >>> advanced_index(x, [2, -3]).tolist(), advanced_index(x, x[:, 0] > 1).tolist()
    ([[4.0, 5.0], [0.0, 1.0]], [[2.0, 3.0], [4.0, 5.0]])
    """
    g = INDEX
    if not self._shape or not (g.entry.state is g.state or g.recheck()):
        return None
    idx = _index_array(key)
    if idx is None or not _rest_in_order(self._strides[idx.ndim if idx.dtype is _BOOL else 1 :]):
        return None
    data = self._data
    try:
        if idx.dtype is _BOOL:
            if idx.shape != self._shape[: idx.ndim]:
                return None
            out = data[idx]
        else:
            out = data.take(idx, axis=0)
    except IndexError:
        return None
    if not out.size:
        return None  # NumPy's empty arrays have zero strides, torch's contiguous ones
    return Tensor._wrap_numpy(out, self.dtype)


def _value_of(self: Tensor, idx: Any, value: Any) -> Any:
    """What NumPy assigns for ``value``, or None to decline."""
    if type(value) is float or type(value) is bool:
        return value if self.dtype.is_floating_point else None
    if type(value) is int:
        ok = self.dtype.is_floating_point and -(2**63) <= value < 2**63
        return value if ok else None
    if type(value) is not Tensor or value._key_set != _CPU_RAW or value.dtype is not self.dtype:
        return None
    m = value._autograd_meta
    if m is not None and m.requires_grad:
        return None
    root = self if self._base is None else self._base
    if (value if value._base is None else value._base) is root:
        return None  # the same storage: the general path (torch's overlap rules)
    rest = self._shape[idx.ndim :] if idx.dtype is _BOOL else self._shape[1:]
    count = (int(np.count_nonzero(idx)),) if idx.dtype is _BOOL else idx.shape
    target = count + rest
    if value._shape == target or (value._shape[:1] != (1,) and fits(value._shape, target)):
        return value._data
    return None  # leading ones: torch views the value first (the general path)


def advanced_assign(self: Tensor, key: Any, value: Any) -> bool:
    """``self[key] = value`` for a plain CPU ``self`` and one index on dim 0; False when
    the general path must do it (Note [Advanced indexing in one hop]).

    >>> import tensordispatch as td
    >>> x = td.zeros(3, 2)
    >>> advanced_assign(x, [0, 2], td.ones(2)), advanced_assign(x, x > 0, 5.0), x.tolist()
    (True, True, [[5.0, 5.0], [0.0, 0.0], [5.0, 5.0]])
    """
    g, h = INDEX_PUT_, INDEX_PUT_IMPL_
    if not (
        self._shape
        and 0 not in self._strides
        and (g.entry.state is g.state or g.recheck())
        and (h.entry.state is h.state or h.recheck())
    ):
        return False
    idx = _index_array(key)
    if idx is None or (idx.dtype is _BOOL and idx.shape != self._shape[: idx.ndim]):
        return False
    vals = _value_of(self, idx, value)
    if vals is None:
        return False
    try:
        self._data[idx] = vals
    except (IndexError, ValueError):
        return False  # nothing written: NumPy checks first; the general path raises
    self._bump_version()
    return True
