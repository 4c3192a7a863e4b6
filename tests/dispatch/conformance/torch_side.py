"""Applying scenarios to torch 2.13 through its raw library binding and C++ test hooks.

Every step gets its own library object (``torch._C._dispatch_library``), created with the
file name set to the step's kernel name so that Python kernels carry the debug string
``registered at <name>:0``; ``reset()`` on that object undoes exactly the step.
Process-wide fallbacks are torch state shared by the whole test process, so ``TorchSide``
is a context manager that always resets every library it made.
"""

from __future__ import annotations

import contextlib
import itertools
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import torch

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
    uses_hook,
)

_C: Any = torch._C
_counter = itertools.count()


def fresh_namespace(prefix: str) -> str:
    """A namespace no earlier run used (plain identifier, so ``ops.<ns>`` works)."""
    return f"{prefix}{next(_counter)}x"


@dataclass(frozen=True, slots=True)
class Probe:
    """An input for call-level checks: a torch tensor, an optional TLS-included key and an
    optional TLS-excluded key (our side enters the same guards)."""

    name: str
    make: Callable[[], Any]
    include: str | None = None
    exclude: str | None = None


def _quantized() -> Any:
    return torch.quantize_per_tensor(torch.ones(1), 0.1, 0, torch.qint8)


PROBES: tuple[Probe, ...] = (
    Probe("cpu", lambda: torch.ones(1)),
    Probe("meta", lambda: torch.ones(1, device="meta")),
    Probe("sparse_cpu", lambda: torch.ones(1).to_sparse()),
    Probe("quantized_cpu", _quantized),
    Probe("nested_cpu", lambda: torch.nested.nested_tensor([torch.ones(2)])),
    Probe("mkldnn", lambda: torch.ones(1).to_mkldnn()),
    Probe("cpu+xla", lambda: torch.ones(1), "XLA"),
    Probe("cpu+cuda", lambda: torch.ones(1), "CUDA"),
    Probe("cpu+mtia", lambda: torch.ones(1), "MTIA"),
    # excluding AutogradCPU drops the autograd functionality for every backend
    Probe("cpu-autograd", lambda: torch.ones(1), exclude="AutogradCPU"),
    # excluding CPU drops Dense for every backend: a Meta call lands on Undefined (spec 4.4)
    Probe("meta-dense", lambda: torch.ones(1, device="meta"), exclude="CPU"),
)


# Key sets for ``op.redispatch(keyset, x)`` (spec 10.2: the stored slot of the highest key,
# no thread-local sets, no fallthrough masks, so a fallthrough there executes and fails).
# Only keys whose global fallback is a fallthrough or the autograd fallback: the other
# built-in fallbacks (functorch, Python, Functionalize, ...) are other layers' behaviour.
REDISPATCH_KEYSETS: tuple[tuple[str, ...], ...] = (
    ("CPU",),
    ("CPU", "AutogradCPU"),
    ("XLA",),
    ("XLA", "AutogradXLA"),
    ("Meta", "AutogradMeta"),
    ("SparseCPU",),
    ("QuantizedCPU", "AutogradCPU"),
    ("NestedTensorCPU", "AutogradNestedTensor"),
    ("AutogradOther",),
    ("ADInplaceOrView", "CPU"),
    ("AutocastCPU", "CPU"),
    (),
)


def redispatch_keyset(names: tuple[str, ...]) -> Any:
    """torch's DispatchKeySet of ``names`` (the empty tuple is the empty set)."""
    ks = _C.DispatchKeySet(_C.DispatchKey.Undefined)
    for name in names:
        ks = ks | _C.DispatchKeySet(_C._parse_dispatch_key(name))
    return ks


_PROBE_TENSORS: dict[str, Any] = {}
_PROBE_KEYSETS: dict[str, int] = {}


def make_probe_tensor(probe: Probe) -> Any:
    """The probe's torch tensor, made once (kernels return it unchanged; quantized tensors
    are slow to make), with torch's beta/deprecation warnings silenced."""
    if probe.name not in _PROBE_TENSORS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _PROBE_TENSORS[probe.name] = probe.make()
    return _PROBE_TENSORS[probe.name]


def probe_keyset(probe: Probe) -> int:
    """The raw key-set word torch computes for the probe before TLS exclusion.

    The TLS-included key is ORed in: including a key in TLS and carrying it on the argument
    are the same thing to the key computation (spec 4.5: ``raw | tls.included``).
    """
    if probe.name not in _PROBE_KEYSETS:
        raw: int = _C._dispatch_keys(make_probe_tensor(probe)).raw_repr()
        if probe.include is not None:
            raw |= _C.DispatchKeySet(getattr(_C.DispatchKey, probe.include)).raw_repr()
        _PROBE_KEYSETS[probe.name] = raw
    return _PROBE_KEYSETS[probe.name]


