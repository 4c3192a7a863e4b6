"""Powers as torch computes them, where NumPy's own power differs (helpers of the CPU pow
kernels in pointwise.py): integer powers with negative exponents, and complex powers at a
zero or non-finite base. Pure NumPy functions: no tensors, no dtypes of ours.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["complex_power", "int_power"]

Array = np.ndarray[Any, Any]


def int_power(a: Array, e: Array) -> Array:
    """Integer powers as torch computes them: negative exponents give 1 for base 1,
    +-1 for base -1 and 0 otherwise; overflow wraps.

    >>> int_power(np.array([2, 1, -1, -1, 3]), np.array([-1, -5, -3, -2, 2])).tolist()
    [0, 1, -1, 1, 9]
    """
    negative = e < 0
    result = np.power(a, np.where(negative, 0, e).astype(a.dtype))
    if not np.any(negative):
        return result
    odd = (e % 2) != 0
    small = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0)).astype(a.dtype)
    return np.where(negative, small, result)


def complex_power(a: Array, e: Array) -> Array:
    """torch's complex pow is exp(e * log(a)); NumPy's power agrees (more accurately) except
    at a zero or non-finite base, where torch's formula gives e.g. 0 ** 0 = nan+nanj."""
    result = np.power(a, e)
    special = (a == 0) | ~np.isfinite(a)
    if special.any():
        result = np.where(special, np.exp(e * np.log(a)), result)
    return result
