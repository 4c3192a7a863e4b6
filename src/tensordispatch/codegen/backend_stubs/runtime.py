"""What generated backend modules use at run time: kernel specs, the kernel check, aliases.

Generated `<backend>_native_functions.py` modules import this module and the dispatcher's
Library; this module itself stays free of dispatcher imports (codegen/ may import only
schema/), so it can also serve the generation-time check in missing.py. It owns the one
message format for missing or mis-typed kernels, used at both times (spec 5.3).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tensordispatch.codegen.backend_stubs.model import BackendStubsError, MissingKernelsError
from tensordispatch.codegen.backend_stubs.signature import ActualParams, parameter_problems

__all__ = [
    "NOT_GIVEN",
    "BackendRegistration",
    "Device",
    "Generator",
    "KernelSpec",
    "Layout",
    "MemoryFormat",
    "QScheme",
    "Scalar",
    "ScalarType",
    "Sequence",
    "Storage",
    "Stream",
    "SymInt",
    "Tensor",
    "check_kernels",
    "kernel_problems",
    "missing_kernels_message",
    "resolve_kernels",
]

# Names used in generated annotations. Backends bring their own tensor classes, so these
# are documentation for readers and type checkers, not runtime checks.
Tensor = Any
Scalar = int | float | bool | complex
ScalarType = Any
Layout = Any
Device = Any
MemoryFormat = Any
QScheme = Any
Generator = Any
Storage = Any
Stream = Any
SymInt = int


class _NotGiven:
    """Default of generated wrapper parameters: the caller left this argument out."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<not given>"


NOT_GIVEN: Any = _NotGiven()


@dataclass(frozen=True, slots=True)
class KernelSpec:
    """One kernel a backend must provide: name, operator, key, parameters, signature text.

    `params` holds (name, keyword_only, has_default) per parameter; `generic` kernels (schema
    names that are not identifiers) are only checked for presence.
    """

    name: str
    operator: str
    dispatch_key: str
    params: tuple[tuple[str, bool, bool], ...]
    text: str
    generic: bool = False


@dataclass
class BackendRegistration:
    """The registrations one `register()` call made; `remove()` undoes exactly them."""

    libraries: list[Any] = field(default_factory=list)
    #: other handles (the ``ops.<backend>`` direct entry points), removed first
    extra: list[Any] = field(default_factory=list)

    @property
    def handles(self) -> list[Any]:
        return [h for lib in self.libraries for h in lib.handles]

    def remove(self) -> None:
        """Undo every registration (newest first); calling it again does nothing."""
        for handle in reversed(self.extra):
            handle.remove()
        self.extra.clear()
        for lib in reversed(self.libraries):
            lib._destroy()
        self.libraries.clear()

    def __enter__(self) -> BackendRegistration:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def resolve_kernels(kernels: Any, module: str, class_name: str) -> Any:
    """The kernels object: `kernels` if given, else `module.class_name` (or the module)."""
    if kernels is not None:
        return kernels
    try:
        loaded = importlib.import_module(module)
    except ImportError as err:
        raise BackendStubsError(
            f"register(): cannot import the kernel module {module} (cpp_namespace in the backend yaml): {err}; fix the module path or pass the kernels object to register()"
        ) from err
    return getattr(loaded, class_name, loaded)


def _actual(fn: Callable[..., Any]) -> ActualParams | None:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    pos, kw, defaulted = [], [], set()
    var_pos = var_kw = False
    for p in sig.parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            pos.append(p.name)
        elif p.kind is p.KEYWORD_ONLY:
            kw.append(p.name)
        elif p.kind is p.VAR_POSITIONAL:
            var_pos = True
        else:
            var_kw = True
        if p.default is not p.empty:
            defaulted.add(p.name)
    return ActualParams(tuple(pos), tuple(kw), frozenset(defaulted), var_pos, var_kw)


def kernel_problems(kernels: Any, specs: Iterable[KernelSpec]) -> list[tuple[KernelSpec, str]]:
    """(spec, problem) for every kernel of `kernels` that is missing or does not fit."""
    problems = []
    for spec in specs:
        fn = getattr(kernels, spec.name, None)
        if fn is None:
            problems.append((spec, "missing"))
        elif not callable(fn):
            problems.append((spec, f"not callable (it is a {type(fn).__name__})"))
        elif not spec.generic:
            actual = _actual(fn)
            if actual is not None:
                for why in parameter_problems(spec.params, actual):
                    problems.append((spec, why))
    return problems


def missing_kernels_message(
    class_name: str, where: str, problems: Sequence[tuple[KernelSpec, str]]
) -> str:
    """The one message listing every missing or mis-typed kernel, grouped by kernel.

    >>> spec = KernelSpec("abs", "aten::abs", "XLA", (("self", False, False),),
    ...                   "def abs(self: Tensor) -> Tensor")
    >>> print(missing_kernels_message("XLANativeFunctions", "module torch_xla", [(spec, "missing")]))
    XLANativeFunctions (module torch_xla) is missing or mis-declares 1 kernel(s) its backend yaml lists:
      abs (aten::abs, key XLA): missing
        expected: def abs(self: Tensor) -> Tensor
    Define each as a @staticmethod of XLANativeFunctions with exactly the expected parameters (a schema default needs a Python default).
    """
    by_name: dict[str, list[tuple[KernelSpec, str]]] = {}
    for spec, why in problems:
        by_name.setdefault(spec.name, []).append((spec, why))
    lines = [
        f"{class_name} ({where}) is missing or mis-declares {len(by_name)} kernel(s) its backend yaml lists:"
    ]
    for name, items in by_name.items():
        spec = items[0][0]
        reasons = "; ".join(why for _, why in items)
        lines.append(f"  {name} ({spec.operator}, key {spec.dispatch_key}): {reasons}")
        lines.append(f"    expected: {spec.text}")
    lines.append(
        f"Define each as a @staticmethod of {class_name} with exactly the expected parameters (a schema default needs a Python default)."
    )
    return "\n".join(lines)


def check_kernels(kernels: Any, specs: Sequence[KernelSpec], class_name: str) -> None:
    """Raise MissingKernelsError listing every missing or mis-typed kernel at once."""
    problems = kernel_problems(kernels, specs)
    if problems:
        where = getattr(kernels, "__name__", type(kernels).__name__)
        kind = (
            "module"
            if inspect.ismodule(kernels)
            else "class"
            if inspect.isclass(kernels)
            else "object"
        )
        raise MissingKernelsError(missing_kernels_message(class_name, f"{kind} {where}", problems))
