"""The CPU backend: NumPy kernels in one table keyed by the kernel names of
ops/native_functions.yaml (``CPU:`` entries); structured impls are in it too."""

from tensordispatch.backends.cpu.kernels import CPU_KERNELS
from tensordispatch.backends.cpu.pointwise_more import M1_CPU_KERNELS

CPU_KERNELS.update(M1_CPU_KERNELS)

__all__ = ["CPU_KERNELS"]
