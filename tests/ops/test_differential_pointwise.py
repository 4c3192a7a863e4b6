"""Differential property tests of pointwise operators against torch 2.13: every dtype, Python
numbers on either side (promotion, wrapped numbers, integer corner cases, overflow), 0-dim,
empty, broadcast, transposed, strided and expanded (stride-0) operands, in-place and out=
forms (resize, can't-cast), comparing value, dtype, shape, strides and errors.

Left out on purpose: float16 meeting a complex 0-dim tensor or number (torch computes in
complex32, which we do not have: dtypes.py), and lt/le/gt/ge on complex (REQUESTS.md, to P5:
strict xfail in test_differential_errors.py)."""

from __future__ import annotations

from typing import Any

import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.ops.differential import DTYPES, compare, make, operand, run

BINARY = ["add", "sub", "mul", "div", "remainder", "floor_divide", "pow", "maximum", "minimum",
          "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
          "bitwise_right_shift", "eq", "ne", "logical_and", "logical_or", "logical_xor",
          "div_trunc", "div_floor"]  # fmt: skip
ORDERED = ["lt", "le", "gt", "ge"]
WITH_NUMBERS = ["add", "sub", "mul", "div", "remainder", "floor_divide", "pow", "bitwise_and",
                "bitwise_xor", "eq", "ne", "rsub"]  # fmt: skip
DUNDERS = ["+", "-", "*", "/", "%", "//", "**", "&", "|", "^", "<<", ">>", "==", "<"]
NUMBERS = [True, False, 0, 3, -2, 2.5, -0.0, 1 + 2j, 2**40, -(2**63), float("inf"), float("nan")]
UNARY = ["abs", "neg", "sign", "exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "sigmoid",
         "erf", "expm1", "log1p", "rsqrt", "reciprocal", "floor", "ceil", "round",
         "bitwise_not", "logical_not", "relu"]  # fmt: skip
IN_PLACE_BINARY = ["add", "sub", "mul", "div", "remainder", "floor_divide", "pow",
                   "bitwise_and", "bitwise_left_shift", "eq", "logical_and"]  # fmt: skip


def _call(lib: Any, name: str, x: Any, y: Any, **kwargs: Any) -> Any:
    if name.startswith("div_"):
        return lib.div(x, y, rounding_mode=name[4:], **kwargs)
    return getattr(lib, name)(x, y, **kwargs)


def _complex32(*dtypes: Any) -> bool:
    """torch would compute in complex32: float16 with a complex operand."""
    names = [d if isinstance(d, str) else type(d).__name__ for d in dtypes]
    return "float16" in names and any(n.startswith("complex") for n in names)


def _is_inf(number: Any) -> bool:
    return isinstance(number, float) and number in (float("inf"), float("-inf"))


def _ordered_complex(name: str, *dtypes: Any) -> bool:
    names = [d if isinstance(d, str) else type(d).__name__ for d in dtypes]
    return name in ORDERED + ["<"] and any(n.startswith("complex") for n in names)


@settings(max_examples=250)
@given(operand(), operand(), st.sampled_from(BINARY + ORDERED))
def test_binary_ops_match_torch(a: Any, b: Any, name: str) -> None:
    assume(not _complex32(a[0], b[0]) and not _ordered_complex(name, a[0], b[0]))
    expected, got = run(lambda lib: _call(lib, name, make(lib, a), make(lib, b)))
    compare(expected, got, f"{name}({a}, {b})", (a[0], b[0]))


@settings(max_examples=200)
@given(operand(), st.sampled_from(WITH_NUMBERS), st.sampled_from(NUMBERS))
def test_binary_ops_with_a_number_match_torch(a: Any, name: str, number: Any) -> None:
    assume(not _complex32(a[0], number))
    assume(not (_is_inf(number) and a[0].startswith("complex")))  # xfail: ..._errors.py
    expected, got = run(lambda lib: _call(lib, name, make(lib, a), number))
    compare(expected, got, f"{name}({a}, {number!r})", (a[0],))


@settings(max_examples=200)
@given(operand(), st.sampled_from(DUNDERS), st.sampled_from(NUMBERS), st.booleans())
def test_operators_with_a_number_on_either_side_match_torch(
    a: Any, symbol: str, number: Any, reflected: bool
) -> None:
    assume(not _complex32(a[0], number) and not _ordered_complex(symbol, a[0], number))
    assume(not (_is_inf(number) and a[0].startswith("complex")))
    # a huge number ** complex64 differs from torch in the last digits (its complex pow)
    assume(not (reflected and symbol == "**" and a[0] == "complex64"))
    expr = f"y {symbol} x" if reflected else f"x {symbol} y"
    expected, got = run(lambda lib: eval(expr, {"x": make(lib, a), "y": number}))
    compare(expected, got, f"{expr}: x={a}, y={number!r}", (a[0],))


