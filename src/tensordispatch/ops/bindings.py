"""Hand-written Python bindings: names whose overloads the generated binding cannot choose
between (Note [Overload choice by presence] in codegen/gen_python.py).

codegen/model.py's PYTHON_FUNCTIONS / PYTHON_METHODS name them; the generated functions and
methods modules import them, so they are exported and installed like generated ones. Each
picks the ATen overload torch's Python argument parser would and calls its OpOverload with
only the arguments given.
"""

from __future__ import annotations

import sys
from typing import Any

from tensordispatch.backends.aten import below_ad_inplace_or_view as _below
from tensordispatch.backends.aten import op
from tensordispatch.backends.composite_fast_arange import arange as _arange_hop
from tensordispatch.backends.composite_fast_inplace import to as _to_hop
from tensordispatch.backends.structured import resize_output
from tensordispatch.dispatch.calling import NOT_GIVEN as _NO
from tensordispatch.dispatch.errors import ArgumentTypeError, binding_argument
from tensordispatch.dispatch.keyset import AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW
from tensordispatch.dispatch.tls import local_state
from tensordispatch.ops.binding_errors import (
    REQUIRED,
    called_as_method,
    combination_error,
    extra_arguments,
    missing_list,
    sequence_error,
)
from tensordispatch.tensor.device import CPU as _CPU
from tensordispatch.tensor.dtypes import dtype as DType
from tensordispatch.tensor.tensor import Tensor

__all__ = [
    "arange",
    "cat",
    "nonzero",
    "rand",
    "randint",
    "randn",
    "random_",
    "scatter",
    "scatter_",
    "split",
    "to",
    "uniform_",
]

_OPTION_NAMES = ("dtype", "layout", "device", "pin_memory")
_ST = local_state()
_BELOW_AD = AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW


def _options(**given: Any) -> dict[str, Any]:
    return {k: v for k, v in given.items() if v is not None}


def _number(value: Any) -> Any:
    return value.item() if isinstance(value, Tensor) else value


def _finish(result: Tensor, requires_grad: bool) -> Tensor:
    """``result`` made to require grad when asked, refusing a non-floating dtype in the
    words of torch's factory bindings (not those of ``requires_grad_``)."""
    if requires_grad:
        dt = result.dtype
        if not (dt.is_floating_point or dt.is_complex):
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients"
            )
        result.requires_grad_(True)
    return result


def arange(
    *args: Any, start: Any = _NO, end: Any = _NO, step: Any = _NO, out: Tensor | None = None,
    dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: Any = None,
    requires_grad: bool = False,
) -> Tensor:  # fmt: skip
    """torch.arange: ``arange(end)``, ``arange(start, end, step=1)``.

    >>> import tensordispatch as td
    >>> td.arange(5), td.arange(1, 2.5, 0.5)
    (tensor([0, 1, 2, 3, 4]), tensor([1.0000, 1.5000, 2.0000]))
    """
    if (
        start is _NO and end is _NO and step is _NO and out is None and layout is None
        and pin_memory is None
        and (device is None or device is _CPU or (type(device) is str and device == "cpu"))
    ):  # fmt: skip
        # the CPU device gives the BackendSelect key set and composite branch of none
        hopped = _arange_hop(args, dtype)  # Note [One-hop factory bindings]
        if hopped is not None:
            return _finish(hopped, requires_grad)
    given = {
        "start": start, "end": end, "step": step, "out": out, "dtype": dtype, "layout": layout,
        "device": device, "pin_memory": pin_memory, "requires_grad": requires_grad or None,
    }  # fmt: skip
    numbers = _arange_numbers(args, start, end, step)
    if numbers is None:
        raise _arange_error(args, given)
    values = [_number(a) for a in numbers]
    try:
        if out is not None:  # the overloads torch's binding picks: aten::arange for one number
            name = "arange.out" if len(values) == 1 else "arange.start_out"
            return op(name)._entry.entry_function(*values, out=out)  # type: ignore[no-any-return]
        opts = _options(dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)
        name = ("arange", "arange.start", "arange.start_step")[len(values) - 1]
        entry = op(name)._entry.entry_function  # called from here: a binding's call
        st = _ST
        saved = st.excluded
        st.excluded = saved | _BELOW_AD  # Note [Factories run below ADInplaceOrView]
        try:
            result = entry(*values, **opts)
        finally:
            st.excluded = saved
        return _finish(result, requires_grad)
    except ArgumentTypeError as e:
        raise _arange_type_error(e, args, given, len(values)) from None


