"""CompositeImplicitAutograd kernels of M1's everyday operators, merged into
``DECOMPOSITIONS``: torch's alias operators (``absolute`` is ``abs``, ``multiply`` is
``mul``, ``greater`` is ``gt``, ``clip`` is ``clamp``, ``fix`` is ``trunc``, ``arcsin`` is
``asin``, ...), the ``*_as`` operators
(``view_as``, ``expand_as``, ``reshape_as``, ``type_as``), ``isfinite``, ``isreal``,
``square`` and ``positive``.

Note [Alias operators]: torch declares each alias as an operator of its own in
native_functions.yaml (``aten::multiply.Tensor`` is not ``aten::mul.Tensor``) with a
CompositeImplicitAutograd kernel that calls the aliased overload, so autograd, vmap and lazy
tracing see the original (``x.multiply(y).grad_fn`` is a MulBackward0). We do the same. As
in torch, one kernel (the alias's C++ name) serves all overloads of a name, so it picks the
aliased overload from its arguments; ALIAS_OVERLOADS lists, per alias overload, the overload
it must reach (tests check each).
"""

from __future__ import annotations

from typing import Any

from tensordispatch.backends.aten import op
from tensordispatch.tensor.tensor import Tensor

__all__ = ["ALIAS_OVERLOADS", "M1_DECOMPOSITIONS"]


def _comparison_aliases() -> dict[str, str]:
    table: dict[str, str] = {}
    pairs = (("not_equal", "ne"), ("greater_equal", "ge"), ("less_equal", "le"),
             ("greater", "gt"), ("less", "lt"))  # fmt: skip
    for alias, base in pairs:
        for overload in ("Scalar_out", "Scalar", "Tensor_out", "Tensor"):
            table[f"{alias}.{overload}"] = f"{base}.{overload}"
        for overload in ("Scalar", "Tensor"):
            table[f"{alias}_.{overload}"] = f"{base}_.{overload}"
    return table


def _divide_aliases() -> dict[str, str]:
    table = {f"divide{s}": f"div{s}" for s in (
        ".Tensor", "_.Tensor", ".out", ".Scalar", "_.Scalar", ".Tensor_mode", "_.Tensor_mode",
        ".out_mode", ".Scalar_mode", "_.Scalar_mode")}  # fmt: skip
    for s in (".Tensor", "_.Tensor", ".out", ".Scalar", "_.Scalar"):
        table[f"true_divide{s}"] = f"div{s}"
    return table


# alias overload -> the overload it calls (torch's native_functions.yaml alias entries)
ALIAS_OVERLOADS: dict[str, str] = {
    "absolute": "abs", "absolute_": "abs_", "absolute.out": "abs.out",
    "negative": "neg", "negative_": "neg_", "negative.out": "neg.out",
    **{f"{alias}{s}": f"{base}{s}" for alias, base in (
        ("fix", "trunc"), ("arcsin", "asin"), ("arccos", "acos"), ("arctan", "atan"),
        ("arcsinh", "asinh"), ("arccosh", "acosh"), ("arctanh", "atanh"))
       for s in ("", "_", ".out")},
    **{f"multiply{s}": f"mul{s}" for s in (".Tensor", "_.Tensor", ".out", ".Scalar", "_.Scalar")},
    **{f"subtract{s}": f"sub{s}" for s in (".Tensor", "_.Tensor", ".out", ".Scalar", "_.Scalar")},
    **_divide_aliases(),
    "arctan2": "atan2", "arctan2_": "atan2_", "arctan2.out": "atan2.out",
    "clip": "clamp", "clip.Tensor": "clamp.Tensor", "clip_": "clamp_",
    "clip_.Tensor": "clamp_.Tensor", "clip.out": "clamp.out", "clip.Tensor_out": "clamp.Tensor_out",
    **_comparison_aliases(),
}  # fmt: skip


