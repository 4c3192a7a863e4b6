"""Device 'lazy': transfers, factories, syncing, printing, mark_step and counters vs torch._lazy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import torch._lazy

import tensordispatch as td
from tensordispatch import lazy
from tensordispatch.lazy.tensor import LazyTensor
from tensordispatch.transforms.functionalize import from_functional, is_functional
from tensordispatch.transforms.functionalize.wrapper import FunctionalTensor
from tests.lazy.conftest import td_counters, torch_counters

COUNTERS = ("MarkStep", "UncachedCompile", "CachedCompile", "SyncedTensorsWithIR")


def test_to_lazy_gives_a_functional_wrapper_over_a_lazy_tensor() -> None:
    x = td.tensor([1.0, 2.0]).to("lazy")
    assert is_functional(x)  # torch._is_functional_tensor(x.to('lazy')) is True
    assert isinstance(from_functional(x), LazyTensor)
    assert str(x.device) == "lazy:0"


def test_round_trip_values_and_dtype() -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = td.from_numpy(a).to("lazy")
    back = x.to("cpu")
    assert back.device.type == "cpu" and back.dtype == td.float32
    assert back.tolist() == a.tolist()


def test_factories_on_lazy_device() -> None:
    z = td.zeros(2, 3, device="lazy")
    o = td.ones(3, device="lazy", dtype=td.int64)
    assert z.to("cpu").tolist() == [[0.0] * 3] * 2
    assert o.to("cpu").tolist() == [1, 1, 1] and o.dtype == td.int64
    assert str(z.device) == "lazy:0"


def test_strides_are_contiguous_like_ltc() -> None:
    x = td.zeros(2, 3).to("lazy")
    t = torch.zeros(2, 3).to("lazy")
    assert x.t().stride() == t.t().stride() == (2, 1)


def test_cpu_method_syncs_and_returns_a_cpu_tensor() -> None:
    x = td.tensor([1.0, 2.0]).to("lazy")
    y = (x * 3).cpu()
    assert y.device.type == "cpu" and y.tolist() == [3.0, 6.0]
    assert lazy.metrics.counter_value("UncachedCompile") == 1


def test_item_and_printing_sync() -> None:
    x = td.tensor([1.5, 2.5]).to("lazy")
    assert (x.sum() * 2).item() == 8.0
    assert "3., 5." in repr(x * 2)


def test_mark_step_counters_match_torch_for_a_repeated_step() -> None:
    def run(mod, x):  # type: ignore[no-untyped-def]
        y = (x * 2 + 1).exp()
        mod()
        return y

    x = td.tensor([1.0, 2.0, 3.0]).to("lazy")
    t = torch.tensor([1.0, 2.0, 3.0]).to("lazy")
    lazy.mark_step(); torch._lazy.mark_step()  # fmt: skip
    lazy.metrics.reset_metrics(); torch._lazy.metrics.reset()  # fmt: skip
    for _ in range(3):
        run(lazy.mark_step, x)
        run(torch._lazy.mark_step, t)
    assert td_counters(*COUNTERS) == torch_counters(*COUNTERS)
    assert td_counters("UncachedCompile", "CachedCompile") == {
        "UncachedCompile": 1, "CachedCompile": 2,
    }  # fmt: skip


def test_synced_roots_are_live_tensors_only() -> None:
    # spec 3.4: p = a+10; q = p*3; r = q-1; del q; mark_step() syncs p and r
    for mod, a in ((td, td.ones(4).to("lazy")), (torch, torch.ones(4).to("lazy"))):
        (lazy.mark_step if mod is td else torch._lazy.mark_step)()
        (lazy.metrics.reset_metrics if mod is td else torch._lazy.metrics.reset)()
        p = a + 10
        q = p * 3
        r = q - 1
        del q
        (lazy.mark_step if mod is td else torch._lazy.mark_step)()
        assert r.to("cpu").tolist() == [32.0] * 4 and p.to("cpu").tolist() == [11.0] * 4
    assert (
        td_counters("SyncedTensorsWithIR")
        == torch_counters("SyncedTensorsWithIR")
        == {"SyncedTensorsWithIR": 2}
    )


def test_fresh_transfers_count_like_torch() -> None:
    # a tensor fresh from CPU is uploaded when first used (then synced with its IR) or, if
    # unused, at the step (SyncTensorsToData)
    names = ("SyncedTensorsWithIR", "SyncTensorsToData")
    for lib in (td, torch):
        a, b = lib.ones(4).to("lazy"), lib.zeros(2).to("lazy")  # noqa: F841 - b unused
        p = a + 10
        (lazy.mark_step if lib is td else torch._lazy.mark_step)()
        assert p.to("cpu").tolist() == [11.0] * 4
    assert td_counters(*names) == torch_counters(*names) == {
        "SyncedTensorsWithIR": 2, "SyncTensorsToData": 1,
    }  # fmt: skip


def test_cpu_sync_keeps_other_tensors_pending_and_hits_the_cache_later() -> None:
    x = td.tensor([1.0, 2.0]).to("lazy")
    y = x * 3
    z = x + 1
    assert y.to("cpu").tolist() == [3.0, 6.0]
    assert from_functional(z)._data.handle is None  # still pending
    lazy.mark_step()  # syncs z (y already has data)
    y2 = x * 3
    y2.to("cpu")
    assert td_counters("UncachedCompile", "CachedCompile") == {
        "UncachedCompile": 2, "CachedCompile": 1,
    }  # fmt: skip


def test_counter_api_like_torch() -> None:
    assert lazy.metrics.counter_names() == []
    assert lazy.metrics.counter_value("MarkStep") is None
    lazy.mark_step()
    assert lazy.metrics.counter_value("MarkStep") == 1
    assert "Counter: MarkStep\n  Value: 1" in lazy.metrics.metrics_report()
    lazy.metrics.reset_metrics()
    assert lazy.metrics.counter_names() == []


def test_per_op_counters_match_torch() -> None:
    names = ("lazy::add", "lazy::mul", "lazy::exp", "lazy::t_copy", "lazy::sum")
    for mod in (td, torch):
        x = mod.ones(2, 3).to("lazy")
        y = (x + 1) * 2
        y.t().exp().sum()
    assert td_counters(*names) == torch_counters(*names)


def test_numpy_on_a_lazy_tensor_raises_like_torch() -> None:
    with pytest.raises(TypeError):
        td.ones(2).to("lazy").numpy()
    with pytest.raises(TypeError):
        torch.ones(2).to("lazy").numpy()


def test_printing_matches_torch() -> None:
    x = td.tensor([1.0, 2.5]).to("lazy")
    t = torch.tensor([1.0, 2.5]).to("lazy")
    assert repr(x) == repr(t) == "tensor([1.0000, 2.5000], device='lazy:0')"


def test_tensor_ctr_on_lazy_is_functional_and_views_work() -> None:
    # torch's test_tensor_ctr: a lazy torch.tensor(...) is lifted so a later view works
    for lib in (td, torch):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], device="lazy")
        y = x.view(4)
        y.add_(1)
        assert x.to("cpu").tolist() == [[2.0, 3.0], [4.0, 5.0]]
    assert is_functional(td.tensor([1.0], device="lazy"))


@pytest.mark.parametrize(
    "make",
    [
        lambda dev: td.eye(2, 3, device=dev),
        lambda dev: td.arange(1.0, 4.0, device=dev),
        lambda dev: td.full((2,), 3.5, device=dev),
        lambda dev: td.linspace(0, 1, 5, device=dev),
        lambda dev: td.zeros_like(td.ones(2, 2).to(dev)),
        lambda dev: td.ones(3, dtype=td.int32, device=dev),
    ],
    ids=["eye", "arange", "full", "linspace", "zeros_like", "ones_int32"],
)
def test_factories_on_lazy_match_cpu(make: Any) -> None:
    lz, cpu = make("lazy"), make("cpu")
    assert isinstance(from_functional(lz), LazyTensor)
    back = lz.cpu()
    assert back.dtype == cpu.dtype and back.tolist() == cpu.tolist()


def test_freed_values_are_counted_when_counters_are_read() -> None:
    # Note [Live tensors]: no __del__; reading a counter purges the freed values first
    x = td.ones(3).to("lazy")
    lazy.mark_step()
    names = ("CreateLtcTensor", "DestroyLtcTensor")
    before = {n: lazy.metrics.counter_value(n) or 0 for n in names}
    ys = [x + float(i + 1) for i in range(5)]
    assert lazy.metrics.counter_value("CreateLtcTensor") == before["CreateLtcTensor"] + 5
    assert (lazy.metrics.counter_value("DestroyLtcTensor") or 0) == before["DestroyLtcTensor"]
    ys.clear()
    assert lazy.metrics.counter_value("DestroyLtcTensor") == before["DestroyLtcTensor"] + 5


def test_live_table_stays_proportional_to_live_values(monkeypatch: pytest.MonkeyPatch) -> None:
    from tensordispatch.lazy import tensor as lazy_tensor

    monkeypatch.setattr(lazy_tensor, "TRIM_EVERY", 10)
    lazy_tensor.TRIM_AT[0] = 0  # the next pending value checks (and resets it)
    x = td.ones(3).to("lazy")
    lazy.mark_step()
    lazy_tensor.purge()
    kept = []
    for i in range(200):  # every value but one in ten is freed at once
        y = x + 1.0
        if i % 10 == 0:
            kept.append(y)
    entries = len(lazy_tensor.LIVE)  # live values plus freed ones not purged yet
    live = len(lazy_tensor.live_data())
    assert 20 <= live <= 25
    assert entries <= 2 * live + 2 * 10
    assert len(lazy_tensor.LIVE) == live  # live_data purged the rest


def test_trim_check_counts_the_graphs_nodes_exactly() -> None:
    from tensordispatch.lazy.executor import graph_of
    from tensordispatch.lazy.tensor import _more_nodes_than
    from tensordispatch.transforms.functionalize import from_functional

    x = td.ones(3).to("lazy")
    y = x
    for i in range(12):
        y = y + x if i % 3 == 0 else y * 0.5
    value = from_functional(y)._data.ir
    size = len(graph_of([value]).nodes)  # the reference count
    assert size > 12
    assert _more_nodes_than(value.node, size - 1)
    assert not _more_nodes_than(value.node, size)


def test_trim_check_counts_a_multi_output_node_once() -> None:
    """Both outputs of ``max(0)`` are operands (Output values): one node, counted once."""
    from tensordispatch.lazy.executor import graph_of
    from tensordispatch.lazy.ir import Output
    from tensordispatch.lazy.tensor import _more_nodes_than
    from tensordispatch.transforms.functionalize import from_functional

    x = td.ones(3, 4).to("lazy")
    values, indices = (x * 2).max(0)
    y = values + indices.to(td.float32) + values
    value = from_functional(y)._data.ir
    nodes = graph_of([value]).nodes
    assert any(o.__class__ is Output for n in nodes for o in n.operands)
    assert _more_nodes_than(value.node, len(nodes) - 1)
    assert not _more_nodes_than(value.node, len(nodes))


@pytest.mark.parametrize("cls", [LazyTensor, FunctionalTensor], ids=lambda c: c.__name__)
def test_no_argument_constructor_makes_a_bare_instance(cls: type) -> None:
    # Note [No-argument tensor constructors]: the tracing hot paths call the class and set
    # every slot; nothing is set by the call itself
    t = cls()
    assert type(t) is cls
    with pytest.raises(AttributeError):
        t._shape  # noqa: B018 - reading an unset slot
    if cls is LazyTensor:  # its value's slots too (tensor.py Note [LazyData])
        with pytest.raises(AttributeError):
            t.ir  # noqa: B018
        assert t._data is t  # the payload property


@pytest.mark.parametrize("cls", [LazyTensor, FunctionalTensor], ids=lambda c: c.__name__)
def test_constructor_refuses_arguments(cls: type) -> None:
    with pytest.raises(TypeError) as info:
        cls(td.ones(2))
    assert str(info.value) == f"{cls.__name__}() takes no arguments"
    with pytest.raises(TypeError, match=r"^Tensor\(\.\.\.\): tensors are not built"):
        td.Tensor()  # the base class still refuses every call
