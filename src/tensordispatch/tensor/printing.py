"""Printing tensors exactly as torch 2.13 prints the same values.

`tensor_repr` reproduces torch's layout rules: one formatter per tensor (per real and
imaginary part for complex) chooses integer mode (`1.`), fixed notation with `precision`
digits or scientific notation from the nonzero finite values; every element is padded to
the widest; rows wrap at `linewidth`; tensors above `threshold` elements are summarized with
`...` keeping `edgeitems` at each end; suffixes name what the values do not show (device,
a dtype other than the defaults, size for empty and meta tensors, requires_grad/grad_fn).

Where we differ from torch: the dtype suffix names our module (`dtype=tensordispatch.int32`
where torch prints `dtype=torch.int32`), so that what is printed is what you would type;
the rest of each string is identical. It reads values straight from NumPy (no operators),
so printing never dispatches.

Note [Print options are process-global]
As in torch, `set_printoptions` changes one process-wide setting; `printoptions(...)` is the
context manager that restores the previous options in `finally`.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from tensordispatch.tensor import dtypes

__all__ = ["PrintOptions", "get_printoptions", "printoptions", "set_printoptions", "tensor_repr"]


@dataclass(frozen=True, slots=True)
class PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


_PROFILES = {
    "default": PrintOptions(),
    "short": PrintOptions(precision=2, edgeitems=2),
    "full": PrintOptions(threshold=math.inf),
}

_options = PrintOptions()


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set how tensors print, like ``torch.set_printoptions``.

    `profile` ('default', 'short', 'full') resets the four numeric options first; the other
    arguments then override them. `sci_mode` is always set (None: decide per tensor).

    >>> import tensordispatch.tensor as tdt
    >>> set_printoptions(precision=2); tdt.tensor([1.23456, 2.0])
    tensor([1.23, 2.00])
    >>> set_printoptions(profile="default")
    """
    global _options
    options = _options
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(
                f"set_printoptions(profile={profile!r}): unknown profile; "
                f"expected one of {', '.join(_PROFILES)}"
            )
        options = replace(_PROFILES[profile], sci_mode=options.sci_mode)
    changes: dict[str, Any] = {"sci_mode": sci_mode}
    for name, value in (
        ("precision", precision),
        ("threshold", threshold),
        ("edgeitems", edgeitems),
        ("linewidth", linewidth),
    ):
        if value is not None:
            changes[name] = value
    _options = replace(options, **changes)


