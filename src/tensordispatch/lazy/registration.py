"""Registering the lazy backend's kernels from backend.yaml (rules as data).

Owns reading ``backend.yaml`` (gen-backend-stubs format: ``backend: Lazy``, ``full_codegen``,
``ir_gen``, ``supported``, ``symint``) and turning it into registrations under the Lazy key:
the generated kernel of every ``full_codegen`` operator (from the generated IR module,
lazy_ir.py, gen_lazy.py's Note [Checked-in IR]), derived kernels for their in-place and out=
siblings (same `signature()`), the hand-written ``supported`` kernels, and the eager CPU
fallback for every other operator. Before registering anything it checks that the generated
module matches the yaml (`ir_module`). `install()` / `uninstall()` do and undo all of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped,unused-ignore]

from tensordispatch.dispatch.dispatcher import DISPATCHER
from tensordispatch.dispatch.library import Library
from tensordispatch.schema.model import SchemaKind

__all__ = [
    "BACKEND_YAML",
    "LazyBackendYaml",
    "LazyInit",
    "StaleIrModuleError",
    "init",
    "install",
    "installed",
    "ir_module",
    "load_ir_file",
    "read_backend_yaml",
    "register_generated",
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


class StaleIrModuleError(RuntimeError):
    """The generated IR module does not match the backend yaml (regenerate it)."""


def _names(names: Any) -> str:
    return ", ".join(sorted(names))


def ir_module(spec: LazyBackendYaml, path: Path = BACKEND_YAML, module: Any = None) -> Any:
    """The generated IR module of ``spec`` (default: the checked-in lazy/lazy_ir.py,
    gen_lazy's Note [Checked-in IR]); raises StaleIrModuleError, naming every difference
    and the command that regenerates it, unless its ``full_codegen`` / ``ir_gen`` lists are
    the yaml's.

    >>> ir_module(read_backend_yaml()).NODES["add.Tensor"][0].__name__
    'AddTensor'
    """
    if module is None:
        from tensordispatch.lazy import lazy_ir as module
    problems = []
    for key, listed, have in (
        ("full_codegen", spec.full_codegen, module.FULL_CODEGEN),
        ("ir_gen", spec.ir_gen, module.IR_GEN),
    ):
        new, old = set(listed) - set(have), set(have) - set(listed)
        if new:
            problems.append(f'{path.name} lists {_names(new)} under "{key}", which it lacks')
        if old:
            problems.append(
                f'it has {_names(old)} under "{key}", which {path.name} no longer lists'
            )
    if problems:
        where = getattr(module, "__file__", None) or module.__name__
        raise StaleIrModuleError(
            f"lazy: the generated IR module {Path(where).name} does not match {path.name}: "
            f"{'; '.join(problems)}. Regenerate it: tensordispatch gen-backend-stubs --ir-only "
            f"-s {path} -o {Path(where).parent}"
        )
    return module


def load_ir_file(path: Path) -> Any:
    """Import a generated IR module from its file (e.g. one gen-backend-stubs wrote for
    another yaml) under a name of its own; the same file is imported once.

    >>> m = load_ir_file(BACKEND_YAML.with_name("lazy_ir.py"))
    >>> m.NODES["abs"][0].__name__, m is load_ir_file(BACKEND_YAML.with_name("lazy_ir.py"))
    ('Abs', True)
    """
    import importlib.util
    import sys

    name = f"tensordispatch_lazy_ir_{abs(hash(str(Path(path).resolve()))):x}"
    module = sys.modules.get(name)
    if module is not None:
        return module
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"lazy: cannot import the generated IR module {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def register_generated(
    nodes: dict[str, Any], lib: Any, key: str = "Lazy", *, skip: Any = (),
    shortcuts: Any = None,
) -> None:  # fmt: skip
    """Register the generated kernels of an IR module's ``NODES`` (``full_codegen``
    operators) under ``key`` through Library ``lib``, then a derived kernel for every
    in-place and out= sibling (Note [Derived in-place and out= kernels]) not in ``skip``.
    With ``shortcuts`` (a Library), eligible operators also get the Functionalize shortcut.
    Used by `install` and by the modules gen-backend-stubs writes for lazy-style backends.

    >>> from tensordispatch.dispatch.keys import DispatchKey
    >>> from tensordispatch.lazy import lazy_ir
    >>> lib = Library("aten", "IMPL")
    >>> register_generated({"abs": lazy_ir.NODES["abs"]}, lib, "PrivateUse1")
    >>> DispatchKey.PrivateUse1 in DISPATCHER.find("aten::abs_", "").kernels  # derived
    True
    >>> lib._destroy()
    """
    from tensordispatch.lazy.kernels import derived_kernel, op_plan
    from tensordispatch.lazy.shortcut import eligible, shortcut_kernel

    traced: dict[str, Any] = {}
    for name, (node_class, factory) in nodes.items():
        if factory is None:  # ir_gen: the node class only
            continue
        entry = _entry(name)
        plan = op_plan(entry.overload_object)
        kernel = factory(plan, node_class)
        lib.impl(name, kernel, key, boxed=True, debug="lazy generated kernel")
        if shortcuts is not None and eligible(plan):  # Note [Functionalize shortcut]
            shortcut = shortcut_kernel(plan, kernel)
            shortcuts.impl(name, shortcut, "Functionalize", debug="lazy shortcut")
        traced[str(entry.schema.signature())] = entry.overload_object
    for entry in list(DISPATCHER.live_entries()):
        schema = entry.schema
        if schema is None or not entry.qualified_name.startswith("aten::"):
            continue
        if schema.kind() not in (SchemaKind.inplace, SchemaKind.out):
            continue
        functional = traced.get(str(schema.signature()))
        name = entry.qualified_overload_name.split("::", 1)[1]
        if functional is None or name in skip:
            continue
        kernel = derived_kernel(entry.overload_object, functional)
        lib.impl(name, kernel, key, boxed=True, debug="lazy derived in-place/out kernel")


def install(path: Path | None = None, module: Any = None) -> None:
    """Register the Lazy kernels and the fallback (idempotent; `init()` calls it).
    ``path``: another backend yaml (default: the package's backend.yaml) and ``module`` its
    generated IR module (default: lazy/lazy_ir.py)."""
    if _STATE:
        return
    from tensordispatch.lazy.fallback import register_lazy_fallback
    from tensordispatch.lazy.kernels import HANDWRITTEN, SYMINT

    path = BACKEND_YAML if path is None else path
    spec = read_backend_yaml(path)
    SYMINT.clear()
    SYMINT.update(spec.symint)
    module = ir_module(spec, path, module)
    lib = Library("aten", "IMPL")
    shortcuts = Library("aten", "IMPL")
    with DISPATCHER.batch():
        for name in spec.supported:
            _entry(name)
            lib.impl(name, HANDWRITTEN[name], "Lazy", debug="lazy hand-written kernel")
        register_generated(module.NODES, lib, skip=spec.supported, shortcuts=shortcuts)
    from tensordispatch.lazy.shortcut import install_methods

    _STATE.extend([lib, shortcuts, register_lazy_fallback(), install_methods()])


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
    """Undo `install()` exactly; the metrics and the compile cache of that session are
    dropped too, so a later `init()` starts from zero counters as a fresh process does."""
    if not _STATE:
        return
    from tensordispatch.lazy import metrics
    from tensordispatch.lazy.executor import clear_compile_cache

    lib, shortcuts, fallback, methods = _STATE
    methods.remove()
    fallback.remove()
    shortcuts._destroy()
    lib._destroy()
    _STATE.clear()
    clear_compile_cache()
    metrics.reset_metrics()
