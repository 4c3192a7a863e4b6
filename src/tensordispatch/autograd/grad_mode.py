"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode.

Owns the per-thread switches autograd kernels read (``local_state().grad_enabled`` and the
``autograd_inference_mode`` field). Each is a context manager and a decorator, and restores
the previous value in ``finally``, so modes nest and are thread-local (a new thread starts
with grad enabled, as in torch).

Note [Grad mode is not a dispatch key]
As in torch, ``no_grad`` does not change the key sets: the autograd kernels still run and
decide from ``grad_enabled`` whether to record. ``inference_mode`` additionally excludes the
autograd keys and drops ADInplaceOrView from the include set for its duration (torch's
thread-local sets, spec 4.4), so calls skip the autograd layer entirely; a normal tensor
still carries ADInplaceOrView in its own key set, so an in-place write to it inside bumps
its version, as in torch. Tensors allocated inside are inference tensors, as torch's
(Note [Inference tensors] in tensor/inference.py), and views of normal tensors made inside
are marked (Note [View creation meta] in views.py).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Generator
from types import TracebackType
from typing import Any, TypeVar

from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import AUTOGRAD_DISPATCH_KEYSET_RAW, DispatchKeySet
from tensordispatch.dispatch.tls import local_state, register_field
from tensordispatch.tensor.inference import change_inference_count

__all__ = [
    "enable_grad",
    "inference_mode",
    "is_anomaly_enabled",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "set_detect_anomaly",
    "set_grad_enabled",
]

