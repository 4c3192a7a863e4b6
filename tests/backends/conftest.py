"""Fixtures of the CPU fallback tests: the fbdev backend (fbdev_backend.py) registered for a
module, its recording hooks per test, and a library of list/optional/view operators; and of
the one-hop tests: ``lib``, an aten IMPL library destroyed after the test."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import tensordispatch as td
from tensordispatch.dispatch.kernel import fallthrough_kernel
from tensordispatch.dispatch.keys import BackendComponent
from tensordispatch.library import Library
from tensordispatch.tensor import Tensor
from tensordispatch.tensor.device import register_device_type

from .fbdev_backend import KEY, Hooks, _backend, cf


@pytest.fixture(scope="module")
def fbdev() -> Iterator[Any]:
    handle = register_device_type("fbdev", BackendComponent.PrivateUse2Bit)
    # torch has no global AutogradPrivateUse2 fallback either; a backend on that key adds one.
    autograd = Library("_", "IMPL")
    autograd.fallback(fallthrough_kernel, "AutogradPrivateUse2")
    yield td.device("fbdev", 0)
    autograd._destroy()
    handle.remove()


@pytest.fixture
def hooks(fbdev: Any) -> Iterator[Hooks]:
    h = Hooks()
    reg = cf.register_cpu_fallback(_backend(h), KEY)
    cf.reset_fallback_counts()
    yield h
    reg.remove()
    cf.reset_fallback_counts()


@pytest.fixture
def testlib() -> Iterator[Library]:
    lib = Library("fbtest", "DEF")
    lib.define("combine(Tensor x, Tensor[] xs, Tensor? w=None, Tensor? b=None) -> Tensor")
    lib.define("pick(Tensor?[] xs) -> Tensor[]")
    lib.define("myview(Tensor(a) x) -> Tensor(a)")

    def combine(x: Tensor, xs: list[Tensor], w: Tensor | None = None, b: Tensor | None = None):
        assert all(t.device.type == "cpu" for t in [x, *xs])
        out = x
        for t in xs:
            out = out + t
        if w is not None:
            out = out * w
        if b is not None:
            out = out - b
        return out

    lib.impl("combine", combine, "CPU")
    lib.impl("pick", lambda xs: [t.neg() for t in xs if t is not None], "CPU")
    lib.impl("myview", lambda x: x.view(-1), "CPU")
    yield lib
    lib._destroy()


@pytest.fixture
def lib() -> Iterator[Library]:
    """An ``aten`` IMPL library for a test's overrides, destroyed after the test."""
    library = Library("aten", "IMPL")
    yield library
    library._destroy()
