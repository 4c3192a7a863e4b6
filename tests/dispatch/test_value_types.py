"""Direct calls check and convert Scalar, ScalarType, Layout, MemoryFormat and Device
arguments, and one-element tensors for int/float/bool, exactly as torch 2.13's OpOverload
calls do (Note [Value types]): the same operator on both sides, value by value."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import torch
from dispatch_oracle import fresh

import tensordispatch as td
from tensordispatch import ops
from tensordispatch.backends.common import (
    channels_last,
    contiguous_format,
    preserve_format,
    strided,
)
from tensordispatch.dispatch import value_types
from tensordispatch.library import Library

TYPES = (
    "Scalar",
    "ScalarType",
    "ScalarType?",
    "Layout",
    "MemoryFormat",
    "Device",
    "int",
    "float",
    "bool",
)

# (label, torch value, our value): the same value on both sides
VALUES: list[tuple[str, Callable[[], Any], Callable[[], Any]]] = [
    ("int", lambda: 1, lambda: 1),
    ("zero", lambda: 0, lambda: 0),
    ("six", lambda: 6, lambda: 6),
    ("float", lambda: 2.5, lambda: 2.5),
    ("bool", lambda: True, lambda: True),
    ("complex", lambda: 1 + 2j, lambda: 1 + 2j),
    ("str", lambda: "cpu", lambda: "cpu"),
    ("meta", lambda: "meta", lambda: "meta"),
    ("none", lambda: None, lambda: None),
    ("list", lambda: [1], lambda: [1]),
    ("dtype", lambda: torch.float32, lambda: td.float32),
    ("int64", lambda: torch.int64, lambda: td.int64),
    ("pytype", lambda: float, lambda: float),
    ("device", lambda: torch.device("cpu"), lambda: td.device("cpu")),
    ("layout", lambda: torch.strided, lambda: strided),
    ("memory_format", lambda: torch.contiguous_format, lambda: contiguous_format),
    ("channels_last", lambda: torch.channels_last, lambda: channels_last),
    ("t_int", lambda: torch.tensor(3), lambda: td.tensor(3)),
    ("t_float", lambda: torch.tensor(2.5), lambda: td.tensor(2.5)),
    ("t_bool", lambda: torch.tensor(True), lambda: td.tensor(True)),
    ("t_two", lambda: torch.tensor([1, 2]), lambda: td.tensor([1, 2])),
    ("t_one", lambda: torch.tensor([3]), lambda: td.tensor([3])),
    ("t_complex", lambda: torch.tensor(1 + 1j), lambda: td.tensor(1 + 1j)),
    ("np_float", lambda: np.float64(1.5), lambda: np.float64(1.5)),
    ("np_int", lambda: np.int64(3), lambda: np.int64(3)),
    ("np_bool", lambda: np.bool_(True), lambda: np.bool_(True)),
]


@pytest.fixture(autouse=True)
def registered() -> Iterator[None]:
    """The tensor layer's objects, registered as the tensor layer does."""
    saved = value_types._REGISTRY
    value_types.register_value_types(
        dtypes=[td.bool, td.uint8, td.int8, td.int16, td.int32, td.int64, td.float16,
                td.float32, td.float64, td.complex64, td.complex128],
        layouts=[strided],
        memory_formats=[contiguous_format, preserve_format, channels_last],
        device=td.device,
    )  # fmt: skip
    yield
    value_types._REGISTRY = saved


def _shown(v: Any) -> str:
    """A converted value in one spelling for both libraries."""
    if isinstance(v, (bool, int, float, complex)) or v is None:
        return f"{type(v).__name__} {v!r}"
    return f"{value_types.value_type_name(v)} {str(v).split('.')[-1]}"


# torch objects tensordispatch does not have: their codes give our UnknownCode error
MISSING = ("sparse_coo", "sparse_csr", "sparse_bsc", "_mkldnn", "channels_last_3d", "qscheme")


def _outcomes(side: str) -> dict[str, str]:
    ns = fresh("vt")
    seen: dict[str, Any] = {}
    out: dict[str, str] = {}
    if side == "torch":
        lib: Any = torch.library.Library(ns, "DEF")
        make, x, pick = torch.library.Library, torch.ones(1), 1
    else:
        lib, make, x, pick = Library(ns, "DEF"), Library, td.ones(1), 2
    del make
    try:
        for i, t in enumerate(TYPES):
            lib.define(f"f{i}(Tensor x, {t} v) -> Tensor")

            def kernel(x: Any, v: Any, i: int = i) -> Any:
                seen[i] = v
                return x

            if side == "torch":
                lib.impl(f"f{i}", kernel, "CPU")
            else:
                lib.impl(f"f{i}", kernel, "CPU")
        root = torch.ops if side == "torch" else ops
        for i, t in enumerate(TYPES):
            op = getattr(getattr(root, ns), f"f{i}").default
            for label, *values in VALUES:
                seen.pop(i, None)
                try:
                    op(x, values[pick - 1]())
                    out[f"{t} <- {label}"] = _shown(seen[i])
                except RuntimeError as e:
                    first = str(e).replace(ns, "ns").splitlines()[0]
                    out[f"{t} <- {label}"] = f"error: {first}"
    finally:
        lib._destroy()
    return out


