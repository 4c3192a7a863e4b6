"""The generated autograd entries (autograd/entries.py, Note [The no-grad path])."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest
import torch

import tensordispatch as td
from tensordispatch.autograd import kernels
from tensordispatch.dispatch.dispatcher import DISPATCHER
from tensordispatch.dispatch.kernel import KernelFunction, KernelKind
from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import AFTER_AUTOGRAD_RAW
from tensordispatch.library import Library


def _cached_entries(op: Any) -> list[Any]:
    return list(op._entry.state.default_cache.values())


def test_cached_entry_of_add_calls_the_cpu_entry_directly() -> None:
    a, b = td.tensor([1.0, 2.0]), td.tensor([3.0, 4.0])
    td.add(a, b)
    op = td.ops.aten.add.Tensor
    # one entry per key set seen so far (other tests may have called add with other keys)
    entries = [e for e in _cached_entries(op) if e.__name__ == "add"]
    assert entries
    for entry in entries:
        raw = entry.__globals__["_td_raw"]
        below = op._entry.state.redispatch_cache[raw & AFTER_AUTOGRAD_RAW]
        assert entry.__globals__["_td_below"] is below
        assert "_td_below" not in getattr(below, "__globals__", {})  # the backend's own


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [("add", {"alpha": 2}), ("sub", {"alpha": -3}), ("clamp", {"min": 0.5}), ("clamp", {})],
)
def test_given_optional_arguments_reach_the_kernel(name: str, kwargs: dict[str, Any]) -> None:
    x = [[0.25, 1.5], [-2.0, 3.0]]
    if name == "clamp":
        kwargs = kwargs or {"max": 1.0}
        got, want = td.clamp(td.tensor(x), **kwargs), torch.clamp(torch.tensor(x), **kwargs)
    else:
        got = getattr(td, name)(td.tensor(x), td.tensor(x[::-1]), **kwargs)
        want = getattr(torch, name)(torch.tensor(x), torch.tensor(x[::-1]), **kwargs)
    assert got.tolist() == want.tolist()


def test_records_through_the_generated_entry_with_optional_arguments() -> None:
    a = td.tensor([1.0, 2.0]).requires_grad_()
    b = td.tensor([3.0, 4.0]).requires_grad_()
    out = td.add(a, b, alpha=3)
    out.sum().backward()
    assert out.grad_fn.name() == "AddBackward0"
    assert (a.grad.tolist(), b.grad.tolist()) == ([1.0, 1.0], [3.0, 3.0])


def test_no_grad_mode_skips_recording_for_inputs_that_require_grad() -> None:
    a = td.tensor([1.0, 2.0]).requires_grad_()
    with td.autograd.no_grad():
        out = td.mul(a, a)
    assert out.grad_fn is None and not out.requires_grad


def test_fresh_output_keeps_version_zero_through_the_generated_entry() -> None:
    x = td.tensor([1.0, 2.0])
    assert td.zeros_like(x)._version == torch.zeros_like(torch.tensor([1.0, 2.0]))._version


@pytest.fixture
def custom_op() -> Iterator[tuple[Any, list[Any]]]:
    """``tdg_entries::f`` with a CPU kernel and a fast-path autograd kernel whose recording
    branch only logs its arguments."""
    lib = Library("tdg_entries", "DEF")
    lib.define("f(Tensor x, Tensor y, *, int n=1) -> Tensor")
    cpu = DISPATCHER.register_impl(
        "tdg_entries::f",
        "",
        DispatchKey.CPU,
        KernelFunction(lambda x, y, n=1: td.mul(x, n), KernelKind.UNBOXED, "test"),
    )
    log: list[Any] = []

    def record(raw: int, op: Any, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
        log.append((args, kw))
        return args[0]

    kernel = kernels._fast_path((0, 1), record)
    special = kernel._td_specialize  # type: ignore[attr-defined]
    handle = DISPATCHER.register_impl(
        "tdg_entries::f",
        "",
        DispatchKey.Autograd,
        KernelFunction(kernel, KernelKind.RAW_KEYSET, "test", None, special),
    )
    yield cpu, log
    handle.remove()
    cpu.remove()  # a second removal does nothing
    lib._destroy()


def test_entry_follows_a_kernel_registered_after_it_was_cached(
    custom_op: tuple[Any, list[Any]],
) -> None:
    cpu, _ = custom_op
    f = td.ops.tdg_entries.f.default
    x = td.tensor([1.0, 2.0])
    assert f(x, x, n=3).tolist() == [3.0, 6.0]
    cpu.remove()
    kernel = KernelFunction(lambda x, y, n=1: td.add(x, y), KernelKind.UNBOXED, "test")
    second = DISPATCHER.register_impl("tdg_entries::f", "", DispatchKey.CPU, kernel)
    assert f(x, x, n=3).tolist() == [2.0, 4.0]
    assert f(x, td.tensor([5.0, 5.0])).tolist() == [6.0, 7.0]
    second.remove()


def test_recording_branch_gets_the_given_arguments(
    custom_op: tuple[Any, list[Any]],
) -> None:
    _, log = custom_op
    f = td.ops.tdg_entries.f.default
    x, y = td.tensor([1.0]), td.tensor([2.0]).requires_grad_()
    f(x, y)
    f(x, y, n=4)
    assert [(len(args), kw) for args, kw in log] == [(2, {}), (2, {"n": 4})]
    assert log[0][0][1] is y


def _saved_mul_program(lib: Any, modify: str) -> Any:
    """``y = (x * 1) * b`` with only ``x`` requiring grad, then an in-place write to the
    factor ``modify`` names; returns x.grad after backward (or raises)."""
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1
    b = lib.tensor([3.0, 4.0])
    y = a * b
    (a if modify == "a" else b).mul_(2)
    y.sum().backward()
    return x.grad


def test_inline_recording_saves_only_what_the_needed_formulas_read() -> None:
    got = _saved_mul_program(td, "a")  # `self` is not saved: other needs no gradient
    assert got.tolist() == _saved_mul_program(torch, "a").tolist()


def test_inline_recording_saves_the_factor_the_gradient_reads() -> None:
    with pytest.raises(RuntimeError) as theirs:
        _saved_mul_program(torch, "b")
    with pytest.raises(RuntimeError) as ours:
        _saved_mul_program(td, "b")
    assert str(ours.value).split(":")[0] == str(theirs.value).split(":")[0]
    assert "is at version 1; expected version 0 instead" in str(ours.value)


def test_inline_recording_saves_the_default_of_an_argument_left_out() -> None:
    x = td.tensor([1.0, 2.0]).requires_grad_()
    y = td.tensor([3.0, 5.0]).requires_grad_()
    td.sub(x, y).sum().backward()
    tx = torch.tensor([1.0, 2.0], requires_grad=True)
    ty = torch.tensor([3.0, 5.0], requires_grad=True)
    torch.sub(tx, ty).sum().backward()
    assert (x.grad.tolist(), y.grad.tolist()) == (tx.grad.tolist(), ty.grad.tolist())


def _slots(cls: type) -> set[str]:
    return {n for c in cls.__mro__ for n in getattr(c, "__slots__", ()) if n != "__weakref__"}


def test_inline_node_and_saved_tensor_have_every_field_the_constructors_set() -> None:
    from tensordispatch.autograd.graph import Node, SavedTensor

    a = td.tensor([1.0, 2.0]).requires_grad_()
    b = td.tensor([3.0, 4.0]).requires_grad_()
    node = (a * b).grad_fn
    reference = type(node)()
    for name in _slots(Node):
        assert hasattr(node, name) and hasattr(reference, name), name
    assert (node._released, node._pre_hooks, node._post_hooks) == (False, (), ())
    assert reference._sequence_nr == node._sequence_nr + 1  # one counter for both ways
    saved = node._saved["other"]
    assert type(saved) is SavedTensor
    assert all(hasattr(saved, n) for n in _slots(SavedTensor))
    assert saved.unpack(node) is b


def test_several_output_operator_gets_a_generated_entry_with_fresh_outputs() -> None:
    x = [[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]]
    values, indices = td.max(td.tensor(x), 1)
    tv, ti = torch.max(torch.tensor(x), 1)
    assert (values.tolist(), indices.tolist()) == (tv.tolist(), ti.tolist())
    assert (values._version, indices._version) == (tv._version, ti._version)
    entries = _cached_entries(td.ops.aten.max.dim)
    assert any("_td_below" in getattr(e, "__globals__", {}) for e in entries)


def test_optional_tensor_input_records_through_the_generated_entry() -> None:
    def run(lib: Any) -> list[Any]:
        x = lib.tensor([0.5, 2.0, -1.0], requires_grad=True)
        lo = lib.tensor([0.0, 0.0, 0.0], requires_grad=True)
        lib.clamp(x, min=lo).sum().backward()
        plain = lib.clamp(lib.tensor([0.5, 2.0, -1.0]), min=lib.tensor([1.0, 1.0, 1.0]))
        return [x.grad.tolist(), lo.grad.tolist(), plain.tolist()]

    assert run(td) == run(torch)


def test_entries_over_our_cpu_kernels_skip_the_fresh_reset() -> None:
    """Note [Kernels that build their result directly]: the fused kernels and the codegen's
    CPU wrappers build their result without in-place dispatches, so no reset; a composite
    kernel below keeps it; every output is at version 0 either way, as in torch."""
    from tensordispatch.autograd.entries import _builds_fresh_directly
    from tensordispatch.autograd.kernels import fresh_version
    from tensordispatch.generated import registrations

    a = td.tensor([1.0, 2.0, 3.0])
    outs = [td.add(a, a), a.exp(), td.ops.aten.sum.dim_IntList(a, []), a.sum()]
    theirs = [torch.ones(3) + 1, torch.ones(3).exp(), torch.ones(3).sum(), torch.ones(3).sum()]
    assert [t._version for t in outs] == [t._version for t in theirs] == [0, 0, 0, 0]
    below = {
        f.__globals__["_td_below"].__name__: f.__globals__["_td_fresh"]
        for f in gc.get_objects()
        if type(f).__name__ == "function"
        and "tensordispatch autograd entry" in f.__code__.co_filename
        and f.__name__ in ("add", "exp", "sum")
        and "_td_below" in f.__globals__  # not the compiled prototype
    }
    assert below["add_functional"] is None and below["exp_functional"] is None
    assert below["wrapper_CPU_sum_dim_IntList"] is None
    assert below["sum"] is fresh_version  # composite.sum: the reset stays
    assert _builds_fresh_directly(registrations.wrapper_CPU_sum_dim_IntList)
    assert not _builds_fresh_directly(lambda x: x)
