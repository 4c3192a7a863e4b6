"""ops/derivatives.yaml: torch's format and formulas, node names as torch's codegen gives."""

from __future__ import annotations

import os
from typing import Any

import pytest
import torchgen
import yaml

from tensordispatch.autograd.derivatives import DERIVATIVES_YAML, load_derivatives
from tensordispatch.autograd.formulas import translate

TORCH_YAML = os.path.join(os.path.dirname(torchgen.__file__), "packaged/autograd/derivatives.yaml")


def _torch_entries() -> dict[str, tuple[dict[str, Any], str]]:
    with open(TORCH_YAML) as f:
        entries = yaml.safe_load(f)
    out, counts = {}, {}
    for e in entries:
        name = e["name"].split("(")[0]
        base = name.split(".")[0].removesuffix("_")
        camel = "".join(p.title() for p in base.split("_"))  # torchgen: log1p -> Log1P
        node = f"{camel}Backward".replace("ForwardBackward", "Backward")  # torchgen's rule
        # counted by node name: _conj_physical and conj_physical_ are ConjPhysicalBackward0, 1
        index = counts.get(node, 0)
        counts[node] = index + 1
        out[e["name"]] = (e, f"{node}{index}")
    return out


OURS = yaml.safe_load(DERIVATIVES_YAML.read_text())
THEIRS = _torch_entries()


@pytest.mark.parametrize("entry", OURS, ids=[e["name"].split("(")[0] for e in OURS])
def test_entry_is_torchs(entry: dict[str, Any]) -> None:
    theirs, node_name = THEIRS[entry["name"]]
    formulas = dict(theirs)
    formulas.update(formulas.pop("dispatch", {}).get("Default", {}))
    for key, value in entry.items():
        if key == "node_name":
            continue
        assert formulas[key] == value
    assert entry["node_name"] == node_name


def test_no_entry_is_a_placeholder() -> None:
    # only where torch's own entry is one (embedding_renorm_: its backward raises in torch too)
    assert not [
        e["name"]
        for e in OURS
        if "not_implemented(" in str(e) and "not_implemented(" not in str(THEIRS[e["name"]])
    ]


def test_every_entry_loads_and_compiles() -> None:
    infos = load_derivatives()
    assert len(infos) == len(OURS)
    assert all(f.fn is not None for info in infos.values() for f in info.formulas)


def test_translation_golden() -> None:
    assert translate("at::sum_to(grad, self.sym_sizes())") == "sum_to(grad, self_sym_sizes)"
    assert translate("grad.ger(vec.conj())") == "ger(grad, conj(vec))"
    assert translate("grad.expand_symint(self.sym_sizes()) / self.sym_numel()") == (
        "expand_grad(grad, self_sym_sizes) / self_sym_numel"
    )


def test_unknown_helper_is_rejected_at_load(tmp_path: Any) -> None:
    bad = tmp_path / "derivatives.yaml"
    bad.write_text(
        "- name: neg(Tensor self) -> Tensor\n  self: frobnicate(grad)\n  node_name: NegBackward0\n"
    )
    with pytest.raises(ValueError) as info:
        load_derivatives(bad)
    assert str(info.value) == (
        "derivatives.yaml:1 (neg, self): the derivative formula 'frobnicate(grad)' calls "
        "frobnicate, which autograd/formulas.py does not define; add it to HELPERS"
    )


def test_formula_for_non_tensor_argument_is_rejected(tmp_path: Any) -> None:
    bad = tmp_path / "derivatives.yaml"
    bad.write_text(
        "- name: mul.Scalar(Tensor self, Scalar other) -> Tensor\n  other: grad\n"
        "  node_name: MulBackward1\n"
    )
    with pytest.raises(ValueError) as info:
        load_derivatives(bad)
    assert str(info.value) == (
        "derivatives.yaml:1: derivatives.yaml gives a formula for 'other', which is not a "
        "Tensor argument of mul.Scalar(Tensor self, Scalar other) -> Tensor; name one of "
        "['self']"
    )


def test_every_entry_names_a_defined_operator_with_its_schema() -> None:
    from tensordispatch.dispatch.dispatcher import DISPATCHER

    for name, info in load_derivatives().items():
        qualified, _, overload = name.partition(".")
        entry = DISPATCHER.find(f"aten::{qualified}", overload)
        assert entry is not None and entry.schema is not None, name
        assert str(entry.schema) == f"aten::{info.schema}", name


def test_every_operator_with_a_torch_entry_has_ours() -> None:
    """Coverage: each operator of the library that torch's file lists (and that does not
    decompose, CompositeImplicitAutograd) has its entry here."""
    from tensordispatch.dispatch.dispatcher import DISPATCHER
    from tensordispatch.dispatch.keys import DispatchKey

    ours = {e["name"] for e in OURS}
    missing = []
    for name in THEIRS:
        qualified, _, overload = name.split("(")[0].partition(".")
        entry = DISPATCHER.find(f"aten::{qualified}", overload)
        if entry is None or entry.schema is None or name in ours:
            continue
        if DispatchKey.CompositeImplicitAutograd not in entry.kernels:
            missing.append(name)
    assert missing == []
