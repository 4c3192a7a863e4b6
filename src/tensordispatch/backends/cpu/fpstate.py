"""A cheap ``np.errstate(all="ignore")`` for the per-call kernel path.

Torch never warns about floating-point overflow, division by zero or invalid results, so the
CPU kernels run their ufuncs with NumPy's floating-point error reporting turned off. Entering
``np.errstate`` costs about a microsecond per call because it rebuilds NumPy's error-state
object every time. This module builds that object once, at import, and only swaps it in and
out: ``with quiet_fp():`` (about 450 ns) or, on the hottest paths, inline (about 170 ns)::

    token = FP_STATE.set(FP_QUIET)
    try:
        ...
    finally:
        FP_STATE.reset(token)

NumPy keeps the error state in a context variable that is not public API. When it cannot be
found (another NumPy version), ``FP_STATE`` is a stand-in whose ``set``/``reset`` enter and
leave a fresh ``np.errstate(all="ignore")``: same behaviour, usual speed.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import Context, ContextVar
from types import TracebackType
from typing import Any

import numpy as np

__all__ = [
    "FP_QUIET",
    "FP_STATE",
    "QUIET_RUN",
    "quiet_call",
    "quiet_call_slow",
    "quiet_fp",
    "quiet_retry",
]


def _find_state_var() -> tuple[ContextVar[Any], Any] | None:
    """NumPy's error-state context variable and its value under ``errstate(all="ignore")``."""
    try:
        from numpy._core import _ufunc_config  # optional private hook, checked below
    except ImportError:
        return None
    var = getattr(_ufunc_config, "_extobj_contextvar", None)
    if not isinstance(var, ContextVar):
        return None
    with np.errstate(all="ignore"):
        quiet = var.get()
    with np.errstate(all="warn"):
        loud = var.get()
    if quiet is loud:  # not the variable errstate sets after all
        return None
    return var, quiet


class ErrstateStandIn:
    """``set``/``reset`` like a ContextVar's, entering and leaving ``np.errstate(all="ignore")``.

    >>> import numpy as np
    >>> state = ErrstateStandIn()
    >>> token = state.set(None)
    >>> np.geterr()["divide"]
    'ignore'
    >>> state.reset(token)
    """

    __slots__ = ()

    def set(self, value: Any) -> Any:
        token = np.errstate(all="ignore")
        token.__enter__()
        return token

    def reset(self, token: Any) -> None:
        token.__exit__(None, None, None)


_FOUND = _find_state_var()
FP_STATE: Any
FP_QUIET: Any
if _FOUND is not None:
    FP_STATE, FP_QUIET = _FOUND
else:  # pragma: no cover - depends on the NumPy version (tests force this path)
    FP_STATE, FP_QUIET = ErrstateStandIn(), None


class quiet_fp:  # lower case: used like np.errstate
    """Silences NumPy floating-point warnings inside ``with quiet_fp():`` (reentrant, thread safe).

    >>> import numpy as np
    >>> with quiet_fp():
    ...     r = np.divide(np.float32(1), np.float32(0))
    >>> float(r)
    inf
    """

    __slots__ = ("_token",)

    def __enter__(self) -> None:
        self._token = FP_STATE.set(FP_QUIET)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        FP_STATE.reset(self._token)


# Note [Quiet context]
# Setting and resetting the context variable costs ~200 ns a call (a new context mapping and a
# token each time), most of a 3-element ufunc's own cost. A call run in a context that already
# holds the quiet state costs ~30 ns more than the bare call: ``_QUIET_CONTEXT`` is an empty
# context with only NumPy's variable set, and a ufunc reads no other context variable. A
# context is entered by one thread at a time; when another thread is inside it, ``run`` raises
# RuntimeError before calling anything and the call takes the set/reset path instead (a
# RuntimeError from the function itself is raised again by that second call).


def _quiet_context() -> Context | None:
    if _FOUND is None:  # pragma: no cover - depends on the NumPy version
        return None
    context = Context()
    context.run(FP_STATE.set, FP_QUIET)
    return context


_QUIET_CONTEXT = _quiet_context()


def quiet_call_slow(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` between a set and a reset of NumPy's error state (quiet).

    >>> import numpy as np
    >>> quiet_call_slow(np.log, np.float64(0.0))
    np.float64(-inf)
    """
    token = FP_STATE.set(FP_QUIET)
    try:
        return fn(*args, **kwargs)
    finally:
        FP_STATE.reset(token)


# ``QUIET_RUN(ufunc, *args, **kwargs)``: the call in the quiet context (Note [Quiet context]);
# it raises RuntimeError before calling when another thread is inside the context. The hot
# kernels call it inline and take ``quiet_call_slow`` on RuntimeError, as quiet_call does.
QUIET_RUN: Callable[..., Any] = quiet_call_slow if _QUIET_CONTEXT is None else _QUIET_CONTEXT.run


def quiet_retry(error: RuntimeError, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """The ``except RuntimeError as error`` branch of an inline ``QUIET_RUN(fn, ...)``: the
    call on the slow path when the context was busy, else ``error`` raised again (fn's own
    error: fn is not run twice, it may have written an out=).

    >>> import numpy as np
    >>> quiet_retry(RuntimeError("cannot enter context: ..."), np.negative, 1.0)
    np.float64(-1.0)
    """
    if not str(error).startswith("cannot enter context"):
        raise error
    return quiet_call_slow(fn, *args, **kwargs)


def quiet_call(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` with NumPy's floating-point error reports off, for ufunc calls
    (``fn`` runs in a context holding nothing but NumPy's error state, Note [Quiet context]).
    Hot paths inline it (this frame with its argument packing costs ~250-450 ns)::

        try:
            r = QUIET_RUN(ufunc, a, b)
        except RuntimeError as e:
            r = quiet_retry(e, ufunc, a, b)

    >>> import numpy as np
    >>> quiet_call(np.divide, np.float32(1), np.float32(0))
    np.float32(inf)
    """
    try:
        return QUIET_RUN(fn, *args, **kwargs)
    except RuntimeError as e:  # the context is entered (another thread, or a nested call)
        return quiet_retry(e, fn, *args, **kwargs)
