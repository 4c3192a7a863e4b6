"""Backends: kernels as tables keyed by the kernel names of ops/native_functions.yaml.

cpu/ (NumPy kernels and structured impls), meta/ (structured meta functions shared by every
backend, explicit Meta kernels), composite.py (CompositeExplicitAutograd kernels), views.py
(device-generic view kernels), structured.py (runtime of the generated structured wrappers),
aten.py (calling operators from kernels), common.py (dims, broadcasting, dtype names,
formats). Which table serves which dispatch key is the codegen's data
(codegen/model.py ``KERNEL_TABLES``); the generated registrations fail at import, naming the
yaml line, when a table lacks a kernel the yaml names.

The CPU fallback's names (boxed_fallback.py) are re-exported here on first use (PEP 562), so
importing any backend module does not import the fallback (issue 4: import time).
"""

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


def __getattr__(name: str) -> object:
    if name in __all__:
        from tensordispatch.backends import boxed_fallback

        value = getattr(boxed_fallback, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
