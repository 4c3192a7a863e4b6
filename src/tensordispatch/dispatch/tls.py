"""Thread-local dispatch state: include/exclude key sets, the mode stack, room for more.

Owns the one per-thread object the dispatcher reads on every call, and the context managers
that change it. Every change goes through a guard that restores in ``finally`` (``__exit__``
runs on exceptions too); there are no process-global flags. Must not import anything above
``dispatch``.

Note [Thread-local state]
``local_state()`` returns a single ``threading.local`` instance: the same Python object in
every thread, whose attributes are per thread. The dispatcher may bind it once at import
and read ``state.included`` / ``state.excluded`` (raw key-set words) on each call. A thread
that has not touched it yet sees torch's defaults: BackendSelect and ADInplaceOrView
included, the ten Autocast keys excluded. torch stores the words XOR-ed with the defaults
so that zeroed C++ TLS means "default"; we store them directly because a Python thread-local
runs an initializer.

Guards snapshot the word they change on entry and restore that snapshot on exit, as torch
2.13 does: a change made through ``tls_set_dispatch_key_included`` inside a guard is undone
when the guard exits, and an include guard for an already-included key restores nothing
more than what was there.
"""

from __future__ import annotations

import threading
from types import TracebackType
from typing import Any

from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import (
    AUTOGRAD_DISPATCH_KEYSET_RAW,
    AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW,
    BACKEND_MASK_RAW,
    DEFAULT_EXCLUDED_RAW,
    DEFAULT_INCLUDED_RAW,
    DispatchKeySet,
    keyset_raw,
)

__all__ = [
    "ExcludeDispatchKeyGuard",
    "ForceDispatchKeyGuard",
    "IncludeDispatchKeyGuard",
    "LocalState",
    "PreserveDispatchKeyGuard",
    "_AutoDispatchBelowADInplaceOrView",
    "_AutoDispatchBelowAutograd",
    "local_state",
    "register_field",
    "tls_is_dispatch_key_excluded",
    "tls_is_dispatch_key_included",
    "tls_is_pristine",
    "tls_local_exclude_set",
    "tls_local_include_set",
    "tls_set_dispatch_key_excluded",
    "tls_set_dispatch_key_included",
]


class LocalState(threading.local):
    """Per-thread dispatch state (Note [Thread-local state]).

    Attributes: ``included`` / ``excluded`` raw key-set words, ``modes`` (the Python dispatch
    mode stack, innermost last), ``grad_enabled``, ``transform_stack`` (vmap/grad/functionalize
    levels, innermost last). Layers above add immutable-default fields with ``register_field``.
    """

    included: int
    excluded: int
    modes: list[Any]
    grad_enabled: bool
    transform_stack: list[Any]

    def __init__(self) -> None:
        self.included = DEFAULT_INCLUDED_RAW
        self.excluded = DEFAULT_EXCLUDED_RAW
        self.modes = []
        self.grad_enabled = True
        self.transform_stack = []


_STATE = LocalState()
# Fields added by higher layers: name -> default (immutable, stored as a class attribute so
# threads that never set the field read the default).
_EXTRA_FIELDS: dict[str, object] = {}


def local_state() -> LocalState:
    """The thread-local state object (the same object in every thread, per-thread values).

    >>> hex(local_state().included)  # BackendSelect, ADInplaceOrView
    '0x404000000'
    """
    return _STATE


def register_field(name: str, default: object) -> None:
    """Add a per-thread field with an immutable default (e.g. a level counter or a tuple).

    Every thread, including ones already running, reads ``default`` until it assigns its
    own value; ``tls_is_pristine`` checks the field is back to its default. Registering the
    same name again with an equal default does nothing.

    >>> register_field("_doctest_depth", 0); local_state()._doctest_depth
    0
    """
    if name in _EXTRA_FIELDS and _EXTRA_FIELDS[name] == default:
        return  # re-registration with the same default (a re-import) is harmless
    if name in _EXTRA_FIELDS or name in LocalState.__annotations__:
        raise ValueError(
            " ".join(
                [
                    f"register_field({name!r}): the thread-local field {name!r} already exists;",
                    "choose a name prefixed by your layer",
                ]
            )
        )
    if isinstance(default, list | dict | set | bytearray):
        raise TypeError(
            " ".join(
                [
                    f"register_field({name!r}, {default!r}): the default is shared by every",
                    "thread, so it must be immutable; use a tuple or a frozenset",
                ]
            )
        )
    _EXTRA_FIELDS[name] = default
    setattr(LocalState, name, default)


