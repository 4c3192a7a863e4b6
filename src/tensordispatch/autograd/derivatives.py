"""ops/derivatives.yaml -> DifferentiabilityInfo per operator (torch's model, our subset).

Owns reading the YAML, checking each entry against the operator's schema, compiling its
formulas (formulas.py) and deciding what a node saves. Must not register kernels.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tensordispatch.autograd.formulas import compile_formula, saved_names, translate
from tensordispatch.schema import parse_schema
from tensordispatch.schema.model import FunctionSchema

__all__ = ["DERIVATIVES_YAML", "DifferentiabilityInfo", "Formula", "load_derivatives"]

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
DERIVATIVES_YAML = Path(__file__).resolve().parent.parent / "ops" / "derivatives.yaml"
_ATTRS = ("sym_sizes", "sym_numel", "sym_strides", "scalar_type", "layout")


@dataclass(frozen=True, slots=True)
class Formula:
    """The backward formula of one differentiable input."""

    input_name: str
    text: str  # torch's text, as in the YAML
    python: str  # after translation (Note [Formula translation] in formulas.py)
    names: tuple[str, ...]  # the formula's parameters, in call order
    fn: Callable[..., Any]


@dataclass(frozen=True, slots=True)
class DifferentiabilityInfo:
    """What the autograd kernel of one operator records (torch's DifferentiabilityInfo).

    >>> info = load_derivatives()["mul.Tensor"]
    >>> info.node_name, [f.input_name for f in info.formulas], info.saved
    ('MulBackward0', ['self', 'other'], ('other', 'self_scalar_type', 'other_scalar_type', 'self'))
    """

    name: str  # "mul.Tensor"
    schema: FunctionSchema
    node_name: str
    formulas: tuple[Formula, ...]
    saved: tuple[str, ...]  # every name some formula reads except grad

    @property
    def uses_result(self) -> bool:
        return "result" in self.saved


def _entry_info(entry: dict[str, Any], where: str) -> DifferentiabilityInfo:
    schema = parse_schema(entry["name"])
    name = str(schema.name)
    args = [a.name for a in schema.arguments]
    tensor_args = {a.name for a in schema.arguments if a.type.is_tensor_like()}
    attrs = {f"{a}_{k}" for a in tensor_args for k in _ATTRS}
    candidates = set(args) | attrs | {"grad", "result", "grad_input_mask"}
    formulas = []
    for key, text in entry.items():
        if key in ("name", "result", "node_name", "output_differentiability"):
            continue
        if key not in tensor_args:
            raise ValueError(
                f"{where}: derivatives.yaml gives a formula for {key!r}, which is not a Tensor "
                f"argument of {schema}; name one of {sorted(tensor_args)}"
            )
        python = translate(str(text))
        names = tuple(saved_names(python, candidates))
        fn = compile_formula(python, list(names), f"{where} ({name}, {key})")
        formulas.append(Formula(key, str(text), python, names, fn))
    formulas.sort(key=lambda f: args.index(f.input_name))
    seen: list[str] = []
    for f in formulas:
        seen += [n for n in f.names if n != "grad" and n not in seen]
    return DifferentiabilityInfo(name, schema, entry["node_name"], tuple(formulas), tuple(seen))


def load_derivatives(path: Path = DERIVATIVES_YAML) -> dict[str, DifferentiabilityInfo]:
    """Every entry of derivatives.yaml, by operator name (``"add.Tensor"``)."""
    text = path.read_text()
    entries = yaml.load(text, Loader=_LOADER)
    lines = [i + 1 for i, line in enumerate(text.splitlines()) if line.startswith("- name:")]
    infos = {}
    for entry, line in zip(entries, lines, strict=True):
        info = _entry_info(entry, f"{path.name}:{line}")
        infos[info.name] = info
    return infos
