"""Backends: kernels as tables keyed by the kernel names of ops/native_functions.yaml.

cpu/ (NumPy kernels and structured impls), meta/ (structured meta functions shared by every
backend, explicit Meta kernels), composite.py (CompositeExplicitAutograd kernels), views.py
(device-generic view kernels), structured.py (runtime of the generated structured wrappers),
aten.py (calling operators from kernels). The codegen resolves every kernel name of the yaml
in ``KERNEL_TABLES`` and fails on a missing one.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["KERNEL_TABLES", "kernel_table"]

# dispatch key -> "module:attribute" of its kernel table (imported on demand).
KERNEL_TABLES: dict[str, str] = {
    "CPU": "tensordispatch.backends.cpu:CPU_KERNELS",
    "Meta": "tensordispatch.backends.meta:META_KERNELS",
    "CompositeExplicitAutograd": "tensordispatch.backends.composite:COMPOSITE_KERNELS",
    "CompositeExplicitAutogradNonFunctional": "tensordispatch.backends.composite:COMPOSITE_KERNELS",
    "CompositeImplicitAutograd": "tensordispatch.ops.decompositions:DECOMPOSITIONS",
}
META_FUNCTIONS_TABLE = "tensordispatch.backends.meta:META_FUNCTIONS"


def kernel_table(spec: str) -> dict[str, Any]:
    """The table a ``module:attribute`` spec names."""
    module, _, attr = spec.partition(":")
    table: dict[str, Any] = getattr(importlib.import_module(module), attr)
    return table