def _unary_alias(target: str) -> Any:
    def kernel(*args: Any, **kwargs: Any) -> Any:
        return op(target)(*args, **kwargs)

    return kernel


def _binary_alias(base: str) -> Any:
    """The kernel of ``multiply`` / ``multiply_`` / ``greater`` / ``divide`` ...: one C++ name
    serves the Tensor and Scalar overloads (and divide's ``_mode`` ones), so the aliased
    overload is picked the way the alias's was: by ``other``'s type and by a rounding mode."""

    def kernel(self: Any, other: Any, *args: Any, **kwargs: Any) -> Any:
        kind = "Tensor" if isinstance(other, Tensor) else "Scalar"
        mode = "_mode" if "rounding_mode" in kwargs else ""
        return op(f"{base}.{kind}{mode}")(self, other, *args, **kwargs)

    return kernel


def _binary_out_alias(base: str, by_kind: bool) -> Any:
    def kernel(self: Any, other: Any, *args: Any, **kwargs: Any) -> Any:
        if by_kind:  # comparisons: Tensor_out / Scalar_out
            overload = ("Tensor" if isinstance(other, Tensor) else "Scalar") + "_out"
        else:
            overload = "out_mode" if "rounding_mode" in kwargs else "out"
        return op(f"{base}.{overload}")(self, other, *args, **kwargs)

    return kernel


def _clip_alias(base: str, out: bool) -> Any:
    def kernel(self: Any, min: Any = None, max: Any = None, **kwargs: Any) -> Any:
        tensors = isinstance(min, Tensor) or isinstance(max, Tensor)
        if out:
            overload = f"{base}.Tensor_out" if tensors else f"{base}.out"
        else:
            overload = f"{base}.Tensor" if tensors else base
        return op(overload)(self, min, max, **kwargs)

    return kernel


def _alias_kernels() -> dict[str, Any]:
    """Kernel name (the alias's C++ name: ``multiply``, ``multiply_``, ``multiply_out``) ->
    its forwarding kernel (Note [Alias operators])."""
    kernels: dict[str, Any] = {}
    unary = (("absolute", "abs"), ("negative", "neg"), ("fix", "trunc"), ("arcsin", "asin"),
             ("arccos", "acos"), ("arctan", "atan"), ("arcsinh", "asinh"), ("arccosh", "acosh"),
             ("arctanh", "atanh"), ("arctan2", "atan2"))  # fmt: skip
    for alias, base in unary:
        kernels[alias] = _unary_alias(base)
        kernels[f"{alias}_"] = _unary_alias(f"{base}_")
        kernels[f"{alias}_out"] = _unary_alias(f"{base}.out")
    for alias, base in (("multiply", "mul"), ("subtract", "sub"), ("divide", "div"),
                        ("true_divide", "div"), ("not_equal", "ne"), ("greater_equal", "ge"),
                        ("less_equal", "le"), ("greater", "gt"), ("less", "lt")):  # fmt: skip
        kernels[alias] = _binary_alias(base)
        kernels[f"{alias}_"] = _binary_alias(f"{base}_")
        kernels[f"{alias}_out"] = _binary_out_alias(base, by_kind=alias not in (
            "multiply", "subtract", "divide", "true_divide"))  # fmt: skip
    kernels["clip"] = _clip_alias("clamp", out=False)
    kernels["clip_"] = _clip_alias("clamp_", out=False)
    kernels["clip_out"] = _clip_alias("clamp", out=True)
    for name, kernel in kernels.items():
        kernel.__name__ = kernel.__qualname__ = name
        kernel.__doc__ = "An alias kernel (Note [Alias operators])."
    return kernels


def view_as(self: Tensor, other: Tensor) -> Tensor:
    """aten::view_as: ``self.view(other.size())``.

    >>> import tensordispatch as td
    >>> td.arange(6.0).view_as(td.ones(2, 3)).shape
    tensordispatch.Size([2, 3])
    """
    return op("view")(self, list(other._shape))  # type: ignore[no-any-return]


