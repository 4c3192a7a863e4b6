"""Python factories run below autograd and ADInplaceOrView (Note [Factories run below
ADInplaceOrView] in codegen/gen_python.py): their results have torch's version 0, an out=
call bumps its out's version, and the thread-local state is restored (also on errors)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import tensordispatch as td
from tensordispatch.dispatch.tls import local_state

CALLS: dict[str, Callable[[Any], Any]] = {
    "zeros": lambda m: m.zeros(2, 3),
    "ones": lambda m: m.ones(2),
    "full": lambda m: m.full((2,), 1.5),
    "empty": lambda m: m.empty(2),
    "eye": lambda m: m.eye(3),
    "linspace": lambda m: m.linspace(0, 1, 5),
    "arange": lambda m: m.arange(4),
    "arange start step": lambda m: m.arange(1, 2, 0.25),
    "rand": lambda m: m.rand(3),
    "randn": lambda m: m.randn(3),
    "randint": lambda m: m.randint(0, 5, (3,)),
    "zeros_like": lambda m: m.zeros_like(m.ones(2)),
    "tensor": lambda m: m.tensor([1.0, 2.0]),
    "aten.zeros (no binding)": lambda m: m.ops.aten.zeros([2]),
}


@pytest.mark.parametrize("call", CALLS)
def test_factory_version_matches_torch(call: str) -> None:
    assert CALLS[call](td)._version == CALLS[call](torch)._version


@pytest.mark.parametrize("name", ["zeros", "ones"])
def test_out_call_bumps_the_version_like_torch(name: str) -> None:
    ours, theirs = td.empty(2), torch.empty(2)
    getattr(td, name)(2, out=ours)
    getattr(torch, name)(2, out=theirs)
    assert ours._version == theirs._version == 1


def test_excluded_set_is_restored_after_an_error() -> None:
    before = local_state().excluded
    with pytest.raises(RuntimeError):
        td.zeros(-1)
    assert local_state().excluded == before


def test_requires_grad_factory_is_a_leaf() -> None:
    t = td.ones(2, requires_grad=True)
    assert t.requires_grad and t.grad_fn is None and t._version == 0