def test_every_value_of_every_type_is_taken_or_refused_like_torch() -> None:
    ours, theirs = _outcomes("ours"), _outcomes("torch")
    missing = {k for k, v in theirs.items() if any(name in v for name in MISSING)}
    diffs = [
        f"{k}: torch={theirs[k]!r} ours={ours[k]!r}"
        for k in theirs
        if ours[k] != theirs[k] and k not in missing
    ]
    assert diffs == []
    assert len(theirs) == len(TYPES) * len(VALUES) and len(missing) == 13
    assert {ours[k].split("code of")[-1] for k in missing} == {
        " sparse_coo, which tensordispatch does not have; pass one of its Layout values",
        " sparse_csr, which tensordispatch does not have; pass one of its Layout values",
        " sparse_bsc, which tensordispatch does not have; pass one of its Layout values",
        " _mkldnn, which tensordispatch does not have; pass one of its Layout values",
        " channels_last_3d, which tensordispatch does not have; pass one of its MemoryFormat"
        + " values",
        " nothing, which tensordispatch does not have; pass one of its MemoryFormat values",
    }


def test_refusal_messages_are_torchs_without_the_cast_details() -> None:
    """torch appends a 'Cast error details:' line from its C++ binding; the rest is equal."""
    cases = [
        (0, "cpu"),
        (1, 2.5),
        (2, "cpu"),
        (3, [1]),
        (4, None),
        (5, 1),
        (6, "t"),
        (7, 1j),
        (8, "x"),
    ]
    texts = {}
    for side in ("torch", "ours"):
        ns = fresh("vtm")
        lib: Any = torch.library.Library(ns, "DEF") if side == "torch" else Library(ns, "DEF")
        root: Any = torch.ops if side == "torch" else ops
        x, t = (
            (torch.ones(1), torch.tensor([1, 2]))
            if side == "torch"
            else (td.ones(1), td.tensor([1, 2]))
        )
        out = []
        try:
            for i, ty in enumerate(TYPES):
                lib.define(f"f{i}(Tensor x, {ty} v) -> Tensor")
                lib.impl(f"f{i}", lambda x, v: x, "CPU")
            for i, v in cases:
                with pytest.raises(RuntimeError) as e:
                    getattr(getattr(root, ns), f"f{i}").default(x, t if v == "t" else v)
                out.append(str(e.value).replace(ns, "ns").split("\nCast error details")[0])
        finally:
            lib._destroy()
        texts[side] = out
    assert texts["ours"] == texts["torch"]
    assert texts["ours"][0] == "\n".join(
        [
            "ns::f0() Expected a value of type 'number' for argument 'v' but instead found type"
            + " 'str'.",
            "Position: 1",
            "Value: 'cpu'",
            "Declaration: ns::f0(Tensor x, Scalar v) -> Tensor",
        ]
    )


def test_a_torch_code_without_a_tensordispatch_object_is_named() -> None:
    lib = Library(fresh("vtc"), "DEF")
    try:
        lib.define("f(Tensor x, Layout? layout=None) -> Tensor")
        lib.impl("f", lambda x, layout=None: x, "CPU")
        with pytest.raises(RuntimeError) as e:
            getattr(ops, lib.ns).f(td.ones(1), layout=1)
    finally:
        lib._destroy()
    assert str(e.value).replace(lib.ns, "ns") == "\n".join(
        [
            "ns::f(): 1 for argument 'layout' is torch's Layout code of sparse_coo, which"
            + " tensordispatch does not have; pass one of its Layout values",
            "Position: 1",
            "Declaration: ns::f(Tensor x, Layout? layout=None) -> Tensor",
        ]
    )


def test_values_pass_unchecked_until_the_tensor_layer_registers() -> None:
    value_types._swap_registry(None)  # the fixture puts the real registry back
    lib = Library(fresh("vtu"), "DEF")
    try:
        lib.define("f(Tensor x, ScalarType t, Device d) -> Tensor")
        lib.impl("f", lambda x, t, d: (t, d), "CPU")
        assert getattr(ops, lib.ns).f(td.ones(1), "anything", 7) == ("anything", 7)
    finally:
        lib._destroy()


def test_converted_values_reach_the_kernel() -> None:
    lib = Library(fresh("vtk"), "DEF")
    try:
        lib.define(
            "f(Tensor x, ScalarType t, Device d, int n, float f, *, MemoryFormat m) -> Tensor"
        )
        lib.impl("f", lambda x, t, d, n, f, *, m: (t, d, n, f, m), "CPU")
        got = getattr(ops, lib.ns).f(td.ones(1), 6, "meta", td.tensor(4), td.tensor(True), m=1)
    finally:
        lib._destroy()
    assert got == (td.float32, td.device("meta"), 4, 1.0, preserve_format)
    assert type(got[2]) is int and type(got[3]) is float
