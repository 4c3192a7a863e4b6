"""clone of a NumPy-backed tensor (Note [clone of a NumPy-backed tensor]): the result's
strides and values are torch's for every memory format it handles, no operator is called
under clone, and the copy does not alias the input."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import tensordispatch as td

INPUTS: dict[str, Callable[[Any], Any]] = {
    "contiguous": lambda m: m.arange(24.0).reshape(2, 3, 4),
    "permuted": lambda m: m.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1),
    "transposed": lambda m: m.arange(6).reshape(2, 3).t(),
    "sliced": lambda m: m.arange(24.0).reshape(4, 6)[:, ::2],
    "expanded": lambda m: m.arange(3.0).reshape(3, 1).expand(3, 4),
    "size-one dims": lambda m: m.arange(4.0).reshape(4, 1)[:, :1].t(),
    "zero-dim": lambda m: m.tensor(2.5),
    "empty": lambda m: m.ones(0, 3).t(),
    "offset": lambda m: m.arange(10.0)[3:7],
}
FORMATS = ["none", "preserve_format", "contiguous_format"]


def _fmt(m: Any, name: str) -> dict[str, Any]:
    return {} if name == "none" else {"memory_format": getattr(m, name)}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", INPUTS)
def test_clone_matches_torch(name: str, fmt: str) -> None:
    expected = INPUTS[name](torch).clone(**_fmt(torch, fmt))
    source = INPUTS[name](td)
    got = source.clone(**_fmt(td, fmt))
    assert got.stride() == expected.stride() and tuple(got.shape) == tuple(expected.shape)
    assert got.dtype.name == str(expected.dtype).split(".")[-1]
    assert got.tolist() == expected.tolist()
    assert got._base is None and got.storage_offset() == 0


def test_clone_does_not_alias() -> None:
    x = td.arange(4.0)
    y = x.clone()
    y[0] = 9.0
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_clone_calls_no_inner_operator() -> None:
    seen: list[str] = []

    class Log(td.DispatchMode):
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:  # fmt: skip
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    x = td.arange(6.0).reshape(2, 3).t()
    with Log():
        x.clone()
        x.clone(memory_format=td.contiguous_format)
    assert seen == ["aten.clone.default", "aten.clone.default"]


def test_channels_last_takes_the_generic_path() -> None:
    x = torch.arange(24.0).reshape(1, 2, 3, 4)
    expected = x.clone(memory_format=torch.channels_last)
    got = td.arange(24.0).reshape(1, 2, 3, 4).clone(memory_format=td.channels_last)
    assert got.stride() == expected.stride() and got.tolist() == expected.tolist()