F = TypeVar("F", bound=Callable[..., Any])
_STATE = local_state()
register_field("autograd_inference_mode", False)  # also registered by tensor/inference.py
register_field("autograd_anomaly", False)
_AD_INPLACE_OR_VIEW_RAW = DispatchKeySet(DispatchKey.ADInplaceOrView).raw


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection was requested on this thread (see set_detect_anomaly).

    >>> is_anomaly_enabled()
    False
    """
    return bool(_STATE.autograd_anomaly)


def is_grad_enabled() -> bool:
    """Whether this thread records autograd graphs.

    >>> is_grad_enabled()
    True
    """
    return _STATE.grad_enabled


def is_inference_mode_enabled() -> bool:
    """Whether this thread is inside ``inference_mode()``.

    >>> is_inference_mode_enabled()
    False
    """
    return bool(_STATE.autograd_inference_mode)


class _GradModeBase:
    """A context manager that is also a decorator (a fresh instance per decorated call)."""

    def _enter(self) -> None:
        raise NotImplementedError

    def _exit(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> None:
        self._enter()

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._exit()

    def _clone(self) -> _GradModeBase:
        return self.__class__()

    def clone(self) -> _GradModeBase:
        """A new manager with the same mode (torch's ``clone``)."""
        return self._clone()

    def __call__(self, fn: F) -> F:
        if inspect.isgeneratorfunction(fn):
            return _wrap_generator(self, fn)  # type: ignore[return-value]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self._clone():
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


def _wrap_generator(manager: _GradModeBase, fn: Callable[..., Any]) -> Callable[..., Any]:
    """A decorated generator function runs each step of its body in the mode (torch's): the
    mode is entered for every resume (next, send, throw, close) and left at every yield, so
    the caller's code between steps runs in its own mode."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
        gen = fn(*args, **kwargs)
        step: Callable[[], Any] = functools.partial(gen.send, None)
        while True:
            try:
                with manager._clone():
                    out = step()
            except StopIteration as stop:
                return stop.value
            try:
                sent = yield out
            except GeneratorExit:
                with manager._clone():
                    gen.close()
                raise
            except BaseException as error:  # noqa: BLE001 - handed to the generator
                step = functools.partial(gen.throw, error)
            else:
                step = functools.partial(gen.send, sent)

    return wrapper


class _NoArgumentDecorator(_GradModeBase):
    """Usable as ``@no_grad`` as well as ``@no_grad()`` (torch's)."""

    def __new__(cls, fn: Callable[..., Any] | None = None) -> Any:
        if fn is None:
            return super().__new__(cls)
        return cls()(fn)


class set_grad_enabled(_GradModeBase):
    """Set grad mode to ``mode``: immediately when called (as torch), and restored when used
    as a context manager or decorator exits.

    >>> import tensordispatch as td
    >>> x = td.ones(2).requires_grad_()
    >>> with set_grad_enabled(False):
    ...     (x * 2).requires_grad
    False
    """

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self._prev = [_STATE.grad_enabled]
        _STATE.grad_enabled = self.mode

    def _clone(self) -> _GradModeBase:
        return set_grad_enabled(self.mode)

    def __call__(self, fn: F) -> F:
        _STATE.grad_enabled = self._prev.pop()  # a decorator changes nothing until called
        self._prev.append(_STATE.grad_enabled)
        return super().__call__(fn)

    def _enter(self) -> None:
        pass  # the mode was set by __init__

    def _exit(self) -> None:
        _STATE.grad_enabled = self._prev.pop()


class _FixedMode(_NoArgumentDecorator):
    """no_grad / enable_grad: the mode changes on entry only (torch's)."""

    mode = True

    def __init__(self) -> None:
        self._prev: list[bool] = []

    def _clone(self) -> _GradModeBase:
        return self.__class__()

    def _enter(self) -> None:
        self._prev.append(_STATE.grad_enabled)
        _STATE.grad_enabled = self.mode

    def _exit(self) -> None:
        _STATE.grad_enabled = self._prev.pop()


class no_grad(_FixedMode):
    """Disable gradient recording in a block or a decorated function.

    >>> import tensordispatch as td
    >>> x = td.ones(2).requires_grad_()
    >>> with no_grad():
    ...     y = x * 2
    >>> y.requires_grad, y.grad_fn
    (False, None)
    """

    mode = False


class enable_grad(_FixedMode):
    """Enable gradient recording (inside no_grad, for example).

    >>> import tensordispatch as td
    >>> x = td.ones(2).requires_grad_()
    >>> with no_grad(), enable_grad():
    ...     (x * 2).requires_grad
    True
    """

    mode = True


class inference_mode(_GradModeBase):
    """Like no_grad, and the autograd keys are excluded (Note [Grad mode is not a dispatch key]);
    ``inference_mode(False)`` restores the normal key sets and enables grad mode, as torch's.

    >>> import tensordispatch as td
    >>> with inference_mode():
    ...     is_inference_mode_enabled(), is_grad_enabled()
    (True, False)
    """

    def __new__(cls, mode: Any = True) -> Any:
        if mode is None or isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # ``@inference_mode`` without parentheses (torch's)

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)
        self._saved: list[tuple[bool, bool, int, int]] = []
        self._counted: list[bool] = []

    def _clone(self) -> _GradModeBase:
        return inference_mode(self.mode)

    def _enter(self) -> None:
        st = _STATE
        self._saved.append((st.grad_enabled, st.autograd_inference_mode, st.included, st.excluded))
        if self.mode:
            st.included &= ~_AD_INPLACE_OR_VIEW_RAW
            st.excluded |= AUTOGRAD_DISPATCH_KEYSET_RAW
        else:  # torch's InferenceMode(false): the normal sets, grad mode on
            st.included |= _AD_INPLACE_OR_VIEW_RAW
            st.excluded &= ~AUTOGRAD_DISPATCH_KEYSET_RAW
        st.grad_enabled = not self.mode
        st.autograd_inference_mode = self.mode
        if self.mode:  # constructors test the count first (Note [Inference tensors])
            change_inference_count(1)

    def _exit(self) -> None:
        st = _STATE
        st.grad_enabled, st.autograd_inference_mode, st.included, st.excluded = self._saved.pop()
        if self.mode:
            change_inference_count(-1)


class set_detect_anomaly(_GradModeBase):  # torch's name
    """Request anomaly detection (the flag named by torch's in-place error hint).

    We record the flag only: nodes do not keep forward tracebacks and backward does not
    check for NaN (docs/AUTOGRAD.md). Sets the flag when called, restores it on exit.

    >>> with set_detect_anomaly(True):
    ...     is_anomaly_enabled()
    True
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.mode = bool(mode)
        self.check_nan = check_nan
        self._prev = [bool(_STATE.autograd_anomaly)]
        _STATE.autograd_anomaly = self.mode

    def _clone(self) -> _GradModeBase:
        return set_detect_anomaly(self.mode, self.check_nan)

    def _enter(self) -> None:
        pass

    def _exit(self) -> None:
        _STATE.autograd_anomaly = self._prev.pop()
