"""CompositeImplicitAutograd decompositions of reductions, softmax and linear algebra (F2).

An implicit kernel is named after the operator's C++ name, which its overloads share
(``var`` serves ``var`` and ``var.dim``), so such a kernel tells its overloads apart by the
arguments the dispatcher forwards. Merged into ``DECOMPOSITIONS`` by ``ops/decompositions.py``.
"""

from __future__ import annotations

from typing import Any

from tensordispatch.backends.aten import op
from tensordispatch.backends.composite_reductions import cast
from tensordispatch.tensor.tensor import Tensor

__all__ = ["REDUCTION_DECOMPOSITIONS"]


def _correction_args(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, int, bool]:
    """(dim, correction, keepdim) of var/std(self, unbiased) or var/std.dim/.out."""
    if "dim" in kwargs or (args and not isinstance(args[0], bool)):
        names = ("dim", "unbiased", "keepdim")
        given = dict(zip(names, args)) | kwargs
        dim = given.get("dim")
    else:
        given = dict(zip(("unbiased",), args)) | kwargs
        dim = None
    return dim, 1 if given.get("unbiased", True) else 0, bool(given.get("keepdim", False))


def _var_like(name: str) -> Any:
    def kernel(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        dim, correction, keepdim = _correction_args(args, kwargs)
        return op(f"{name}.correction")(self, dim, correction=correction, keepdim=keepdim)

    def out_kernel(self: Tensor, *args: Any, out: Tensor, **kwargs: Any) -> Tensor:
        dim, correction, keepdim = _correction_args(args, kwargs)
        return op(f"{name}.correction_out")(
            self, dim, correction=correction, keepdim=keepdim, out=out
        )

    kernel.__name__, out_kernel.__name__ = name, f"{name}_out"
    return kernel, out_kernel


def softmax(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    return op("_softmax")(cast(self, dtype), dim, False)


def log_softmax(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    return op("_log_softmax")(cast(self, dtype), dim, False)


def _outer_check(self: Tensor, vec2: Tensor) -> Tensor:
    for name, t in (("self", self), ("vec2", vec2)):
        if t.dim() != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.dim()}-D")
    return op("reshape")(self, [-1, 1])


def outer(self: Tensor, vec2: Tensor) -> Tensor:
    return op("mul.Tensor")(_outer_check(self, vec2), vec2)


def outer_out(self: Tensor, vec2: Tensor, *, out: Tensor) -> Tensor:
    return op("mul.out")(_outer_check(self, vec2), vec2, out=out)


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """addmm for a 2-d input with bias, else matmul (plus bias added in place)."""
    wt = op("t")(weight)
    if input.dim() == 2 and bias is not None:
        return op("addmm")(bias, input, wt)
    output = op("matmul")(input, wt)
    if bias is not None:
        op("add_.Tensor")(output, bias)
    return output


_VAR, _VAR_OUT = _var_like("var")
_STD, _STD_OUT = _var_like("std")

REDUCTION_DECOMPOSITIONS: dict[str, Any] = {
    "var": _VAR,
    "var_out": _VAR_OUT,
    "std": _STD,
    "std_out": _STD_OUT,
    "softmax": softmax,
    "log_softmax": log_softmax,
    "outer": outer,
    "outer_out": outer_out,
    "linear": linear,
}
