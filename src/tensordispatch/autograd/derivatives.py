"""ops/derivatives.yaml -> DifferentiabilityInfo per operator (torch's model, our subset).

Owns reading the YAML, checking each entry against the operator's schema, compiling its
formulas (formulas.py) and deciding what a node saves. Must not register kernels.

Note [Entry keys]
As in torch's file, a key of an entry is ``name``, ``dispatch`` (its ``Default`` formulas
are read), ``output_differentiability``, ``node_name`` (ours), a formula for one or more
differentiable inputs (``self``, ``input, weight, bias``: the formula then returns one
gradient per name, and may read ``grad_input_mask``), or a forward-mode formula (``result``,
an output's name): data only. ``non_differentiable`` marks an input without gradient.
A formula reads ``grad`` (the first output's gradient), ``grads`` (all of them), or
``grad_<output>``; ``result`` (the single output), ``result0`` ... or the outputs' names.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tensordispatch.autograd.formulas import compile_formula, saved_names, translate
from tensordispatch.schema import parse_schema
from tensordispatch.schema.model import FunctionSchema

__all__ = ["DERIVATIVES_YAML", "DifferentiabilityInfo", "Formula", "load_derivatives"]

DERIVATIVES_YAML = Path(__file__).resolve().parent.parent / "ops" / "derivatives.yaml"
ATTRS = (
    "sym_sizes",
    "sym_numel",
    "sym_strides",
    "scalar_type",
    "layout",
    "options",
    "geometry",
    "args_sizes",
    "args_scalartypes",
)


@dataclass(frozen=True, slots=True)
class Formula:
    """The backward formula of one differentiable input (or of several, as a tuple)."""

    input_names: tuple[str, ...]
    text: str  # torch's text, as in the YAML
    python: str  # after translation (Note [Formula translation] in formulas.py)
    names: tuple[str, ...]  # the formula's parameters, in call order
    fn: Callable[..., Any]

    @property
    def input_name(self) -> str:
        return ", ".join(self.input_names)


@dataclass(frozen=True, slots=True)
class DifferentiabilityInfo:
    """What the autograd kernel of one operator records (torch's DifferentiabilityInfo).

    >>> info = load_derivatives()["mul.Tensor"]
    >>> info.node_name, [f.input_name for f in info.formulas], info.saved
    ('MulBackward0', ['self', 'other'], ('other', 'self_scalar_type', 'other_scalar_type', 'self'))
    >>> load_derivatives()["max.dim"].outputs
    ('values', 'indices')
    """

    name: str  # "mul.Tensor"
    schema: FunctionSchema
    node_name: str
    formulas: tuple[Formula, ...]
    saved: tuple[str, ...]  # every name some formula reads except the gradients
    inputs: tuple[str, ...]  # the differentiable inputs, in schema order (one edge each)
    outputs: tuple[str, ...]  # the names formulas give the outputs (result, result0, values)
    output_differentiability: tuple[bool, ...]
    differentiable_if: Callable[..., Any] | None  # torch's conditional output_differentiability
    returns_list: bool  # Tensor[] output (split, unbind): one gradient per element

    @property
    def uses_result(self) -> bool:
        return any(n in self.outputs for n in self.saved)

    @property
    def simple(self) -> bool:
        """One Tensor output and one plain Tensor per formula (the fast recording path)."""
        return (
            len(self.outputs) == 1
            and not self.returns_list
            and all(len(f.input_names) == 1 for f in self.formulas)
            and all(str(a.type) == "Tensor" for a in self.schema.arguments if a.name in self.inputs)
            and self.differentiable_if is None
        )


def _output_names(schema: FunctionSchema) -> tuple[str, ...]:
    rets = schema.returns
    if len(rets) == 1:
        return ("result",)
    return tuple(r.name or f"result{i}" for i, r in enumerate(rets))


def _formulas(
    entry: dict[str, Any], schema: FunctionSchema, outputs: tuple[str, ...], where: str
) -> list[Formula]:
    args = [a.name for a in schema.arguments]
    tensor_args = {a.name for a in schema.arguments if a.type.is_tensor_like()}
    attrs = {f"{a}_{k}" for a in tensor_args for k in ATTRS}
    grads = {"grad", "grads"} | {f"grad_{o}" for o in outputs}
    candidates = set(args) | attrs | grads | set(outputs) | {"grad_input_mask"}
    formulas = []
    for key, text in entry.items():
        if key in ("name", "result", "node_name", "output_differentiability", "dispatch"):
            continue
        names = tuple(k.strip() for k in key.split(","))
        if key in outputs:
            continue  # a forward-mode formula (Note [Entry keys])
        bad = [k for k in names if k not in tensor_args]
        if bad:
            raise ValueError(
                f"{where}: derivatives.yaml gives a formula for {key!r}, which is not a Tensor "
                f"argument of {schema}; name one of {sorted(tensor_args)}"
            )
        if str(text) == "non_differentiable":
            continue
        python = translate(str(text))
        for o in outputs:  # an output's sizes are read from the saved output itself
            python = re.sub(rf"\b{o}_sym_sizes\b", f"{o}._shape", python)
        reads = tuple(saved_names(python, candidates))
        fn = compile_formula(python, list(reads), f"{where} ({schema.name}, {key})")
        formulas.append(Formula(names, str(text), python, reads, fn))
    formulas.sort(key=lambda f: args.index(f.input_names[0]))
    return formulas


def _entry_info(entry: dict[str, Any], where: str) -> DifferentiabilityInfo:
    schema = parse_schema(entry["name"])
    name = str(schema.name)
    outputs = _output_names(schema)
    entry = dict(entry)
    entry.update(entry.get("dispatch", {}).get("Default", {}))
    formulas = _formulas(entry, schema, outputs, where)
    seen: list[str] = []
    for f in formulas:
        seen += [n for n in f.names if n not in seen and not n.startswith("grad")]
    inputs = {n for f in formulas for n in f.input_names}
    ordered = tuple(a.name for a in schema.arguments if a.name in inputs)
    diff = entry.get("output_differentiability")
    differentiable_if = None
    if diff is not None and any(isinstance(d, str) for d in diff):
        cond = translate(str(diff[0]))
        arg_names = [a.name for a in schema.arguments]
        reads = saved_names(cond, set(arg_names))
        differentiable_if = compile_formula(cond, reads, f"{where} ({name}, differentiability)")
        diff = [True] * len(outputs)
    if diff is not None:
        flags = tuple(bool(d) for d in diff)
    elif len(outputs) > 1 and any("grad" in f.names for f in formulas):
        # torchgen's rule (gen_differentiable_outputs): formulas reading the one ``grad``
        # make only the first tensor output differentiable (nll_loss_forward's total_weight,
        # native_layer_norm's mean and rstd do not require grad)
        first = next(i for i, r in enumerate(schema.returns) if r.type.is_tensor_like())
        flags = tuple(i == first for i in range(len(outputs)))
    else:
        flags = (True,) * len(outputs)
    returns_list = len(schema.returns) == 1 and schema.returns[0].type.is_list_like() is not None
    return DifferentiabilityInfo(
        name,
        schema,
        entry["node_name"],
        tuple(formulas),
        tuple(seen),
        ordered,
        outputs,
        flags,
        differentiable_if,
        returns_list,
    )


def load_derivatives(path: Path = DERIVATIVES_YAML) -> dict[str, DifferentiabilityInfo]:
    """Every entry of derivatives.yaml, by operator name (``"add.Tensor"``)."""
    import yaml  # on first use: ~10 ms of `import tensordispatch` otherwise

    text = path.read_text()
    entries = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    lines = [i + 1 for i, line in enumerate(text.splitlines()) if line.startswith("- name:")]
    infos = {}
    for entry, line in zip(entries, lines, strict=True):
        info = _entry_info(entry, f"{path.name}:{line}")
        infos[info.name] = info
    return infos
