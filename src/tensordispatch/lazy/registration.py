"""Registering the lazy backend's kernels from backend.yaml (rules as data).

Owns reading ``backend.yaml`` (gen-backend-stubs format: ``backend: Lazy``, ``full_codegen``,
``ir_gen``, ``supported``, ``symint``) and turning it into registrations under the Lazy key:
the generated kernel of every ``full_codegen`` operator (from the generated IR module,
lazy_ir.py, irgen.py's Note [Checked-in IR]), derived kernels for their in-place and out=
siblings (same `signature()`), the hand-written ``supported`` kernels, and the eager CPU
fallback for every other operator. Before registering anything it checks that every
``full_codegen`` / ``ir_gen`` operator has a shape function (a Meta or composite kernel) and
reports all missing ones at once. `install()` / `uninstall()` do and undo all of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped,unused-ignore]

from tensordispatch.dispatch.dispatcher import DISPATCHER
from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.library import Library
from tensordispatch.schema.model import SchemaKind

__all__ = [
    "BACKEND_YAML",
    "LazyBackendYaml",
    "LazyInit",
    "init",
    "install",
    "installed",
    "ir_module",
    "read_backend_yaml",
    "uninstall",
]

BACKEND_YAML = Path(__file__).with_name("backend.yaml")


@dataclass(frozen=True, slots=True)
class LazyBackendYaml:
    """The parts of backend.yaml the lazy backend reads."""

    backend: str
    full_codegen: tuple[str, ...]
    supported: tuple[str, ...]
    symint: tuple[str, ...] = ()
    ir_gen: tuple[str, ...] = ()


def read_backend_yaml(path: Path = BACKEND_YAML) -> LazyBackendYaml:
    """Read the lazy backend's yaml (tests check it with gen-backend-stubs' own rules).

    >>> y = read_backend_yaml(); y.backend, "add.Tensor" in y.full_codegen
    ('Lazy', True)
    """
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return LazyBackendYaml(
        data["backend"],
        tuple(data.get("full_codegen") or ()),
        tuple(data.get("supported") or ()),
        tuple(data.get("symint") or ()),
        tuple(data.get("ir_gen") or ()),
    )


def _entry(name: str) -> Any:
    base, _, overload = name.partition(".")
    entry = DISPATCHER.find(f"aten::{base}", overload)
    if entry is None or entry.schema is None:
        raise LookupError(
            f"lazy backend.yaml: aten::{name} is not an operator of the library; remove it "
            f"from {BACKEND_YAML.name} or add the operator first"
        )
    return entry


_STATE: list[Any] = []


def installed() -> bool:
    """Whether the lazy backend's kernels are registered."""
    return bool(_STATE)


# the kernels a call redispatched to Meta can reach: a shape function (spec 3.2 step 5)
_SHAPE_KEYS = (
    DispatchKey.Meta, DispatchKey.CompositeExplicitAutograd,
    DispatchKey.CompositeExplicitAutogradNonFunctional, DispatchKey.CompositeImplicitAutograd,
)  # fmt: skip


def _shape_function(entry: Any) -> bool:
    return any(k in entry.kernels for k in _SHAPE_KEYS)


def ir_module(spec: LazyBackendYaml, path: Path = BACKEND_YAML) -> Any:
    """The generated IR module for ``spec`` (irgen Note [Checked-in IR]), after checking
    that every listed operator can be generated (all problems of a kind at once)."""
    from tensordispatch.lazy import irgen

    entries = {name: _entry(name) for name in (*spec.full_codegen, *spec.ir_gen)}
    ops = [
        irgen.IrOp(name, entries[name].schema, name in spec.full_codegen,
                   _shape_function(entries[name]))
        for name in (*spec.full_codegen, *spec.ir_gen)
    ]  # fmt: skip
    irgen.check_ir_ops(ops, path.name)
    checked_in = "tensordispatch.lazy.lazy_ir" if spec.backend == "Lazy" else None
    return irgen.load_ir_module(
        ops, spec.full_codegen, spec.ir_gen, checked_in, backend=spec.backend, source=path.name
    )


def install(path: Path | None = None) -> None:
    """Register the Lazy kernels and the fallback (idempotent; `init()` calls it).
    ``path``: another backend yaml (default: the package's backend.yaml)."""
    if _STATE:
        return
    from tensordispatch.lazy.fallback import register_lazy_fallback
    from tensordispatch.lazy.kernels import HANDWRITTEN, SYMINT, derived_kernel, op_plan
    from tensordispatch.lazy.shortcut import eligible, shortcut_kernel

    path = BACKEND_YAML if path is None else path
    spec = read_backend_yaml(path)
    SYMINT.clear()
    SYMINT.update(spec.symint)
    module = ir_module(spec, path)
    lib = Library("aten", "IMPL")
    shortcuts = Library("aten", "IMPL")
    traced: dict[str, Any] = {}
    with DISPATCHER.batch():
        for name in spec.full_codegen:
            entry = _entry(name)
            plan = op_plan(entry.overload_object)
            node_class, factory = module.NODES[name]
            kernel = factory(plan, node_class)
            lib.impl(name, kernel, "Lazy", boxed=True, debug="lazy generated kernel")
            if eligible(plan):  # Note [Functionalize shortcut]
                shortcut = shortcut_kernel(plan, kernel)
                shortcuts.impl(name, shortcut, "Functionalize", debug="lazy shortcut")
            traced[str(entry.schema.signature())] = entry.overload_object
        for name in spec.supported:
            _entry(name)
            lib.impl(name, HANDWRITTEN[name], "Lazy", debug="lazy hand-written kernel")
        for entry in list(DISPATCHER.live_entries()):
            schema = entry.schema
            if schema is None or not entry.qualified_name.startswith("aten::"):
                continue
            if schema.kind() not in (SchemaKind.inplace, SchemaKind.out):
                continue
            functional = traced.get(str(schema.signature()))
            name = entry.qualified_overload_name.split("::", 1)[1]
            if functional is None or name in spec.supported:
                continue
            kernel = derived_kernel(entry.overload_object, functional)
            lib.impl(name, kernel, "Lazy", boxed=True, debug="lazy derived in-place/out kernel")
    _STATE.extend([lib, shortcuts, register_lazy_fallback()])


class LazyInit:
    """What `init()` returns: ``remove()`` undoes the registration if that call made it."""

    __slots__ = ("installed_here",)

    def __init__(self, installed_here: bool) -> None:
        self.installed_here = installed_here

    def remove(self) -> None:
        if self.installed_here:
            self.installed_here = False
            uninstall()

    def __repr__(self) -> str:
        return f"LazyInit(installed_here={self.installed_here})"


def init() -> LazyInit:
    """Register the lazy backend (torch._lazy.ts_backend.init()): importing
    ``tensordispatch.lazy`` registers nothing, so the dispatcher's tables only change for
    programs that use lazy tensors. Idempotent; the result's ``remove()`` undoes it if this
    call did it.

    >>> handle = init(); installed()
    True
    >>> handle.remove()
    """
    if _STATE:
        return LazyInit(False)
    install()
    return LazyInit(True)


def uninstall() -> None:
    """Undo `install()` exactly."""
    if not _STATE:
        return
    lib, shortcuts, fallback = _STATE
    fallback.remove()
    shortcuts._destroy()
    lib._destroy()
    _STATE.clear()
