"""tensordispatch: PyTorch's operator machinery in pure Python.

Layers (one subpackage each, imports flow downward only; see docs/ARCHITECTURE.md):
schema -> dispatch -> tensor -> backends/ops/codegen -> autograd -> transforms -> lazy.
The library never imports torch; torch 2.13 is only the oracle of the test suite.

The top level mirrors torch's: operator functions (`add`, `zeros`, ...), dtypes, devices,
`Tensor`, `tensor(...)` (the callable `tensordispatch.tensor` package, see
Note [tensordispatch.tensor is callable]), `ops.<ns>.<op>.<overload>`, `library`, and the
dispatcher's introspection (`dump`, `dump_table`, `explain`, `dispatch_trace`).

>>> import tensordispatch as td
>>> td.add(td.tensor([1.0, 2.0]), td.tensor([3.0, 4.0]))
tensor([4., 6.])
"""

from __future__ import annotations

from tensordispatch import autograd as autograd
from tensordispatch import library as library
from tensordispatch import ops as ops
from tensordispatch._api import *  # noqa: F403 - the generated operator functions
from tensordispatch._api import __all__ as _api_all
from tensordispatch.autograd import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from tensordispatch.dispatch import DispatchKey, DispatchKeySet, DispatchMode
from tensordispatch.generated import return_types as return_types
from tensordispatch.tensor import (
    Size,
    Tensor,
    bool,
    can_cast,
    cdouble,
    cfloat,
    complex64,
    complex128,
    device,
    double,
    dtype,
    float,
    float16,
    float32,
    float64,
    from_dlpack,
    from_numpy,
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

__version__ = "0.1.0"

# Imported on first use (PEP 562): the transforms and the lazy backend are upper layers that
# a program using only eager tensors should not pay for at import; nn and optim likewise, and
# the random-number API (NumPy's random module alone is ~8 ms), the dispatcher's debugging
# views (dumps, explain, dispatch_trace) and the print options. Issue 4: `import
# tensordispatch` <= 0.1x `import torch` (Note [Operators defined on first lookup]).
_LAZY_ATTRIBUTES: dict[str, tuple[str, str | None]] = {
    "func": ("tensordispatch.func", None),
    "lazy": ("tensordispatch.lazy", None),
    "linalg": ("tensordispatch.linalg", None),
    "vmap": ("tensordispatch.transforms.vmap", "vmap"),
    "nn": ("tensordispatch.nn", None),
    "optim": ("tensordispatch.optim", None),
    "Generator": ("tensordispatch.backends.generator", "Generator"),
    "default_generator": ("tensordispatch.backends.generator", "default_generator"),
    "initial_seed": ("tensordispatch.backends.generator", "initial_seed"),
    "manual_seed": ("tensordispatch.backends.generator", "manual_seed"),
    "seed": ("tensordispatch.backends.generator", "seed"),
    "check_invariants": ("tensordispatch.dispatch.introspection", "check_invariants"),
    "dump": ("tensordispatch.dispatch.introspection", "dump"),
    "dump_table": ("tensordispatch.dispatch.introspection", "dump_table"),
    "explain": ("tensordispatch.dispatch.introspection", "explain"),
    "dispatch_trace": ("tensordispatch.dispatch.trace", "dispatch_trace"),
    "get_printoptions": ("tensordispatch.tensor.printing", "get_printoptions"),
    "printoptions": ("tensordispatch.tensor.printing", "printoptions"),
    "set_printoptions": ("tensordispatch.tensor.printing", "set_printoptions"),
    # torch's private functionalization functions (Note [torch's functionalization names])
    **{name: ("tensordispatch.transforms.functionalize.torch_names", name) for name in (
        "_disable_functionalization", "_enable_functionalization", "_from_functional_tensor",
        "_functionalize_commit_update", "_functionalize_enable_reapply_views",
        "_functionalize_has_data_mutation", "_functionalize_has_metadata_mutation",
        "_functionalize_is_multi_output_view", "_functionalize_mutation_counter",
        "_functionalize_replace", "_functionalize_sync", "_is_functional_tensor",
        "_is_functional_tensor_base", "_to_functional_tensor",
    )},
}  # fmt: skip


def __getattr__(name: str) -> object:
    import importlib

    try:
        module, attribute = _LAZY_ATTRIBUTES[name]
    except KeyError:
        raise AttributeError(f"module 'tensordispatch' has no attribute {name!r}") from None
    value: object = importlib.import_module(module)
    if attribute is not None:
        value = getattr(value, attribute)
    globals()[name] = value
    return value


__all__ = [
    *_api_all,
    "Generator",
    "default_generator",
    "initial_seed",
    "manual_seed",
    "seed",
    "set_grad_enabled",
    "optim",
    "linalg",
    "no_grad",
    "nn",
    "is_grad_enabled",
    "inference_mode",
    "is_inference_mode_enabled",
    "enable_grad",
    "autograd",
    "DispatchKey",
    "DispatchKeySet",
    "DispatchMode",
    "Size",
    "Tensor",
    "bool",
    "can_cast",
    "cdouble",
    "cfloat",
    "check_invariants",
    "complex64",
    "complex128",
    "device",
    "dispatch_trace",
    "double",
    "dtype",
    "dump",
    "dump_table",
    "explain",
    "float",
    "float16",
    "float32",
    "float64",
    "from_dlpack",
    "from_numpy",
    "func",
    "get_default_dtype",
    "get_printoptions",
    "half",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "lazy",
    "library",
    "long",
    "ops",
    "printoptions",
    "promote_types",
    "result_type",
    "return_types",
    "set_default_dtype",
    "set_printoptions",
    "short",
    "tensor",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "vmap",
]
