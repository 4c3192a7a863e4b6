"""Hand-written Python bindings of reductions whose overloads the generator cannot choose
between (codegen/model.py PYTHON_FUNCTIONS / PYTHON_METHODS).

``all``/``any`` take an int dim (``.dim``), a tuple of dims (``.dims``) or none; ``norm``
is torch.norm's Python signature over the aten ``norm`` overloads ("fro" is p=2).

``var``/``std`` have three Python forms, like torch's: ``(input, unbiased)``,
``(input, dim, unbiased, keepdim)`` and ``(input, dim=None, *, correction, keepdim)``. A bool
first argument or an ``unbiased=`` keyword selects the unbiased overloads; anything else
the correction ones.
"""

from __future__ import annotations

import sys
from typing import Any

from tensordispatch.backends.aten import op
from tensordispatch.dispatch.errors import ArgumentTypeError
from tensordispatch.ops.binding_errors import REQUIRED, called_as_method, combination_error

__all__ = ["all", "any", "conv1d", "conv2d", "embedding_renorm_", "norm", "std", "var"]


def _variance(name: str, input: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    out = kwargs.pop("out", None)
    if len(args) > 3:
        raise TypeError(f"{name}() takes at most 4 positional arguments ({len(args) + 1} given)")
    unbiased_form = (
        "unbiased" in kwargs or (bool(args) and isinstance(args[0], bool)) or (len(args) >= 2)
    )
    if unbiased_form and "correction" in kwargs:
        raise TypeError(f"{name}() got both 'unbiased' and 'correction'")
    if unbiased_form and args and isinstance(args[0], bool):
        if len(args) > 1 or set(kwargs) - {"unbiased"}:
            raise TypeError(f"{name}(input, unbiased) takes no dim or keepdim")
        if out is not None:
            raise TypeError(f"{name}(input, unbiased) has no out= form")
        return op(f"{name}")(input, *args, **kwargs)
    if unbiased_form:
        if out is not None:
            return op(f"{name}.out")(input, *args, out=out, **kwargs)
        return op(f"{name}.dim")(input, *args, **kwargs)
    if len(args) > 1:
        raise TypeError(f"{name}(): keepdim and correction are keyword-only here")
    if out is not None:
        return op(f"{name}.correction_out")(input, *args, out=out, **kwargs)
    return op(f"{name}.correction")(input, *args, **kwargs)


def var(input: Any = REQUIRED, *args: Any, **kwargs: Any) -> Any:
    """torch.var: variance over ``dim`` (all dims by default), Bessel-corrected by default.

    >>> import tensordispatch as td
    >>> td.var(td.tensor([1.0, 2.0, 3.0])).item(), td.var(td.tensor([1.0, 3.0]), 0, False).item()
    (1.0, 1.0)
    """
    try:
        return _variance("var", input, args, kwargs)
    except ArgumentTypeError:  # torch's parser matched no signature
        raise combination_error("var", called_as_method(sys._getframe())) from None


def std(input: Any = REQUIRED, *args: Any, **kwargs: Any) -> Any:
    """torch.std: the square root of :func:`var` (same forms).

    >>> import tensordispatch as td
    >>> td.std(td.tensor([1.0, 3.0]), correction=0).item()
    1.0
    """
    try:
        return _variance("std", input, args, kwargs)
    except ArgumentTypeError:  # torch's parser matched no signature
        raise combination_error("std", called_as_method(sys._getframe())) from None


def _logical(name: str, input: Any, dim: Any, keepdim: bool, out: Any) -> Any:
    args: tuple[Any, ...] = ()
    if dim is _ALL:
        overload = name
    elif isinstance(dim, int):
        overload, args = f"{name}.dim", (dim, keepdim)
    else:
        overload, args = f"{name}.dims", (dim, keepdim)
    if out is not None:
        suffix = {name: ".all_out", f"{name}.dim": ".out", f"{name}.dims": ".dims_out"}[overload]
        return op(name + suffix)(input, *args, out=out)
    return op(overload)(input, *args)


_ALL: Any = object()


def all(input: Any = REQUIRED, dim: Any = _ALL, keepdim: bool = False, *, out: Any = None) -> Any:
    """torch.all: whether every element (over ``dim``) is nonzero.

    >>> import tensordispatch as td
    >>> td.all(td.tensor([[1, 0], [1, 1]]), 1).tolist()
    [False, True]
    """
    try:
        return _logical("all", input, dim, keepdim, out)
    except ArgumentTypeError:  # torch's parser matched no signature
        raise combination_error("all", called_as_method(sys._getframe())) from None


def any(input: Any = REQUIRED, dim: Any = _ALL, keepdim: bool = False, *, out: Any = None) -> Any:
    """torch.any: whether some element (over ``dim``) is nonzero.

    >>> import tensordispatch as td
    >>> td.any(td.tensor([[1, 0], [0, 0]]), (0, 1)).item()
    True
    """
    try:
        return _logical("any", input, dim, keepdim, out)
    except ArgumentTypeError:  # torch's parser matched no signature
        raise combination_error("any", called_as_method(sys._getframe())) from None


def norm(
    input: Any, p: Any = "fro", dim: Any = None, keepdim: bool = False, out: Any = None,
    dtype: Any = None,
) -> Any:  # fmt: skip
    """torch.norm: vector norms (``p`` a number or inf; "fro" over at most two dims is the
    2-norm) and, as torch routes them, matrix norms through ``linalg.matrix_norm`` ("nuc", or
    "fro" over more dims, which it refuses).

    >>> import tensordispatch as td
    >>> td.norm(td.tensor([3.0, 4.0])).item(), td.norm(td.tensor([3.0, -4.0]), 1).item()
    (5.0, 7.0)
    >>> td.norm(td.tensor([[3.0, 0.0], [0.0, -4.0]]), "nuc").item()
    7.0
    """
    if isinstance(p, str):
        if not (p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2)):
            from tensordispatch.linalg import matrix_norm

            dims = list(range(input.dim())) if dim is None else dim
            dims = [dims] if isinstance(dims, int) else dims
            return matrix_norm(input, p, dims, keepdim, dtype=dtype, out=out)
        p = 2
    dims = [] if dim is None else [dim] if isinstance(dim, int) else list(dim)
    vector_norm_checks(input, p, dims, dtype)
    if dtype is not None:
        if out is not None:
            return op("norm.dtype_out")(input, p, dims, keepdim, dtype=dtype, out=out)
        return op("norm.ScalarOpt_dim_dtype")(input, p, dims, keepdim, dtype=dtype)
    if out is not None:
        return op("norm.out")(input, p, dims, keepdim, out=out)
    if not dims and not keepdim:
        return op("norm.Scalar")(input, p)
    return op("norm.ScalarOpt_dim")(input, p, dims, keepdim)


