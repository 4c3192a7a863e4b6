"""Backends: kernels as tables keyed by the kernel names of ops/native_functions.yaml.

cpu/ (NumPy kernels and structured impls), meta/ (structured meta functions shared by every
backend, explicit Meta kernels), composite.py (CompositeExplicitAutograd kernels), views.py
(device-generic view kernels), structured.py (runtime of the generated structured wrappers),
aten.py (calling operators from kernels), common.py (dims, broadcasting, dtype names,
formats). Which table serves which dispatch key is the codegen's data
(codegen/model.py ``KERNEL_TABLES``); the generated registrations fail at import, naming the
yaml line, when a table lacks a kernel the yaml names.
"""

from tensordispatch.backends.boxed_fallback import (
    call_fallback,
    cpu_fallback,
    fallback_counts,
    register_cpu_fallback,
    reset_fallback_counts,
    strict_fallback,
)

# The module is boxed_fallback.py, not cpu_fallback.py: binding the function name
# `cpu_fallback` here would otherwise shadow a submodule of the same name.
__all__ = [
    "call_fallback",
    "cpu_fallback",
    "fallback_counts",
    "register_cpu_fallback",
    "reset_fallback_counts",
    "strict_fallback",
]
