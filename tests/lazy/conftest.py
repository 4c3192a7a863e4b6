"""Shared fixtures of the lazy tests: torch._lazy (TorchScript backend) as the oracle, and a
clean metrics/compile-cache state per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch
import torch._lazy
import torch._lazy.metrics
import torch._lazy.ts_backend

from tensordispatch import lazy


def _init_torch_lazy() -> None:
    """torch._lazy's TorchScript backend, initialised when the first lazy test runs (not when
    this folder is collected), so tests that run before tests/lazy see torch without its Lazy
    kernels. torch cannot undo it: later tests in the process see torch's Lazy fallback
    (tests/dispatch/conformance leaves such process-initialised keys out of its comparisons)."""
    try:
        torch._lazy.ts_backend.init()
    except RuntimeError:  # already initialised in this process
        pass


@pytest.fixture(scope="package", autouse=True)
def _lazy_backend() -> Iterator[None]:
    """The lazy backend is registered for this folder only (tests elsewhere see the
    dispatcher without it, whatever the order); so are the Functionalize kernels that lazy
    tensors install on first use, unless something had installed them before."""
    from tensordispatch.transforms import functionalize

    _init_torch_lazy()
    functionalize_was_installed = functionalize.installed()
    handle = lazy.init()
    yield
    handle.remove()
    if not functionalize_was_installed:
        functionalize.uninstall()


@pytest.fixture(autouse=True)
def _fresh_lazy_state(_lazy_backend: None) -> Iterator[None]:
    lazy.mark_step()
    lazy.clear_compile_cache()
    lazy.metrics.reset_metrics()
    torch._lazy.mark_step()
    torch._lazy.metrics.reset()
    yield
    lazy.mark_step()


def td_counters(*names: str) -> dict[str, int | None]:
    return {n: lazy.metrics.counter_value(n) for n in names}


def torch_counters(*names: str) -> dict[str, int | None]:
    return {n: torch._lazy.metrics.counter_value(n) for n in names}
