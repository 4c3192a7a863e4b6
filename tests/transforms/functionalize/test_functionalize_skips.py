"""Note [Skipping unobserved replays]: skipping the replays nobody observes changes no value,
size or stride, and does skip operators (the traced sequence, which is observed, is checked
against torch in test_functionalize_conformance.py)."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest
from functionalize_programs import PROGRAMS, Program

import tensordispatch as td
from tensordispatch.transforms.functionalize import functionalize, view_metas
from tensordispatch.transforms.functionalize.wrapper import set_replay_skipping

MODES = ("mutations", "mutations_and_views")
CASES = [pytest.param(p, mode, id=f"{p.name}-{mode}") for p in PROGRAMS for mode in MODES]


def _inputs(program: Program) -> list[Any]:
    out = []
    for shape, dtype in program.inputs:
        n = 1
        for s in shape:
            n *= s
        out.append(td.arange(n, dtype=getattr(td, dtype)).reshape(shape))
    return out


def _leaves(x: Any) -> list[Any]:
    if isinstance(x, list | tuple):
        return [y for item in x for y in _leaves(item)]
    return [x]


def _facts(x: Any) -> Any:
    if not isinstance(x, td.Tensor):
        return x
    return (x.tolist(), list(x.shape), x.stride(), str(x.dtype))


def _run(program: Program, mode: str) -> list[Any]:
    inputs = _inputs(program)
    out = functionalize(partial(program.fn, td), remove=mode)(*inputs)
    return [_facts(x) for x in _leaves(out) + inputs]


@pytest.mark.parametrize(("program", "mode"), CASES)
def test_skipping_unobserved_replays_changes_no_result(program: Program, mode: str) -> None:
    skipped = _run(program, mode)
    set_replay_skipping(False)
    try:
        assert skipped == _run(program, mode)
    finally:
        set_replay_skipping(True)


def _bench_program(t: Any) -> Any:
    b = t.clone()
    v = b.view(4, 16).transpose(0, 1)[3]
    v.mul_(2)
    b[1:5].add_(1)
    w = b.view(8, 8)
    w.diagonal().zero_()
    return b.sum() + w[0, 0]


@pytest.mark.parametrize("mode", MODES)
def test_unobserved_replays_are_skipped(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []
    real = view_metas.ViewRule.replay

    def counting(rule: Any, *args: Any) -> Any:
        calls.append(rule)
        return real(rule, *args)

    monkeypatch.setattr(view_metas.ViewRule, "replay", counting)
    x = td.arange(64.0)
    value = functionalize(_bench_program, remove=mode)(x).item()
    skipping = len(calls)
    calls.clear()
    set_replay_skipping(False)
    try:
        assert functionalize(_bench_program, remove=mode)(x).item() == value
    finally:
        set_replay_skipping(True)
    assert skipping < len(calls)
