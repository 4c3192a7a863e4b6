"""The CPU kernels torch 2.13 does not instantiate for the limited dtypes (uint16, uint32,
uint64; Note [Limited unsigned dtypes] in tensor/dtypes.py).

Owns the one error those kernels raise. It must not decide which operators refuse: each
refusing kernel (or the structured meta function all of its CPU paths share) calls
`refuse_limited` where its computation dtype is known to be limited, as torch's dispatch
macro refuses in the kernel itself. Calls on 'meta' tensors never refuse (torch's meta
kernels compute no values, so they take every dtype).

torch 2.13's CPU kernels that do take the limited dtypes (measured, tests/tensor/
test_limited_dtypes_ops.py): copies and conversions, fill_/zero_, the factories empty, zeros,
ones, full, the views, cat/stack, clone, mul, div (true division: to float), eq/ne, the
bitwise and/or/xor, where, sum/prod/cumsum/cumprod (to int64), all/any, sort, roll, repeat,
the floating unary ops (to float), floor/ceil/round/trunc (identity), indexing by tensors.
"""

from __future__ import annotations

from typing import Any

from tensordispatch.backends.common import scalar_type_name

__all__ = ["refuse_limited"]


def refuse_limited(kernel: str, dtype: Any, *tensors: Any) -> None:
    """Raise torch's error for CPU kernel `kernel` on the limited dtype `dtype`, unless an
    operand is on 'meta' (the tensors are the call's operands; numbers are skipped).

    >>> from tensordispatch import zeros
    >>> from tensordispatch.tensor import uint16
    >>> refuse_limited("add_stub", uint16, zeros(2, dtype=uint16))
    Traceback (most recent call last):
    ...
    NotImplementedError: "add_stub" not implemented for 'UInt16'
    >>> refuse_limited("add_stub", uint16, zeros(2, dtype=uint16, device="meta"))
    """
    for t in tensors:
        device = getattr(t, "device", None)
        if device is not None and device.type == "meta":
            return
    raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_type_name(dtype)}'")
