"""Tensor, dtypes, devices, storage with version counters, printing, NumPy/DLPack interop.

The tensor layer sits on dispatch/ (it reads key sets from dispatch.keyset) and under the
operator library: it defines what a tensor *is*, never what operators compute. Importing it
is cheap: module-level work is building eleven dtype objects and two cached devices.
"""

from __future__ import annotations

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
)
from tensordispatch.tensor.printing import get_printoptions, printoptions, set_printoptions
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
]
