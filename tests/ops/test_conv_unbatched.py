"""conv1d / conv2d (aten::conv1d[.padding], aten::conv2d[.padding]) with unbatched input, as
torch accepts it ((C, L) for conv1d, (C, H, W) for conv2d), and torch's messages for inputs of
the wrong rank."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td

g = torch.Generator().manual_seed(0)
X1, W1, B1 = torch.randn(2, 7, generator=g), torch.randn(3, 2, 3, generator=g), torch.randn(3)
X2, W2 = torch.randn(2, 5, 6, generator=g), torch.randn(4, 2, 2, 3, generator=g)


def _td(t: torch.Tensor) -> Any:
    return td.tensor(t.tolist(), dtype=td.float32)


CASES: dict[str, tuple[str, tuple[torch.Tensor, ...], dict[str, Any]]] = {
    "conv1d": ("conv1d", (X1, W1, B1), {}),
    "conv1d stride, padding, dilation": (
        "conv1d", (X1, W1), {"stride": 2, "padding": 1, "dilation": 2},
    ),
    "conv1d same": ("conv1d", (X1, W1), {"padding": "same"}),
    "conv1d same, even kernel": ("conv1d", (X1, W1[..., :2]), {"padding": "same"}),
    "conv1d valid": ("conv1d", (X1, W1), {"padding": "valid"}),
    "conv1d groups": ("conv1d", (torch.randn(4, 6, generator=g), W1[:2]), {"groups": 2}),
    "conv2d": ("conv2d", (X2, W2), {"padding": 1}),
    "conv2d same": ("conv2d", (X2, W2), {"padding": "same"}),
}  # fmt: skip


@pytest.mark.parametrize("name", CASES)
def test_unbatched_conv_matches_torch(name: str) -> None:
    fn, args, kwargs = CASES[name]
    expected = getattr(torch, fn)(*args, **kwargs)
    got = getattr(td, fn)(*(_td(a) for a in args), **kwargs)
    assert tuple(got.shape) == tuple(expected.shape)
    assert tuple(got.stride()) == tuple(expected.stride())
    np.testing.assert_allclose(np.array(got.tolist()), expected.numpy(), rtol=1e-5, atol=1e-5)


def test_unbatched_conv1d_gradients_match_torch() -> None:
    x, w = X1.clone().requires_grad_(), W1.clone().requires_grad_()
    torch.conv1d(x, w, padding=1).pow(2).sum().backward()
    xs, ws = _td(X1).requires_grad_(), _td(W1).requires_grad_()
    td.conv1d(xs, ws, padding=1).pow(2).sum().backward()
    for ours, theirs in ((xs, x), (ws, w)):
        np.testing.assert_allclose(np.array(ours.grad.tolist()), theirs.grad.numpy(), rtol=1e-4)


REFUSED: dict[str, Callable[[Any], Any]] = {
    "conv1d of 1-D input": lambda m: m.conv1d(m.ones(4), m.ones(3, 3, 3)),
    "conv1d of 4-D input": lambda m: m.conv1d(m.ones(1, 3, 4, 4), m.ones(3, 3, 3)),
    "conv2d of 2-D input": lambda m: m.conv2d(m.ones(3, 4), m.ones(3, 3, 3, 3)),
    "conv2d of 5-D input": lambda m: m.conv2d(m.ones(1, 1, 3, 4, 4), m.ones(3, 3, 3, 3)),
    "conv1d of a 4-D weight": lambda m: m.conv1d(m.ones(3, 4, 4), m.ones(3, 3, 3, 3)),
    "aten convolution of unbatched input": lambda m: m.ops.aten.convolution(
        m.ones(3, 4), m.ones(3, 3, 3), None, [1], [0], [1], False, [0], 1
    ),
}


def _message(fn: Callable[[Any], Any], module: Any) -> str:
    with pytest.raises(RuntimeError) as info:
        fn(module)
    return str(info.value)


@pytest.mark.parametrize("name", REFUSED)
def test_wrong_rank_message_is_torchs(name: str) -> None:
    assert _message(REFUSED[name], td) == _message(REFUSED[name], torch)


def test_wrong_rank_messages_golden() -> None:
    assert [_message(fn, td) for fn in REFUSED.values()] == [
        "Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: [4]",
        (
            "Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: "
            "[1, 3, 4, 4]"
        ),
        "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [3, 4]",
        (
            "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: "
            "[1, 1, 3, 4, 4]"
        ),
        (
            "Expected 4-dimensional input for 4-dimensional weight [3, 3, 3, 3], but got "
            "3-dimensional input of size [3, 4, 4] instead"
        ),
        (
            "Expected 3-dimensional input for 3-dimensional weight [3, 3, 3], but got "
            "2-dimensional input of size [3, 4] instead"
        ),
    ]
