"""Deferred operator entries for the generated Python bindings (functions.py, methods.py).

Note [Deferred entries]
A generated binding calls its overload's entry through a module global,
``_E_add_Tensor.entry_function(...)`` (Note [Bindings call the entry] in
codegen/gen_python.py). Binding the globals to the OperatorEntry objects at import would look
every operator up, and so define every one (Note [Operators defined on first lookup] in
codegen/gen_registrations.py). Instead each global starts as a DeferredEntry whose
``entry_function`` looks the overload up on the first call, REPLACES the module global with
the real entry and forwards the call. Later calls read the real entry, so the call path is
exactly what it was (no extra frame, no check); only the first call of each overload pays
the lookup. A DeferredEntry held elsewhere keeps forwarding to the entry's current
``entry_function`` (republished on every registration), so it never goes stale.

``deferred_op`` does the same for module-level OpOverload globals of hand-written modules
(``_zeros = deferred_op(globals(), "_zeros", "zeros")`` instead of ``_zeros = op("zeros")``):
the first call or attribute read replaces the global with the OpOverload.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DeferredEntry", "DeferredOp", "deferred_entry", "deferred_op"]


class DeferredEntry:
    """Stands for the OperatorEntry of ``aten::<name>`` in ``module_globals[global_name]``
    until the first call (Note [Deferred entries]).

    >>> g = {}
    >>> g["_E"] = deferred_entry(g, "_E", "neg")
    >>> g["_E"]
    <DeferredEntry aten::neg (not yet looked up)>
    >>> import tensordispatch as td
    >>> g["_E"].entry_function(td.tensor([1.0]))
    tensor([-1.])
    >>> g["_E"].qualified_overload_name  # the global is now the entry itself
    'aten::neg'
    """

    __slots__ = ("_entry", "_global", "_globals", "_name", "entry_function")

    def __init__(self, module_globals: dict[str, Any], global_name: str, name: str) -> None:
        self._globals = module_globals
        self._global = global_name
        self._name = name
        self._entry: Any = None
        self.entry_function = self._first_call

    def _first_call(self, *args: Any, **kwargs: Any) -> Any:
        entry = self._entry
        if entry is None:
            from tensordispatch.backends.aten import op

            entry = self._entry = op(self._name)._entry
            if self._globals.get(self._global) is self:
                self._globals[self._global] = entry
        return entry.entry_function(*args, **kwargs)

    def __repr__(self) -> str:
        if self._entry is None:
            return f"<DeferredEntry aten::{self._name} (not yet looked up)>"
        return repr(self._entry)


def deferred_entry(module_globals: dict[str, Any], global_name: str, name: str) -> DeferredEntry:
    """A DeferredEntry for overload ``name`` (``"add.Tensor"``) bound at ``global_name``."""
    return DeferredEntry(module_globals, global_name, name)


class DeferredOp:
    """Stands for ``op(name)`` in ``module_globals[global_name]`` until first used (Note
    [Deferred entries]): calling it or reading an attribute looks the OpOverload up and puts
    it in the global.

    >>> g = {}
    >>> g["_neg"] = deferred_op(g, "_neg", "neg")
    >>> g["_neg"]
    <DeferredOp aten::neg (not yet looked up)>
    >>> import tensordispatch as td
    >>> g["_neg"](td.tensor([2.0]))
    tensor([-2.])
    >>> g["_neg"]
    <OpOverload(op='aten.neg', overload='default')>
    """

    __slots__ = ("_global", "_globals", "_name", "_op")

    def __init__(self, module_globals: dict[str, Any], global_name: str, name: str) -> None:
        self._globals = module_globals
        self._global = global_name
        self._name = name
        self._op: Any = None

    def _resolve(self) -> Any:
        found = self._op
        if found is None:
            from tensordispatch.backends.aten import op

            found = self._op = op(self._name)
            if self._globals.get(self._global) is self:
                self._globals[self._global] = found
        return found

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._resolve()(*args, **kwargs)

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        return getattr(self._resolve(), attribute)

    def __repr__(self) -> str:
        if self._op is None:
            return f"<DeferredOp aten::{self._name} (not yet looked up)>"
        return repr(self._op)


def deferred_op(module_globals: dict[str, Any], global_name: str, name: str) -> DeferredOp:
    """A DeferredOp for overload ``name`` (``"zeros"``, ``"sum.dim_IntList"``) bound at
    ``global_name``: use it for module-level OpOverload globals."""
    return DeferredOp(module_globals, global_name, name)