def get_printoptions() -> dict[str, Any]:
    """The current print options as a dict.

    >>> get_printoptions()["precision"]
    4
    """
    o = _options
    return {
        "precision": o.precision,
        "threshold": o.threshold,
        "edgeitems": o.edgeitems,
        "linewidth": o.linewidth,
        "sci_mode": o.sci_mode,
    }


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Apply `set_printoptions(**kwargs)` inside a ``with`` block only.

    >>> import tensordispatch.tensor as tdt
    >>> with printoptions(sci_mode=True):
    ...     tdt.tensor([1.5])
    tensor([1.5000e+00])
    """
    global _options
    previous = _options
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        _options = previous


class _Formatter:
    """Chooses one notation and width for all values of a (summarized) array."""

    def __init__(self, values: np.ndarray[Any, Any], floating: bool, opts: PrintOptions) -> None:
        self.floating = floating
        self.precision = opts.precision
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(f"{v}"))
            return
        finite = flat[np.isfinite(flat) & (flat != 0)]
        if finite.size == 0:
            return  # torch leaves the defaults (even a forced sci_mode) in this case
        magnitudes = np.abs(finite).astype(np.float64)
        smallest, largest = float(magnitudes.min()), float(magnitudes.max())
        vals = finite.tolist()
        self.int_mode = all(v == math.ceil(v) for v in vals)
        if opts.sci_mode is None:
            self.sci_mode = largest / smallest > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4
        else:
            self.sci_mode = opts.sci_mode
        if self.sci_mode:
            spec = f".{self.precision}e"
            self.max_width = max(self.max_width, *(len(format(v, spec)) for v in vals))
        elif self.int_mode:  # integer-valued floats print as `1.`: one more character
            self.max_width = max(self.max_width, *(len(f"{v:.0f}") + 1 for v in vals))
        else:
            spec = f".{self.precision}f"
            self.max_width = max(self.max_width, *(len(format(v, spec)) for v in vals))

    def format(self, value: Any) -> str:
        if not self.floating:
            text = f"{value}"
        elif self.sci_mode:
            text = format(value, f"{self.max_width}.{self.precision}e")
        elif self.int_mode:
            text = f"{value:.0f}"
            if not (math.isinf(value) or math.isnan(value)):
                text += "."
        else:
            text = format(value, f".{self.precision}f")
        return (self.max_width - len(text)) * " " + text


_Formatters = tuple[_Formatter, "_Formatter | None"]


def _complex_text(value: complex, fmt: _Formatters) -> str:
    real = fmt[0].format(value.real)
    imag = (fmt[1].format(value.imag) + "j").lstrip()  # type: ignore[union-attr]
    if imag[0] in "+-":
        return real + imag
    return real + "+" + imag


def _summarized(values: np.ndarray[Any, Any], edge: int) -> np.ndarray[Any, Any]:
    """The elements a summarized print shows (edge items of every dim)."""
    if values.ndim == 0:
        return values
    if values.ndim == 1:
        if values.shape[0] > 2 * edge:
            return np.concatenate((values[:edge], values[values.shape[0] - edge :]))
        return values
    if not edge:
        return np.empty((0,) * values.ndim, values.dtype)
    n = values.shape[0]
    rows = list(range(edge)) + list(range(n - edge, n)) if n > 2 * edge else range(n)
    return np.stack([_summarized(values[i], edge) for i in rows])


def _vector_str(
    values: np.ndarray[Any, Any], indent: int, summarize: bool, fmt: _Formatters, o: PrintOptions
) -> str:
    element_length = fmt[0].max_width + 2
    if fmt[1] is not None:
        element_length += fmt[1].max_width + 1
    per_line = max(1, math.floor((o.linewidth - indent) / element_length))

    def text(v: Any) -> str:
        return _complex_text(v, fmt) if fmt[1] is not None else fmt[0].format(v)

    n, edge = values.shape[0], o.edgeitems
    if summarize and not edge:
        data = ["..."]
    elif summarize and n > 2 * edge:
        data = [text(v) for v in values[:edge].tolist()] + [" ..."]
        data += [text(v) for v in values[n - edge :].tolist()]
    else:
        data = [text(v) for v in values.tolist()]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(
    values: np.ndarray[Any, Any], indent: int, summarize: bool, fmt: _Formatters, o: PrintOptions
) -> str:
    ndim = values.ndim
    if ndim == 0:
        v = values.item()
        return _complex_text(v, fmt) if fmt[1] is not None else fmt[0].format(v)
    if ndim == 1:
        return _vector_str(values, indent, summarize, fmt, o)
    n, edge = values.shape[0], o.edgeitems
    if summarize and n > 2 * edge:
        slices = [_nested_str(values[i], indent + 1, summarize, fmt, o) for i in range(edge)]
        slices.append("...")
        slices += [
            _nested_str(values[i], indent + 1, summarize, fmt, o) for i in range(n - edge, n)
        ]
    else:
        slices = [_nested_str(values[i], indent + 1, summarize, fmt, o) for i in range(n)]
    return "[" + ("," + "\n" * (ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _values_str(values: np.ndarray[Any, Any], dtype: dtypes.dtype, indent: int) -> str:
    o = _options
    if values.size == 0:
        return "[]"
    summarize = values.size > o.threshold
    shown = _summarized(values, o.edgeitems) if summarize else values
    fmt: _Formatters
    if dtype.is_complex:
        fmt = (_Formatter(shown.real, True, o), _Formatter(shown.imag, True, o))
    else:
        fmt = (_Formatter(shown, dtype.is_floating_point, o), None)
    return _nested_str(values, indent, summarize, fmt, o)


def _add_suffixes(text: str, suffixes: list[str], indent: int, linewidth: int) -> str:
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _grad_fn_name(grad_fn: Any) -> str:
    name = getattr(grad_fn, "name", None)
    if callable(name):
        return str(name()).rsplit("::", 1)[-1]
    return type(grad_fn).__name__


def tensor_repr(t: Any) -> str:
    """torch's repr of tensor `t`, with `tensordispatch.` in the dtype suffix.

    >>> import tensordispatch.tensor as tdt
    >>> tdt.tensor([[1, 2], [3, 4]], dtype=tdt.int32)
    tensor([[1, 2],
            [3, 4]], dtype=tensordispatch.int32)
    >>> tdt.tensor([1e-5, 1.0], requires_grad=True)
    tensor([1.0000e-05, 1.0000e+00], requires_grad=True)
    """
    from tensordispatch.tensor.tensor import Tensor

    prefix = "tensor(" if type(t) is Tensor else f"{type(t).__name__}("
    indent = len(prefix)
    suffixes: list[str] = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    default = dtypes.get_default_dtype()
    values = t._values_for_print()
    if values is None:
        suffixes.append(f"size={tuple(t._shape)}")
        if t.dtype is not default:
            suffixes.append(f"dtype={t.dtype!r}")
        body = "..."
    elif values.size == 0:
        if values.ndim != 1:
            suffixes.append(f"size={tuple(t._shape)}")
        if t.dtype is not default:
            suffixes.append(f"dtype={t.dtype!r}")
        body = "[]"
    else:
        if not _options.edgeitems:
            suffixes.append(f"size={tuple(t._shape)}")
        usual = (default, dtypes.get_default_complex_dtype(), dtypes.int64, dtypes.bool)
        if t.dtype not in usual:
            suffixes.append(f"dtype={t.dtype!r}")
        body = _values_str(values, t.dtype, indent)
    try:
        grad_fn = t.grad_fn
        name = None if grad_fn is None else _grad_fn_name(grad_fn)
    except RuntimeError:  # a view whose regenerated grad_fn is refused (torch prints this)
        name = "Invalid"
    if name is not None:
        suffixes.append(f"grad_fn=<{name}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent, _options.linewidth)
