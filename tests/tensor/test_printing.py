"""repr/str of tensors against torch 2.13's, on a table of cases and on random values."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tensordispatch.tensor as tdt
from tensordispatch.tensor.tensor import Tensor

nan, inf = math.nan, math.inf


SUFFIX_BREAK = re.compile(r",\n *(?=(?:dtype|requires_grad|device|size|grad_fn)=)")


def unwrap_suffixes(text: str) -> str:
    """Join suffixes that were moved to their own line: our dtype suffix is 8 characters
    longer than torch's (`tensordispatch.` vs `torch.`), so where the suffixes break can
    differ; test_suffixes_wrap_* check the breaking itself."""
    return SUFFIX_BREAK.sub(", ", text)


def expected_repr(theirs: torch.Tensor) -> str:
    """torch's string with our module name in the dtype suffix (the one documented change)."""
    return unwrap_suffixes(repr(theirs).replace("dtype=torch.", "dtype=tensordispatch."))


def normalized(ours: object) -> str:
    return unwrap_suffixes(repr(ours))


def both(array: np.ndarray) -> tuple[Tensor, torch.Tensor]:
    return tdt.tensor(array), torch.tensor(array)


CASES: dict[str, np.ndarray] = {
    "float-vector": np.array([1.0, 2.0], np.float32),
    "float-fraction": np.array([1.5, -2.25, 3.0], np.float32),
    "precision-4": np.array([1.23456789, 2.0], np.float32),
    "int64": np.array([1, -20, 300]),
    "int32": np.array([1, 2], np.int32),
    "uint8": np.array([0, 255], np.uint8),
    "int8": np.array([-128, 7], np.int8),
    "int16": np.array([[1, -2], [3, 4]], np.int16),
    "bool": np.array([True, False, True]),
    "bool-2d": np.array([[True], [False]]),
    "float64": np.array([0.1, 0.2], np.float64),
    "float16": np.array([0.1, 1000.0, 3.5], np.float16),
    "sci-small": np.array([1e-5, 1.0], np.float32),
    "sci-large": np.array([1e10, 1.0], np.float32),
    "sci-ratio": np.array([0.5, 5000.0], np.float32),
    "int-valued-large": np.array([1e9, 1.0], np.float64),
    "int-valued-ratio": np.array([1.0, 2000.0], np.float32),
    "int-valued": np.array([-1.0, 100.0, 0.0], np.float32),
    "nan-inf": np.array([nan, inf, -inf, 1.0], np.float32),
    "nan-inf-fraction": np.array([nan, 1.5, -inf], np.float32),
    "nan-inf-sci": np.array([nan, 1e-8, inf], np.float32),
    "only-nan": np.array([nan], np.float32),
    "zeros": np.zeros(4, np.float32),
    "negative-zero": np.array([-0.0, 0.0], np.float32),
    "wide-row": np.arange(30, dtype=np.float32) * 1.5,
    "wide-int-row": np.arange(100),
    "long-float-row": np.linspace(-1, 1, 40).astype(np.float32),
    "matrix": np.arange(6, dtype=np.float32).reshape(2, 3),
    "3d": np.arange(12, dtype=np.float32).reshape(2, 2, 3),
    "4d": np.arange(8).reshape(2, 1, 2, 2),
    "wide-matrix": np.arange(60, dtype=np.float64).reshape(2, 30) / 7,
    "summarized-vector": np.arange(2000, dtype=np.float32),
    "summarized-1001": np.arange(1001),
    "summarized-matrix": np.arange(2500, dtype=np.float32).reshape(50, 50) / 3,
    "summarized-3d": np.arange(2000).reshape(10, 10, 20),
    "summarized-short-dim": np.arange(1200, dtype=np.float32).reshape(2, 600),
    "summarized-sci": np.logspace(-10, 10, 1500).astype(np.float32),
    "complex64": np.array([1 + 2j, -3.5 - 0.5j], np.complex64),
    "complex128": np.array([[1 + 1j, 0], [1e-6j, 2]], np.complex128),
    "complex-nan": np.array([complex(nan, 1), complex(1, -inf)], np.complex64),
    "complex-negative-zero-imag": np.array([complex(1, -0.0)], np.complex64),
    "complex-summarized": (np.arange(1500) * (1 + 1j)).astype(np.complex64),
    "zero-dim-float": np.array(3.5, np.float32),
    "zero-dim-int-valued": np.array(3.0, np.float32),
    "zero-dim-int": np.array(7),
    "zero-dim-bool": np.array(False),
    "zero-dim-float64": np.array(1e-7, np.float64),
    "zero-dim-complex": np.array(-1j, np.complex64),
    "zero-dim-nan": np.array(nan, np.float32),
    "empty": np.zeros(0, np.float32),
    "empty-2d": np.zeros((0, 3), np.float32),
    "empty-3d-int": np.zeros((2, 0, 1), np.int64),
    "empty-int32": np.zeros(0, np.int32),
    "empty-float64": np.zeros((0,), np.float64),
}


