"""The external-backend model: a validated backend yaml and the kernels it asks for.

Owns the data only (parse.py builds it, emit.py prints it). Mirrors torchgen's
ParsedExternalYaml + the two external BackendIndex objects, with what the Python output
needs on top: each kernel's Python signature and the out=/inplace wrappers to synthesize.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tensordispatch.codegen.backend_stubs.signature import KernelSignature
from tensordispatch.schema.model import OperatorName
from tensordispatch.schema.native_model import BackendIndex, NativeFunction

__all__ = [
    "BackendStubsError",
    "BackendYaml",
    "ExternalBackend",
    "ExternalKernel",
    "LazyIrError",
    "MissingKernelsError",
    "MissingShapeFunctionsError",
    "NonNativeOp",
    "SynthesizedKernel",
]


class BackendStubsError(ValueError):
    """A backend yaml (or the kernels it names) broke one of gen-backend-stubs' rules."""


class MissingKernelsError(BackendStubsError):
    """Kernels the backend yaml lists are missing or have parameters that do not fit."""


class LazyIrError(BackendStubsError):
    """A ``full_codegen`` / ``ir_gen`` list asks for something lazy codegen cannot generate."""


class MissingShapeFunctionsError(LazyIrError):
    """Operators listed for lazy codegen have no shape function (all of them in one error)."""


@dataclass(frozen=True, slots=True)
class NonNativeOp:
    """One `non_native` entry: an IR-only operator for lazy codegen (validated, recorded)."""

    func: str
    opkind: str | None
    properties: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BackendYaml:
    """The keys of a backend yaml, checked for shape (not yet against the operators).

    `supported` already includes `full_codegen` (as torchgen does). `lines` maps an entry
    (`"supported"`, `"supported[0]"`, ...) to its 1-based line in the file.
    """

    path: str
    backend: str
    class_name: str
    cpp_namespace: str
    use_out_as_primary: bool
    device_guard: bool
    supported: tuple[str, ...]
    autograd: tuple[str, ...]
    symint: frozenset[str]
    full_codegen: tuple[str, ...]
    ir_gen: tuple[str, ...]
    non_native: tuple[NonNativeOp, ...]
    lines: tuple[tuple[str, int], ...] = ()

    def line_of(self, entry: str) -> int | None:
        return dict(self.lines).get(entry)

    @property
    def lazy_lists(self) -> bool:
        """Whether the yaml asks for lazy IR generation (full_codegen, ir_gen, non_native)."""
        return bool(self.full_codegen or self.ir_gen or self.non_native)


@dataclass(frozen=True, slots=True)
class ExternalKernel:
    """A kernel the backend writes: operator, dispatch key and the Python signature."""

    f: NativeFunction
    dispatch_key: str
    signature: KernelSignature
    full_codegen: bool = False

    @property
    def name(self) -> str:
        return self.signature.name

    @property
    def operator(self) -> str:
        return f"{self.f.namespace}::{self.f.func.name}"


@dataclass(frozen=True, slots=True)
class SynthesizedKernel:
    """A generated out= or inplace kernel built on the backend's functional kernel (spec 5.5)."""

    f: NativeFunction
    dispatch_key: str
    functional: ExternalKernel

    @property
    def operator(self) -> str:
        return f"{self.f.namespace}::{self.f.func.name}"

    @property
    def is_inplace(self) -> bool:
        return not self.f.func.out


@dataclass(frozen=True, slots=True)
class ExternalBackend:
    """A backend yaml checked against native_functions.yaml, ready to emit.

    `backend_key` is None when `supported` is empty: then nothing is generated (torchgen).
    """

    yaml: BackendYaml
    backend_key: str | None
    autograd_key: str | None
    backend_index: BackendIndex | None
    autograd_index: BackendIndex | None
    kernels: tuple[ExternalKernel, ...]
    synthesized: tuple[SynthesizedKernel, ...]
    #: gen_lazy.IrOp of every full_codegen / ir_gen operator (checked; empty if none)
    lazy_ops: tuple[Any, ...] = ()

    @property
    def class_name(self) -> str:
        return self.yaml.class_name

    @property
    def handwritten(self) -> tuple[ExternalKernel, ...]:
        """The kernels the backend writes (``full_codegen`` ones are generated)."""
        return tuple(k for k in self.kernels if not k.full_codegen)

    @property
    def wrapped(self) -> tuple[SynthesizedKernel, ...]:
        """The synthesized out=/inplace kernels this module emits: those over a generated
        kernel are derived by the lazy runtime instead."""
        return tuple(s for s in self.synthesized if not s.functional.full_codegen)

    @property
    def needs_copy_hooks(self) -> bool:
        return bool(self.wrapped)

    def kernel_for(self, op: OperatorName, dispatch_key: str) -> ExternalKernel | None:
        for k in self.kernels:
            if k.f.func.name == op and k.dispatch_key == dispatch_key:
                return k
        return None
