"""CPU (NumPy) kernels of the in-place random operators: ``uniform_``, ``normal_`` and
``random_`` (its ``from``/``to`` overloads), drawing from the resolved Generator with torch's
argument checks and messages. Part of backends/cpu/layout.py's table (``CPU_RANDOM``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensordispatch.backends.common import scalar_type_name
from tensordispatch.backends.generator import resolve
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.tensor import Tensor

__all__ = ["CPU_RANDOM"]


def _check_float(self: Tensor, what: str) -> None:
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise NotImplementedError(
            f"\"{what}\" not implemented for '{scalar_type_name(self.dtype)}'"
        )


def uniform_(
    self: Tensor, from_: Any = 0, to: Any = 1, *, generator: Any = None, **kw: Any
) -> Tensor:
    from_ = kw.pop("from", from_)
    _check_float(self, "check_uniform_bounds")
    if from_ > to:
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from={from_:g} > to={to:g}"
        )
    draws = resolve(generator).random(self._shape)
    if from_ != 0 or to != 1:  # on [0, 1) the draws are the values: 0 + 1 * x is x exactly
        draws = from_ + (to - from_) * draws
    np.copyto(self._data, draws, casting="unsafe")
    return self


def normal_(self: Tensor, mean: Any = 0, std: Any = 1, *, generator: Any = None) -> Tensor:
    _check_float(self, "normal_kernel_cpu")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    g = resolve(generator)
    np.copyto(self._data, g.normal(mean, std, self._shape), casting="unsafe")
    return self


def _random_range(self: Tensor, low: int, high: int, generator: Any) -> Tensor:
    if low >= high:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )
    g = resolve(generator)
    np.copyto(self._data, g.integers(low, high, self._shape), casting="unsafe")
    return self


def random__from(self: Tensor, *args: Any, generator: Any = None, **kw: Any) -> Tensor:
    low = kw.pop("from", args[0] if args else None)
    high = kw.pop("to", args[1] if len(args) > 1 else None)
    if high is None:
        high = _random_upper(self.dtype)
    return _random_range(self, int(low), int(high), generator)


_MANTISSA_DIGITS = {"float16": 11, "float32": 24, "float64": 53}


def _random_upper(dtype: Any) -> int:
    """One past the largest value ``random_()`` draws: 2**mantissa (inclusive) for floats,
    so every draw is exact, else the dtype's maximum (torch's rule)."""
    if dtype is _dt.bool:
        return 2
    if dtype.name in _MANTISSA_DIGITS:
        return 2 ** _MANTISSA_DIGITS[dtype.name] + 1
    if dtype is _dt.uint8:
        return 256
    return 2 ** (8 * dtype.itemsize - 1)


def random__to(self: Tensor, to: int, *, generator: Any = None) -> Tensor:
    return _random_range(self, 0, int(to), generator)


CPU_RANDOM: dict[str, Any] = {
    "uniform_": uniform_,
    "normal_": normal_,
    "random__from": random__from,
    "random__to": random__to,
}
