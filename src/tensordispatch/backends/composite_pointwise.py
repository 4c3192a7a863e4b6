"""CompositeExplicitAutograd kernels of the pointwise family F1: number overloads (wrap the
number, call the Tensor overload), logical ops' functional/in-place forms over their out=
kernels, floor_divide as div(rounding_mode='floor'), relu as clamp_min(0).

Keyed by our yaml kernel names; merged into ``COMPOSITE_KERNELS``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensordispatch.backends.aten import op, wrap_number
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.tensor import Tensor

__all__ = ["POINTWISE_COMPOSITE"]


def _number_overloads(base: str) -> dict[str, Callable[..., Tensor]]:
    """``<base>.Scalar``, ``<base>_.Scalar``, ``<base>.Scalar_out`` and, for bitwise ops,
    ``<base>.Scalar_Tensor`` from the Tensor overloads (the number becomes a wrapped
    0-dim tensor, as ATen's wrapped_scalar_tensor)."""
    tensor = "remainder.Tensor" if base == "remainder" else f"{base}.Tensor"
    out_op = f"{base}.Tensor_out"
    inplace = f"{base}_.Tensor"

    def functional(self: Tensor, other: Any) -> Tensor:
        return op(tensor)(self, wrap_number(other))

    def in_place(self: Tensor, other: Any) -> Tensor:
        return op(inplace)(self, wrap_number(other))

    def out_variant(self: Tensor, other: Any, *, out: Tensor) -> Tensor:
        return op(out_op)(self, wrap_number(other), out=out)

    def scalar_tensor(self: Any, other: Tensor) -> Tensor:
        return op(tensor)(wrap_number(self), other)

    return {
        f"{base}_Scalar": functional,
        f"{base}__Scalar": in_place,
        f"{base}_Scalar_out": out_variant,
        f"{base}_Scalar_Tensor": scalar_tensor,
    }


def _logical(name: str) -> dict[str, Callable[..., Tensor]]:
    out_op = f"{name}.out"

    def functional(self: Tensor, other: Tensor) -> Tensor:
        out = op("empty.memory_format")([0], dtype=_dt.bool, device=self.device)
        return op(out_op)(self, other, out=out)

    def in_place(self: Tensor, other: Tensor) -> Tensor:
        return op(out_op)(self, other, out=self)

    return {name: functional, f"{name}_": in_place}


def logical_not(self: Tensor) -> Tensor:
    out = op("empty.memory_format")([0], dtype=_dt.bool, device=self.device)
    return op("logical_not.out")(self, out=out)


def logical_not_(self: Tensor) -> Tensor:
    return op("logical_not.out")(self, out=self)


def floor_divide(self: Tensor, other: Tensor) -> Tensor:
    return op("div.Tensor_mode")(self, other, rounding_mode="floor")


def floor_divide_(self: Tensor, other: Tensor) -> Tensor:
    return op("div_.Tensor_mode")(self, other, rounding_mode="floor")


def floor_divide_out(self: Tensor, other: Tensor, *, out: Tensor) -> Tensor:
    return op("div.out_mode")(self, other, rounding_mode="floor", out=out)


def floor_divide_Scalar(self: Tensor, other: Any) -> Tensor:
    return floor_divide(self, wrap_number(other))


def floor_divide__Scalar(self: Tensor, other: Any) -> Tensor:
    return floor_divide_(self, wrap_number(other))


def _check_relu(self: Tensor) -> None:
    if self.dtype is _dt.bool:
        raise RuntimeError("Boolean inputs not supported for relu")


_RELU_FAST: list[Callable[[Tensor], Tensor | None]] = []


def _bind_relu_fast() -> list[Callable[[Tensor], Tensor | None]]:
    """cpu/nn.py's relu_fast, bound on first use (the CPU kernels import this module)."""
    from tensordispatch.backends.cpu.nn import relu_fast

    _RELU_FAST.append(relu_fast)
    return _RELU_FAST


def relu(self: Tensor) -> Tensor:
    _check_relu(self)
    fast = _RELU_FAST or _bind_relu_fast()
    result = fast[0](self)  # the nested call done directly when unobserved (cpu/nn.py)
    if result is not None:
        return result
    return op("clamp_min")(self, 0)


def relu_(self: Tensor) -> Tensor:
    _check_relu(self)
    return op("clamp_min_")(self, 0)


def _shift_dunders(name: str, base: str) -> dict[str, Callable[..., Tensor]]:
    """ATen's ``__lshift__`` / ``__ilshift__`` (and right): the shift with a number wrapped
    (registered under CPU and Meta, as ATen lists backend kernels for them)."""

    def functional(self: Tensor, other: Any) -> Tensor:
        if not isinstance(other, Tensor):
            other = wrap_number(other)
        return op(f"{base}.Tensor")(self, other)  # type: ignore[no-any-return]

    def in_place(self: Tensor, other: Any) -> Tensor:
        if not isinstance(other, Tensor):
            other = wrap_number(other)
        return op(f"{base}_.Tensor")(self, other)  # type: ignore[no-any-return]

    return {f"__{name}__": functional, f"__i{name}__": in_place}


# Backend kernels of __lshift__ / __rshift__ and their in-place forms (CPU and Meta tables).
SHIFT_DUNDER_KERNELS: dict[str, Callable[..., Tensor]] = {
    **_shift_dunders("lshift", "bitwise_left_shift"),
    **_shift_dunders("rshift", "bitwise_right_shift"),
}


def _shift_overloads(base: str) -> dict[str, Callable[..., Tensor]]:
    """The number overloads of ``bitwise_<left|right>_shift`` (ATen names one kernel for
    Tensor_Scalar and Scalar_Tensor: whichever argument is a number is wrapped)."""
    tensor, inplace, out_op = f"{base}.Tensor", f"{base}_.Tensor", f"{base}.Tensor_out"

    def functional(self: Any, other: Any) -> Tensor:
        if not isinstance(self, Tensor):
            return op(tensor)(wrap_number(self), other)  # type: ignore[no-any-return]
        return op(tensor)(self, wrap_number(other))  # type: ignore[no-any-return]

    def in_place(self: Tensor, other: Any) -> Tensor:
        return op(inplace)(self, wrap_number(other))  # type: ignore[no-any-return]

    def out_variant(self: Tensor, other: Any, *, out: Tensor) -> Tensor:
        return op(out_op)(self, wrap_number(other), out=out)  # type: ignore[no-any-return]

    return {base: functional, f"{base}_": in_place, f"{base}_out": out_variant}


POINTWISE_COMPOSITE: dict[str, Callable[..., Tensor]] = {
    **_shift_overloads("bitwise_left_shift"),
    **_shift_overloads("bitwise_right_shift"),
    **_number_overloads("remainder"),
    **_number_overloads("bitwise_and"),
    **_number_overloads("bitwise_or"),
    **_number_overloads("bitwise_xor"),
    **_logical("logical_and"),
    **_logical("logical_or"),
    **_logical("logical_xor"),
    "logical_not": logical_not,
    "logical_not_": logical_not_,
    "floor_divide": floor_divide,
    "floor_divide_": floor_divide_,
    "floor_divide_out": floor_divide_out,
    "floor_divide_Scalar": floor_divide_Scalar,
    "floor_divide__Scalar": floor_divide__Scalar,
    "relu": relu,
    "relu_": relu_,
}