def _arange_numbers(args: tuple[Any, ...], start: Any, end: Any, step: Any) -> list[Any] | None:
    """The numbers of an arange call in (start, end, step) order as torch's argument parser
    matches its three signatures ((end), (start, end), (start, end, step)), or None when none
    matches."""
    keywords = (start is not _NO, end is not _NO, step is not _NO)
    n = len(args)
    if n == 0:
        if keywords == (False, True, False):
            return [end]
        if keywords == (True, True, False):
            return [start, end]
        if keywords == (True, True, True):
            return [start, end, step]
    elif n == 1:
        if keywords == (False, False, False):
            return [args[0]]
        if keywords == (False, True, False):
            return [args[0], end]
        if keywords == (False, True, True):
            return [args[0], end, step]
    elif n == 2:
        if keywords == (False, False, False):
            return list(args)
        if keywords == (False, False, True):
            return [*args, step]
    elif n == 3 and keywords == (False, False, False):
        return list(args)
    return None


def _arange_error(args: tuple[Any, ...], given: dict[str, Any]) -> TypeError:
    """torch's TypeError for an arange call no signature takes (``given``: its keyword
    parameters, absent as NOT_GIVEN or None): "missing" for one keyword alone (only the
    ``(end)`` signature takes one argument), else "invalid combination" (worded by
    ops/binding_errors.py)."""
    from tensordispatch.ops.binding_errors import invalid_combination
    from tensordispatch.ops.python_signatures import PYTHON_SIGNATURES

    keywords = {k: v for k, v in sorted(given.items()) if v is not _NO and v is not None}
    if not args and len(keywords) == 1:  # only (end) takes one argument: it names its error
        return TypeError('arange() missing 1 required positional arguments: "end"')
    signatures = PYTHON_SIGNATURES[("arange", False)]
    return TypeError(invalid_combination("arange", signatures, list(args), keywords))


def _arange_type_error(
    error: ArgumentTypeError, args: tuple[Any, ...], given: dict[str, Any], count: int
) -> Exception:
    """torch's TypeError for an argument of an arange call its operator rejected (``count``
    numbers): the argument named when only ``(end)`` takes that many arguments, else
    "invalid combination"; ``error`` itself when it is about another operator."""
    from dataclasses import replace

    from tensordispatch.ops import binding_errors

    names = (("end",), ("start", "end"), ("start", "end", "step"))[count - 1]
    rejected = binding_argument("arange", error, names, False)
    if rejected is None:
        return error
    keywords = {k: v for k, v in sorted(given.items()) if v is not _NO and v is not None}
    signatures = binding_errors.PYTHON_SIGNATURES[("arange", False)]
    if binding_errors._plausible(signatures, len(args) + len(keywords)) != 1:
        text = binding_errors.invalid_combination("arange", signatures, list(args), keywords)
        return TypeError(text)
    return TypeError(replace(rejected, keyword=rejected.argument in keywords).message())


def cat(tensors: Any = REQUIRED, dim: int = 0, *_td_more: Any, out: Tensor | None = None) -> Tensor:
    """torch.cat: refuses an empty sequence in the binding, as torch's argument parser does
    (the dispatcher would find no tensor to dispatch on).

    >>> import tensordispatch as td
    >>> td.cat([td.ones(1), td.zeros(2)])
    tensor([1., 0., 0.])
    """
    if _td_more:  # Note [Functions count their arguments] in codegen/python_errors.py
        raise extra_arguments("cat", False)
    try:
        tensors = list(tensors)
    except TypeError:  # left out (REQUIRED) or no sequence: torch's texts
        raise sequence_error("cat", "tensors", "tuple of Tensors") from None
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    if out is not None:
        return op("cat.out")(tensors, dim, out=out)  # type: ignore[no-any-return]
    return op("cat")(tensors, dim)  # type: ignore[no-any-return]


def nonzero(
    input: Tensor, *, out: Tensor | None = None, as_tuple: bool = False
) -> Tensor | tuple[Tensor, ...]:
    """torch.nonzero / Tensor.nonzero: coordinates as rows, or with ``as_tuple`` one index
    tensor per dim (a 0-dim input counts as 1-dim).

    >>> import tensordispatch as td
    >>> td.nonzero(td.tensor([[1, 0], [0, 1]]), as_tuple=True)
    (tensor([0, 1]), tensor([0, 1]))
    """
    if not as_tuple:
        if out is not None:
            return op("nonzero.out")(input, out=out)  # type: ignore[no-any-return]
        return op("nonzero")(input)  # type: ignore[no-any-return]
    source = input if input.dim() else op("unsqueeze")(input, 0)
    return tuple(op("unbind.int")(op("nonzero")(source), 1))


