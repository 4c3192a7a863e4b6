"""Grad modes: context managers, decorators, nesting, thread-locality."""

from __future__ import annotations

import threading

import tensordispatch as td
from tensordispatch.autograd import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)


def _x() -> td.Tensor:
    return td.ones(2).requires_grad_()


def test_no_grad_records_nothing() -> None:
    x = _x()
    with no_grad():
        y = x * 2
    assert (y.requires_grad, y.grad_fn, is_grad_enabled()) == (False, None, True)


def test_enable_grad_inside_no_grad() -> None:
    x = _x()
    with no_grad():
        with enable_grad():
            y = x * 2
        z = x * 2
    assert y.grad_fn.name() == "MulBackward0" and z.grad_fn is None


def test_set_grad_enabled_both_ways() -> None:
    x = _x()
    with set_grad_enabled(False):
        assert (x * 2).grad_fn is None
    with set_grad_enabled(True):
        assert (x * 2).grad_fn is not None


def test_decorators() -> None:
    @no_grad()
    def f(t: td.Tensor) -> td.Tensor:
        return t * 2

    @enable_grad()
    def g(t: td.Tensor) -> td.Tensor:
        return t * 2

    x = _x()
    assert f(x).grad_fn is None
    with no_grad():
        assert g(x).grad_fn is not None
    assert is_grad_enabled()


def test_mode_restored_on_exception() -> None:
    try:
        with no_grad():
            raise ValueError
    except ValueError:
        pass
    assert is_grad_enabled()


def test_inference_mode_skips_autograd() -> None:
    x = _x()
    with inference_mode():
        y = x * 2
        assert not is_grad_enabled()
    assert y.grad_fn is None and is_grad_enabled()


def test_grad_mode_is_thread_local() -> None:
    barrier = threading.Barrier(2)
    seen: dict[str, bool] = {}
    x = _x()

    def worker() -> None:
        barrier.wait()  # the main thread is inside no_grad now
        seen["worker"] = (x * 2).requires_grad
        barrier.wait()

    t = threading.Thread(target=worker)
    t.start()
    with no_grad():
        barrier.wait()
        barrier.wait()
        seen["main"] = (x * 2).requires_grad
    t.join()
    assert seen == {"worker": True, "main": False}


def test_set_grad_enabled_called_as_function_like_torch() -> None:
    import torch

    seen = []
    for mod in (torch, td.autograd):
        mod.set_grad_enabled(False)
        seen.append(mod.is_grad_enabled())
        mod.set_grad_enabled(True)
        seen.append(mod.is_grad_enabled())
    assert seen == [False, True, False, True]


def test_set_grad_enabled_decorator_changes_nothing_until_called() -> None:
    @set_grad_enabled(False)
    def f() -> bool:
        return is_grad_enabled()

    assert is_grad_enabled()
    assert f() is False
    assert is_grad_enabled()


def test_inference_mode_decorator() -> None:
    @inference_mode()
    def f(t: td.Tensor) -> td.Tensor:
        return t * 2

    assert f(_x()).grad_fn is None and is_grad_enabled()
