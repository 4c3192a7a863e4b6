"""The specialised ADInplaceOrView entry of mutating operators (autograd/kernels.py, Note [The
ADInplaceOrView entry]): version counters against torch, the bound backend entry, the
thread-local exclusion, and re-registration."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch

import tensordispatch as td
from tensordispatch.autograd import kernels
from tensordispatch.dispatch.dispatcher import DISPATCHER
from tensordispatch.dispatch.kernel import KernelFunction, KernelKind
from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import (
    AFTER_AD_INPLACE_OR_VIEW_RAW,
    AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW,
)
from tensordispatch.dispatch.tls import local_state
from tensordispatch.library import Library
from tensordispatch.schema.model import FunctionSchema

_BELOW = AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW

# In-place calls on a 2x3 float tensor (and torch's twin), each run once.
INPLACE: dict[str, Callable[[Any, Any, Any], Any]] = {
    "add_": lambda m, a, b: a.add_(b),
    "add_ alpha": lambda m, a, b: a.add_(b, alpha=2),
    "copy_": lambda m, a, b: a.copy_(b),
    "mul_ scalar": lambda m, a, b: a.mul_(3),
    "fill_": lambda m, a, b: a.fill_(1.5),
    "zero_": lambda m, a, b: a.zero_(),
    "clamp_": lambda m, a, b: a.clamp_(0.1, 0.5),
    "masked_fill_": lambda m, a, b: a.masked_fill_(b > 0.5, 0.0),
    "addcmul_": lambda m, a, b: a.addcmul_(b, b, value=0.5),
    "ops.aten.add_ by name": lambda m, a, b: m.ops.aten.add_.Tensor(a, other=b),
    "add out=": lambda m, a, b: m.add(b, b, out=a),
    "mul out= positional": lambda m, a, b: m.ops.aten.mul.out(b, b, out=a),
}


def _pair() -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    data = [[0.25, 0.75, 1.0], [0.5, 0.125, 0.0]]
    ours = (td.tensor(data) * 1, td.tensor(data) * 2)
    theirs = (torch.tensor(data) * 1, torch.tensor(data) * 2)
    return ours, theirs


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_call_bumps_the_written_tensor_like_torch(name: str) -> None:
    (a, b), (ta, tb) = _pair()
    for _ in range(2):  # the second call runs the cached entry
        INPLACE[name](td, a, b)
        INPLACE[name](torch, ta, tb)
    assert (a._version, b._version) == (ta._version, tb._version)
    assert a.tolist() == ta.tolist()


def test_sort_out_bumps_both_written_outputs_once() -> None:
    x, tx = td.tensor([3.0, 1.0, 2.0]), torch.tensor([3.0, 1.0, 2.0])
    v, i = td.empty(3), td.empty(3, dtype=td.int64)
    tv, ti = torch.empty(3), torch.empty(3, dtype=torch.int64)
    td.sort(x, out=(v, i))
    torch.sort(tx, out=(tv, ti))
    assert (v._version, i._version, x._version) == (tv._version, ti._version, tx._version)


@pytest.mark.parametrize("name", ["split_copy.Tensor_out", "unbind_copy.int_out"])
def test_written_tensor_list_bumps_each_tensor_like_torch(name: str) -> None:
    base, overload = name.split(".")
    x, tx = td.arange(6.0).reshape(3, 2), torch.arange(6.0).reshape(3, 2)
    shape, args = ((1, 2), (1, 0)) if base == "split_copy" else ((2,), (0,))
    outs, touts = [td.empty(*shape) for _ in range(3)], [torch.empty(*shape) for _ in range(3)]
    getattr(getattr(td.ops.aten, base), overload)(x, *args, out=outs)
    getattr(getattr(torch.ops.aten, base), overload)(tx, *args, out=touts)
    assert [o._version for o in outs] == [o._version for o in touts] == [1, 1, 1]
    assert [o.tolist() for o in outs] == [o.tolist() for o in touts]


def test_inplace_on_a_view_bumps_the_base_shared_counter() -> None:
    a, ta = td.zeros(2, 3), torch.zeros(2, 3)
    v, tv = a[1], ta[1]
    v.add_(1.0)
    a.mul_(2.0)
    tv.add_(1.0)
    ta.mul_(2.0)
    assert (a._version, v._version) == (ta._version, tv._version) == (2, 2)


def test_failed_inplace_call_does_not_bump_and_restores_the_exclusion() -> None:
    a, ta = td.zeros(2, 3), torch.zeros(2, 3)
    before = local_state().excluded
    with pytest.raises(RuntimeError):
        a.add_(td.ones(4))
    with pytest.raises(RuntimeError):
        ta.add_(torch.ones(4))
    assert local_state().excluded == before
    assert a._version == ta._version == 0


def _ad_inplace_entry_of(op: Any, raw: int) -> Any:
    return op._entry.state.redispatch_cache[raw]


def test_cached_entry_calls_the_backend_entry_of_the_same_state_directly() -> None:
    a = td.zeros(2)
    a.add_(td.ones(2))
    op = td.ops.aten.add_.Tensor
    state = op._entry.state
    specialised = [
        (raw, e)
        for raw, e in state.redispatch_cache.items()
        if getattr(e, "__qualname__", "").startswith("_ad_inplace_entry.")
    ]
    assert specialised
    for raw, entry in specialised:
        below = inspect.getclosurevars(entry).nonlocals["below"]
        assert below is state.redispatch_cache[raw & AFTER_AD_INPLACE_OR_VIEW_RAW]


@pytest.fixture
def custom_inplace() -> Iterator[tuple[Any, list[Any]]]:
    """``tdg_adiov::g_(Tensor(a!) self, Tensor other)`` with our ADInplaceOrView kernel (as
    register_all registers it for aten) and no backend kernel yet; the list logs the
    excluded word seen inside backend kernels."""
    lib = Library("tdg_adiov", "DEF")
    lib.define("g_(Tensor(a!) self, Tensor other) -> Tensor(a!)")
    schema = FunctionSchema.parse("tdg_adiov::g_(Tensor(a!) self, Tensor other) -> Tensor(a!)")
    fn = kernels._make_ad_inplace_kernel(schema)
    special = fn._td_specialize  # type: ignore[attr-defined]
    kernel = KernelFunction(fn, KernelKind.RAW_KEYSET, "test", None, special)
    handle = DISPATCHER.register_impl("tdg_adiov::g_", "", DispatchKey.ADInplaceOrView, kernel)
    yield td.ops.tdg_adiov.g_.default, []
    handle.remove()
    lib._destroy()


def _cpu_kernel(log: list[Any], factor: float) -> KernelFunction:
    def g_(self: Any, other: Any) -> Any:
        log.append(local_state().excluded)
        self._data[...] += factor * other._data
        return self

    return KernelFunction(g_, KernelKind.UNBOXED, "test")


def test_entry_follows_the_backend_kernel_registered_after_it_was_cached(
    custom_inplace: tuple[Any, list[Any]],
) -> None:
    g_, log = custom_inplace
    a, one = td.zeros(2), td.ones(2)
    with pytest.raises(NotImplementedError):
        g_(a, one)  # no CPU kernel: the generic kernel raises, nothing is bumped
    assert a._version == 0
    first = DISPATCHER.register_impl("tdg_adiov::g_", "", DispatchKey.CPU, _cpu_kernel(log, 1))
    g_(a, one)
    g_(a, one)
    first.remove()
    second = DISPATCHER.register_impl("tdg_adiov::g_", "", DispatchKey.CPU, _cpu_kernel(log, 10))
    g_(self=a, other=one)
    second.remove()
    assert a.tolist() == [12.0, 12.0]
    assert a._version == 3
    assert all(word & _BELOW == _BELOW for word in log) and len(log) == 3
    assert local_state().excluded & _BELOW != _BELOW


def test_kernel_keeps_the_qualname_the_indexing_guards_compare() -> None:
    schema = FunctionSchema.parse("tdg_adiov::k_(Tensor(a!) self) -> Tensor(a!)")
    fn = kernels._make_ad_inplace_kernel(schema)
    assert fn.__qualname__ == "_make_ad_inplace_kernel.<locals>.kernel"
    assert callable(fn._td_specialize)  # type: ignore[attr-defined]