@pytest.mark.parametrize("name", list(CASES))
def test_repr_matches_torch(name: str) -> None:
    ours, theirs = both(CASES[name])
    assert normalized(ours) == expected_repr(theirs)
    assert str(ours) == repr(ours)


@pytest.mark.parametrize("name", ["float-vector", "int64", "complex64", "zero-dim-float", "empty"])
def test_requires_grad_suffix_matches_torch(name: str) -> None:
    array = CASES[name].astype(np.complex64 if "complex" in name else np.float64)
    ours = tdt.tensor(array, requires_grad=True)
    theirs = torch.tensor(array, requires_grad=True)
    assert normalized(ours) == expected_repr(theirs)


@pytest.mark.parametrize("width", [6, 7, 8, 9, 10, 11])
def test_suffixes_wrap_past_linewidth_like_torch(width: int) -> None:
    # float32 prints no dtype suffix, so the strings must be identical, line breaks included
    array = np.arange(2 * width, dtype=np.float32).reshape(2, width) / 3
    ours = tdt.tensor(array, requires_grad=True)
    theirs = torch.tensor(array, requires_grad=True)
    assert repr(ours) == repr(theirs)


def test_suffixes_wrap_for_meta_like_torch() -> None:
    ours = Tensor._make_meta((2, 3), None, tdt.float32).requires_grad_()
    theirs = torch.empty(2, 3, device="meta", requires_grad=True)
    with tdt.printoptions(linewidth=40):
        ours_text = repr(ours)
    torch.set_printoptions(linewidth=40)
    try:
        assert ours_text == repr(theirs)
    finally:
        torch.set_printoptions(profile="default")


def test_long_dtype_suffix_moves_to_its_own_line() -> None:
    array = np.array([[1 + 1j, 0], [1e-6j, 2]], np.complex128)
    with tdt.printoptions(precision=8):
        text = repr(tdt.tensor(array))
    assert text == (
        "tensor([[1.+1.00000000e+00j, 0.+0.00000000e+00j],\n"
        "        [0.+1.00000000e-06j, 2.+0.00000000e+00j]],\n"
        "       dtype=tensordispatch.complex128)"
    )


class FakeNode:
    def name(self) -> str:
        return "torch::autograd::AddBackward0"


def test_grad_fn_suffix_uses_the_node_name() -> None:
    ours = tdt.tensor([1.0, 2.0])
    ours.grad_fn = FakeNode()
    theirs = torch.tensor([1.0, 2.0], requires_grad=True) + 0
    assert normalized(ours) == expected_repr(theirs)


@pytest.mark.parametrize(
    ("shape", "name"),
    [((2, 3), "float32"), ((), "float32"), ((4,), "int64"), ((0, 2), "float64"), ((1,), "bool")],
)
def test_meta_repr_matches_torch(shape: tuple[int, ...], name: str) -> None:
    ours = Tensor._make_meta(shape, None, getattr(tdt, name))
    theirs = torch.empty(shape, dtype=getattr(torch, name), device="meta")
    assert normalized(ours) == expected_repr(theirs)


def test_meta_requires_grad_matches_torch() -> None:
    ours = Tensor._make_meta((2,), None, tdt.float32).requires_grad_()
    theirs = torch.empty(2, device="meta", requires_grad=True)
    assert normalized(ours) == expected_repr(theirs)


@pytest.fixture
def float64_default() -> Iterator[None]:
    torch.set_default_dtype(torch.float64)
    try:
        with tdt.default_dtype_guard(tdt.float64):
            yield
    finally:
        torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize(
    "array",
    [
        np.array([1.5, 2.0]),
        np.array([1.5, 2.0], np.float32),
        np.array([1j]),
        np.array([1j], np.complex64),
        np.zeros(0, np.float32),
        np.zeros(0),
    ],
    ids=repr,
)
def test_default_dtype_decides_the_dtype_suffix_like_torch(
    float64_default: None, array: np.ndarray
) -> None:
    ours, theirs = both(array)
    assert normalized(ours) == expected_repr(theirs)


def test_meta_dtype_suffix_under_float64_default(float64_default: None) -> None:
    ours = Tensor._make_meta((2,), None, tdt.float32)
    assert repr(ours) == expected_repr(torch.empty(2, device="meta", dtype=torch.float32))


