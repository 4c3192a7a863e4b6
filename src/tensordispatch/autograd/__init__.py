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
from tensordispatch.autograd.engine import backward, grad
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

_install_kernels()  # per operator, when it is defined (Note [Autograd kernels on definition])
_tensor_methods.install()
