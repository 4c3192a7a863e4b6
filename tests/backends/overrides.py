"""Registering an override of an aten operator in the one-hop tests (the ``lib`` fixture of
conftest.py gives the library)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from tensordispatch.library import Library


def impl_quietly(lib: Library, name: str, fn: Callable[..., Any], key: str) -> None:
    """``lib.impl(name, fn, key)`` without torch's one-time "Overriding a previously
    registered kernel" warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lib.impl(name, fn, key)