def _scalar_text(value: Any) -> str:
    """A Scalar as torch's messages print it (C++ stream: -1.0 is "-1", inf is "inf")."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def vector_norm_checks(input: Any, p: Any, dims: list[Any], dtype: Any) -> None:
    """The checks of linalg.vector_norm, which torch.norm calls for a numeric ``p``: a
    floating or complex input, no negative or infinite order over an empty reduction, and
    ``dtype`` floating or complex, of the input's kind, not narrowing.

    >>> import tensordispatch as td
    >>> vector_norm_checks(td.zeros(3, dtype=td.int64), 2, [], None)
    Traceback (most recent call last):
    ...
    RuntimeError: linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long
    """
    from tensordispatch.backends.common import scalar_type_name
    from tensordispatch.tensor.dtypes import promote_types

    name = "linalg.vector_norm"
    given = input.dtype
    if not (given.is_floating_point or given.is_complex):
        raise RuntimeError(
            f"{name}: Expected a floating point or complex tensor as input. "
            f"Got {scalar_type_name(given)}"
        )
    if input.numel() == 0 and (p < 0 or p == float("inf")):
        if not dims:
            raise RuntimeError(
                f"{name} cannot compute the {_scalar_text(p)} norm on an empty tensor because "
                "the operation does not have an identity"
            )
        for d in dims:
            if input.size(d) == 0:  # torch prints the dim as given, and no space after it
                raise RuntimeError(
                    f"{name} cannot compute the {_scalar_text(p)} norm on the dimension {d}"
                    "because this dimension is empty and the operation does not have an "
                    "identity"
                )
    if dtype is None:
        return
    wanted = scalar_type_name(dtype)
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name}: dtype should be floating point or complex, but got {wanted}")
    if given.is_complex != dtype.is_complex:
        kind = "complex" if given.is_complex else "real"
        raise RuntimeError(f"{name}: dtype should be {kind} for {kind} inputs, but got {wanted}")
    if promote_types(given, dtype) is not dtype:
        raise RuntimeError(
            f"{name}: the dtype of the input ({scalar_type_name(given)}) should be "
            f"convertible without narrowing to the specified dtype ({wanted})"
        )


def conv1d(
    input: Any = REQUIRED, weight: Any = REQUIRED, bias: Any = None, stride: Any = 1,
    padding: Any = 0, dilation: Any = 1, groups: int = 1,
) -> Any:  # fmt: skip
    """torch.conv1d: a string ``padding`` ("valid", "same") selects conv1d.padding.

    >>> import tensordispatch as td
    >>> td.conv1d(td.ones(1, 1, 5), td.ones(1, 1, 2), padding="same").shape
    tensordispatch.Size([1, 1, 5])
    """
    overload = "conv1d.padding" if isinstance(padding, str) else "conv1d"
    try:
        return op(overload)(input, weight, bias, stride, padding, dilation, groups)
    except ArgumentTypeError:  # torch's parser matched no signature
        raise combination_error("conv1d", False) from None


def embedding_renorm_(input: Any, indices: Any, max_norm: float, norm_type: float) -> Any:
    """torch.embedding_renorm_ (torch binds it but not its autogen functional form): rows of
    ``input`` named in ``indices`` rescaled in place to at most ``max_norm``.

    >>> import tensordispatch as td
    >>> w = td.tensor([[3.0, 4.0], [0.3, 0.4]])
    >>> [round(v, 4) for v in td.embedding_renorm_(w, td.tensor([0, 1]), 1.0, 2.0)[0].tolist()]
    [0.6, 0.8]
    """
    return op("embedding_renorm_")(input, indices, max_norm, norm_type)


def conv2d(
    input: Any = REQUIRED, weight: Any = REQUIRED, bias: Any = None, stride: Any = 1,
    padding: Any = 0, dilation: Any = 1, groups: int = 1,
) -> Any:  # fmt: skip
    """torch.conv2d: a string ``padding`` ("valid", "same") selects conv2d.padding.

    >>> import tensordispatch as td
    >>> td.conv2d(td.ones(1, 1, 3, 3), td.ones(1, 1, 2, 2), padding="same").shape
    tensordispatch.Size([1, 1, 3, 3])
    """
    overload = "conv2d.padding" if isinstance(padding, str) else "conv2d"
    try:
        return op(overload)(input, weight, bias, stride, padding, dilation, groups)
    except ArgumentTypeError:  # torch's parser matched no signature
        raise combination_error("conv2d", False) from None
