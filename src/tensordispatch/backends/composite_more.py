"""CompositeExplicitAutograd kernels of M1's everyday operators, merged into
``COMPOSITE_KERNELS``: the ``new_*`` factories (the options default to ``self``'s: torch's
``self.options().merge_in(...)``), ``isnan``, ``isinf``, ``fmod``'s number overloads, ``nan_to_num`` and
``nan_to_num_`` (over ``nan_to_num.out``, whose CPU and Meta kernels live in
backends/cpu/pointwise_more.py and backends/meta/pointwise_more.py).

They call operators through the dispatcher, so every backend with the operators they use
runs them (Meta included).
"""

from __future__ import annotations

import math
from typing import Any

from tensordispatch.backends.aten import op
from tensordispatch.backends.composite_pointwise import _number_overloads
from tensordispatch.tensor.tensor import Tensor

__all__ = ["M1_COMPOSITE"]


def _merged(self: Tensor, dtype: Any, layout: Any, device: Any, pin_memory: Any) -> dict[str, Any]:
    options: dict[str, Any] = {
        "dtype": self.dtype if dtype is None else dtype,
        "device": self.device if device is None else device,
    }
    if layout is not None:
        options["layout"] = layout
    if pin_memory is not None:
        options["pin_memory"] = pin_memory
    return options


def new_empty(self: Tensor, size: Any, *, dtype: Any = None, layout: Any = None,
              device: Any = None, pin_memory: Any = None) -> Tensor:  # fmt: skip
    """aten::new_empty: uninitialized, with ``self``'s dtype and device unless given.

    >>> import tensordispatch as td
    >>> td.ones(2, dtype=td.int8).new_empty((3,)).dtype
    tensordispatch.int8
    """
    options = _merged(self, dtype, layout, device, pin_memory)
    return op("empty.memory_format")(list(size), **options)  # type: ignore[no-any-return]


def new_empty_strided(self: Tensor, size: Any, stride: Any, *, dtype: Any = None,
                      layout: Any = None, device: Any = None, pin_memory: Any = None) -> Tensor:  # fmt: skip
    """aten::new_empty_strided: ``empty_strided`` with ``self``'s options by default."""
    options = _merged(self, dtype, layout, device, pin_memory)
    return op("empty_strided")(list(size), list(stride), **options)  # type: ignore[no-any-return]


def new_full(self: Tensor, size: Any, fill_value: Any, *, dtype: Any = None, layout: Any = None,
             device: Any = None, pin_memory: Any = None) -> Tensor:  # fmt: skip
    """aten::new_full: ``full`` with ``self``'s dtype (not the fill value's) by default.

    >>> import tensordispatch as td
    >>> td.ones(1, dtype=td.int32).new_full((2,), 7)
    tensor([7, 7], dtype=tensordispatch.int32)
    """
    options = _merged(self, dtype, layout, device, pin_memory)
    return op("full")(list(size), fill_value, **options)  # type: ignore[no-any-return]


def new_zeros(self: Tensor, size: Any, *, dtype: Any = None, layout: Any = None,
              device: Any = None, pin_memory: Any = None) -> Tensor:  # fmt: skip
    """aten::new_zeros.

    >>> import tensordispatch as td
    >>> td.ones(1, dtype=td.float64).new_zeros((2,))
    tensor([0., 0.], dtype=tensordispatch.float64)
    """
    options = _merged(self, dtype, layout, device, pin_memory)
    return op("zeros")(list(size), **options)  # type: ignore[no-any-return]


def new_ones(self: Tensor, size: Any, *, dtype: Any = None, layout: Any = None,
             device: Any = None, pin_memory: Any = None) -> Tensor:  # fmt: skip
    """aten::new_ones."""
    options = _merged(self, dtype, layout, device, pin_memory)
    return op("ones")(list(size), **options)  # type: ignore[no-any-return]


def _bool_like(self: Tensor, value: int) -> Tensor:
    from tensordispatch.tensor.dtypes import bool as bool_

    return op("ones_like" if value else "zeros_like")(self, dtype=bool_)  # type: ignore[no-any-return]


def isnan(self: Tensor) -> Tensor:
    """aten::isnan: ``self != self``.

    >>> import tensordispatch as td
    >>> td.isnan(td.tensor([1.0, float("nan")]))
    tensor([False,  True])
    """
    return op("ne.Tensor")(self, self)  # type: ignore[no-any-return]


def isinf(self: Tensor) -> Tensor:
    """aten::isinf: infinite (either part for complex; always False for integers and bool).

    >>> import tensordispatch as td
    >>> td.isinf(td.tensor([1.0, float("-inf")]))
    tensor([False,  True])
    """
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        return _bool_like(self, 0)
    if self.dtype.is_complex:
        from tensordispatch.ops.bindings_tensor import _imag, _real

        return op("logical_or")(isinf(_real(self)), isinf(_imag(self)))  # type: ignore[no-any-return]
    return op("eq.Scalar")(op("abs")(self), float("inf"))  # type: ignore[no-any-return]


def nan_to_num(self: Tensor, nan: Any = None, posinf: Any = None, neginf: Any = None) -> Tensor:
    """aten::nan_to_num: nan, +inf and -inf replaced (by 0 and the dtype's largest and lowest
    finite values unless given).

    >>> import tensordispatch as td
    >>> td.nan_to_num(td.tensor([float("nan"), float("inf"), 1.0]), posinf=9.0)
    tensor([0., 9., 1.])
    """
    result = op("empty_like")(self)
    return op("nan_to_num.out")(self, nan, posinf, neginf, out=result)  # type: ignore[no-any-return]


