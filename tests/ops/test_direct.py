"""ops.cpu / ops.meta / ops.composite*: per-dispatch-key direct entry points (issue 10 part 1).

Oracles: torch 2.13 for values, shapes and dtypes; the dispatcher's own tables for which
operators have a kernel for a key; golden strings for the error messages.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch import ops
from tensordispatch.dispatch.dispatcher import DISPATCHER
from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.ops.direct import DIRECT_KEYS, register_direct


def _td(a: np.ndarray) -> td.Tensor:
    return td.from_numpy(a.copy())


def _overloads(attr: str) -> set[str]:
    table = ops.__getattr__(attr)._table
    return {f"{name}.{ov}" if ov != "default" else name for name in table for ov in table[name]}


@pytest.mark.parametrize("attr", sorted(DIRECT_KEYS))
def test_entry_points_are_exactly_the_generated_kernels_of_the_key(attr: str) -> None:
    key = DispatchKey[DIRECT_KEYS[attr]]
    registered = set()
    for entry in DISPATCHER.live_entries():
        kernels = entry.kernels.get(key, [])
        if entry.qualified_name.startswith("aten::") and any(
            "generated/registrations.py" in k.debug or "registrations.py" in k.debug
            for k in kernels
        ):
            name = entry.qualified_name.split("::")[1]
            registered.add(f"{name}.{entry.overload}" if entry.overload else name)
    assert _overloads(attr) == registered


def test_cpu_add_matches_torch() -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.linspace(-1, 1, 3, dtype=np.float32)
    got = td.ops.cpu.add.Tensor(_td(a), _td(b), alpha=2)
    want = torch.ops.aten.add.Tensor(torch.from_numpy(a), torch.from_numpy(b), alpha=2)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_cpu_out_and_inplace_variants() -> None:
    a = _td(np.ones(3, dtype=np.float64))
    out = td.empty(0, dtype=td.float64)
    assert td.ops.cpu.add.out(a, a, out=out) is out
    assert out.tolist() == torch.add(torch.ones(3), torch.ones(3)).tolist()
    assert td.ops.cpu.add_.Tensor(a, a) is a
    assert a.tolist() == [2.0, 2.0, 2.0]


def test_direct_call_does_not_record_autograd() -> None:
    x = td.tensor([1.0, 2.0], requires_grad=True)
    assert td.add(x, x).grad_fn is not None
    assert td.ops.cpu.add.Tensor(x, x).grad_fn is None  # as at::cpu::add: no Autograd key


def test_direct_call_skips_the_dispatcher() -> None:
    seen = []

    class Spy(td.DispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    x = td.tensor([1.0])
    with Spy():
        td.ops.cpu.mul.Tensor(x, x)
        td.mul(x, x)
    assert seen == ["aten.mul.Tensor"]


def test_meta_entry_points_match_torch_meta() -> None:
    a = td.empty(4, 1, device="meta", dtype=td.float32)
    b = td.empty(3, device="meta", dtype=td.float64)
    got = td.ops.meta.mul.Tensor(a, b)
    want = torch.ops.aten.mul.Tensor(
        torch.empty(4, 1, device="meta"), torch.empty(3, device="meta", dtype=torch.float64)
    )
    assert (tuple(got.shape), got.dtype.name, got.device.type) == (
        tuple(want.shape),
        str(want.dtype).split(".")[1],
        "meta",
    )


def test_composite_implicit_entry_point_matches_torch() -> None:
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    got = td.ops.compositeimplicitautograd.matmul(_td(a), _td(a.T))
    np.testing.assert_allclose(got.numpy(), (torch.from_numpy(a) @ torch.from_numpy(a.T)).numpy())


def test_composite_explicit_entry_point_matches_torch() -> None:
    got = td.ops.compositeexplicitautograd.zeros.default([2, 3], dtype=td.int64)
    assert got.tolist() == torch.zeros(2, 3, dtype=torch.int64).tolist()
    assert got.dtype is td.int64


def test_signature_is_the_schemas() -> None:
    assert str(inspect.signature(td.ops.cpu.add.Tensor)) == "(self, other, *, alpha=1)"
    assert str(inspect.signature(td.ops.cpu.add.out)) == "(self, other, *, alpha=1, out)"


def test_packet_call_resolves_overloads() -> None:
    x = td.tensor([1.0, 2.0])
    out = td.empty(2)
    assert td.ops.cpu.add(x, x).tolist() == [2.0, 4.0]
    assert td.ops.cpu.add(x, x, out=out) is out
    assert td.ops.cpu.sum(x, [0]).item() == 3.0


def test_packet_lists_its_overloads() -> None:
    assert td.ops.cpu.add.overloads() == ["Tensor", "out"]
    assert repr(td.ops.cpu.add) == "<DirectPacket ops.cpu.add (Tensor, out)>"


def test_op_without_kernel_for_the_key_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError) as info:
        td.ops.cpu.matmul  # noqa: B018
    assert str(info.value) == (
        "ops.cpu.matmul: operator matmul has no CPU kernel, so there is no direct CPU entry "
        "point for it (it has direct entry points in ops.compositeimplicitautograd.matmul); "
        "call it through the dispatcher (tensordispatch.ops.aten.matmul)"
    )


def test_unknown_op_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError) as info:
        td.ops.meta.no_such_op  # noqa: B018
    assert str(info.value) == (
        "ops.meta.no_such_op: operator no_such_op has no Meta kernel, so there is no direct "
        "Meta entry point for it (no key has a direct entry point for no_such_op); call it "
        "through the dispatcher (tensordispatch.ops.aten.no_such_op)"
    )


def test_overload_without_kernel_for_the_key_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError) as info:
        td.ops.cpu.add.Scalar  # noqa: B018
    assert str(info.value) == (
        "ops.cpu.add.Scalar: operator add.Scalar has no CPU kernel; the CPU kernels of add "
        "are: Tensor, out"
    )


def test_packet_call_error_lists_every_overload() -> None:
    with pytest.raises(TypeError) as info:
        td.ops.cpu.add("a", 1)
    expected = [
        "ops.cpu.add: no CPU overload accepts the given arguments; each overload and why it "
        "declined:",
        "  add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor: argument 'self' "
        "must be a Tensor, not str",
        "  add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!): "
        "missing a required argument: 'out'",
        "Call an overload directly (ops.cpu.add.<overload>).",
    ]
    assert str(info.value).split("\n") == expected


def test_operator_namespaces_still_resolve() -> None:
    assert td.ops.aten.add.Tensor.name() == "aten::add.Tensor"
    lib = td.library.Library("direct_test_ns", "DEF")
    try:
        lib.define("f(Tensor x) -> Tensor")
        assert td.ops.direct_test_ns.f.default.name() == "direct_test_ns::f"
    finally:
        lib._destroy()


def test_register_direct_serves_and_removes_a_backend_namespace() -> None:
    table = {"neg": {"default": (np.negative, "T", "neg(Tensor self) -> Tensor")}}
    handle = register_direct("testdev", "PrivateUse1", table)
    try:
        assert td.ops.testdev.neg.default is np.negative
        with pytest.raises(AttributeError, match="ops.testdev.abs: operator abs has no"):
            td.ops.testdev.abs  # noqa: B018
    finally:
        handle.remove()
    assert not isinstance(td.ops.testdev, type(td.ops.cpu))


def test_register_direct_refuses_a_generated_key_name() -> None:
    with pytest.raises(ValueError) as info:
        register_direct("cpu", "PrivateUse1", {})
    assert str(info.value) == (
        "register_direct('cpu'): ops.cpu is the generated namespace of dispatch key CPU; "
        "pick another name for PrivateUse1's direct entry points"
    )
