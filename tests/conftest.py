"""Test-wide settings: derandomized Hypothesis in CI, so a CI failure always reproduces."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture(autouse=True)
def _thread_local_state_is_restored() -> Iterator[None]:
    """STYLE.md: every context manager restores thread-local state; a test that leaks fails."""
    from tensordispatch.dispatch.tls import tls_is_pristine

    assert tls_is_pristine(), "thread-local dispatch state was already dirty before this test"
    yield
    assert tls_is_pristine(), "this test left thread-local dispatch state changed"
