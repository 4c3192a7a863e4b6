"""Grad-mode managers as decorators against torch 2.13 (grad_mode.py): without parentheses,
on generator functions (each step of the body runs in the mode), and ``clone``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import tensordispatch as td


def _no_parentheses(m: Any) -> tuple[Any, ...]:
    @m.no_grad
    def off() -> bool:
        return bool(m.is_grad_enabled())

    @m.enable_grad
    def on() -> bool:
        return bool(m.is_grad_enabled())

    @m.inference_mode
    def inference() -> tuple[bool, bool]:
        return (m.ones(1).is_inference(), m.is_inference_mode_enabled())

    with m.no_grad():
        inside = on()
    return (off(), inside, inference(), off.__name__, m.is_grad_enabled())


def test_decorators_without_parentheses_as_torch() -> None:
    assert _no_parentheses(td) == _no_parentheses(torch) == (
        False, True, (True, True), "off", True,
    )  # fmt: skip


def _managers(m: Any) -> dict[str, Callable[[], Any]]:
    return {
        "no_grad": m.no_grad,
        "enable_grad": m.enable_grad,
        "set_grad_enabled": lambda: m.set_grad_enabled(False),
        "inference_mode": m.inference_mode,
        "inference_mode_false": lambda: m.inference_mode(False),
    }


def _states(m: Any) -> tuple[bool, bool]:
    return (bool(m.is_grad_enabled()), bool(m.is_inference_mode_enabled()))


def _generator_run(m: Any, name: str) -> list[Any]:
    seen: list[Any] = []

    @_managers(m)[name]()
    def steps() -> Any:
        received = yield _states(m)
        seen.append(("received", received, _states(m)))
        try:
            yield _states(m)
        except ValueError as e:
            seen.append(("thrown", str(e), _states(m)))
        yield _states(m)
        return "done"

    gen = steps()
    seen.append(("first", next(gen), _states(m)))  # the caller's mode between steps
    seen.append(("sent", gen.send(7)))
    seen.append(("after throw", gen.throw(ValueError("boom"))))
    with pytest.raises(StopIteration) as stop:
        next(gen)
    seen.append(("returned", stop.value.value, _states(m)))
    return seen


@pytest.mark.parametrize("name", list(_managers(td)))
def test_generator_steps_run_in_the_mode_as_torch(name: str) -> None:
    assert _generator_run(td, name) == _generator_run(torch, name)


def _generator_closed(m: Any) -> list[Any]:
    seen: list[Any] = []

    @m.no_grad()
    def steps() -> Any:
        try:
            yield 1
        finally:
            seen.append(("cleanup", bool(m.is_grad_enabled())))

    gen = steps()
    next(gen)
    gen.close()
    seen.append(("after", bool(m.is_grad_enabled())))
    return seen


def test_closing_a_decorated_generator_runs_its_cleanup_in_the_mode_as_torch() -> None:
    assert _generator_closed(td) == _generator_closed(torch) == [
        ("cleanup", False), ("after", True),
    ]  # fmt: skip


@pytest.mark.parametrize("name", ["no_grad", "enable_grad", "inference_mode"])
def test_clone_gives_a_manager_of_the_same_kind_as_torch(name: str) -> None:
    def cloned(m: Any) -> tuple[str, tuple[bool, bool]]:
        manager = getattr(m, name)().clone()
        with manager:
            return (type(manager).__name__, _states(m))

    assert cloned(td) == cloned(torch)