def expand_as(self: Tensor, other: Tensor) -> Tensor:
    """aten::expand_as: ``self.expand(other.size())``."""
    return op("expand")(self, list(other._shape))  # type: ignore[no-any-return]


def reshape_as(self: Tensor, other: Tensor) -> Tensor:
    """aten::reshape_as: ``self.reshape(other.size())`` (a view when the strides allow)."""
    return op("reshape")(self, list(other._shape))  # type: ignore[no-any-return]


def type_as(self: Tensor, other: Tensor) -> Tensor:
    """aten::type_as: ``self`` converted to ``other``'s dtype and device (``self`` itself
    when they agree).

    >>> import tensordispatch as td
    >>> td.ones(2).type_as(td.ones(1, dtype=td.int8))
    tensor([1, 1], dtype=tensordispatch.int8)
    """
    return op("to.other")(self, other)  # type: ignore[no-any-return]


def _bool_like(self: Tensor, value: int) -> Tensor:
    from tensordispatch.tensor.dtypes import bool as bool_

    make = "ones_like" if value else "zeros_like"
    return op(make)(self, dtype=bool_)  # type: ignore[no-any-return]


def _parts(self: Tensor) -> tuple[Tensor, Tensor]:
    from tensordispatch.ops.bindings_tensor import _imag, _real

    return _real(self), _imag(self)


def isfinite(self: Tensor) -> Tensor:
    """aten::isfinite: neither nan nor infinite (always True for integers and bool; both
    parts for complex).

    >>> import tensordispatch as td
    >>> td.isfinite(td.tensor([1.0, float("nan"), float("inf")]))
    tensor([ True, False, False])
    """
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        return _bool_like(self, 1)
    if self.dtype.is_complex:
        real, imag = _parts(self)
        return op("logical_and")(isfinite(real), isfinite(imag))  # type: ignore[no-any-return]
    not_nan = op("eq.Tensor")(self, self)
    return op("mul.Tensor")(not_nan, op("ne.Scalar")(op("abs")(self), float("inf")))  # type: ignore[no-any-return]


def isreal(self: Tensor) -> Tensor:
    """aten::isreal: a zero imaginary part (always True for real dtypes).

    >>> import tensordispatch as td
    >>> td.isreal(td.tensor([1 + 0j, 2j]))
    tensor([ True, False])
    """
    if not self.dtype.is_complex:
        return _bool_like(self, 1)
    return op("eq.Scalar")(_parts(self)[1], 0)  # type: ignore[no-any-return]


def square(self: Tensor) -> Tensor:
    """aten::square: ``pow(self, 2)`` (so bool squares to int64, as torch's).

    >>> import tensordispatch as td
    >>> td.square(td.tensor([3, -2]))
    tensor([9, 4])
    """
    return op("pow.Tensor_Scalar")(self, 2)  # type: ignore[no-any-return]


def square_(self: Tensor) -> Tensor:
    return op("pow_.Scalar")(self, 2)  # type: ignore[no-any-return]


def square_out(self: Tensor, *, out: Tensor) -> Tensor:
    return op("pow.Tensor_Scalar_out")(self, 2, out=out)  # type: ignore[no-any-return]


def positive(self: Tensor) -> Tensor:
    """aten::positive: ``self`` itself, refused for bool as torch's.

    >>> import tensordispatch as td
    >>> t = td.ones(2); td.positive(t) is t
    True
    """
    if self.dtype.name == "bool":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self


M1_DECOMPOSITIONS: dict[str, Any] = {
    **_alias_kernels(),
    "view_as": view_as,
    "expand_as": expand_as,
    "reshape_as": reshape_as,
    "type_as": type_as,
    "isfinite": isfinite,
    "isreal": isreal,
    "square": square,
    "square_": square_,
    "square_out": square_out,
    "positive": positive,
}