def tls_local_include_set() -> DispatchKeySet:
    """This thread's include set.

    >>> tls_local_include_set()
    DispatchKeySet(BackendSelect, ADInplaceOrView)
    """
    return DispatchKeySet.from_raw(_STATE.included)


def tls_local_exclude_set() -> DispatchKeySet:
    """This thread's exclude set.

    >>> tls_local_exclude_set()  # doctest: +ELLIPSIS
    DispatchKeySet(AutocastCPU, AutocastMTIA, ..., AutocastCUDA, AutocastPrivateUse1)
    """
    return DispatchKeySet.from_raw(_STATE.excluded)


def tls_is_pristine() -> bool:
    """Whether this thread's state equals a fresh thread's (for tests).

    >>> tls_is_pristine()
    True
    """
    st = _STATE
    return (
        st.included == DEFAULT_INCLUDED_RAW
        and st.excluded == DEFAULT_EXCLUDED_RAW
        and not st.modes
        and st.grad_enabled is True
        and not st.transform_stack
        and all(getattr(st, name) == default for name, default in _EXTRA_FIELDS.items())
    )


def _raw(ks: DispatchKeySet | DispatchKey) -> int:
    if isinstance(ks, DispatchKeySet):
        return ks.raw
    if isinstance(ks, DispatchKey):
        return keyset_raw(ks)
    raise TypeError(
        " ".join(
            [
                "dispatch key guard: expected a DispatchKeySet or a DispatchKey, got",
                f"{type(ks).__name__} {ks!r}; wrap raw words with DispatchKeySet.from_raw",
            ]
        )
    )


class IncludeDispatchKeyGuard:
    """Add keys to this thread's include set for the duration of a ``with`` block.

    >>> with IncludeDispatchKeyGuard(DispatchKeySet(DispatchKey.Python)):
    ...     tls_local_include_set()
    DispatchKeySet(BackendSelect, Python, ADInplaceOrView)
    >>> tls_local_include_set()
    DispatchKeySet(BackendSelect, ADInplaceOrView)
    """

    __slots__ = ("_raw", "_saved")

    def __init__(self, ks: DispatchKeySet | DispatchKey) -> None:
        self._raw = _raw(ks)
        self._saved: list[int] = []

    def __enter__(self) -> None:
        st = _STATE
        self._saved.append(st.included)
        st.included |= self._raw

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        _STATE.included = self._saved.pop()


class ExcludeDispatchKeyGuard:
    """Add keys to this thread's exclude set for the duration of a ``with`` block.

    Exclusion clears functionality bits only: excluding ``CPU`` excludes Dense for every
    backend.

    >>> with ExcludeDispatchKeyGuard(DispatchKeySet(DispatchKey.Python)):
    ...     tls_local_exclude_set().has(DispatchKey.Python)
    True
    """

    __slots__ = ("_raw", "_saved")

    def __init__(self, ks: DispatchKeySet | DispatchKey) -> None:
        self._raw = _raw(ks)
        self._saved: list[int] = []

    def __enter__(self) -> None:
        st = _STATE
        self._saved.append(st.excluded)
        st.excluded |= self._raw

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        _STATE.excluded = self._saved.pop()


class _AutoDispatchBelowAutograd(ExcludeDispatchKeyGuard):
    """Exclude the autograd keys, so calls inside dispatch below autograd.

    >>> with _AutoDispatchBelowAutograd():
    ...     hex(local_state().excluded)
    '0x1ffb800000000'
    """

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(DispatchKeySet.from_raw(AUTOGRAD_DISPATCH_KEYSET_RAW))