def nan_to_num_(self: Tensor, nan: Any = None, posinf: Any = None, neginf: Any = None) -> Tensor:
    return op("nan_to_num.out")(self, nan, posinf, neginf, out=self)  # type: ignore[no-any-return]


def diag_embed(self: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """aten::diag_embed: the last dim of ``self`` placed on diagonal ``offset`` of the
    planes (dim1, dim2) of a zero tensor one rank larger.

    >>> import tensordispatch as td
    >>> td.diag_embed(td.tensor([1, 2])).tolist()
    [[1, 0], [0, 2]]
    """
    from tensordispatch.backends.common import wrap_dim

    rank = self.dim() + 1
    d1, d2 = wrap_dim(dim1, rank), wrap_dim(dim2, rank)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = self._shape[-1] + abs(offset)
    shape = list(self._shape[:-1])
    for d in sorted((d1, d2)):
        shape.insert(d, n)
    result = op("zeros")(shape, dtype=self.dtype, device=self.device)
    op("copy_")(op("diagonal")(result, offset, d1, d2), self)
    return result  # type: ignore[no-any-return]


def count_nonzero_dim_IntList(self: Tensor, dim: Any) -> Tensor:
    """aten::count_nonzero.dim_IntList: int64 counts of nonzero elements over ``dim`` (all
    dims when empty).

    >>> import tensordispatch as td
    >>> td.count_nonzero(td.tensor([[0, 1], [2, 3]]), dim=0).tolist()
    [1, 2]
    """
    from tensordispatch.backends.common import wrap_dim
    from tensordispatch.tensor.dtypes import int64

    # Note [Limited unsigned dtypes]: torch's full count has no loop for them; over given
    # dims it is (self != 0).sum(dims), which they have
    limited = self.dtype._category < 0 and self.device.type == "cpu"
    if limited and not list(dim):
        from tensordispatch.backends.cpu.pointwise import not_implemented

        raise not_implemented("nonzero_count_cpu", self.dtype)
    dims = [wrap_dim(int(d), self.dim()) for d in dim]
    for i, d in enumerate(dims):
        if d in dims[:i]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    nonzero = op("ne.Scalar")(self, 0)
    return op("sum.dim_IntList")(nonzero, dims, dtype=int64)  # type: ignore[no-any-return]


def count_nonzero(self: Tensor, dim: Any = None) -> Tensor:
    return count_nonzero_dim_IntList(self, [] if dim is None else [dim])


def equal(self: Tensor, other: Tensor) -> bool:
    """aten::equal: same shape and equal elements (nan never equal).

    >>> import tensordispatch as td
    >>> td.equal(td.tensor([1, 2]), td.tensor([1.0, 2.0])), td.equal(td.ones(2), td.ones(3))
    (True, False)
    """
    if self._shape != other._shape:
        return False
    return bool(op("all")(op("eq.Tensor")(self, other)).item())


def allclose(self: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:  # fmt: skip
    """aten::allclose: isclose everywhere.

    >>> import tensordispatch as td
    >>> td.allclose(td.tensor([1.0, 2.0]), td.tensor([1.0, 2.0 + 1e-7]))
    True
    """
    close = op("isclose")(self, other, rtol, atol, equal_nan)
    return bool(op("all")(close).item())


def _angle_conversion(name: str, factor: float) -> dict[str, Any]:
    """deg2rad / rad2deg: a multiplication by a wrapped number, integers and bool converted
    to the default dtype first; complex refused (torch's CompositeExplicitAutograd kernels)."""
    from tensordispatch.backends.aten import wrap_number
    from tensordispatch.tensor.dtypes import float32

    def check(self: Tensor) -> Tensor:
        if self.dtype.is_complex:
            raise RuntimeError(f"{name} is not supported for complex tensors.")
        if not self.dtype.is_floating_point:
            return op("to.dtype")(self, float32)  # type: ignore[no-any-return]
        return self

    def functional(self: Tensor) -> Tensor:
        return op("mul.Tensor")(check(self), wrap_number(factor))  # type: ignore[no-any-return]

    def in_place(self: Tensor) -> Tensor:
        if self.dtype.is_complex:
            raise RuntimeError(f"{name} is not supported for complex tensors.")
        return op("mul_.Tensor")(self, wrap_number(factor))  # type: ignore[no-any-return]

    def out_variant(self: Tensor, *, out: Tensor) -> Tensor:
        return op("mul.out")(check(self), wrap_number(factor), out=out)  # type: ignore[no-any-return]

    return {name: functional, f"{name}_": in_place, f"{name}_out": out_variant}


M1_COMPOSITE: dict[str, Any] = {
    "new_empty": new_empty,
    "new_empty_strided": new_empty_strided,
    "new_full": new_full,
    "new_zeros": new_zeros,
    "new_ones": new_ones,
    "isnan": isnan,
    "isinf": isinf,
    "nan_to_num": nan_to_num,
    "nan_to_num_": nan_to_num_,
    "diag_embed": diag_embed,
    "count_nonzero_dim_IntList": count_nonzero_dim_IntList,
    "count_nonzero": count_nonzero,
    "equal": equal,
    **_angle_conversion("deg2rad", math.pi / 180),
    **_angle_conversion("rad2deg", 180 / math.pi),
    "allclose": allclose,
    # fmod.Scalar / fmod_.Scalar / fmod.Scalar_out: the number wrapped, then fmod.Tensor*
    **{k: v for k, v in _number_overloads("fmod").items() if not k.endswith("_Tensor")},
}
