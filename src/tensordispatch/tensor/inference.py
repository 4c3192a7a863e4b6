"""Inference tensors: tensors allocated while ``inference_mode`` is on (torch's rules).

Owns the marker such tensors carry, the count of open ``inference_mode`` blocks that
constructors test, and torch's errors for what inference tensors may not do. Imports only
``dispatch``; tensor.py and the backends' inline constructors call ``mark_inference``.

Note [Inference tensors]
As in torch, a tensor allocated while the thread is in ``inference_mode`` (a new root, not
a view or alias of a normal tensor) is an inference tensor: its key set has no Autograd or
ADInplaceOrView key (so no call that sees only inference tensors reaches autograd, even
outside the mode) and it has no version counter. We mark the missing counter with one
shared ``InferenceVersion`` object in ``_vc``; views and ``detach()`` share the root's
``_vc`` and key set, so they are inference tensors too, as in torch; like torch's, such a
view is no view (``_base`` is None): ``_make_view`` makes it a second root over the same
storage bytes. What that gives:

- ``t._version`` raises torch's "Inference tensors do not track version counter.";
- a version bump (every in-place write through ADInplaceOrView, which the default
  thread-local include set adds outside the mode) raises torch's "Inplace update to
  inference tensor outside InferenceMode ..." outside the mode, and is a no-op inside;
- recording a saved tensor reads ``_vc.version``, which raises torch's "Inference tensors
  cannot be saved for backward ..." (the only readers of a counter's ``version`` outside
  tensor.py are the saved-tensor records, graph.py and the generated entries);
- ``requires_grad = True`` outside the mode raises torch's message (tensor.py).

The messages are torch's, naming ``tensordispatch.`` where torch's name ``torch.``.

Testing thread-local state on every allocation would cost every kernel ~40 ns, so
constructors first test ``_INFERENCE_ACTIVE``, a module global holding the number of
``inference_mode(True)`` blocks open in any thread (0 almost always: one global load and
a jump); only when it is non-zero do they read this thread's flag. The count is a hint,
never the truth: the thread-local flag decides. Modules with inline constructors keep a
copy of the count in their own globals through ``watch_inference_count``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from tensordispatch.dispatch.keyset import AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW
from tensordispatch.dispatch.tls import local_state, register_field

__all__ = [
    "INFERENCE_SAVED_MESSAGE",
    "INFERENCE_VC",
    "InferenceVersion",
    "change_inference_count",
    "inference_bump",
    "mark_inference",
    "set_inference_view_hook",
    "watch_inference_count",
]

register_field("autograd_inference_mode", False)
_STATE = local_state()
_NOT_AUTOGRAD = ~AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW

INFERENCE_SAVED_MESSAGE = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `tensordispatch.no_grad()` "
    "instead of `tensordispatch.inference_mode()`."
)
_INPLACE_MESSAGE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details."
)
VERSION_MESSAGE = "Inference tensors do not track version counter."


class InferenceVersion:
    """The ``_vc`` of inference tensors: no counter (Note [Inference tensors]). Reading its
    version is what recording a saved tensor does, hence torch's error for that.

    >>> INFERENCE_VC.version
    Traceback (most recent call last):
    RuntimeError: Inference tensors cannot be saved for backward. Please do not use ...
    """

    __slots__ = ()

    @property
    def version(self) -> int:
        raise RuntimeError(INFERENCE_SAVED_MESSAGE)

    def __repr__(self) -> str:
        return "InferenceVersion()"


INFERENCE_VC = InferenceVersion()

_INFERENCE_ACTIVE = 0
_WATCHERS: list[dict[str, Any]] = []
_LOCK = threading.Lock()


def watch_inference_count(namespace: dict[str, Any]) -> None:
    """Keep ``namespace["_INFERENCE_ACTIVE"]`` equal to the number of open inference_mode
    blocks (pass a module's ``globals()``; Note [Inference tensors]).

    >>> ns: dict = {}
    >>> watch_inference_count(ns); ns["_INFERENCE_ACTIVE"]
    0
    """
    with _LOCK:
        _WATCHERS.append(namespace)
        namespace["_INFERENCE_ACTIVE"] = _INFERENCE_ACTIVE


def change_inference_count(delta: int) -> None:
    """Add ``delta`` to the count of open ``inference_mode(True)`` blocks (grad_mode.py)."""
    global _INFERENCE_ACTIVE
    with _LOCK:
        n = _INFERENCE_ACTIVE = _INFERENCE_ACTIVE + delta
        for namespace in _WATCHERS:
            namespace["_INFERENCE_ACTIVE"] = n


_VIEW_HOOK: list[Callable[[Any], None]] = []


def set_inference_view_hook(hook: Callable[[Any], None]) -> None:
    """The function called on a view of a normal tensor made in inference mode (autograd
    marks its creation meta; Note [View creation meta] in autograd/views.py)."""
    _VIEW_HOOK[:] = [hook]


def mark_inference(t: Any) -> None:
    """Make the new root ``t`` an inference tensor if this thread is in inference mode.

    Callers test ``_INFERENCE_ACTIVE`` first (Note [Inference tensors]).

    >>> import tensordispatch as td
    >>> with td.inference_mode():
    ...     t = td.ones(2)
    >>> t.is_inference(), td.ones(2).is_inference()
    (True, False)
    """
    if _STATE.autograd_inference_mode:
        t._key_set &= _NOT_AUTOGRAD
        t._vc = INFERENCE_VC


def mark_inference_view(view: Any) -> None:
    """A view of a normal tensor made while ``_INFERENCE_ACTIVE``: autograd's hook marks it
    if this thread is in inference mode."""
    if _STATE.autograd_inference_mode and _VIEW_HOOK:
        _VIEW_HOOK[0](view)


def inference_bump() -> None:
    """A version bump of an inference tensor: torch's error outside inference mode."""
    if not _STATE.autograd_inference_mode:
        raise RuntimeError(_INPLACE_MESSAGE)


def strip_autograd_keys(raw: int) -> int:
    """An inference tensor's key set made from a normal one."""
    return raw & _NOT_AUTOGRAD


def is_inference_mode_on() -> bool:
    """Whether this thread is in inference mode (grad_mode.is_inference_mode_enabled)."""
    return bool(_STATE.autograd_inference_mode)
