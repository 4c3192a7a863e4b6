"""A view made in no_grad mode (no grad_fn) after an in-place write to it, its root or
another view, against torch 2.13 (views.py NoGradViewSink): using it in a recorded
computation, or reading its grad_fn, raises torch's error."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import tensordispatch as td

INDIRECT = (
    "A view was created in no_grad mode and its base or another view of its base has been "
    "modified inplace with grad mode enabled. Given that this use case is ambiguous and "
    "error-prone, it is forbidden. You can clarify your code by moving both the view and the "
    "inplace either both inside the no_grad block (if you don't want the inplace to be "
    "tracked) or both outside (if you want the inplace to be tracked)."
)


def _outcome(fn: Callable[[Any], Any], lib: Any) -> tuple[str, Any]:
    try:
        return ("ok", fn(lib))
    except RuntimeError as e:
        return ("error", str(e))


def _both(fn: Callable[[Any], Any]) -> tuple[str, Any]:
    ours, theirs = _outcome(fn, td), _outcome(fn, torch)
    assert ours == theirs
    return ours


def _view_then_write(lib: Any, where: str, grad_mode_write: bool) -> Any:
    """A nonleaf root requiring grad, a view of it made in no_grad, then a write to
    ``where`` (the root, the view, or another view) with grad mode on or off."""
    x = lib.ones(4, requires_grad=True).clone()
    with lib.no_grad():
        v = x[:2]
        other = x[2:]
    target = {"root": x, "view": v, "other": other}[where]
    if grad_mode_write:  # the root only: the views' own writes in grad mode raise directly
        target.mul_(2)
    else:
        with lib.no_grad():
            target.mul_(2)
    return v


@pytest.mark.parametrize(
    "where,grad_mode_write", [("root", True), ("root", False), ("view", False), ("other", False)]
)
def test_using_the_view_after_a_write_raises(where: str, grad_mode_write: bool) -> None:
    def f(lib: Any) -> Any:
        return (_view_then_write(lib, where, grad_mode_write) * 2).requires_grad

    assert _both(f) == ("error", INDIRECT)


def test_reading_the_grad_fn_after_a_write_raises() -> None:
    def f(lib: Any) -> Any:
        return _view_then_write(lib, "root", True).grad_fn

    assert _both(f) == ("error", INDIRECT)


def test_using_the_view_in_no_grad_after_a_write_is_allowed() -> None:
    def f(lib: Any) -> Any:
        v = _view_then_write(lib, "root", True)
        with lib.no_grad():
            return (v * 2).tolist()

    assert _both(f) == ("ok", [4.0, 4.0])


def test_using_the_view_without_a_write_is_allowed() -> None:
    def f(lib: Any) -> Any:
        x = lib.ones(4, requires_grad=True).clone()
        with lib.no_grad():
            v = x[:2]
        y = v * 2
        return (y.requires_grad, type(y.grad_fn).__name__, v.grad_fn)

    assert _both(f) == ("ok", (True, "MulBackward0", None))


def test_a_view_of_a_root_without_grad_is_not_checked() -> None:
    def f(lib: Any) -> Any:
        x = lib.ones(4)
        with lib.no_grad():
            v = x[:2]
        x.mul_(2)
        return ((v * 2).requires_grad, v.grad_fn)

    assert _both(f) == ("ok", (False, None))
