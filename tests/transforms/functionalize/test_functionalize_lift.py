"""`td.tensor(...)` inside a functionalized region is lifted (torch.tensor ends with lift_fresh)."""

from __future__ import annotations

import torch

import tensordispatch as td
from tensordispatch.func import functionalize
from tensordispatch.transforms.functionalize import is_functional


def _program(lib: object, x: object) -> object:
    y = lib.tensor([1.0, 2.0])  # type: ignore[attr-defined]
    y.add_(x)  # a fresh tensor mutated with a functional argument
    return y * 2


def test_fresh_tensor_mutated_inside_functionalize_matches_torch() -> None:
    ours = functionalize(lambda x: _program(td, x))(td.tensor([3.0, 4.0]))
    theirs = torch.func.functionalize(lambda x: _program(torch, x))(torch.tensor([3.0, 4.0]))
    assert ours.tolist() == theirs.tolist()
    assert not is_functional(ours)  # unwrapped on the way out, as torch


def test_fresh_tensor_inside_functionalize_is_a_functional_wrapper() -> None:
    seen = []
    functionalize(lambda x: seen.append(is_functional(td.tensor([1.0]))) or x)(td.ones(1))
    assert seen == [True]


def test_fresh_tensor_outside_functionalize_is_plain() -> None:
    assert not is_functional(td.tensor([1.0]))
