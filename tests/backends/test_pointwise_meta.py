"""backends/meta/iterator.py pointwise: the computation dtype of a tensor with a wrapped
Python number (the shortcut for a number of a category no higher than the tensor's, and the
general promotion otherwise) equals torch.result_type, in both argument orders."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import tensordispatch as td
from tensordispatch.backends.aten import wrap_number
from tensordispatch.backends.meta.iterator import pointwise

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
          "complex64", "complex128"]  # fmt: skip
SCALARS: list[Any] = [True, 3, 2.5, 1j]


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
@pytest.mark.parametrize("name", DTYPES)
def test_wrapped_number_promotion_matches_torch(name: str, shape: tuple[int, ...]) -> None:
    x = td.zeros(shape, dtype=getattr(td, name))
    tx = torch.zeros(shape, dtype=getattr(torch, name))
    for s in SCALARS:
        expected = str(torch.result_type(tx, s)).split(".")[-1]
        if expected == "complex32":  # no complex32 here (NumPy has none): refused instead
            with pytest.raises(TypeError, match="computes in complex32 in torch"):
                pointwise(None, (x, wrap_number(s)))
            continue
        (spec,), common = pointwise(None, (x, wrap_number(s)))
        assert (common.name, spec[2].name, spec[0]) == (expected, expected, shape), s
        (spec,), common = pointwise(None, (wrap_number(s), x))
        assert (common.name, spec[0]) == (expected, shape), s


def test_two_wrapped_numbers_promote_like_torch() -> None:
    (spec,), common = pointwise(None, (wrap_number(2), wrap_number(2.5)))
    assert common.name == str(torch.result_type(torch.tensor(2), 2.5)).split(".")[-1]
    assert spec[0] == ()
