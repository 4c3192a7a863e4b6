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
    "Size",
    "Tensor",
    "tensor",
    "from_numpy",
    "from_dlpack",
    "device",
    "DeviceTypeHandle",
    "register_device_type",
    "device_types",
    "backend_component_of",
    "dtype",
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "half",
    "float",
    "double",
    "cfloat",
    "cdouble",
    "short",
    "int",
    "long",
    "get_default_dtype",
    "set_default_dtype",
    "default_dtype_guard",
    "promote_types",
    "result_type",
    "can_cast",
    "set_printoptions",
    "get_printoptions",
    "printoptions",
]
