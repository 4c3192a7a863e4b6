"""Library: torch.library's registration API over our Dispatcher (spec 6, errors 9.7).

Owns the user-facing checks and name/key resolution of ``define`` / ``impl`` /
``fallback``, registration sites as debug strings, and the decorator forms of
torch.library (``impl(qualname, types)``, ``define(qualname, schema)`` and the legacy
``impl(lib, name, key)``). Registration itself, its lock and its atomicity belong to
dispatcher.py.

Note [Debug strings]
torch stamps every registration made through a Python Library with the line that
*constructed* the library. We stamp each registration with its own site: the first stack
frame outside tensordispatch's registration modules (the user's ``lib.impl(...)`` line),
``registered at <file>:<line>``; ``debug=`` overrides it, as torch's internal API allows.
Dumps therefore point at the line that made each kernel.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from tensordispatch.dispatch.dispatcher import DISPATCHER, RegistrationHandle
from tensordispatch.dispatch.errors import LibraryError, LibraryKindError
from tensordispatch.dispatch.kernel import KernelFunction, KernelKind, fallthrough_kernel
from tensordispatch.dispatch.keys import DispatchKey, parse_dispatch_key
from tensordispatch.dispatch.op_overload import OpOverload

__all__ = ["Library", "define", "fallthrough_kernel", "impl", "registration_site"]

_RESERVED_NAMESPACES = ("prim",)
_BLOCK = {
    "DEF": "TORCH_LIBRARY",
    "FRAGMENT": "TORCH_LIBRARY_FRAGMENT",
    "IMPL": "TORCH_LIBRARY_IMPL",
}
_HERE = os.path.dirname(os.path.abspath(__file__))
_TOP_LIBRARY = os.path.join(os.path.dirname(_HERE), "library.py")
_DEVICE_KEYS = {
    "cpu": "CPU",
    "cuda": "CUDA",
    "meta": "Meta",
    "xla": "XLA",
    "mps": "MPS",
    "xpu": "XPU",
    "hpu": "HPU",
    "ipu": "IPU",
    "lazy": "Lazy",
    "mtia": "MTIA",
    "maia": "MAIA",
    "privateuseone": "PrivateUse1",
    "default": "CompositeExplicitAutograd",
}


def registration_site() -> str:
    """``registered at <file>:<line>`` of the caller outside the registration modules
    (Note [Debug strings])."""
    frame = sys._getframe(1)
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if os.path.dirname(path) != _HERE and path != _TOP_LIBRARY:
            return f"registered at {frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back  # type: ignore[assignment]
    return "registered at <unknown>:0"


def _destroy_handles(handles: list[RegistrationHandle]) -> None:
    for h in reversed(handles):
        h.remove()
    handles.clear()


def _finalize_handles(handles: list[RegistrationHandle]) -> None:
    for h in reversed(handles):
        h._remove_from_finalizer()  # Note [Removal from finalizers] in dispatcher.py
    handles.clear()


class Library:
    """A set of registrations for one namespace, undone together by ``_destroy()`` (or when
    the object is garbage collected, as in torch).

    >>> lib = Library("doc_lib", "DEF")
    >>> lib.define("twice(Tensor x) -> Tensor")
    'twice'
    >>> h = lib.impl("twice", lambda x: x, "CPU")
    >>> h
    <RegistrationHandle impl doc_lib::twice CPU (live)>
    >>> lib._destroy()
    >>> h.removed
    True
    """

    def __init__(self, ns: str, kind: str, dispatch_key: str = "") -> None:
        if kind not in _BLOCK:
            raise LibraryKindError(f"Unsupported kind: {kind}")
        if ns in _RESERVED_NAMESPACES and kind in ("DEF", "FRAGMENT"):
            raise LibraryKindError(
                f"{ns} is a reserved namespace. Please try creating a library with another name."
            )
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self.debug = registration_site()
        self.handles: list[RegistrationHandle] = []
        self._destroyed = False
        if ns == "_" and kind != "IMPL":
            raise LibraryError(
                " ".join(
                    [
                        f"{_BLOCK[kind]}: cannot define {_BLOCK[kind]} with the wildcard namespace",
                        f"_ (every {_BLOCK[kind]} defines operators for a distinct namespace!) Did",
                        f"you mean to use TORCH_LIBRARY_IMPL instead?  {self._where()}",
                    ]
                )
            )
        if dispatch_key and kind != "IMPL":
            raise LibraryError(
                " ".join(
                    [
                        f"Library({ns!r}, {kind!r}, {dispatch_key!r}): only IMPL libraries have a",
                        "dispatch key; pass the key to impl() or use an IMPL library.",
                    ]
                )
            )
        if dispatch_key:
            parse_dispatch_key(dispatch_key)
        if kind == "DEF":
            self.handles.append(DISPATCHER.claim_namespace(ns, self.debug))
        weakref.finalize(self, _finalize_handles, self.handles)

    def _where(self) -> str:
        return f"(Error occurred while processing {_BLOCK[self.kind]} block at {self.debug[14:]})"

    def _check_live(self) -> None:
        if self._destroyed:
            raise AssertionError("Library object has been destroyed")

    # ----- define ---------------------------------------------------------------------------

    def define(self, schema: str, alias_analysis: str = "", *, tags: Sequence[Any] = ()) -> str:
        """Define an operator from a schema; returns its name without overload, like torch.

        ``alias_analysis`` is "" (FROM_SCHEMA) or "CONSERVATIVE". The registration's handle
        is ``self.handles[-1]``.
        """
        if alias_analysis not in ("", "FROM_SCHEMA", "CONSERVATIVE"):
            raise RuntimeError(f"Invalid alias_analysis type {alias_analysis}")
        self._check_live()
        head = schema.split("(")[0]
        if self.kind == "IMPL":
            raise LibraryError(
                " ".join(
                    [
                        f'def("{head}"): Cannot define an operator inside of a TORCH_LIBRARY_IMPL',
                        "block.  All def()s should be placed in the (unique) TORCH_LIBRARY block",
                        f"for their namespace.  {self._where()}",
                    ]
                )
            )
        from tensordispatch.schema.model import OperatorName  # load at first def (issue 4)
        from tensordispatch.schema.parse import parse_schema

        parsed = parse_schema(schema)
        base = parsed.name.name
        if base.namespace is not None and base.namespace != self.ns:
            raise LibraryError(
                "  ".join(  # torch's text has two spaces after each of its sentences
                    [
                        " ".join(
                            [
                                f"Explicitly provided namespace ({base.namespace}) in schema",
                                "string does not match namespace of enclosing",
                                f"{_BLOCK[self.kind]} block ({self.ns}).",
                            ]
                        ),
                        " ".join(
                            [
                                "Move this definition to the (unique) TORCH_LIBRARY block",
                                "corresponding to this namespace (and consider deleting the",
                                "namespace from your schema string.)",
                            ]
                        ),
                        self._where(),
                    ]
                )
            )
        if parsed.overload_name == "default":
            # torch 2.13's wording, 'aten' whatever the namespace; our hint follows it.
            raise LibraryError(
                " ".join(
                    [
                        "default is not a legal overload name for aten operators.",
                        f"Drop '.default' from {schema.split('(')[0].strip()!r}: the default",
                        "overload is the one without a name",
                    ]
                )
            )
        name = OperatorName(dataclasses.replace(base, namespace=self.ns), parsed.overload_name)
        full = parsed.with_name(name)
        kind = alias_analysis if alias_analysis else "FROM_SCHEMA"
        tags = (tags,) if not isinstance(tags, (tuple, list)) else tuple(tags)
        self.handles.append(DISPATCHER.register_def(full, registration_site(), kind, tags))
        return full.qualified_name.split("::", 1)[1]

    # ----- impl -----------------------------------------------------------------------------

    def _resolve_name(self, op_name: str | OpOverload) -> tuple[str, str]:
        """(qualified name, overload) of an impl target, with torch's namespace checks."""
        if isinstance(op_name, OpOverload):
            op_name = op_name.name()
        if not isinstance(op_name, str):
            raise RuntimeError(  # noqa: TRY004 - torch raises RuntimeError here
                " ".join(
                    [
                        "impl should be passed either a name or an OpOverload object as the first",
                        f"argument, got {type(op_name)}",
                    ]
                )
            )
        ns, _, rest = op_name.rpartition("::")
        name, _, overload = rest.partition(".")
        enclosing = self.ns
        if self.ns == "_" or (ns and ns != self.ns):
            raise LibraryError(
                " ".join(
                    [
                        f'impl("{op_name}", ...): Explicitly provided namespace ({ns or "none"})',
                        "in operator name does not match namespace of enclosing",
                        f"{_BLOCK[self.kind]} block ({enclosing}).  Move this definition to the",
                        f"{_BLOCK[self.kind]} block corresponding to this namespace (and consider",
                        f"deleting the namespace from your schema string.)  {self._where()}",
                    ]
                )
            )
        return f"{self.ns}::{name}", overload

    def _resolve_key(self, op_name: object, dispatch_key: str) -> DispatchKey:
        if dispatch_key and self.dispatch_key and dispatch_key != self.dispatch_key:
            raise LibraryError(
                " ".join(
                    [
                        f'impl("{op_name}", ...): Explicitly provided dispatch key',
                        f"({dispatch_key}) is",
                        "inconsistent with the dispatch key of the enclosing TORCH_LIBRARY_IMPL",
                        "block",
                        f"({self.dispatch_key}).  Please declare a separate TORCH_LIBRARY_IMPL",
                        f"block for this dispatch key and move your impl() there.  {self._where()}",
                    ]
                )
            )
        key = parse_dispatch_key(dispatch_key or self.dispatch_key or "CompositeImplicitAutograd")
        return DispatchKey.CompositeImplicitAutograd if key == DispatchKey.Undefined else key

    def impl(
        self,
        op_name: str | OpOverload,
        fn: Callable[..., Any],
        dispatch_key: str = "",
        *,
        with_keyset: bool = False,
        debug: str | None = None,
        boxed: bool = False,
    ) -> RegistrationHandle:
        """Register ``fn`` for ``op_name`` under ``dispatch_key`` (default: the library's key,
        else CompositeImplicitAutograd). ``fallthrough_kernel`` registers a fallthrough;
        ``with_keyset=True`` passes the key set first; ``boxed=True`` (internal) registers a
        boxed kernel ``fn(op, keyset, stack)``. Returns the registration's handle."""
        if not callable(fn):
            raise TypeError(
                f"Input function is required to be a callable but found type {type(fn)}"
            )
        qualified, overload = self._resolve_name(op_name)
        key = self._resolve_key(op_name, dispatch_key)
        self._check_live()
        if key == DispatchKey.Meta:
            entry = DISPATCHER.find(qualified, overload)
            if entry is None:
                # torch.library looks the operator's CIA kernel up first and that lookup
                # fails for an unknown operator; same text, so define (or impl) it first.
                name = f"{qualified}.{overload}" if overload else qualified
                raise RuntimeError(f"operator {name} does not exist")
            if DispatchKey.CompositeImplicitAutograd in entry.kernels:
                raise RuntimeError(
                    " ".join(
                        [
                            "We should not register a meta kernel directly to the operator",
                            f"'{qualified.split('::')[1]}', because it has a",
                            "CompositeImplicitAutograd",
                            "kernel in core. Instead we should let the operator decompose, and",
                            "ensure",
                            "that we have meta kernels for the base ops that it decomposes into.",
                        ]
                    )
                )
        if fn is fallthrough_kernel:
            kind = KernelKind.FALLTHROUGH
        elif boxed:
            kind = KernelKind.BOXED
        else:
            kind = KernelKind.UNBOXED_WITH_KEYSET if with_keyset else KernelKind.UNBOXED
        kernel = KernelFunction(fn, kind, debug if debug is not None else registration_site())
        handle = DISPATCHER.register_impl(qualified, overload, key, kernel)
        self.handles.append(handle)
        return handle

    # ----- fallback -------------------------------------------------------------------------

    def fallback(
        self,
        fn: Callable[..., Any],
        dispatch_key: str = "",
        *,
        with_keyset: bool = False,
        debug: str | None = None,
        boxed: bool = False,
    ) -> RegistrationHandle:
        """Register a global fallback for ``dispatch_key`` (namespace ``_`` only), called as
        ``fn(op, *args, **kwargs)`` (``with_keyset``: ``fn(keyset, op, ...)``; ``boxed``:
        ``fn(op, keyset, stack)``). Returns the registration's handle."""
        dispatch_key = dispatch_key or self.dispatch_key
        if self.ns != "_":
            raise RuntimeError(
                " ".join(
                    [
                        "Fallback can only be registered using library fragment on the global",
                        f'namespace "_" but it is {self.ns}',
                    ]
                )
            )
        if not dispatch_key:
            raise AssertionError("dispatch_key must not be empty for fallback")
        self._check_live()
        key = parse_dispatch_key(dispatch_key)
        if fn is fallthrough_kernel:
            kind = KernelKind.FALLTHROUGH
        elif boxed:
            kind = KernelKind.BOXED
        else:
            kind = KernelKind.FALLBACK_WITH_KEYSET if with_keyset else KernelKind.FALLBACK
        kernel = KernelFunction(fn, kind, debug if debug is not None else registration_site())
        handle = DISPATCHER.register_fallback(key, kernel)
        self.handles.append(handle)
        return handle

    def _register_internal_fallback(self, key: DispatchKey, kernel: KernelFunction) -> None:
        """Register a prepared KernelFunction as a fallback (global fallbacks, fallbacks.py)."""
        self.handles.append(DISPATCHER.register_fallback(key, kernel))

    def _destroy(self) -> None:
        """Undo every registration of this library, newest first."""
        self._destroyed = True
        _destroy_handles(self.handles)


