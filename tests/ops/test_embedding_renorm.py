"""aten::embedding_renorm_ (F.embedding's max_norm) and its autogen functional form against
torch: rows named by the indices (each once) rescaled in place to the max norm, checks and
their messages, the meta kernel (no checks, as torch's)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td

g = torch.Generator().manual_seed(0)
W = torch.randn(6, 4, generator=g) * 2


def _td(t: torch.Tensor) -> Any:
    return td.tensor(t.tolist(), dtype=getattr(td, str(t.dtype).split(".")[-1]))


CASES = {
    "p=2": ([0, 3, 3, 5], 1.0, 2.0),
    "p=1, 2-D indices": ([[1, 2], [2, 4]], 1.5, 1.0),
    "p=inf": ([0, 1, 2, 3, 4, 5], 0.7, float("inf")),
    "negative index": ([-1, 5], 0.5, 2.0),
    "max_norm above every row": ([0, 1], 100.0, 2.0),
    "int32 indices": (torch.tensor([2, 0], dtype=torch.int32), 1.0, 2.0),
}


@pytest.mark.parametrize("name", CASES)
def test_embedding_renorm_matches_torch(name: str) -> None:
    indices, max_norm, norm_type = CASES[name]
    t_idx = indices if isinstance(indices, torch.Tensor) else torch.tensor(indices)
    t_w = W.clone()
    expected = torch.embedding_renorm_(t_w, t_idx, max_norm, norm_type)
    ours_w = _td(W)
    got = td.embedding_renorm_(ours_w, _td(t_idx), max_norm, norm_type)
    assert got is ours_w and expected is t_w
    np.testing.assert_allclose(np.array(got.tolist()), expected.numpy(), rtol=1e-6)


def test_functional_embedding_renorm_leaves_self() -> None:
    ours_w = _td(W)
    got = td.ops.aten.embedding_renorm(ours_w, td.tensor([0, 1]), 0.5, 2.0)
    expected = torch.ops.aten.embedding_renorm(W, torch.tensor([0, 1]), 0.5, 2.0)
    np.testing.assert_allclose(np.array(got.tolist()), expected.numpy(), rtol=1e-6)
    np.testing.assert_array_equal(np.array(ours_w.tolist()), W.numpy())


def test_meta_returns_self_without_checks() -> None:
    # torch's meta kernel checks nothing (a 1-D self and float indices pass)
    for m in (torch, td):
        w = m.empty(5, device="meta")
        assert m.embedding_renorm_(w, m.empty(2, device="meta"), 1.0, 2.0) is w


REFUSED: dict[str, Callable[[Any], Any]] = {
    "1-D self": lambda m: m.embedding_renorm_(m.ones(5), m.tensor([0]), 1.0, 2.0),
    "float indices": lambda m: m.embedding_renorm_(m.ones(5, 3), m.tensor([0.0]), 1.0, 2.0),
    "integer self": lambda m: m.embedding_renorm_(
        m.ones(5, 3, dtype=m.int64), m.tensor([0]), 1.0, 2.0
    ),
    "index out of range": lambda m: m.embedding_renorm_(m.ones(5, 3), m.tensor([7]), 1.0, 2.0),
}


def _error(fn: Callable[[Any], Any], module: Any) -> tuple[type, str]:
    with pytest.raises(Exception) as info:
        fn(module)
    return type(info.value), str(info.value)


@pytest.mark.parametrize("name", REFUSED)
def test_refusal_is_torchs(name: str) -> None:
    assert _error(REFUSED[name], td) == _error(REFUSED[name], torch)


def test_refusal_messages_golden() -> None:
    assert [_error(fn, td)[1] for fn in REFUSED.values()] == [
        (
            "Expected 2-dimensional tensor, but got 1-dimensional tensor for argument #1 'self' "
            "(while checking arguments for embedding_renorm_)"
        ),
        (
            "Expected tensor for argument #2 'indices' to have one of the following scalar types: "
            "Long, Int; but got torch.FloatTensor instead (while checking arguments for "
            "embedding_renorm_)"
        ),
        "norm(): input dtype should be either floating point or complex. Got Long instead.",
        "select(): index 7 out of range for tensor of size [5, 3] at dimension 0",
    ]


def test_autograd_records_torchs_node_whose_backward_raises() -> None:
    w = td.ones(3, 2, requires_grad=True).clone()
    r = td.embedding_renorm_(w, td.tensor([0]), 1.0, 2.0)
    t = torch.ones(3, 2, requires_grad=True).clone()
    torch.embedding_renorm_(t, torch.tensor([0]), 1.0, 2.0)
    assert type(r.grad_fn).__name__ == type(t.grad_fn).__name__ == "EmbeddingRenormBackward0"
    with pytest.raises(RuntimeError, match="the derivative for 'embedding_renorm' is not"):
        r.sum().backward()
