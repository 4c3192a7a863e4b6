"""Version counters of new tensors (Note [Fresh outputs at version 0]) vs torch, and detach
of tensor subclasses."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import tensordispatch as td

# Operators that return a new tensor; their kernels fill it in place internally.
FRESH: dict[str, Any] = {
    "zeros_like": lambda m, x: m.zeros_like(x),
    "ones_like": lambda m, x: m.ones_like(x),
    "full_like": lambda m, x: m.full_like(x, 2.0),
    "rand_like": lambda m, x: m.rand_like(x),
    "randn_like": lambda m, x: m.randn_like(x),
    "to": lambda m, x: x.to(m.float64),
    "masked_fill": lambda m, x: x.masked_fill(x > 0, 1.0),
    "repeat": lambda m, x: x.repeat(2, 1),
    "clone": lambda m, x: x.clone(),
    "cat": lambda m, x: m.cat([x, x]),
    "sort": lambda m, x: m.sort(x)[0],
    "layer_norm": lambda m, x: m.ops.aten.layer_norm(x, [2]),
}
FACTORIES: dict[str, Any] = {
    "zeros": lambda m: m.zeros(2),
    "ones": lambda m: m.ones(2),
    "full": lambda m: m.full((2,), 1.0),
    "eye": lambda m: m.eye(2),
}


@pytest.mark.parametrize("name", list(FRESH))
@pytest.mark.parametrize("requires_grad", [False, True])
def test_new_tensors_are_at_torchs_version(name: str, requires_grad: bool) -> None:
    fn = FRESH[name]
    t = torch.ones(2, 2, requires_grad=requires_grad) * 1
    d = td.ones([2, 2]).requires_grad_(requires_grad) * 1
    assert fn(td, d)._version == fn(torch, t)._version == 0


def test_inplace_still_bumps() -> None:
    x = td.zeros_like(td.ones([2]))
    x.fill_(1.0)
    x.add_(1.0)
    assert x._version == torch.ones(2).fill_(1.0).add_(1.0)._version == 2


def test_an_output_that_is_its_input_keeps_its_version() -> None:
    x = td.ones([2], dtype=td.float64) * 1
    x.add_(1)
    assert x.to(td.float64) is x
    assert x.to(td.float64)._version == 1


@pytest.mark.parametrize("name", list(FACTORIES))
def test_factory_bindings_create_version_0(name: str) -> None:
    assert FACTORIES[name](td)._version == FACTORIES[name](torch)._version == 0


def test_detach_of_a_parameter_is_a_tensor() -> None:
    p = td.nn.Parameter(td.ones([2]))
    assert type(p.detach()) is td.Tensor
    assert type(torch.nn.Parameter(torch.ones(2)).detach()) is torch.Tensor


def test_detach_keeps_a_subclass() -> None:
    from tensordispatch import lazy

    handle = lazy.init()  # registers the lazy backend (torch._lazy.ts_backend.init())
    try:
        a = td.ones(4, device="lazy")
        assert type(a.detach()) is type(a)
        a.requires_grad_()
        (a * a).sum().backward()
        assert a.grad.cpu().tolist() == [2.0, 2.0, 2.0, 2.0]
    finally:
        handle.remove()