@settings(max_examples=200)
@given(operand(), operand(), st.sampled_from(IN_PLACE_BINARY), st.booleans())
def test_in_place_ops_match_torch(a: Any, b: Any, name: str, with_number: bool) -> None:
    """Can't-cast and broadcast-self errors in torch's order; self's strides are kept."""
    assume(not _complex32(a[0], b[0]))
    assume(a[2] != "expanded")  # torch's internal-overlap error: covered by the overlap tests
    assume(not (with_number and name == "logical_and"))  # Tensor-only: a binding TypeError

    def fn(lib: Any) -> Any:
        x = make(lib, a)
        y = 3 if with_number else make(lib, b)
        result = getattr(x, f"{name}_")(y)
        return result, result is x

    expected, got = run(fn)
    compare(expected, got, f"{a}.{name}_({3 if with_number else b})", (a[0], b[0]))


OUT_SHAPES = ["empty", "exact", "one", "wrong", "transposed"]


def _out(lib: Any, dtype: str, kind: str, shape: tuple[int, ...]) -> Any:
    dt = getattr(lib, dtype)
    if kind == "empty":
        return lib.empty(0, dtype=dt)
    if kind == "one":
        return lib.empty(1, dtype=dt)
    if kind == "wrong":
        return lib.empty(5, 2, dtype=dt)
    if kind == "transposed" and len(shape) == 2:
        return lib.empty(shape[::-1], dtype=dt).t()
    return lib.empty(shape, dtype=dt)


@settings(max_examples=200)
@given(operand(), operand(), st.sampled_from(BINARY), st.sampled_from(DTYPES),
       st.sampled_from(OUT_SHAPES))  # fmt: skip
def test_out_variants_match_torch(a: Any, b: Any, name: str, out_dtype: str, kind: str) -> None:
    """out= of any dtype and shape: the can't-cast check, resizing, strides, the result."""
    assume(not _complex32(a[0], b[0]))

    def fn(lib: Any) -> Any:
        x, y = make(lib, a), make(lib, b)
        shape = tuple(torch.broadcast_shapes(tuple(x.shape), tuple(y.shape)))
        out = _out(lib, out_dtype, kind, shape)
        result = _call(lib, name, x, y, out=out)
        return result, result is out

    expected, got = run(fn)
    compare(expected, got, f"{name}({a}, {b}, out={out_dtype} {kind})", (a[0], b[0], out_dtype))


@settings(max_examples=200)
@given(operand(), st.sampled_from(UNARY), st.sampled_from([None, *DTYPES]),
       st.sampled_from(OUT_SHAPES))  # fmt: skip
def test_unary_ops_and_their_out_forms_match_torch(
    a: Any, name: str, out_dtype: str | None, kind: str
) -> None:
    assume(not (name == "abs" and a[0] == "bool" and out_dtype))  # strict xfail: ..._errors.py

    def fn(lib: Any) -> Any:
        x = make(lib, a)
        if out_dtype is None:
            return getattr(lib, name)(x)
        out = _out(lib, out_dtype, kind, tuple(x.shape))
        result = getattr(lib, name)(x, out=out)
        return result, result is out

    expected, got = run(fn)
    # integers compute in float32 (NumPy and torch float32 exp/sin may differ by an ulp)
    computed = "float32" if a[0] in DTYPES[:6] else a[0]
    compare(expected, got, f"{name}({a}, out={out_dtype} {kind})", (computed, out_dtype or ""))


BOUNDS = [None, 0, -1.5, 2, True, 1 + 1j]


@settings(max_examples=150)
@given(operand(), operand(), operand(["bool"]), st.sampled_from(BOUNDS),
       st.sampled_from(BOUNDS), st.integers(0, 5))  # fmt: skip
def test_where_clamp_lerp_addcmul_match_torch(
    a: Any, b: Any, cond: Any, lo: Any, hi: Any, which: int
) -> None:
    assume(not _complex32(a[0], b[0], lo, hi))

    def fn(lib: Any) -> Any:
        x, y = make(lib, a), make(lib, b)
        if which == 0:
            return lib.where(make(lib, cond), x, y)
        if which == 1:
            return lib.where(make(lib, cond), x, 2.5 if lo is None else lo)
        if which == 2:
            return lib.clamp(x, lo, hi)
        if which == 3:
            return x.clone().clamp_(lo, hi), lib.clamp(x, min=y)
        if which == 4:
            return lib.lerp(x, y.to(x.dtype), 0.25), lib.lerp(x, x, y)
        return lib.addcmul(x, y, x, value=2), lib.addcdiv(x, y, y, value=-1)

    expected, got = run(fn)
    compare(expected, got, f"case {which}: {a}, {b}, cond={cond}, lo={lo!r}, hi={hi!r}",
            (a[0], b[0]))  # fmt: skip
