"""Tensor.to's and Tensor.contiguous's one hops (Note [One-hop Tensor.to] in
backends/composite_fast_inplace.py): the same tensor as torch returns, and every
registration, mode, trace or word change that must send the binding back to the full
dispatch."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch.backends import composite_fast_inplace as hop
from tensordispatch.dispatch import dispatch_trace
from tensordispatch.library import Library
from tensordispatch.ops import bindings

from .recording_modes import recording_modes

CALLS = {
    "same dtype": lambda m, t: t.to(t.dtype),
    "cpu string": lambda m, t: t.to("cpu"),
    "cpu device": lambda m, t: t.to(m.device("cpu")),
    "other dtype": lambda m, t: t.to(m.float64),
    "meta": lambda m, t: t.to("meta"),
    "copy": lambda m, t: t.to(t.dtype, copy=True),
    "keyword": lambda m, t: t.to(dtype=t.dtype),
}


@pytest.mark.parametrize("name", list(CALLS))
@pytest.mark.parametrize("requires_grad", [False, True])
def test_to_returns_self_exactly_when_torch_does(name: str, requires_grad: bool) -> None:
    t, tt = (
        td.ones(2, 3, requires_grad=requires_grad),
        torch.ones(2, 3, requires_grad=requires_grad),
    )
    got, expected = CALLS[name](td, t), CALLS[name](torch, tt)
    assert (got is t) is (expected is tt)
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    assert got.device.type == expected.device.type
    assert got.requires_grad is expected.requires_grad


@pytest.mark.parametrize("dtype", ["int64", "bool", "float64", "complex64", "uint8"])
def test_other_dtypes_return_self_as_torch(dtype: str) -> None:
    t, tt = td.zeros(3, dtype=getattr(td, dtype)), torch.zeros(3, dtype=getattr(torch, dtype))
    assert t.to(getattr(td, dtype)) is t and tt.to(getattr(torch, dtype)) is tt
    assert t.to("cpu") is t and tt.to("cpu") is tt
    assert hop.to(t, t.dtype) is t


def test_the_hop_answers_for_plain_cpu_tensors_only() -> None:
    t = td.ones(2)
    assert hop.to(t, td.float32) is t and hop.to(t, "cpu") is t
    assert hop.to(t, td.float64) is None and hop.to(t, "cpu:0") is None
    assert hop.to(t, td.device("meta")) is None and hop.to(t, np.float32) is None
    assert hop.to(td.ones(2, device="meta"), td.float32) is None
    assert hop.to(3, td.float32) is None
    with td.inference_mode():
        assert hop.to(t, td.float32) is None
        assert t.to(td.float32) is t  # the full path's answer, in torch too


def test_a_user_kernel_registered_later_is_called(lib: Library) -> None:
    t = td.ones(2)
    assert hop.to(t, td.float32) is t
    seen: list[Any] = []

    def my_to(self: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(args)
        return td.zeros(2)

    with warnings.catch_warnings():  # torch's one-time "Overriding a previously registered"
        warnings.simplefilter("ignore")
        lib.impl("to.dtype", my_to, "CompositeImplicitAutograd")
    assert hop.to(t, td.float32) is None
    got = t.to(td.float32)
    assert got is not t and got.tolist() == [0.0, 0.0] and seen == [(td.float32,)]
    lib._destroy()
    assert hop.to(t, td.float32) is t and t.to(td.float32) is t


def test_a_dispatch_mode_sees_what_torchs_sees() -> None:
    ours, theirs, Ours, Theirs = recording_modes()
    t, tt = td.ones(2), torch.ones(2)
    with Ours():
        t.to(td.float32), t.to("cpu"), t.to(td.float64)
    with Theirs():
        tt.to(torch.float32), tt.to("cpu"), tt.to(torch.float64)
    assert ours == theirs == ["aten._to_copy.default"]


def test_a_trace_shows_the_full_paths_hops(monkeypatch: Any) -> None:
    t = td.ones(2)
    t.to(td.float32)
    with dispatch_trace() as binding:
        assert t.to(td.float32) is t and t.to("cpu") is t
    monkeypatch.setattr(bindings, "_to_hop", lambda self, arg: None)
    with dispatch_trace() as full:
        t.to(td.float32), t.to("cpu")
    monkeypatch.undo()
    hops = [(h.op, h.key.name, h.depth) for h in binding.hops]
    assert hops == [(h.op, h.key.name, h.depth) for h in full.hops]
    assert [h[0] for h in hops] == ["aten::to.dtype", "aten::to.dtype_layout"]
    assert hop.to(t, td.float32) is t  # plain states again


CONTIGUOUS = {
    "contiguous": lambda m: m.ones(2, 3),
    "transposed": lambda m: m.ones(2, 3).t(),
    "size-1 dims, odd strides": lambda m: m.ones(4, 1).t(),
    "sliced rows": lambda m: m.ones(4, 3)[1:3],
    "sliced columns": lambda m: m.ones(4, 3)[:, ::2],
    "expanded": lambda m: m.ones(3, 1).expand(3, 4),
    "0-d": lambda m: m.ones(()),
    "empty": lambda m: m.ones(0, 3),
    "requires grad": lambda m: m.ones(2, 3, requires_grad=True),
}


@pytest.mark.parametrize("name", list(CONTIGUOUS))
def test_contiguous_returns_self_exactly_when_torch_does(name: str) -> None:
    t, tt = CONTIGUOUS[name](td), CONTIGUOUS[name](torch)
    got, expected = t.contiguous(), tt.contiguous()
    assert (got is t) is (expected is tt)
    assert got.stride() == expected.stride() and got.tolist() == expected.tolist()
    assert got.requires_grad is expected.requires_grad


def test_a_user_contiguous_kernel_registered_later_is_called(lib: Library) -> None:
    t = td.ones(2)
    assert hop.contiguous(t) is t
    seen: list[Any] = []

    def my_contiguous(self: Any, **kwargs: Any) -> Any:
        seen.append(kwargs)
        return td.zeros(2)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lib.impl("contiguous", my_contiguous, "CompositeImplicitAutograd")
    assert hop.contiguous(t) is None
    assert t.contiguous().tolist() == [0.0, 0.0] and len(seen) == 1
    lib._destroy()
    assert hop.contiguous(t) is t and t.contiguous() is t


def test_contiguous_under_a_mode_and_a_trace(monkeypatch: Any) -> None:
    from tensordispatch.generated import methods

    ours, theirs, Ours, Theirs = recording_modes()
    t, tt = td.ones(2, 3), torch.ones(2, 3)
    with Ours():
        t.contiguous(), t.t().contiguous()
    with Theirs():
        tt.contiguous(), tt.t().contiguous()
    assert ours == theirs
    with dispatch_trace() as binding:
        assert t.contiguous() is t
    monkeypatch.setattr(methods, "_H_contiguous", lambda self: None)
    with dispatch_trace() as full:
        assert t.contiguous() is t
    monkeypatch.undo()
    hops = [(h.op, h.key.name, h.depth) for h in binding.hops]
    assert hops == [(h.op, h.key.name, h.depth) for h in full.hops]
    assert hops and hops[0][0] == "aten::contiguous"
    with td.inference_mode():
        assert hop.contiguous(t) is None and t.contiguous() is t
