"""Applying scenarios to tensordispatch through its public registration API.

Mirrors ``torch_side.TorchSide``: one Library per step, kernels whose debug string is set
exactly (``debug=``) to what torch's side prints, so tables compare key by key. Undo is
either ``Library._destroy()`` or the registration handle's ``remove()``.
tensordispatch is imported lazily so that collection works while layers are missing.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable
from types import TracebackType
from typing import Any, Literal

from .normalise import missing_kernel_summary, normalise_dump, parse_table
from .scenario import (
    OP_NAME,
    Define,
    Fallback,
    FallthroughFallback,
    FallthroughImpl,
    Flavour,
    Impl,
    Registration,
    debug_of,
    kernel_debugs,
)

_counter = itertools.count()
Undo = Literal["destroy", "handle"]


class StandIn:
    """The minimal dispatch argument: the dispatcher only reads ``_key_set``."""

    __slots__ = ("_key_set",)

    def __init__(self, raw: int) -> None:
        self._key_set = raw


class TdSide:
    """One scenario run on tensordispatch: a scratch namespace and one library per step."""

    def __init__(self, flavour: Flavour, undo: Undo = "destroy") -> None:
        from tensordispatch import dispatch, library

        self._library = library
        self._dispatch = dispatch
        self.flavour = flavour
        self.undo = undo
        self.namespace = f"tdours{next(_counter)}x"
        self.libs: dict[int, Any] = {}
        self.handles: dict[int, Any] = {}
        self.ran: list[str] = []

    def __enter__(self) -> TdSide:
        return self

    def __exit__(
        self, tp: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Destroy every library still alive, newest first (releases global fallbacks)."""
        for index in sorted(self.libs, reverse=True):
            self.handles.pop(index, None)
            self.libs.pop(index)._destroy()

    @property
    def qualified(self) -> str:
        return f"{self.namespace}::{OP_NAME}"

    def _kernel(self, name: str, with_keyset: bool) -> Callable[..., Any]:
        ran = self.ran

        def kernel(x: Any) -> Any:
            ran.append(name)
            return x

        def kernel_ks(keyset: Any, x: Any) -> Any:
            ran.append(f"{name} {keyset!r}")
            return x

        return kernel_ks if with_keyset else kernel

    def _bad_kernel(self) -> Callable[..., Any]:
        def kernel(x: Any, extra: Any) -> Any:
            return x

        return kernel

    def _fallback(self, name: str, with_keyset: bool) -> Callable[..., Any]:
        ran = self.ran

        def fallback(op: Any, *args: Any, **kwargs: Any) -> Any:
            ran.append(name)
            return args[0]

        def fallback_ks(keyset: Any, op: Any, *args: Any, **kwargs: Any) -> Any:
            ran.append(f"{name} {keyset!r}")
            return args[0]

        return fallback_ks if with_keyset else fallback

    def apply(self, index: int, step: Registration) -> None:
        """Run one registration; on failure the library is destroyed and the error re-raised."""
        lib_cls = self._library.Library
        if isinstance(step, (Fallback, FallthroughFallback)):
            lib = lib_cls("_", "IMPL")
        else:
            lib = lib_cls(self.namespace, "FRAGMENT")
        try:
            handle = self._register(lib, step)
        except BaseException:
            lib._destroy()
            raise
        self.libs[index] = lib
        self.handles[index] = handle

    def _register(self, lib: Any, step: Registration) -> Any:
        fallthrough = self._library.fallthrough_kernel
        if isinstance(step, Define):
            return lib.define(step.schema, alias_analysis=step.alias_analysis)
        debug = debug_of(step, self.flavour)
        if isinstance(step, Impl):
            kernel = self._kernel(step.name, step.with_keyset)
            if step.bad_signature:
                kernel = self._bad_kernel()
            return lib.impl(OP_NAME, kernel, step.key, with_keyset=step.with_keyset, debug=debug)
        if isinstance(step, FallthroughImpl):
            return lib.impl(OP_NAME, fallthrough, step.key, debug=debug)
        if isinstance(step, Fallback):
            fallback = self._fallback(step.name, step.with_keyset)
            return lib.fallback(fallback, step.key, with_keyset=step.with_keyset, debug=debug)
        if isinstance(step, FallthroughFallback):
            return lib.fallback(fallthrough, step.key, debug=debug)
        raise TypeError(f"unknown step {step!r}")

    def destroy(self, index: int) -> None:
        """Undo step ``index`` by the configured means (a failed step has nothing to undo)."""
        lib = self.libs.pop(index, None)
        handle = self.handles.pop(index, None)
        if lib is None:
            return
        if self.undo == "handle" and handle is not None and hasattr(handle, "remove"):
            handle.remove()
        lib._destroy()

    def dump(self) -> str:
        return normalise_dump(self._dispatch.dump(self.qualified), self.namespace)

    def table(self, steps: tuple[Any, ...]) -> dict[str, str]:
        raw = self._dispatch.dump_table(self.qualified)
        return parse_table(raw, self.namespace, kernel_debugs(steps, self.flavour))

    def raw_dump(self) -> str:
        return str(self._dispatch.dump(self.qualified))

    def raw_table(self) -> str:
        return str(self._dispatch.dump_table(self.qualified))

    def check_invariants(self) -> None:
        if self._dispatch.dump(self.qualified):
            self._dispatch.check_invariants(self.qualified)

    def op(self) -> Any:
        from tensordispatch import ops

        return getattr(getattr(ops, self.namespace), OP_NAME).default

    def redispatch(self, raw: int) -> str:
        """Outcome of ``op.redispatch(raw, stand_in)`` (see TorchSide.redispatch)."""
        self.ran.clear()
        try:
            self.op().redispatch(raw, StandIn(0x10001))
        except NotImplementedError as e:
            return f"raised NotImplementedError: {missing_kernel_summary(str(e), self.namespace)}"
        except RuntimeError:
            return "raised RuntimeError"
        return f"ran {self.ran[0]}" if self.ran else "ran <unrecorded>"

    def call(self, raw: int, exclude: str | None = None) -> str:
        """Outcome of calling ``foo`` on a stand-in with key set ``raw`` (see TorchSide.call),
        with ``exclude`` (a key name) excluded through our thread-local guard."""
        from tensordispatch.dispatch.keys import parse_dispatch_key
        from tensordispatch.dispatch.tls import ExcludeDispatchKeyGuard

        self.ran.clear()
        try:
            with contextlib.ExitStack() as guards:
                if exclude is not None:
                    guards.enter_context(ExcludeDispatchKeyGuard(parse_dispatch_key(exclude)))
                self.op()(StandIn(raw))
        except NotImplementedError as e:
            return f"raised NotImplementedError: {missing_kernel_summary(str(e), self.namespace)}"
        except RuntimeError:
            return "raised RuntimeError"
        return f"ran {self.ran[0]}" if self.ran else "ran <unrecorded>"
