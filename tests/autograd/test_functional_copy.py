"""The functional ``aten::copy`` under autograd against torch 2.13 (manual.py): a fresh
result at version 0, and torch's NotImplemented node when an input requires grad."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import tensordispatch as td


def _copy(lib: Any, self_grad: bool, src_grad: bool) -> Any:
    a = lib.ones(3, requires_grad=self_grad)
    b = lib.zeros(3, requires_grad=src_grad)
    return lib.ops.aten.copy(a, b)


@pytest.mark.parametrize("self_grad,src_grad", [(False, False), (True, False), (False, True)])
def test_copy_result_is_at_version_0(self_grad: bool, src_grad: bool) -> None:
    assert _copy(td, self_grad, src_grad)._version == _copy(torch, self_grad, src_grad)._version
    assert _copy(td, self_grad, src_grad)._version == 0


@pytest.mark.parametrize("self_grad,src_grad", [(True, False), (False, True), (True, True)])
def test_copy_gets_a_not_implemented_node_with_edges_to_inputs_requiring_grad(
    self_grad: bool, src_grad: bool
) -> None:
    ours, theirs = _copy(td, self_grad, src_grad), _copy(torch, self_grad, src_grad)
    assert ours.grad_fn.name() == theirs.grad_fn.name() == "torch::autograd::NotImplemented"
    assert len(ours.grad_fn.next_functions) == len(theirs.grad_fn.next_functions)
    assert ours.requires_grad and theirs.requires_grad


def test_copy_records_nothing_without_grad_mode() -> None:
    x = td.ones(3, requires_grad=True)
    with td.no_grad():
        r = td.ops.aten.copy(td.zeros(3), x)
    assert (r.requires_grad, r.grad_fn, r._version) == (False, None, 0)


def test_copy_values_are_the_source() -> None:
    r = td.ops.aten.copy(td.ones(2, 2), td.arange(4.0).reshape(2, 2))
    assert r.tolist() == [[0.0, 1.0], [2.0, 3.0]]


def test_backward_through_copy_fails_with_torchs_message() -> None:
    r = _copy(td, False, True)
    with pytest.raises(RuntimeError) as e:
        r.sum().backward()
    assert str(e.value) == "derivative for aten::copy is not implemented"
    with pytest.raises(RuntimeError, match="^derivative for aten::copy is not implemented$"):
        _copy(torch, False, True).sum().backward()
