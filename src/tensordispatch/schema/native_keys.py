"""Dispatch-key names as native_functions.yaml uses them, and the fixed vocabularies of its keys.

The schema layer may not import dispatch/, so the key names live here as plain strings: the
full set torchgen knows (to tell an unknown name from a known but unsupported one), the subset
a `dispatch:` table may name, and the small families the model needs (structured, ufunc,
CUDA-like, XPU-like, composite). dispatch/ owns the real DispatchKey enum; these tables are
checked against torchgen's in tests/schema/test_native_keys.py.
"""

from __future__ import annotations

# Backend components and the functionality prefixes crossed with them (torch 2.13 order).
BACKEND_COMPONENTS: tuple[str, ...] = (
    "CPU", "CUDA", "HIP", "XLA", "MTIA", "MPS", "IPU", "XPU", "HPU", "VE", "Lazy", "Meta",
    "PrivateUse1", "PrivateUse2", "PrivateUse3",
)  # fmt: skip
_PER_BACKEND_PREFIXES: tuple[str, ...] = (
    "", "Quantized", "Sparse", "SparseCsr", "NestedTensor", "Autograd",
)  # fmt: skip
_FUNCTIONALITY_KEYS: tuple[str, ...] = (
    "Undefined", "CatchAll", "FPGA", "MAIA", "Vulkan", "Metal", "MKLDNN", "OpenGL", "OpenCL",
    "IDEEP", "CustomRNGKeyId", "MkldnnCPU", "Sparse", "SparseCsr", "NestedTensor", "Dense",
    "PythonTLSSnapshot", "PreDispatch", "PythonDispatcher", "Python",
    "FuncTorchDynamicLayerBackMode", "ZeroTensor", "Conjugate", "Negative", "BackendSelect",
    "Named", "AutogradOther", "AutogradFunctionality", "AutogradNestedTensor", "Tracer",
    "Autocast", "AutocastCPU", "AutocastCUDA", "AutocastXPU", "Batched", "VmapMode",
    "FuncTorchGradWrapper", "FuncTorchBatched", "BatchedNestedTensor", "FuncTorchVmapMode",
    "FuncTorchDynamicLayerFrontMode", "Functionalize", "TESTING_ONLY_GenericWrapper",
    "TESTING_ONLY_GenericMode", "ADInplaceOrView", "Autograd", "CompositeImplicitAutograd",
    "CompositeImplicitAutogradNestedTensor", "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional", "FuncTorchBatchedDecomposition",
)  # fmt: skip

# Every dispatch-key name torchgen's enum has, in its order.
ALL_DISPATCH_KEYS: tuple[str, ...] = _FUNCTIONALITY_KEYS + tuple(
    prefix + backend for prefix in _PER_BACKEND_PREFIXES for backend in BACKEND_COMPONENTS
)
_ALL_DISPATCH_KEY_SET = frozenset(ALL_DISPATCH_KEYS)

CIA = "CompositeImplicitAutograd"
CIA_NT = "CompositeImplicitAutogradNestedTensor"
CEA = "CompositeExplicitAutograd"
CEANF = "CompositeExplicitAutogradNonFunctional"

# The keys a `dispatch:` table in native_functions.yaml may name (torchgen's allow-list).
NATIVE_DISPATCH_KEYS: tuple[str, ...] = (
    "CPU", "SparseCPU", "SparseCsrCPU", "MkldnnCPU", "CUDA", "MPS", "XPU", "SparseXPU",
    "SparseCsrXPU", "SparseCUDA", "SparseCsrCUDA", "SparseMPS", "SparseCsrMPS", "QuantizedCPU",
    "QuantizedCUDA", CIA, CIA_NT, CEA, CEANF, "NestedTensorCPU", "NestedTensorCUDA",
    "NestedTensorXPU", "NestedTensorHPU", "Meta", "SparseMeta", "SparseCsrMeta",
    "QuantizedMeta", "NestedTensorMeta", "ZeroTensor", "MTIA",
)  # fmt: skip
_NATIVE_DISPATCH_KEY_SET = frozenset(NATIVE_DISPATCH_KEYS)

# Keys whose kernels for a `structured: True` op are structured (meta + impl).
STRUCTURED_DISPATCH_KEYS: frozenset[str] = frozenset({"CPU", "CUDA", "MPS", "XPU", "MTIA"})
# Keys that `ufunc_inner_loop` fills in automatically.
UFUNC_DISPATCH_KEYS: tuple[str, ...] = ("CPU", "CUDA")
# Keys generated once for all backends.
COMPOSITE_DISPATCH_KEYS: frozenset[str] = frozenset({CIA, CIA_NT, CEA, CEANF})
# In-tree keys whose wrappers set a device guard.
DEVICE_GUARD_DISPATCH_KEYS: frozenset[str] = frozenset(
    prefix + backend
    for backend in ("CUDA", "XPU")
    for prefix in ("", "Quantized", "Sparse", "SparseCsr", "NestedTensor", "Autograd")
)


def is_dispatch_key(name: str) -> bool:
    """Whether `name` is a dispatch-key name at all.

    >>> is_dispatch_key("SparseCsrCUDA"), is_dispatch_key("Cuda")
    (True, False)
    """
    return name in _ALL_DISPATCH_KEY_SET


def is_native_dispatch_key(name: str) -> bool:
    """Whether a `dispatch:` table in native_functions.yaml may name this key.

    >>> is_native_dispatch_key("CPU"), is_native_dispatch_key("XLA")
    (True, False)
    """
    return name in _NATIVE_DISPATCH_KEY_SET
