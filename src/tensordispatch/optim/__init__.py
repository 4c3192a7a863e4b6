"""A minimal torch.optim: SGD and Adam with torch's update formulas.

>>> import tensordispatch as td
>>> from tensordispatch import nn
>>> p = nn.Parameter(td.tensor([1.0]))
>>> opt = SGD([p], lr=0.5)
>>> (p * p).sum().backward(); opt.step(); p
Parameter containing:
tensor([0.], requires_grad=True)
"""

from __future__ import annotations

from tensordispatch.optim.optimizers import SGD, Adam, Optimizer

__all__ = ["SGD", "Adam", "Optimizer"]
