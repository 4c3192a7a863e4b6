"""FunctionalTensor, FunctionalStorage and the core operations (spec 1.1-1.2, 1.5)."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import tensordispatch as td
from tensordispatch.dispatch import DispatchKey, DispatchKeySet, _AutoDispatchBelowAutograd
from tensordispatch.transforms.functionalize import (
    FunctionalTensor,
    apply_updates,
    from_functional,
    is_functional,
    storage_of,
    sync,
    to_functional,
)


def test_wrapper_key_set_is_inner_keys_plus_functionalize() -> None:
    inner = td.ones(2, 3)
    w = to_functional(inner)
    assert DispatchKeySet.from_raw(w._key_set) == DispatchKeySet.from_raw(inner._key_set).add(
        DispatchKey.Functionalize
    )


def test_wrapper_reads_metadata_through() -> None:
    inner = td.arange(6.0).view(2, 3).t()
    w = to_functional(inner)
    assert (w.shape, w.stride(), w.dtype, w.device) == (
        inner.shape,
        inner.stride(),
        inner.dtype,
        inner.device,
    )
    assert is_functional(w) and not is_functional(inner)
    assert from_functional(w) is inner


def test_views_share_one_storage_and_start_at_generation_zero() -> None:
    x = to_functional(td.zeros(4))
    v = x.view(2, 2)
    assert storage_of(v) is storage_of(x)
    assert len(v._view_metas) == 1 and v._view_metas[0].name == "view"
    assert v._generation == 0


def test_a_mutation_queues_one_update_and_leaves_other_aliases_stale() -> None:
    x = to_functional(td.zeros(4))
    v = x.view(2, 2)
    w = x[1:3]
    v.add_(1)
    s = storage_of(x)
    assert s.generation == 1
    assert v._generation == 1  # the mutated wrapper is synced right away
    assert x._generation == 0 and w._generation == 0  # stale until used
    assert s.updates == []  # v's own sync applied the update to the base
    assert s.base.tolist() == [1.0, 1.0, 1.0, 1.0]
    sync(w)
    assert from_functional(w).tolist() == [1.0, 1.0]


def test_updates_pile_up_without_reads_and_apply_in_order() -> None:
    x = to_functional(td.zeros(3))
    s = storage_of(x)
    s.updates.append((td.ones(3), ()))
    s.updates.append((td.full((3,), 5.0), ()))
    s.generation += 2
    assert apply_updates(s) is True
    assert s.base.tolist() == [5.0, 5.0, 5.0] and s.updates == []
    assert apply_updates(s) is False


def test_overlapping_views_see_each_others_writes() -> None:
    x = to_functional(td.arange(6.0))
    a, b = x[0:4], x[2:6]
    a.mul_(10)
    b.add_(1)
    assert a.tolist() == [0.0, 10.0, 21.0, 31.0]
    assert x.tolist() == [0.0, 10.0, 21.0, 31.0, 5.0, 6.0]


def test_inplace_view_changes_only_that_wrapper() -> None:
    x = to_functional(td.arange(6.0).view(2, 3))
    y = x.view(2, 3)
    y.t_()
    assert y.shape == (3, 2) and x.shape == (2, 3)
    assert y._has_metadata_mutation and storage_of(x).generation == 0


def test_dtype_changing_inplace_keeps_the_wrappers_dtype() -> None:
    x = to_functional(td.ones(2, dtype=td.float32))
    x.add_(td.ones(2, dtype=td.float64))
    assert x.dtype == td.float32 and from_functional(x).dtype == td.float32
    assert x.tolist() == [2.0, 2.0]


def test_wrapper_over_meta_tensor_tracks_shapes() -> None:
    x = to_functional(td.zeros(4, device="meta"))
    v = x.view(2, 2)
    v.add_(1)
    sync(x)
    inner = from_functional(x)
    assert inner.device.type == "meta" and inner.shape == (4,)


def test_values_are_read_after_sync() -> None:
    x = to_functional(td.zeros(2, 2))
    x[0].fill_(3)
    assert x.tolist() == [[3.0, 3.0], [0.0, 0.0]]
    assert x.sum().item() == 6.0
    assert repr(x) == "_to_functional_tensor(tensor([[3., 3.],\n        [0., 0.]]))"
    assert repr(x) == repr(torch._to_functional_tensor(torch.tensor([[3.0, 3.0], [0.0, 0.0]])))


def test_cia_view_decomposes_at_functionalize_below_autograd() -> None:
    x = to_functional(td.arange(6.0).view(2, 3))
    with _AutoDispatchBelowAutograd():
        r = x.t().reshape(6)
    assert isinstance(r, FunctionalTensor)
    assert r.tolist() == torch.arange(6.0).view(2, 3).t().reshape(6).tolist()


def test_detach_is_an_alias_of_the_wrapper() -> None:
    x = to_functional(td.zeros(3))
    d = x.detach()
    assert isinstance(d, FunctionalTensor) and storage_of(d) is storage_of(x)
    d.add_(2)
    assert x.tolist() == [2.0, 2.0, 2.0]


def test_to_copy_leaves_functionalization_outside_functionalize() -> None:
    x = to_functional(td.ones(2))
    y = x.to(td.float64)
    assert type(y) is td.Tensor and y.dtype == td.float64


def test_to_copy_stays_functional_inside_functionalize() -> None:
    seen = []

    def f(a: td.Tensor) -> td.Tensor:
        b = a.to(td.float64)
        seen.append(type(b))
        return b

    td.func.functionalize(f)(td.ones(2))
    assert seen == [FunctionalTensor]


def test_factories_inside_functionalize_are_wrapped() -> None:
    seen = []

    def f(a: td.Tensor) -> td.Tensor:
        z = td.zeros(2)
        seen.append(type(z))
        return a + z

    td.func.functionalize(f)(td.ones(2))
    assert seen == [FunctionalTensor]


def test_lift_fresh_wraps_a_plain_tensor() -> None:
    seen = []

    def f(a: td.Tensor) -> td.Tensor:
        c = td.ops.aten.lift_fresh.default(td.tensor([1.0, 2.0]))
        seen.append(type(c))
        c.add_(a)
        return c

    out = td.func.functionalize(f)(td.ones(2))
    assert seen == [FunctionalTensor] and out.tolist() == [2.0, 3.0]


def test_global_tensor_mutation_passes_through() -> None:
    g = td.zeros(2)

    def f(a: td.Tensor) -> td.Tensor:
        g.add_(1)  # no functional argument: runs as is (spec 1.8.5)
        return a

    td.func.functionalize(f)(td.ones(2))
    assert g.tolist() == [1.0, 1.0]


def test_functionalize_restores_thread_local_state_on_error() -> None:
    def f(a: td.Tensor) -> td.Tensor:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        td.func.functionalize(f)(td.ones(2))
    from tensordispatch.dispatch import tls_is_pristine

    assert tls_is_pristine()


def test_input_write_back_restrides_when_sizes_change() -> None:
    def f(a: td.Tensor) -> None:
        a.t_()
        a.mul_(2)

    x = td.arange(6.0).view(2, 3)
    td.func.functionalize(f, remove="mutations_and_views")(x)
    t = torch.arange(6.0).view(2, 3)
    torch.func.functionalize(f, remove="mutations_and_views")(t)
    assert x.shape == t.shape and x.stride() == t.stride() and x.tolist() == t.tolist()


def test_kwargs_inputs_are_wrapped_and_written_back() -> None:
    def f(a: td.Tensor, *, b: td.Tensor) -> td.Tensor:
        b.add_(a)
        return b * 1

    b = td.zeros(2)
    out = td.func.functionalize(f)(td.ones(2), b=b)
    assert b.tolist() == [1.0, 1.0] and out.tolist() == [1.0, 1.0]


def test_gradients_flow_through_the_functional_program() -> None:
    def f(x: Any) -> Any:
        y = x.clone()
        y.view(2, 2)[0].mul_(3)
        y[1:3].add_(y[0:2])
        return (y * y).sum()

    t = torch.arange(4.0).requires_grad_()
    torch.func.functionalize(f)(t).backward()
    for mode in ("mutations", "mutations_and_views"):
        x = td.arange(4.0).requires_grad_()
        out = td.func.functionalize(f, remove=mode)(x)
        out.backward()
        assert x.grad is not None and x.grad.tolist() == t.grad.tolist()  # type: ignore[union-attr]


def test_no_grad_still_holds_inside_functionalize() -> None:
    def f(x: Any) -> Any:
        return x * 2

    with td.no_grad():
        out = td.func.functionalize(f)(td.ones(2).requires_grad_())
    assert not out.requires_grad


def test_threads_functionalize_independently() -> None:
    """The Functionalize include bit and the reapply flag are thread-local."""
    import threading

    barrier = threading.Barrier(2)
    results: dict[str, Any] = {}

    def f(x: Any) -> Any:
        barrier.wait(timeout=10)
        x.view(2, 2)[0].add_(1)
        barrier.wait(timeout=10)
        return x * 1

    def run(mode: str) -> None:
        x = td.zeros(4)
        out = td.func.functionalize(f, remove=mode)(x)
        results[mode] = (out.tolist(), x.tolist(), type(out))

    threads = [
        threading.Thread(target=run, args=(m,)) for m in ("mutations", "mutations_and_views")
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for mode in ("mutations", "mutations_and_views"):
        assert results[mode] == ([1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0], td.Tensor)


def test_a_wrapper_made_without_storage_gets_its_own_on_first_use() -> None:
    from tensordispatch.transforms.functionalize.wrapper import _make_wrapper

    inner = td.arange(4.0)
    w = _make_wrapper(inner, None, (), 0)  # what lazy's traced operators make
    sync(w)  # up to date: nothing shares its value yet
    assert w._fs is None
    v = w.view(2, 2)  # a view shares the storage, made now with the current value as base
    assert storage_of(v) is storage_of(w) and storage_of(w).base is inner
    v.add_(1)
    assert w.tolist() == [1.0, 2.0, 3.0, 4.0]


def test_an_in_place_update_without_storage_acts_as_with_one() -> None:
    from tensordispatch.transforms.functionalize.wrapper import _make_wrapper

    states = []
    for storage in (None, "made"):
        inner = td.arange(3.0)
        w = to_functional(inner) if storage else _make_wrapper(inner, None, (), 0)
        w.mul_(2)  # replace_ makes the storage before the value changes
        s = storage_of(w)
        states.append((s.mutations, s.generation, len(s.updates), s.base.tolist(), w.tolist()))
    assert states[0] == states[1] == (1, 1, 0, [0.0, 2.0, 4.0], [0.0, 2.0, 4.0])
