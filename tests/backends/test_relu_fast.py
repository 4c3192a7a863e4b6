"""relu(x) computed without its nested clamp_min dispatch when nothing could observe it
(backends/cpu/nn.py ``relu_fast``).

Oracles: torch 2.13 for values and gradients; the dispatched ``clamp_min(x, 0)`` (the path
relu_fast replaces) for bit-identity; the dispatch trace for "every hop stays visible".
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch.autograd import no_grad
from tensordispatch.backends.cpu.nn import relu_fast
from tensordispatch.dispatch import dispatch_trace

_SPECIAL = [np.nan, -np.inf, np.inf, -0.0, 0.0, -1e-30, 1e-30, -2.5, 3.0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_fast_is_bit_identical_to_clamp_min_and_matches_torch(dtype: Any) -> None:
    data = np.array(_SPECIAL * 4, dtype).reshape(4, 9)
    x = td.from_numpy(data.copy())
    fast = relu_fast(x)
    assert fast is not None
    slow = td.ops.aten.clamp_min(x, 0)
    assert fast.dtype == slow.dtype and fast.stride() == slow.stride()
    assert fast.numpy().tobytes() == slow.numpy().tobytes()
    theirs = torch.relu(torch.from_numpy(data.copy())).numpy()
    np.testing.assert_array_equal(x.relu().numpy(), theirs)


@pytest.mark.parametrize(
    "make",
    [
        lambda: td.tensor([-1, 2]),  # integers: the general kernel
        lambda: td.tensor([[-1.0, 2.0], [3.0, -4.0]]).t(),  # not contiguous
        lambda: td.tensor(-3.0),  # 0-dim
        lambda: td.tensor([-1.0, 2.0], dtype=td.float16),
        lambda: td.tensor([-1.0, 2.0]).requires_grad_(),  # the nested call would record
    ],
)
def test_relu_fast_declines_and_relu_still_matches_torch(make: Any) -> None:
    x = make()
    assert relu_fast(x) is None
    with no_grad():
        ours = x.relu()
    theirs = torch.relu(torch.from_numpy(x.detach().numpy()))  # same strides as x
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert ours.stride() == theirs.stride()


def test_trace_still_shows_clamp_min() -> None:
    x = td.tensor([-1.0, 2.0])
    with dispatch_trace() as trace:
        assert x.relu().tolist() == [0.0, 2.0]
    hops = [line.split()[0] for line in str(trace).splitlines()]
    assert hops == ["aten::relu", "aten::relu", "aten::clamp_min", "aten::clamp_min"]


def test_relu_gradient_is_torchs() -> None:
    data = np.array([[-1.0, 2.0, 0.0], [3.0, -0.5, 4.0]], np.float32)
    tx = torch.from_numpy(data.copy()).requires_grad_()
    dx = td.from_numpy(data.copy()).requires_grad_()
    y = (dx * 2.0).relu()
    assert type(y.grad_fn).__name__ == "ReluBackward0"
    y.sum().backward()
    (tx * 2.0).relu().sum().backward()
    np.testing.assert_array_equal(dx.grad.numpy(), tx.grad.numpy())
