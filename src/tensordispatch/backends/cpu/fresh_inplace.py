"""Fused in-place CPU kernels of the small pointwise ops (``add_``, ``sub_``, ``mul_``,
``div_``): meta function, in-place check and out= impl in one frame. Split from fresh.py
(which re-exports ``CPU_INPLACE_KERNELS``, the name the generated registrations use).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tensordispatch.backends.cpu.fpstate import QUIET_RUN, quiet_retry
from tensordispatch.backends.overlap import check_written, in_order, torch_element_order
from tensordispatch.tensor.tensor import Tensor

__all__ = ["CPU_INPLACE_KERNELS"]

_FLOATING = 2  # dtypes.py's category ranks: bool 0, integral 1, floating 2, complex 3
_COMPLEX = 3


# Note [Fused in-place kernels]
# The same fusion for the in-place variants (meta + check_inplace + out= impl in one frame):
# when ``other`` has self's dtype and shape, or is a wrapped number of a category no higher
# than self's (the meta function's computation dtype is then self's own), the ufunc writes
# into self's array directly, as the out= impl would with that dtype. Anything else takes the
# generated wrapper's three steps. Version bumps stay with the ADInplaceOrView kernel above.
# Memory overlap (backends/overlap.py) is checked inline only as far as its cheap part: a
# zero stride in self or an operand over self's storage calls check_written first. The
# commonest call (two plain roots, no zero stride in self, one dtype and shape) is spelled
# out in the kernels themselves, saving the call of ``fast``.


def _fused_inplace(
    ufunc: Any, op: str, impl_name: str, min_category: int, alpha: bool
) -> Callable[..., Tensor]:
    """A fused in-place kernel ``(self, other)``, or ``(self, other, *, alpha=1)`` with
    ``alpha`` (add_, sub_: the fast path needs alpha == 1, an int) (Note [Fused in-place
    kernels]). Wrapped bools are left to the meta function (sub_ refuses them)."""
    from tensordispatch.backends.cpu import CPU_KERNELS
    from tensordispatch.backends.meta import META_FUNCTIONS
    from tensordispatch.backends.structured import check_inplace

    meta, impl = META_FUNCTIONS[op], CPU_KERNELS[impl_name]
    # add_/sub_ of complex numbers multiply by alpha even when it is 1 (Note [Complex alpha]
    # in cpu/kernels.py): the impl's path
    max_category = _FLOATING if alpha else _COMPLEX

    def fast(self: Tensor, other: Tensor) -> bool:
        dt = self.dtype
        if min_category <= dt._category <= max_category and self.device is other.device:
            shared = (
                self._base is not None
                or other._base is not None
                or self._storage is not None
                or 0 in self._strides
            )
            if shared:  # not two plain roots: Note [Overlap checks cost nothing when storage ...]
                check_written(self, (other,))
            od = other.dtype
            a, b = self._data, other._data
            if od is dt and other._shape == self._shape and not other._wrapped_number:
                if shared:  # Note [Overlaps torch allows but computes in its own order]
                    order = torch_element_order(self, other)
                    if order is not None:
                        in_order(ufunc, a, b, order)
                        return True
                try:
                    QUIET_RUN(ufunc, a, b, out=a)
                except RuntimeError as e:  # Note [Quiet context] in fpstate.py
                    quiet_retry(e, ufunc, a, b, out=a)
                return True
            if other._wrapped_number and 1 <= od._category <= dt._category:
                cd = dt._numpy
                try:
                    QUIET_RUN(ufunc, a, b, out=a, dtype=cd, casting="unsafe")
                except RuntimeError as e:
                    quiet_retry(e, ufunc, a, b, out=a, dtype=cd, casting="unsafe")
                return True
        return False

    if alpha:

        def kernel_alpha(self: Tensor, other: Tensor, *, alpha: Any = 1) -> Tensor:
            if type(alpha) is int and alpha == 1:
                dt = self.dtype
                if (  # fast's commonest case inline: two plain roots of one dtype and shape
                    other.dtype is dt
                    and other._shape == self._shape
                    and self._base is None
                    and other._base is None
                    and self._storage is None
                    and not other._wrapped_number
                    and min_category <= dt._category <= max_category
                    and self.device is other.device
                    and 0 not in self._strides
                ):
                    a, b = self._data, other._data
                    try:
                        QUIET_RUN(ufunc, a, b, out=a)
                    except RuntimeError as e:  # Note [Quiet context] in fpstate.py
                        quiet_retry(e, ufunc, a, b, out=a)
                    return self
                if fast(self, other):
                    return self
            specs, pre = meta((self,), self, other, alpha)
            check_inplace(self, specs[0])
            impl(pre, self, other, alpha, self)
            return self

        kernel_alpha.__name__ = kernel_alpha.__qualname__ = f"{ufunc.__name__}_inplace"
        return kernel_alpha

    def kernel(self: Tensor, other: Tensor) -> Tensor:
        dt = self.dtype
        if (  # fast's commonest case inline, as in kernel_alpha
            other.dtype is dt
            and other._shape == self._shape
            and self._base is None
            and other._base is None
            and self._storage is None
            and not other._wrapped_number
            and min_category <= dt._category <= max_category
            and self.device is other.device
            and 0 not in self._strides
        ):
            a, b = self._data, other._data
            try:
                QUIET_RUN(ufunc, a, b, out=a)
            except RuntimeError as e:  # Note [Quiet context] in fpstate.py
                quiet_retry(e, ufunc, a, b, out=a)
            return self
        if fast(self, other):
            return self
        specs, pre = meta((self,), self, other)
        check_inplace(self, specs[0])
        impl(pre, self, other, self)
        return self

    kernel.__name__ = kernel.__qualname__ = f"{ufunc.__name__}_inplace"
    return kernel


# Keyed by the in-place overload's name; every kernel has the generated in-place wrapper's
# Python signature.
CPU_INPLACE_KERNELS: dict[str, Callable[..., Tensor]] = {
    "add_.Tensor": _fused_inplace(np.add, "add.Tensor", "add_out", 1, alpha=True),
    "sub_.Tensor": _fused_inplace(np.subtract, "sub.Tensor", "sub_out", 1, alpha=True),
    "mul_.Tensor": _fused_inplace(np.multiply, "mul.Tensor", "mul_out", 1, alpha=False),
    "div_.Tensor": _fused_inplace(np.true_divide, "div.Tensor", "div_out", _FLOATING, alpha=False),
}
