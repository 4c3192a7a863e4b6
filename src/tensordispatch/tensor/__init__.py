"""Tensor, dtypes, devices, storage with version counters, printing, NumPy/DLPack interop.

The tensor layer sits on dispatch/ (it reads key sets from dispatch.keyset) and under the
operator library: it defines what a tensor *is*, never what operators compute. Importing it
is cheap: module-level work is building eleven dtype objects and two cached devices.

Note [tensordispatch.tensor is callable]
`tensordispatch.tensor` must be both this package (`import tensordispatch.tensor.dtypes`)
and torch's factory (`tensordispatch.tensor([1., 2.])`). One attribute of the root package
cannot hold two objects, and re-exporting the function at the root would shadow the
package and break `import tensordispatch.tensor.x as y` (ImportError). So the package
module itself is callable: its class is a ModuleType subclass whose `__call__` is
`tensor(data, dtype=None, device=None, requires_grad=False)`. The root package must
therefore not bind the name `tensor` to the function.
"""

from __future__ import annotations

import builtins
import sys
import types
from typing import Any

from tensordispatch.tensor.creation import from_dlpack, from_numpy, tensor
from tensordispatch.tensor.device import (
    DeviceTypeHandle,
    backend_component_of,
    device,
    device_types,
    register_device_type,
)
from tensordispatch.tensor.dtypes import (
    bool,
    can_cast,
    cdouble,
    cfloat,
    complex64,
    complex128,
    default_dtype_guard,
    double,
    dtype,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    promote_types,
    result_type,
    set_default_dtype,
    short,
    uint8,
    uint16,
    uint32,
    uint64,
)
from tensordispatch.tensor.tensor import Size, Tensor

__all__ = [
    "DeviceTypeHandle",
    "Size",
    "Tensor",
    "backend_component_of",
    "bool",
    "can_cast",
    "cdouble",
    "cfloat",
    "complex64",
    "complex128",
    "default_dtype_guard",
    "device",
    "device_types",
    "double",
    "dtype",
    "float",
    "float16",
    "float32",
    "float64",
    "from_dlpack",
    "from_numpy",
    "get_default_dtype",
    "get_printoptions",
    "half",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "long",
    "printoptions",
    "promote_types",
    "register_device_type",
    "result_type",
    "set_default_dtype",
    "set_printoptions",
    "short",
    "tensor",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
]


# Imported on first use (PEP 562): printing.py is needed only by the first repr, and
# `import tensordispatch` should not pay for it (issue 4).
_PRINTING = ("get_printoptions", "printoptions", "set_printoptions")


def __getattr__(name: str) -> Any:
    if name not in _PRINTING:
        raise AttributeError(f"module 'tensordispatch.tensor' has no attribute {name!r}")
    from tensordispatch.tensor import printing

    value = getattr(printing, name)
    globals()[name] = value
    return value


class _CallableTensorPackage(types.ModuleType):
    """This package, callable as the `tensor(...)` factory (Note [tensordispatch.tensor is
    callable])."""

    def __call__(
        self,
        data: Any,
        dtype: dtype | None = None,
        device: Any = None,
        requires_grad: builtins.bool = False,
    ) -> Tensor:
        return tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)


sys.modules[__name__].__class__ = _CallableTensorPackage
