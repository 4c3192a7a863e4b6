"""LIVE's strong entries for traced values (lazy/tensor.py Note [Strong entries for pending
values]): dead values are freed and counted at a sweep, live ones survive it with weak
entries, and no device buffer is ever kept alive by the table."""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import tensordispatch as td
from tensordispatch import lazy
from tensordispatch.lazy import tensor as lazy_tensor
from tensordispatch.lazy.ir import BackendData


@pytest.fixture(autouse=True)
def _lazy() -> Iterator[None]:
    handle = lazy.init()
    yield
    handle.remove()


def _traced() -> Any:
    """A functional wrapper over a lazy value made by tracing (pending IR only)."""
    ones: Any = td.ones
    x = ones(3).to("lazy")
    x * 2.0  # the first call teaches the inlined method; the next one is inlined
    return x * 2.0


def _data(t: Any) -> lazy_tensor.LazyTensor:
    return t._data  # type: ignore[no-any-return]


def test_traced_value_is_held_by_its_own_entry() -> None:
    y = _traced()
    assert lazy_tensor.LIVE[-1] is _data(y)


def test_sweep_frees_a_dead_traced_value_and_counts_it() -> None:
    destroyed = lazy.metrics.counter_value("DestroyLtcTensor") or 0  # sweeps
    y = _traced()
    gone = weakref.ref(_data(y))
    del y
    assert gone() is not None  # only the table holds it now
    assert (lazy.metrics.counter_value("DestroyLtcTensor") or 0) >= destroyed + 1
    assert gone() is None


def test_sweep_keeps_a_live_traced_value_with_a_weak_entry() -> None:
    y = _traced()
    live = lazy_tensor.live_data()
    assert any(d is _data(y) for d in live)
    assert all(type(e) is weakref.ref for e in lazy_tensor.LIVE[: len(live)])
    assert y.tolist() == [2.0, 2.0, 2.0]


def test_table_does_not_keep_a_value_synced_alone() -> None:
    y = _traced()
    assert y.tolist() == [2.0, 2.0, 2.0]  # .tolist() syncs y alone: y gets a buffer
    buffer = weakref.ref(_data(y).handle)  # type: ignore[arg-type]
    del y
    assert buffer() is None


def test_table_does_not_keep_a_value_given_data() -> None:
    y = _traced()
    data = _data(y)
    data.set_handle(BackendData(np.zeros(3, np.float32), data.shape))
    buffer = weakref.ref(data.handle)  # type: ignore[arg-type]
    del y, data
    assert buffer() is None


def test_table_does_not_keep_a_value_cut_by_a_step() -> None:
    y = _traced()
    lazy.mark_step()
    buffer = weakref.ref(_data(y).handle)  # type: ignore[arg-type]
    del y
    assert buffer() is None


def test_weaken_turns_every_new_entry_weak() -> None:
    ys = [_traced() for _ in range(3)]
    assert any(e is _data(ys[-1]) for e in lazy_tensor.LIVE)  # the last one: strong
    lazy_tensor.weaken()
    assert all(type(e) is weakref.ref for e in lazy_tensor.LIVE)
    values = [e() for e in lazy_tensor.LIVE]
    assert all(any(v is _data(y) for v in values) for y in ys)


def test_table_frees_a_discarded_iteration_at_the_next_input() -> None:
    # tracing without steps, a fresh input per iteration, results discarded: the dead traced
    # value's graph reads the input's buffer; the next input entering the IR frees it
    buffers = []
    for i in range(3):
        cpu: Any = td.from_numpy(np.full(4, float(i), np.float32))
        x = cpu.to("lazy")
        y = x * 2.0
        buffers.append(weakref.ref(_data(x).ir.data))  # type: ignore[union-attr]
        del x, y
    assert [b() is None for b in buffers] == [True, True, False]
