"""Autograd and ADInplaceOrView kernels registered per aten operator when it is defined.

Note [Autograd kernels on definition]
Operators are defined on first lookup (Note [Operators defined on first lookup] in
codegen/gen_registrations.py), so registering every autograd kernel at import, by walking
every operator, would define every operator. Instead a registration listener registers, for
each aten overload whose def is published (and at once for those already defined), exactly
what ``kernels.register_all`` registers for it, in the same order: its Autograd kernel from
derivatives.yaml, or the in-place kernel of the functional overload with the same argument
signature (torch pairs ``pow_.Tensor`` with ``pow.Tensor_Tensor`` so), ADInplaceOrView for
written arguments, the out= kernel, the hand-written ones (manual.py). kernels.py and
derivatives.yaml are loaded on the first such definition, not at import.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from tensordispatch.autograd.inference_versions import RESULT_VERSIONS, make_result_version_kernel
from tensordispatch.dispatch.dispatcher import DISPATCHER, RegistrationHandle
from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.operator import OperatorEntry

__all__ = ["install", "uninstall"]

_DONE: set[str] = set()  # overloads ("add.Tensor") whose kernels are registered
_STATE: dict[str, Any] = {}  # "handle", "by_signature", "classes"


def _kernels() -> ModuleType:
    from tensordispatch.autograd import kernels

    return kernels


def _infos() -> dict[str, Any]:
    k = _kernels()
    infos: dict[str, Any] = k.INFOS
    if not infos:
        infos.update(k.load_derivatives())
    return infos


def _functional_by_signature() -> dict[tuple[str, Any], Any]:
    """(functional base name, argument signature) -> its DifferentiabilityInfo."""
    table = _STATE.get("by_signature")
    if table is None:
        signature = _kernels()._signature
        table = {}
        for name, info in _infos().items():
            base = name.partition(".")[0]
            if not base.endswith("_"):
                table[(base, signature(info.schema))] = info
        _STATE["by_signature"] = table
    return table


def _node_class(info: Any) -> Any:
    """One node class per derivatives.yaml entry, shared by its in-place variant."""
    classes = _STATE.setdefault("classes", {})
    cls = classes.get(info.name)
    if cls is None:
        k = _kernels()
        cls = classes[info.name] = k._node_class(info, info.node_name)
        k.NODE_CLASSES[info.node_name] = cls
    return cls


def _on_definition(entry: OperatorEntry) -> None:
    schema = entry.schema
    if schema is None or not entry.qualified_name.startswith("aten::"):
        return
    name = entry.qualified_overload_name.split("::")[1]
    if name in _DONE:
        return
    _DONE.add(name)
    k = _kernels()
    infos = _infos()
    base = name.partition(".")[0]
    info = infos.get(name)
    written = bool(schema.arguments) and schema.arguments[0].is_write
    if info is not None:
        if info.formulas:  # else no differentiable output: the Autograd fallback
            kernel = k._make_kernel(info, _node_class(info), base.endswith("_"))
            k._register(name, DispatchKey.Autograd, kernel)
    elif base.endswith("_") and not base.endswith("__") and written:
        functional = _functional_by_signature().get((base[:-1], k._signature(schema)))
        if functional is not None and functional.formulas:
            kernel = k._make_kernel(functional, _node_class(functional), True)
            k._register(name, DispatchKey.Autograd, kernel)
    if any(a.is_write for a in schema.arguments):
        k._register(name, DispatchKey.ADInplaceOrView, k._make_ad_inplace_kernel(schema))
        if schema.is_out_fn() and name not in infos:
            k._register(name, DispatchKey.Autograd, k._out_kernel)
    versions = RESULT_VERSIONS.get(name)  # Note [Versions of results made from inference ...]
    if versions is not None and info is not None and info.formulas:  # below an autograd kernel
        k._register(name, DispatchKey.ADInplaceOrView, make_result_version_kernel(name, versions))
    from tensordispatch.autograd import manual

    if name == "copy_":
        k._register(name, DispatchKey.Autograd, manual._copy_kernel)
    elif name == "copy":
        k._register(name, DispatchKey.Autograd, manual._functional_copy_kernel)
    elif name in manual.FRESH_FACTORIES:
        k._register(name, DispatchKey.Autograd, manual._fresh_factory_kernel)


def install() -> None:
    """Register the autograd kernels of every aten operator defined now and from now on
    (idempotent; Note [Autograd kernels on definition]).

    >>> install()  # done by importing tensordispatch.autograd
    >>> from tensordispatch.dispatch.dispatcher import DISPATCHER
    >>> DispatchKey.Autograd in DISPATCHER.find("aten::mul", "Tensor").kernels
    True
    """
    if "handle" in _STATE:
        return
    handle: RegistrationHandle = DISPATCHER.add_registration_listener(_on_definition)
    _STATE["handle"] = handle
    for entry in [e for e in list(DISPATCHER.entries.values()) if e.is_live]:
        _on_definition(entry)  # defined before the listener (without defining the others)


def uninstall() -> None:
    """Stop registering, and remove every kernel registered so far (benchmarks compare with
    and without autograd kernels; ``install()`` puts them back)."""
    handle = _STATE.pop("handle", None)
    if handle is not None:
        handle.remove()
    _kernels().unregister_all()
    _DONE.clear()
    _STATE.clear()