def _size(args: tuple[Any, ...], size: Any, name: str) -> list[int]:
    if size is not _NO:
        if args:
            raise TypeError("got multiple values for argument 'size'")
        return [int(s) for s in size]
    if len(args) == 1 and not isinstance(args[0], int):
        return [int(s) for s in args[0]]
    if not args:  # torch's parser text (Note [Size lists given as varargs])
        raise missing_list(name, "size", False, sys._getframe(1))
    return [int(s) for s in args]


def _random_factory(name: str, fill: str) -> Any:
    def factory(
        *args: Any, size: Any = _NO, generator: Any = None, out: Tensor | None = None,
        dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: Any = None,
        requires_grad: bool = False,
    ) -> Tensor:  # fmt: skip
        shape = _size(args, size, name)
        if out is not None:
            resize_output(out, tuple(shape))
            return op(fill)(out, 0.0, 1.0, generator=generator)  # type: ignore[no-any-return]
        opts = _options(dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)
        if generator is None:
            return _finish(_below(op(name), shape, **opts), requires_grad)
        result = _below(op(f"{name}.generator"), shape, generator=generator, **opts)
        return _finish(result, requires_grad)

    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = f"torch.{name}(*size, generator=None, out=None, dtype=None, ...)"
    return factory


rand = _random_factory("rand", "uniform_")
randn = _random_factory("randn", "normal_")


def randint(
    *args: Any, low: Any = _NO, high: Any = _NO, size: Any = _NO, generator: Any = None,
    out: Tensor | None = None, dtype: Any = None, layout: Any = None, device: Any = None,
    pin_memory: Any = None, requires_grad: bool = False,
) -> Tensor:  # fmt: skip
    """torch.randint: ``randint(high, size)`` or ``randint(low, high, size)``; int64 default.

    >>> import tensordispatch as td
    >>> td.randint(3, 5, (4,)).tolist() in [[a, b, c, d] for a in (3, 4) for b in (3, 4)
    ...     for c in (3, 4) for d in (3, 4)]
    True
    """
    rest = list(args)
    if size is _NO:
        if not rest:
            raise TypeError("randint() missing required argument 'size'")
        size = rest.pop()
    if high is _NO:
        if not rest:
            raise TypeError("randint() missing required argument 'high'")
        high = rest.pop()
    if low is _NO:
        low = rest.pop() if rest else 0
    if rest:
        raise TypeError("randint() takes at most 3 positional arguments (low, high, size)")
    shape = [int(s) for s in size]
    if out is not None:
        resize_output(out, tuple(shape))
        return op("random_.from")(out, low, high, generator=generator)  # type: ignore[no-any-return]
    opts = _options(dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)
    if generator is None:
        return _finish(_below(op("randint.low"), low, high, shape, **opts), requires_grad)
    result = _below(op("randint.low_generator"), low, high, shape, generator=generator, **opts)
    return _finish(result, requires_grad)


def _scatter_overload(base: str, value: Any, src: Any, reduce: Any) -> tuple[str, Any]:
    if (value is _NO) == (src is _NO):  # no signature of torch's takes both or neither
        raise ArgumentTypeError(f"{base}(): pass exactly one of src or value")
    source = src if src is not _NO else value
    kind = "src" if isinstance(source, Tensor) else "value"
    if reduce is not None:
        kind = "reduce" if kind == "src" else "value_reduce"
    return f"{base}.{kind}", source


def scatter(
    input: Tensor = REQUIRED, dim: int = REQUIRED, index: Tensor = REQUIRED, src: Any = _NO, *,
    value: Any = _NO, reduce: Any = None, out: Tensor | None = None,
) -> Tensor:  # fmt: skip
    """torch.scatter / Tensor.scatter: the src, value, reduce and value_reduce overloads."""
    try:
        name, source = _scatter_overload("scatter", value, src, reduce)
        kw: dict[str, Any] = {} if reduce is None else {"reduce": reduce}
        if out is not None:
            name += "_out"
            return op(name)(input, dim, index, source, out=out, **kw)  # type: ignore[no-any-return]
        return op(name)(input, dim, index, source, **kw)  # type: ignore[no-any-return]
    except ArgumentTypeError:  # torch's parser matched no signature
        raise combination_error("scatter", called_as_method(sys._getframe())) from None


