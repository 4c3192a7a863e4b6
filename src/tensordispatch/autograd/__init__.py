"""Reverse-mode automatic differentiation as dispatch keys (torch.autograd's shape).

Importing this package registers, for the aten operators, the Autograd kernels generated
from ops/derivatives.yaml and the ADInplaceOrView kernels (kernels.py; each operator's when
it is defined: registration.py), and installs the autograd Tensor methods
(tensor_methods.py). See docs/AUTOGRAD.md.

>>> import tensordispatch as td
>>> import tensordispatch.autograd
>>> x = td.tensor([1.0, 2.0, 3.0]).requires_grad_()
>>> y = (x * x).sum()
>>> y.grad_fn
<SumBackward0 object at ...>
>>> y.backward()
>>> x.grad
tensor([2., 4., 6.])
"""

from __future__ import annotations

import tensordispatch.generated  # noqa: F401 - the operators must exist first
from tensordispatch.autograd import tensor_methods as _tensor_methods
from tensordispatch.autograd.function import Function, FunctionCtx
from tensordispatch.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_anomaly_enabled,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_detect_anomaly,
    set_grad_enabled,
)
from tensordispatch.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck
from tensordispatch.autograd.graph import Node
from tensordispatch.autograd.registration import install as _install_kernels

__all__ = [
    "Function",
    "FunctionCtx",
    "GradcheckError",
    "Node",
    "backward",
    "enable_grad",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "inference_mode",
    "is_anomaly_enabled",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "set_detect_anomaly",
    "set_grad_enabled",
]

# Imported on first use (PEP 562): the engine (with the derivative formulas it pulls in) runs
# at the first backward; `import tensordispatch` should not pay for it (issue 4).
# Tensor.backward and gradcheck import the engine themselves. (gradcheck stays eager: its
# submodule of the same name would otherwise shadow the function once imported.)
_LAZY_ATTRIBUTES: dict[str, str] = {
    "backward": "tensordispatch.autograd.engine",
    "grad": "tensordispatch.autograd.engine",
}


def __getattr__(name: str) -> object:
    import importlib

    try:
        module = _LAZY_ATTRIBUTES[name]
    except KeyError:
        raise AttributeError(
            f"module 'tensordispatch.autograd' has no attribute {name!r}"
        ) from None
    value: object = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


_install_kernels()  # per operator, when it is defined (Note [Autograd kernels on definition])
_tensor_methods.install()
