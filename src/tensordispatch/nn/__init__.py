"""A minimal torch.nn: Module, Parameter, Linear, ReLU, Sequential, CrossEntropyLoss.

Just enough for real training code to run (issue 5): modules register parameters and
submodules by attribute assignment, as torch's do. Layers are written with the operator
library so autograd records them; ``cross_entropy`` is a custom autograd Function over NumPy
until ``nll_loss_forward`` (two outputs) has a derivative (docs/AUTOGRAD.md).

>>> import tensordispatch as td
>>> from tensordispatch import nn
>>> model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
>>> [tuple(p.shape) for p in model.parameters()]
[(3, 4), (3,), (2, 3), (2,)]
"""

from __future__ import annotations

from tensordispatch.nn.functional import cross_entropy, linear, relu
from tensordispatch.nn.modules import (
    CrossEntropyLoss,
    Linear,
    Module,
    Parameter,
    ReLU,
    Sequential,
)

__all__ = [
    "CrossEntropyLoss",
    "Linear",
    "Module",
    "Parameter",
    "ReLU",
    "Sequential",
    "cross_entropy",
    "linear",
    "relu",
]
