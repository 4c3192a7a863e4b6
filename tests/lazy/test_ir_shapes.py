"""Note [Same-shape pointwise shapes]: the shortcut equals torch's meta functions."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
import torch

import tensordispatch as td
from tensordispatch.lazy.ir import Shape, scalar_node
from tensordispatch.lazy.shape import SAME_SHAPE_POINTWISE, same_shape_pointwise

DTYPES = ["float16", "float32", "float64"]
SIZES = [(), (3,), (2, 3)]
BINARY = ("add.Tensor", "sub.Tensor", "mul.Tensor", "div.Tensor")
NUMBERS = [2, 0.5]


def _ops(name: str) -> tuple[Any, Any]:
    packet, _, overload = name.removeprefix("aten::").partition(".")
    overload = overload or "default"
    return (
        getattr(getattr(td.ops.aten, packet), overload),
        getattr(getattr(torch.ops.aten, packet), overload),
    )


def _cases() -> list[tuple[str, str, tuple[int, ...], Any, Any]]:
    cases = []
    for name in sorted(SAME_SHAPE_POINTWISE):
        for dtype, sizes in itertools.product(DTYPES, SIZES):
            if name.removeprefix("aten::") in BINARY:
                for other, alpha in itertools.product(["tensor", *NUMBERS], [None, 2, 0.5]):
                    if alpha is None or name.startswith(("aten::add", "aten::sub")):
                        cases.append((name, dtype, sizes, other, alpha))
            else:
                cases.append((name, dtype, sizes, None, None))
    return cases


CASES = _cases()


@pytest.mark.parametrize("case", range(len(CASES)))
def test_shortcut_equals_torch_meta(case: int) -> None:
    name, dtype, sizes, other, alpha = CASES[case]
    ours, theirs = _ops(name)
    x = Shape.of(getattr(td, dtype), sizes)
    t = torch.empty(sizes, dtype=getattr(torch, dtype), device="meta")
    sig = [(x, "tensor")]
    args: list[Any] = [t]
    if name.removeprefix("aten::") in BINARY:
        if other == "tensor":
            sig.append((x, "tensor"))
            args.append(torch.empty(sizes, dtype=getattr(torch, dtype), device="meta"))
        else:
            sig.append((scalar_node(other).shapes[0], "wrapped"))
            args.append(other)
    kwargs = {}
    if alpha is not None:
        sig.append((scalar_node(alpha).shapes[0], "scalar"))
        kwargs["alpha"] = alpha
    (shape,) = same_shape_pointwise(ours, sig)  # type: ignore[misc]
    expected = theirs(*args, **kwargs)
    assert (str(shape.dtype).split(".")[-1], shape.sizes) == (
        str(expected.dtype).split(".")[-1],
        tuple(expected.shape),
    )


@pytest.mark.parametrize(
    "sig",
    [
        [(Shape.of(td.int64, (3,)), "tensor")],  # integer tensors promote (e.g. exp)
        [(Shape.of(td.float32, (3,)), "tensor"), (Shape.of(td.float32, (1,)), "tensor")],
        [(Shape.of(td.float32, (3,)), "tensor"), (Shape.of(td.float64, (3,)), "tensor")],
        [(Shape.of(td.float32, (3,)), "tensor"), (Shape.of(td.complex128, ()), "wrapped")],
        [(Shape.of(td.float32, (3,)), "tensor"), (Shape.of(td.bool, ()), "scalar")],
        [(Shape.of(td.float64, ()), "wrapped"), (Shape.of(td.float64, ()), "wrapped")],
    ],
)
def test_other_combinations_go_to_the_meta_function(sig: list[tuple[Shape, str]]) -> None:
    assert same_shape_pointwise(td.ops.aten.add.Tensor, sig) is None
