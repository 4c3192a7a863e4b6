"""Conformance of functionalize(f) with eager and with torch.func.functionalize + make_fx.

For every program of functionalize_programs.py and both ``remove`` modes:
* results AND the mutated inputs equal eager tensordispatch and eager torch;
* the traced graph holds no in-place operator (and, for 'mutations_and_views', no view
  operator) before the final write-back into mutated inputs;
* the traced graph's operator sequence equals torch 2.13's (aten overload names dropped),
  up to the intentional differences listed in functionalize_programs.INTENTIONAL_DIFFERENCES.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest
import torch
from functionalize_programs import INTENTIONAL_DIFFERENCES, PROGRAMS, Program
from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

import tensordispatch as td
from tensordispatch.transforms.functionalize import functionalize
from tensordispatch.transforms.functionalize.trace import make_fx

MODES = ("mutations", "mutations_and_views")
VIEW_OPS = {
    "view",
    "transpose",
    "t",
    "permute",
    "unsqueeze",
    "squeeze",
    "select",
    "slice",
    "diagonal",
    "as_strided",
    "expand",
    "split",
    "split_with_sizes",
    "unbind",
    "alias",
    "detach",
    "view_as_real",
    "view_as_complex",
    "unfold",
    "narrow",
}  # fmt: skip  (_unsafe_view is not listed: its schema does not alias, torch keeps it)
CASES = [pytest.param(p, mode, id=f"{p.name}-{mode}") for p in PROGRAMS for mode in MODES]


def _inputs(module: Any, program: Program) -> list[Any]:
    out = []
    for shape, dtype in program.inputs:
        n = 1
        for s in shape:
            n *= s
        out.append(module.arange(n, dtype=getattr(module, dtype)).reshape(shape))
    return out


def _leaves(x: Any) -> list[Any]:
    if isinstance(x, list | tuple):
        return [y for item in x for y in _leaves(item)]
    return [x]


def _same(ours: Any, theirs: Any) -> None:
    if theirs is None:
        assert ours is None
        return
    assert list(ours.shape) == list(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert ours.tolist() == theirs.tolist()


def _torch_ops(program: Program, mode: str) -> list[str]:
    fn = torch.func.functionalize(partial(program.fn, torch), remove=mode)
    graph = torch_make_fx(fn)(*_inputs(torch, program))
    names = [
        str(n.target).split(".")[1]
        for n in graph.graph.nodes
        if n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload)
    ]
    return program.torch_fix(names) if program.torch_fix else names


@pytest.mark.parametrize(("program", "mode"), CASES)
def test_values_equal_eager(program: Program, mode: str) -> None:
    """Results and mutated inputs: equal to eager torch and eager tensordispatch (except
    where torch's functionalize itself differs from eager, spec 1.8), and always equal to
    torch.func.functionalize's."""
    own_eager_in = _inputs(td, program)
    own_eager_out = program.fn(td, *own_eager_in)
    eager_in = _inputs(torch, program)
    eager_out = program.fn(torch, *eager_in)
    theirs_in = _inputs(torch, program)
    theirs_out = torch.func.functionalize(partial(program.fn, torch), remove=mode)(*theirs_in)
    func_in = _inputs(td, program)
    func_out = functionalize(partial(program.fn, td), remove=mode)(*func_in)
    ours = _leaves(func_out) + func_in
    for mine, theirs in zip(ours, _leaves(theirs_out) + theirs_in, strict=True):
        _same(mine, theirs)
    for own, eager in zip(_leaves(own_eager_out) + own_eager_in, _leaves(eager_out) + eager_in):
        _same(own, eager)
    if mode not in program.eager_differs:
        for mine, eager in zip(ours, _leaves(eager_out) + eager_in, strict=True):
            _same(mine, eager)


@pytest.mark.parametrize(("program", "mode"), CASES)
def test_graph_has_no_mutation_or_view(program: Program, mode: str) -> None:
    graph = make_fx(functionalize(partial(program.fn, td), remove=mode))(*_inputs(td, program))
    names = graph.op_names
    while names and names[-1] in ("copy_", "as_strided_", "resize_"):
        names.pop()  # the write-back into mutated inputs
    assert [n for n in names if n.endswith("_") and not n.startswith("_")] == []
    assert all(".out" not in n.target for n in graph.nodes)
    if mode == "mutations_and_views":
        assert [n for n in names if n in VIEW_OPS] == []


@pytest.mark.parametrize(("program", "mode"), CASES)
def test_op_sequence_matches_torch(program: Program, mode: str) -> None:
    graph = make_fx(functionalize(partial(program.fn, td), remove=mode))(*_inputs(td, program))
    assert graph.op_names == _torch_ops(program, mode)


def test_there_are_at_least_40_programs_with_documented_differences() -> None:
    assert len(PROGRAMS) >= 40
    assert len({p.name for p in PROGRAMS}) == len(PROGRAMS)
    for p in PROGRAMS:
        assert (p.torch_fix is None) == (p.name not in INTENTIONAL_DIFFERENCES)
