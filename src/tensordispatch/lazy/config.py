"""Lazy backend settings (torch._lazy.config): forcing an operator onto the eager fallback.

Owns the per-thread force-fallback setting (a field of the dispatcher's thread-local state,
as the house style keeps every mutable setting; torch's is process-wide). Must not trace.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from tensordispatch.dispatch.tls import local_state, register_field

__all__ = ["force_fallback", "get_force_fallback", "set_force_fallback"]

register_field("lazy_force_fallback", "")
_ST = local_state()


def set_force_fallback(configval: str) -> None:
    """Run operator ``configval`` (``"aten::sub"``: every overload) through the eager CPU
    fallback instead of tracing it; ``""`` turns it off (torch._lazy.config)."""
    _ST.lazy_force_fallback = configval


def get_force_fallback() -> str:
    """The operator currently forced onto the fallback (``""``: none).

    >>> get_force_fallback()
    ''
    """
    return str(_ST.lazy_force_fallback)


@contextmanager
def force_fallback(configval: str) -> Iterator[None]:
    """``set_force_fallback`` for the duration of a block, restored afterwards.

    >>> with force_fallback("aten::sub"):
    ...     get_force_fallback()
    'aten::sub'
    """
    previous = get_force_fallback()
    set_force_fallback(configval)
    try:
        yield
    finally:
        set_force_fallback(previous)
