"""The operators a Tensor index emits, against torch's (as seen by a dispatch mode): full
slices of a tuple key are skipped, a lone slice slices, a key that changes nothing aliases."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import tensordispatch as td

KEYS = [
    "x[:]", "x[0:3]", "x[0:100]", "x[:, 1]", "x[0:3, 1]", "x[0:100, 1]", "x[:3, 1]",
    "x[0:, 1]", "x[::1, 1]", "x[-100:, 1]", "x[-3:, 1]", "x[1:, 1]", "x[0:-0, 1]",
    "x[::2, 1]", "x[..., 1]", "x[:, :]", "x[...]", "x[:, ...]", "x[(slice(None),)]",
    "x[None]", "x[None, :]", "x[1, :]", "x[1, :, None]", "x[:, :, None]", "x[:, 1:]",
    "x[:, 0:4]", "x[:, 0:4:2]",
]  # fmt: skip


class _TorchLog(TorchDispatchMode):
    def __init__(self, seen: list[str]) -> None:
        super().__init__()
        self.seen = seen

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        self.seen.append(str(func).removeprefix("aten."))
        return func(*args, **(kwargs or {}))


class _OurLog(td.DispatchMode):
    def __init__(self, seen: list[str]) -> None:
        super().__init__()
        self.seen = seen

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        self.seen.append(str(func).removeprefix("aten."))
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("key", KEYS)
def test_index_emits_torchs_operators(key: str) -> None:
    theirs: list[str] = []
    ours: list[str] = []
    x = torch.arange(12.0).reshape(3, 4)
    with _TorchLog(theirs):
        expected = eval(key)
    x = td.arange(12.0).reshape(3, 4)  # noqa: F841 - read by eval
    with _OurLog(ours):
        got = eval(key)
    assert ours == theirs
    assert got.tolist() == expected.tolist() and got.stride() == expected.stride()


def test_full_slice_assignment_writes_through() -> None:
    x = td.zeros(2, 3)
    x[:, 1] = 5.0
    x[0:10, 2] = td.tensor([1.0, 2.0])
    assert x.tolist() == [[0.0, 5.0, 1.0], [0.0, 5.0, 2.0]]


SET_CASES = [
    ("x[1] = v", (4,)), ("x[1:3] = v", (2, 4)), ("x[1:3] = v", (4,)), ("x[1] = v", (1, 1, 4)),
    ("x[:, 1] = v", (3,)), ("x[[0, 2]] = v", (2, 4)), ("x[[0, 2]] = v", (1, 4)),
    ("x[x > 5] = v", (1,)),
]  # fmt: skip


@pytest.mark.parametrize(("code", "shape"), SET_CASES)
def test_assignment_emits_torchs_operators(code: str, shape: tuple[int, ...]) -> None:
    """torch's copy_to: copy_ for equal shapes, else view (leading ones dropped), expand if
    still different, copy_; index_put_ views the value only when it has leading ones."""
    theirs: list[str] = []
    ours: list[str] = []
    x, v = torch.arange(12.0).reshape(3, 4), torch.ones(shape)
    with _TorchLog(theirs):
        exec(code)  # noqa: S102 - the statements above
    expected = x.tolist()
    x, v = td.arange(12.0).reshape(3, 4), td.ones(shape)  # noqa: F841 - read by exec
    with _OurLog(ours):
        exec(code)  # noqa: S102
    assert [o for o in ours if o != "lift_fresh.default"] == [
        o for o in theirs if o != "lift_fresh.default"
    ]
    assert x.tolist() == expected
