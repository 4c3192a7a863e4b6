"""External backends: torchgen's gen_backend_stubs for Python backends (spec section 5).

Pipeline, one module per step: backend yaml -> `read_backend_yaml` (keys and value types,
parse.py) -> `build_external_backend` (operators against native_functions.yaml, backend
and autograd BackendIndex, kernel signatures, synthesized out=/inplace kernels) ->
optional generation-time kernel check of the backend's source (missing.py, `ast`, no
import) -> `emit_module` (emit.py). The generated module imports runtime.py and the
dispatcher's Library; nothing here imports the dispatcher (codegen/ reads schema/ only).

>>> sources = generate_backend_stubs(
...     "backend: XLA\\ncpp_namespace: torch_xla\\nsupported: [abs]\\n", source_name="xla.yaml")
>>> sorted(sources)
['xla_native_functions.py']
"""

from __future__ import annotations

import os
from pathlib import Path

from tensordispatch.codegen.backend_stubs.emit import emit_module, module_file_name
from tensordispatch.codegen.backend_stubs.gen_lazy import generate_ir_module, ir_module_file_name
from tensordispatch.codegen.backend_stubs.missing import check_impl_source
from tensordispatch.codegen.backend_stubs.model import (
    BackendStubsError,
    BackendYaml,
    ExternalBackend,
    ExternalKernel,
    LazyIrError,
    MissingKernelsError,
    MissingShapeFunctionsError,
    NonNativeOp,
    SynthesizedKernel,
)
from tensordispatch.codegen.backend_stubs.parse import (
    ACCEPTED_KEYS,
    build_external_backend,
    read_backend_yaml,
)
from tensordispatch.codegen.backend_stubs.runtime import KernelSpec
from tensordispatch.schema.native import ParsedNativeFunctions, load_native_functions

__all__ = [
    "ACCEPTED_KEYS",
    "BackendStubsError",
    "BackendYaml",
    "ExternalBackend",
    "ExternalKernel",
    "LazyIrError",
    "MissingKernelsError",
    "MissingShapeFunctionsError",
    "NonNativeOp",
    "SynthesizedKernel",
    "build_external_backend",
    "generate_backend_stubs",
    "kernel_specs",
    "load_backend_yaml",
    "read_backend_yaml",
    "run",
]

_Native = ParsedNativeFunctions | str | os.PathLike[str] | None


def _native(native_functions: _Native) -> ParsedNativeFunctions:
    if isinstance(native_functions, ParsedNativeFunctions):
        return native_functions
    return load_native_functions(native_functions)


def load_backend_yaml(
    source_yaml: str | os.PathLike[str],
    native_functions: _Native = None,
    *,
    synthesize: bool = True,
) -> ExternalBackend:
    """Read a backend yaml file and check it against native_functions.yaml (default: ours).

    Raises BackendStubsError with one message for the first rule broken (torchgen's order).
    """
    path = str(source_yaml)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise BackendStubsError(f"cannot read the backend yaml {path}: {err}") from None
    return build_external_backend(
        read_backend_yaml(text, path), _native(native_functions), synthesize=synthesize
    )


def kernel_specs(backend: ExternalBackend) -> list[KernelSpec]:
    """What the backend must define: its listed kernels, then the copy hooks it needs.

    >>> from tensordispatch.schema.native import load_native_functions
    >>> y = read_backend_yaml("backend: XLA\\ncpp_namespace: torch_xla\\nsupported: [abs]\\n")
    >>> [s.name for s in kernel_specs(build_external_backend(y, load_native_functions()))]
    ['abs', '_copy_from', '_copy_from_and_resize']
    """
    from tensordispatch.codegen.backend_stubs.emit import copy_hooks

    specs = [
        KernelSpec(
            k.name,
            k.operator,
            k.dispatch_key,
            k.signature.spec(),
            k.signature.text(),
            k.signature.generic,
        )
        for k in backend.handwritten
    ]
    specs += [
        KernelSpec(h.name, f"aten::{h.name}", backend.backend_key or "", h.spec(), h.text())
        for h in copy_hooks(backend)
    ]
    return specs


def generate_backend_stubs(
    source: str | ExternalBackend,
    *,
    native_functions: _Native = None,
    impl_path: str | None = None,
    synthesize: bool = True,
    source_name: str = "<string>",
    ir_only: bool = False,
) -> dict[str, str]:
    """File name -> text of the generated module(s) ({} when `supported` is empty): the
    kernel module, and for a yaml with ``full_codegen`` / ``ir_gen`` the lazy IR module
    (gen_lazy.py; ``ir_only``: that one only).

    `source` is backend yaml text or an ExternalBackend. With `impl_path` (the backend's
    kernel module, a .py path or dotted name), its source is checked first and every missing
    or mis-declared kernel is reported at once (MissingKernelsError). `source_name` is the
    yaml's name in the generated header.
    """
    if isinstance(source, ExternalBackend):
        backend = source
        shown = Path(backend.yaml.path).name
    else:
        backend = build_external_backend(
            read_backend_yaml(source), _native(native_functions), synthesize=synthesize
        )
        shown = source_name
    return _generate(backend, shown, impl_path)


def _generate(
    backend: ExternalBackend, shown: str, impl_path: str | None, ir_only: bool = False
) -> dict[str, str]:
    if backend.backend_key is None:
        return {}
    files = {}
    if backend.lazy_ops:
        text = generate_ir_module(backend.lazy_ops, backend=backend.yaml.backend, source=shown)
        files[ir_module_file_name(backend.yaml.backend)] = text
    if ir_only:
        return files
    if impl_path is not None:
        check_impl_source(impl_path, backend.class_name, kernel_specs(backend))
    files[module_file_name(backend.backend_key)] = emit_module(backend, shown)
    return files


def run(
    source_yaml: str | os.PathLike[str],
    output_dir: str | os.PathLike[str],
    *,
    dry_run: bool = False,
    impl_path: str | None = None,
    native_functions: _Native = None,
    synthesize: bool = True,
    ir_only: bool = False,
) -> list[str]:
    """gen_backend_stubs' run(): validate, check kernels, write the module(s) that changed
    (``ir_only``: only the lazy IR module, for backends that register their kernels
    themselves, as tensordispatch's own lazy backend does).

    Returns the names of the files written (or, with `dry_run`, that would be).
    """
    backend = load_backend_yaml(source_yaml, native_functions, synthesize=synthesize)
    sources = _generate(backend, Path(str(source_yaml)).name, impl_path, ir_only)
    changed = []
    directory = Path(output_dir)
    for name, text in sorted(sources.items()):
        target = directory / name
        old = target.read_text(encoding="utf-8") if target.exists() else None
        if old == text:
            continue
        changed.append(name)
        if not dry_run:
            directory.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    return changed