class TorchSide:
    """One scenario run on torch: a scratch namespace and one library per step."""

    def __init__(
        self, flavour: Flavour, namespace: str | None = None, *, python_rules: bool = True
    ) -> None:
        self.flavour = flavour
        self.python_rules = python_rules
        self.namespace = namespace or fresh_namespace("tdconf")
        self.libs: dict[int, Any] = {}
        self.ran: list[str] = []

    def __enter__(self) -> TorchSide:
        return self

    def __exit__(
        self, tp: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Reset every library still alive, newest first (releases global fallbacks)."""
        for index in sorted(self.libs, reverse=True):
            self.libs.pop(index).reset()

    @property
    def qualified(self) -> str:
        return f"{self.namespace}::{OP_NAME}"

    def _kernel(self, name: str, with_keyset: bool) -> Callable[..., Any]:
        ran = self.ran

        def kernel(*args: Any, **kwargs: Any) -> Any:
            ran.append(name)
            return args[0]

        def kernel_ks(keyset: Any, *args: Any, **kwargs: Any) -> Any:
            ran.append(f"{name} {keyset!r}")
            return args[0]

        return kernel_ks if with_keyset else kernel

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
        """Run one registration; on failure the (empty) library is reset and re-raised."""
        if isinstance(step, Define):
            lib = _C._dispatch_library("FRAGMENT", self.namespace, "", "/dev/null", 0)
        elif isinstance(step, (Fallback, FallthroughFallback)):
            lib = _C._dispatch_library("IMPL", "_", step.key, step.name, 0)
        else:
            lib = _C._dispatch_library("FRAGMENT", self.namespace, "", step.name, 0)
        try:
            self._register(lib, step)
        except BaseException:
            lib.reset()
            raise
        self.libs[index] = lib

    def _register(self, lib: Any, step: Registration) -> None:
        meta = isinstance(step, (Impl, FallthroughImpl)) and step.key == "Meta"
        if meta and self.python_rules:
            self._refuse_meta_over_cia()
        if isinstance(step, Define):
            lib.def_(step.schema, alias=step.alias_analysis)
        elif isinstance(step, Impl) and uses_hook(step, self.flavour):
            lib.impl_t_t(OP_NAME, dispatch=step.key, debug=debug_of(step, self.flavour))
        elif isinstance(step, Impl):
            kernel = self._kernel(step.name, step.with_keyset)
            lib.impl(OP_NAME, step.key, kernel, step.with_keyset)
        elif isinstance(step, FallthroughImpl):
            lib.impl(OP_NAME, step.key, torch.library.fallthrough_kernel, False)
        elif isinstance(step, Fallback):
            lib.fallback(step.key, self._fallback(step.name, step.with_keyset), step.with_keyset)
        elif isinstance(step, FallthroughFallback):
            lib.fallback(step.key, torch.library.fallthrough_kernel, False)
        else:
            raise TypeError(f"unknown step {step!r}")

    def _refuse_meta_over_cia(self) -> None:
        """torch.library.Library.impl's Python-level rule, which the raw binding skips.

        Our Library is the Python API, so it applies the rule too; to compare like with
        like, torch's side applies it here exactly as torch.library does (a CIA kernel,
        catch-all included, refuses any Meta impl, fallthrough included; and the lookup
        itself raises ``operator <ns>::foo does not exist`` when there is no entry yet).
        """
        if _C._dispatch_has_kernel_for_dispatch_key(self.qualified, "CompositeImplicitAutograd"):
            raise RuntimeError(
                f"We should not register a meta kernel directly to the operator '{OP_NAME}', "
                "because it has a CompositeImplicitAutograd kernel in core. Instead we should "
                "let the operator decompose, and ensure that we have meta kernels for the base "
                "ops that it decomposes into."
            )

    def destroy(self, index: int) -> None:
        """Undo step ``index`` (a failed step has no library: nothing to undo)."""
        lib = self.libs.pop(index, None)
        if lib is not None:
            lib.reset()

    def dump(self) -> str:
        return normalise_dump(_C._dispatch_dump(self.qualified), self.namespace)

    def table(self, steps: tuple[Any, ...]) -> dict[str, str]:
        raw = _C._dispatch_dump_table(self.qualified)
        return parse_table(raw, self.namespace, kernel_debugs(steps, self.flavour))

    def has_schema(self) -> bool:
        """Whether ``torch.ops`` can reach the operator (it needs a def)."""
        return "\nschema: " in self.dump() and "\nschema: (none)" not in self.dump()

    def stored_table_is_fresh(self) -> bool:
        """False when torch's stored slots went stale (spec 5.6); calls then disagree."""
        try:
            _C._dispatch_check_invariants(self.qualified)
        except RuntimeError:
            return False
        return True

    def redispatch(self, names: tuple[str, ...]) -> str:
        """Outcome of ``torch.ops.<ns>.foo.default.redispatch(keyset, cpu_tensor)``."""
        op = getattr(getattr(torch.ops, self.namespace), OP_NAME).default
        tensor = torch.ones(1)
        return self._outcome(lambda: op.redispatch(redispatch_keyset(names), tensor))

    def _outcome(self, run: Callable[[], Any]) -> str:
        self.ran.clear()
        try:
            run()
        except NotImplementedError as e:
            return f"raised NotImplementedError: {missing_kernel_summary(str(e), self.namespace)}"
        except RuntimeError:
            return "raised RuntimeError"
        return f"ran {self.ran[0]}" if self.ran else "ran <unrecorded>"

    def call(self, probe: Probe) -> str:
        """Outcome of ``torch.ops.<ns>.foo(probe)``: the first scenario kernel that ran,
        ``<unrecorded>`` (a test-hook kernel ran), or the exception class category."""
        op = getattr(getattr(torch.ops, self.namespace), OP_NAME).default
        tensor = make_probe_tensor(probe)
        self.ran.clear()
        try:
            with contextlib.ExitStack() as guards:
                if probe.include is not None:
                    key = getattr(_C.DispatchKey, probe.include)
                    guards.enter_context(_C._IncludeDispatchKeyGuard(key))
                if probe.exclude is not None:
                    ks = _C.DispatchKeySet(getattr(_C.DispatchKey, probe.exclude))
                    guards.enter_context(_C._ExcludeDispatchKeyGuard(ks))
                op(tensor)
        except NotImplementedError as e:
            return f"raised NotImplementedError: {missing_kernel_summary(str(e), self.namespace)}"
        except RuntimeError:
            return "raised RuntimeError"
        return f"ran {self.ran[0]}" if self.ran else "ran <unrecorded>"
