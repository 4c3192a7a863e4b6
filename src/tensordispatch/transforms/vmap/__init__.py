"""vmap and the function transforms built on it (issue 7): torch.func's names and semantics.

``vmap`` wraps inputs as BatchedTensors (batched.py) carrying the FuncTorchBatched key; one
boxed kernel on that key (kernel.py) runs the operator's batching rule from ``RULES``
(rules.py, rules_linalg.py) or the boxed for-loop fallback (fallback.py). ``grad``,
``grad_and_value``, ``vjp`` and ``jacrev`` (autodiff.py) run the autograd engine on the tensors
under the BatchedTensors, with levels so that they nest with vmap. See docs/VMAP.md.

>>> import tensordispatch as td
>>> from tensordispatch.transforms.vmap import vmap, grad
>>> vmap(grad(lambda x: (x * x).sum()))(td.tensor([[1.0, 2.0], [3.0, 4.0]]))
tensor([[2., 4.],
        [6., 8.]])
"""

from __future__ import annotations

from tensordispatch.transforms.vmap.api import vmap
from tensordispatch.transforms.vmap.autodiff import grad, grad_and_value, jacrev, vjp
from tensordispatch.transforms.vmap.batched import BatchedTensor
from tensordispatch.transforms.vmap.fallback import (
    VmapFallbackStrictError,
    reset_vmap_fallback_counts,
    strict_vmap_fallback,
    vmap_fallback_counts,
)
from tensordispatch.transforms.vmap.rules import RULES

__all__ = [
    "RULES",
    "BatchedTensor",
    "VmapFallbackStrictError",
    "grad",
    "grad_and_value",
    "jacrev",
    "reset_vmap_fallback_counts",
    "strict_vmap_fallback",
    "vjp",
    "vmap",
    "vmap_fallback_counts",
]
