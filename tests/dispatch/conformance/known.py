"""Known discrepancies of tensordispatch against torch 2.13, as strict xfails.

Each entry names the precise difference; a strict xfail turns into a failure the moment the
implementation is fixed, so this list cannot go stale silently. Keys are scenario names (or
test ids for the non-scenario tests).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pytest

TABLE: dict[str, str] = {}
CALLS: dict[str, str] = {}
OTHER_LIBRARY: dict[str, str] = {}
PACKET: dict[str, str] = {}
OTHER: dict[str, str] = {}


def params(cases: list[Any], known: dict[str, str]) -> list[Any]:
    """``cases`` as pytest params, with a strict xfail on every known discrepancy."""
    out = []
    for case in cases:
        reason = known.get(str(case))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(case, id=str(case), marks=marks))
    return out


F = TypeVar("F", bound=Callable[..., Any])


def xfail_if_known(test_id: str) -> Callable[[F], F]:
    """Decorator: a strict xfail when ``test_id`` is in ``OTHER``, else no mark."""
    reason = OTHER.get(test_id)

    def decorate(fn: F) -> F:
        if reason:
            marked: F = pytest.mark.xfail(strict=True, reason=reason)(fn)
            return marked
        return fn

    return decorate