class _AutoDispatchBelowADInplaceOrView(ExcludeDispatchKeyGuard):
    """Exclude the autograd keys and ADInplaceOrView.

    >>> with _AutoDispatchBelowADInplaceOrView():
    ...     hex(local_state().excluded)
    '0x1ffbc00000000'
    """

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(
            DispatchKeySet.from_raw(AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW)
        )


class ForceDispatchKeyGuard:
    """Replace both sets for the duration of a ``with`` block (torch's _ForceDispatchKeyGuard).

    >>> with ForceDispatchKeyGuard(DispatchKeySet(DispatchKey.CPU), DispatchKeySet()):
    ...     tls_local_include_set(), tls_local_exclude_set()
    (DispatchKeySet(CPU), DispatchKeySet())
    """

    __slots__ = ("_excluded", "_included", "_saved")

    def __init__(self, included: DispatchKeySet, excluded: DispatchKeySet) -> None:
        self._included = _raw(included)
        self._excluded = _raw(excluded)
        self._saved: list[tuple[int, int]] = []

    def __enter__(self) -> None:
        st = _STATE
        self._saved.append((st.included, st.excluded))
        st.included = self._included
        st.excluded = self._excluded

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        _STATE.included, _STATE.excluded = self._saved.pop()


class PreserveDispatchKeyGuard:
    """Restore both sets on exit, whatever happened inside (torch's _PreserveDispatchKeyGuard).

    >>> with PreserveDispatchKeyGuard():
    ...     tls_set_dispatch_key_included(DispatchKey.Python, True)
    >>> tls_is_dispatch_key_included(DispatchKey.Python)
    False
    """

    __slots__ = ("_saved",)

    def __init__(self) -> None:
        self._saved: list[tuple[int, int]] = []

    def __enter__(self) -> None:
        self._saved.append((_STATE.included, _STATE.excluded))

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        _STATE.included, _STATE.excluded = self._saved.pop()


def tls_is_dispatch_key_included(k: DispatchKey) -> bool:
    """Whether every bit of ``k`` is in this thread's include set.

    >>> tls_is_dispatch_key_included(DispatchKey.BackendSelect)
    True
    """
    word = keyset_raw(k)
    return _STATE.included & word == word


def tls_is_dispatch_key_excluded(k: DispatchKey) -> bool:
    """Whether every bit of ``k`` is in this thread's exclude set.

    >>> tls_is_dispatch_key_excluded(DispatchKey.AutocastCPU)
    True
    """
    word = keyset_raw(k)
    return _STATE.excluded & word == word


def tls_set_dispatch_key_included(k: DispatchKey, desired: bool) -> None:
    """Include or un-include ``k`` without a guard (prefer the guards).

    As in torch, un-including clears only the functionality bit: a backend bit stays.

    >>> with PreserveDispatchKeyGuard():
    ...     tls_set_dispatch_key_included(DispatchKey.Meta, True)
    ...     tls_set_dispatch_key_included(DispatchKey.Meta, False)
    ...     hex(local_state().included)
    '0x404008000'
    """
    if desired != tls_is_dispatch_key_included(k):
        word = keyset_raw(k)
        st = _STATE
        st.included = st.included | word if desired else st.included & (BACKEND_MASK_RAW | ~word)


def tls_set_dispatch_key_excluded(k: DispatchKey, desired: bool) -> None:
    """Exclude or un-exclude ``k`` without a guard (prefer the guards).

    >>> with PreserveDispatchKeyGuard():
    ...     tls_set_dispatch_key_excluded(DispatchKey.AutocastCPU, False)
    ...     tls_is_dispatch_key_excluded(DispatchKey.AutocastCPU)
    False
    """
    if desired != tls_is_dispatch_key_excluded(k):
        word = keyset_raw(k)
        st = _STATE
        st.excluded = st.excluded | word if desired else st.excluded & (BACKEND_MASK_RAW | ~word)