# -- print options -------------------------------------------------------------------------

OPTIONS: list[dict[str, object]] = [
    {"precision": 2},
    {"precision": 8},
    {"sci_mode": True},
    {"sci_mode": False},
    {"linewidth": 40},
    {"threshold": 5},
    {"threshold": 5, "edgeitems": 1},
    {"threshold": 5, "edgeitems": 0},
    {"profile": "short"},
    {"profile": "full"},
    {"profile": "short", "precision": 6},
]

OPTION_CASES = [
    "float-fraction",
    "sci-small",
    "int-valued",
    "zeros",
    "wide-row",
    "3d",
    "summarized-vector",
    "summarized-matrix",
    "complex128",
    "int64",
    "zero-dim-float",
]


@pytest.fixture
def restore_print_options() -> Iterator[None]:
    try:
        yield
    finally:
        torch.set_printoptions(profile="default", sci_mode=None)
        tdt.set_printoptions(profile="default", sci_mode=None)


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_print_options_match_torch(options: dict[str, object], restore_print_options: None) -> None:
    torch.set_printoptions(**options)  # type: ignore[arg-type]
    tdt.set_printoptions(**options)  # type: ignore[arg-type]
    mismatches = []
    for name in OPTION_CASES:
        ours, theirs = both(CASES[name])
        if normalized(ours) != expected_repr(theirs):
            mismatches.append((name, repr(ours), expected_repr(theirs)))
    assert mismatches == []


def test_get_printoptions_reports_what_was_set(restore_print_options: None) -> None:
    tdt.set_printoptions(precision=6, linewidth=100)
    assert tdt.get_printoptions() == {
        "precision": 6,
        "threshold": 1000,
        "edgeitems": 3,
        "linewidth": 100,
        "sci_mode": None,
    }


def test_printoptions_context_restores_after_an_error() -> None:
    with pytest.raises(KeyError), tdt.printoptions(precision=1):
        assert repr(tdt.tensor([1.25])) == "tensor([1.2])"
        raise KeyError
    assert tdt.get_printoptions()["precision"] == 4


def test_unknown_profile_error() -> None:
    with pytest.raises(ValueError) as info:
        tdt.set_printoptions(profile="long")
    assert str(info.value) == (
        "set_printoptions(profile='long'): unknown profile; expected one of default, short, full"
    )


# -- random values -------------------------------------------------------------------------

SHAPES = [(), (1,), (5,), (2, 3), (3, 1, 4), (13,), (4, 7), (1100,), (40, 30)]

FLOATS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=32),
    st.floats(-1e4, 1e4, width=32),
    st.integers(-1000, 1000).map(float),
    st.sampled_from([0.0, -0.0, 1e-6, 1e9, 0.5]),
)


@st.composite
def printable(draw: st.DrawFn) -> np.ndarray:
    shape = draw(st.sampled_from(SHAPES))
    kind = draw(st.sampled_from(["float32", "float64", "float16", "int64", "bool", "complex64"]))
    if kind == "bool":
        return draw(hnp.arrays(np.bool_, shape))
    if kind == "int64":
        return draw(hnp.arrays(np.int64, shape, elements=st.integers(-(10**6), 10**6)))
    if kind == "complex64":
        real = draw(hnp.arrays(np.float32, shape, elements=FLOATS))
        imag = draw(hnp.arrays(np.float32, shape, elements=FLOATS))
        values = np.empty(shape, np.complex64)
        values.real, values.imag = real, imag  # no arithmetic: inf * 1j would make nan
        return values
    elements = FLOATS if kind != "float16" else st.floats(-1e4, 1e4, width=16)
    return draw(hnp.arrays(np.dtype(kind), shape, elements=elements))


@given(printable())
def test_random_values_print_like_torch(array: np.ndarray) -> None:
    ours, theirs = both(array)
    assert normalized(ours) == expected_repr(theirs)


def test_view_whose_grad_fn_is_refused_prints_invalid_as_torch() -> None:
    # a multi-output view modified in place under no_grad: reading its grad_fn raises, and the
    # repr says grad_fn=<Invalid> instead of raising (torch's _str_intern)
    import tensordispatch as td

    values = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    reprs = []
    for lib, make in ((td, tdt.tensor), (torch, torch.tensor)):
        base = make(values, requires_grad=True).clone()
        first, _ = base.split(2)
        with lib.no_grad():
            first.mul_(2)
        with pytest.raises(RuntimeError, match="Output 0 of Split is a view"):
            _ = first.grad_fn
        reprs.append(repr(first))
    assert reprs[0] == reprs[1]
    assert reprs[0].endswith("grad_fn=<Invalid>)")