def scatter_(
    self: Tensor, dim: int = REQUIRED, index: Tensor = REQUIRED, src: Any = _NO, *,
    value: Any = _NO, reduce: Any = None,
) -> Tensor:  # fmt: skip
    """Tensor.scatter_: the in-place overloads."""
    try:
        name, source = _scatter_overload("scatter_", value, src, reduce)
        kw: dict[str, Any] = {} if reduce is None else {"reduce": reduce}
        return op(name)(self, dim, index, source, **kw)  # type: ignore[no-any-return]
    except ArgumentTypeError:  # torch's parser matched no signature
        raise combination_error("scatter_", True) from None


def split(tensor: Tensor, split_size_or_sections: Any = _NO, dim: int = 0, *,
          split_size: Any = _NO) -> tuple[Tensor, ...]:  # fmt: skip
    """torch.split / Tensor.split: an int size (split.Tensor) or a list of sizes
    (split_with_sizes); returns a tuple of views.

    >>> import tensordispatch as td
    >>> [t.tolist() for t in td.split(td.arange(5), [2, 3])]
    [[0, 1], [2, 3, 4]]
    """
    size = split_size_or_sections if split_size_or_sections is not _NO else split_size
    if isinstance(size, int) or (isinstance(size, Tensor) and size.dim() == 0):
        return tuple(op("split.Tensor")(tensor, int(size), dim))
    if size is _NO:  # torch's split is a Python function: Python's texts, its names
        method = called_as_method(sys._getframe())
        name, missing = (
            ("Tensor.split", "split_size") if method else ("split", "split_size_or_sections")
        )
        raise TypeError(f"{name}() missing 1 required positional argument: '{missing}'")
    return tuple(op("split_with_sizes")(tensor, [int(s) for s in size], dim))


def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Tensor.to(dtype | device[, dtype] | other, non_blocking=False, copy=False, *,
    memory_format=None), or by keywords; returns self when nothing changes.

    >>> import tensordispatch as td
    >>> t = td.ones(2); t.to(td.float32) is t, t.to("meta").device, t.to(td.int64).dtype
    (True, device(type='meta'), tensordispatch.int64)
    """
    if len(args) == 1 and not kwargs:
        same = _to_hop(self, args[0])  # Note [One-hop Tensor.to]
        if same is not None:
            return same
    rest = list(args)
    if rest and isinstance(rest[0], Tensor):
        return op("to.other")(self, *rest, **kwargs)  # type: ignore[no-any-return]
    if rest and isinstance(rest[0], DType):
        return op("to.dtype")(self, *rest, **kwargs)  # type: ignore[no-any-return]
    device = rest.pop(0) if rest else kwargs.pop("device", None)
    dtype = rest.pop(0) if rest and isinstance(rest[0], DType) else kwargs.pop("dtype", None)
    for name, value in zip(("non_blocking", "copy"), rest, strict=False):
        kwargs[name] = value
    if device is not None:
        kwargs["device"] = device
    if dtype is not None:
        kwargs["dtype"] = dtype
    return op("to.dtype_layout")(self, **kwargs)  # type: ignore[no-any-return]


def uniform_(self: Tensor, *args: Any, generator: Any = None, **kwargs: Any) -> Tensor:
    """Tensor.uniform_(from=0, to=1, *, generator=None)."""
    bounds = list(args)
    if "from" in kwargs:
        bounds[:1] = [kwargs.pop("from")]
    if "to" in kwargs:
        bounds = (bounds or [0.0])[:1] + [kwargs.pop("to")]
    if kwargs:
        raise TypeError(f"uniform_() got unexpected keyword arguments {sorted(kwargs)}")
    return op("uniform_")(self, *bounds, generator=generator)  # type: ignore[no-any-return]


def random_(self: Tensor, *args: Any, generator: Any = None) -> Tensor:
    """Tensor.random_(), random_(to), random_(from, to)."""
    if len(args) == 1:
        return op("random_.to")(self, args[0], generator=generator)  # type: ignore[no-any-return]
    low, high = args if args else (0, None)
    return op("random_.from")(self, low, high, generator=generator)  # type: ignore[no-any-return]
