"""Missing-kernel detection at generation time: read the backend's source with `ast`.

torchgen greps the backend's C++ file for `<class_name>::<name>(` (spec 5.3). We parse the
Python module instead, without importing it: the kernels are the functions defined in the
top-level class named `class_name` (static methods), or, when the file has no such class,
its top-level functions. Names bound by assignment (`abs = staticmethod(_abs)`) count as
present with unknown parameters. Every problem is listed at once, in the format the
registration-time check uses (runtime.missing_kernels_message).
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Sequence
from pathlib import Path

from tensordispatch.codegen.backend_stubs.model import BackendStubsError, MissingKernelsError
from tensordispatch.codegen.backend_stubs.runtime import KernelSpec, missing_kernels_message
from tensordispatch.codegen.backend_stubs.signature import ActualParams, parameter_problems

__all__ = ["check_impl_source", "find_impl_file", "impl_problems"]

_Def = ast.FunctionDef | ast.AsyncFunctionDef
_NOT_STATIC = "not a @staticmethod (kernels are called with the schema's arguments only)"


def find_impl_file(impl_path: str) -> Path:
    """The file of `impl_path`: a path to a .py file, or a dotted module name (its parent
    packages are imported to locate it; the module itself is not)."""
    candidate = Path(impl_path)
    if candidate.is_file():
        return candidate
    origin = None
    if all(p.isidentifier() for p in impl_path.split(".")):
        try:
            spec = importlib.util.find_spec(impl_path)
        except (ImportError, ValueError):
            spec = None
        origin = spec.origin if spec is not None else None
    if origin is None or not Path(origin).is_file():
        raise BackendStubsError(
            f"Unable to read from the specified impl_path file: {impl_path}\n  --impl-path must be the backend's kernel module, as a .py file path or a dotted module name."
        )
    return Path(origin)


def _params(node: _Def) -> ActualParams:
    a = node.args
    positional = [p.arg for p in (*a.posonlyargs, *a.args)]
    n_defaults = len(a.defaults)
    defaulted = set(positional[len(positional) - n_defaults :]) if n_defaults else set()
    defaulted |= {p.arg for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None}
    kw = tuple(p.arg for p in a.kwonlyargs)
    return ActualParams(tuple(positional), kw, frozenset(defaulted), a.vararg is not None,
                        a.kwarg is not None)  # fmt: skip


def _decorators(node: _Def) -> set[str]:
    names = set()
    for d in node.decorator_list:
        if isinstance(d, ast.Name):
            names.add(d.id)
        elif isinstance(d, ast.Attribute):
            names.add(d.attr)
    return names


# Per name, each definition: its parameters (None if bound by assignment) and whether it is
# a method that is not a @staticmethod.
_Found = dict[str, list[tuple[ActualParams | None, bool]]]


def _definitions(body: list[ast.stmt], in_class: bool) -> _Found:
    found: _Found = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            bound = in_class and "staticmethod" not in _decorators(node)
            found.setdefault(node.name, []).append((_params(node), bound))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    found.setdefault(t.id, []).append((None, False))
    return found


def impl_problems(
    source: str, filename: str, class_name: str, specs: Sequence[KernelSpec]
) -> tuple[str, list[tuple[KernelSpec, str]]]:
    """(where the kernels were looked for, problems) for a backend module's source text."""
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as err:
        raise BackendStubsError(
            f"{filename}:{err.lineno}: cannot parse the impl_path file: {err.msg}"
        ) from None
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name]
    if classes:
        where = f"class {class_name} in {filename}"
        defs = _definitions(classes[-1].body, in_class=True)
    else:
        where = f"top-level functions of {filename}; it has no class {class_name}"
        defs = _definitions(tree.body, in_class=False)
    problems: list[tuple[KernelSpec, str]] = []
    for spec in specs:
        found = defs.get(spec.name)
        if not found:
            problems.append((spec, "missing"))
            continue
        if len(found) > 1:
            problems.append((spec, f"defined {len(found)} times (the last definition wins)"))
        actual, bound = found[-1]
        if bound:
            problems.append((spec, _NOT_STATIC))
        elif actual is not None and not spec.generic:
            problems.extend((spec, why) for why in parameter_problems(spec.params, actual))
    return where, problems


def check_impl_source(impl_path: str, class_name: str, specs: Sequence[KernelSpec]) -> None:
    """Raise MissingKernelsError listing every kernel the file lacks or mis-declares."""
    path = find_impl_file(impl_path)
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        raise BackendStubsError(
            f"Unable to read from the specified impl_path file: {impl_path}"
        ) from None
    where, problems = impl_problems(source, str(path), class_name, specs)
    if problems:
        raise MissingKernelsError(missing_kernels_message(class_name, where, problems))
