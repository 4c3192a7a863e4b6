"""Deferred entries and operators (Note [Deferred entries] in ops/deferred.py)."""

from __future__ import annotations

import tensordispatch as td
from tensordispatch.backends.aten import op
from tensordispatch.ops.deferred import DeferredEntry, DeferredOp, deferred_entry, deferred_op


def test_first_call_replaces_the_global_with_the_entry() -> None:
    g: dict[str, object] = {}
    g["_E"] = deferred_entry(g, "_E", "add.Tensor")
    stand_in = g["_E"]
    assert isinstance(stand_in, DeferredEntry)
    x = td.tensor([1.0, 2.0])
    assert stand_in.entry_function(x, x).tolist() == [2.0, 4.0]
    assert g["_E"] is op("add.Tensor")._entry
    # a stand-in kept elsewhere keeps forwarding to the entry
    assert stand_in.entry_function(x, x, alpha=2).tolist() == [3.0, 6.0]


def test_global_rebound_by_its_module_is_left_alone() -> None:
    g: dict[str, object] = {}
    stand_in = g["_E"] = deferred_entry(g, "_E", "neg")
    g["_E"] = "rebound"
    assert stand_in.entry_function(td.tensor([1.0])).tolist() == [-1.0]
    assert g["_E"] == "rebound"


def test_deferred_op_call_and_attribute_resolve_the_overload() -> None:
    g: dict[str, object] = {}
    g["_mul"] = deferred_op(g, "_mul", "mul.Tensor")
    assert isinstance(g["_mul"], DeferredOp)
    assert g["_mul"]._schema is op("mul.Tensor")._schema  # type: ignore[attr-defined]
    assert g["_mul"] is op("mul.Tensor")
    g["_sub"] = deferred_op(g, "_sub", "sub.Tensor")
    x = td.tensor([3.0])
    assert g["_sub"](x, x).tolist() == [0.0]  # type: ignore[operator]
    assert g["_sub"] is op("sub.Tensor")


def test_deferred_op_refuses_dunder_probes_without_a_lookup() -> None:
    g: dict[str, object] = {}
    stand_in = g["_x"] = deferred_op(g, "_x", "no_such_operator")
    assert not hasattr(stand_in, "__array_interface__")
    assert g["_x"] is stand_in
