"""A pass-through dispatch mode of ours and one of torch's, each recording the operators it
sees, for tests comparing which calls reach a mode (the one-hop paths must stay visible)."""

from __future__ import annotations

from typing import Any

from torch.utils._python_dispatch import TorchDispatchMode

from tensordispatch.dispatch import DispatchMode


class Ours(DispatchMode):
    """Records ``str(func)`` of every call into ``seen``."""

    def __init__(self, seen: list[str]) -> None:
        self.seen = seen

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        self.seen.append(str(func))
        return func(*args, **(kwargs or {}))


class Theirs(TorchDispatchMode):
    """torch's mode recording the same way."""

    def __init__(self, seen: list[str]) -> None:
        super().__init__()
        self.seen = seen

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        self.seen.append(str(func))
        return func(*args, **(kwargs or {}))


def recording_modes() -> tuple[list[str], list[str], Any, Any]:
    """(ours seen, theirs seen, a factory of our mode, a factory of torch's mode)."""
    ours: list[str] = []
    theirs: list[str] = []
    return ours, theirs, lambda: Ours(ours), lambda: Theirs(theirs)
