"""The Meta backend: structured meta functions (shape/dtype/stride inference shared with
the CPU wrappers and, later, lazy tracing) and the explicit ``Meta:`` kernels."""

from tensordispatch.backends.meta.kernels import META_KERNELS
from tensordispatch.backends.meta.structured import META_FUNCTIONS

__all__ = ["META_FUNCTIONS", "META_KERNELS"]