_KEEP_ALIVE: list[Library] = []


def _keys_of(types: str | Sequence[str]) -> list[str]:
    keys = []
    for t in (types,) if isinstance(types, str) else types:
        try:
            parse_dispatch_key(t)
            keys.append(t)
        except RuntimeError:
            if t not in _DEVICE_KEYS:
                raise ValueError(
                    " ".join(
                        [
                            f"impl(..., types={types!r}): {t!r} is neither a device type",
                            f"({', '.join(_DEVICE_KEYS)}) nor a dispatch key name",
                        ]
                    )
                ) from None
            keys.append(_DEVICE_KEYS[t])
    return keys


def impl(
    qualname: Any, types: Any, func: Callable[..., Any] | None = None, *, lib: Any = None
) -> Any:
    """torch.library.impl: register ``func`` for device types / keys, or decorate.

    ``impl(lib, "name", "CPU")`` (the legacy form) returns a decorator too.

    >>> lib = Library("doc_impl", "DEF"); _ = lib.define("f(Tensor x) -> Tensor")
    >>> @impl("doc_impl::f", "cpu", lib=lib)
    ... def f_cpu(x):
    ...     return x
    >>> lib._destroy()
    """
    if isinstance(qualname, Library):
        legacy_lib, name, key = qualname, types, func if isinstance(func, str) else ""

        def legacy(f: Callable[..., Any]) -> Callable[..., Any]:
            legacy_lib.impl(name, f, key)
            return f

        return legacy
    keys = _keys_of(types)

    def register(f: Callable[..., Any]) -> Callable[..., Any]:
        use = lib
        if use is None:
            use = Library(qualname.split("::")[0], "FRAGMENT")
            _KEEP_ALIVE.append(use)
        for key in keys:
            use.impl(qualname, f, key)
        return f

    if func is None:
        return register
    register(func)
    return None


def define(qualname: Any, schema: str, *, lib: Any = None, tags: Sequence[Any] = ()) -> Any:
    """torch.library.define: ``define("ns::name", "(Tensor x) -> Tensor")``; the legacy
    ``define(lib, schema)`` returns a decorator registering the function as the CIA kernel.

    >>> lib = Library("doc_define", "FRAGMENT")
    >>> define("doc_define::g", "(Tensor x) -> Tensor", lib=lib)
    >>> lib._destroy()
    """
    if isinstance(qualname, Library):
        legacy_lib = qualname

        def legacy(f: Callable[..., Any]) -> Callable[..., Any]:
            name = legacy_lib.define(schema)
            legacy_lib.impl(name, f)
            return f

        return legacy
    ns, _, name = qualname.partition("::")
    if not schema.startswith("("):
        raise ValueError(
            " ".join(
                [
                    "define(qualname, schema, ...): expected schema to look like e.g.",
                    f'"(Tensor x) -> Tensor" but got "{schema}"',
                ]
            )
        )
    use = lib
    if use is None:
        use = Library(ns, "FRAGMENT")
        _KEEP_ALIVE.append(use)
    use.define(name + schema, tags=tags)
    return None
