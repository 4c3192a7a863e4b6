"""Formulas torch leaves as ``not_implemented(...)`` fail at backward as torch's do
(formulas.py ``not_implemented``): NotImplementedError with torch's message."""

from __future__ import annotations

from typing import Any

import torch

import tensordispatch as td


def _renorm_backward(m: Any) -> tuple[str, str, str]:
    w = m.ones(5, 3, requires_grad=True).clone()
    m.embedding_renorm_(w, m.tensor([0, 2]), 1.0, 2.0)
    try:
        w.sum().backward()
    except RuntimeError as e:
        return (type(w.grad_fn).__name__, type(e).__name__, str(e))
    return (type(w.grad_fn).__name__, "ok", "")


def test_embedding_renorm_backward_raises_not_implemented_as_torch() -> None:
    assert (
        _renorm_backward(td)
        == _renorm_backward(torch)
        == (
            "EmbeddingRenormBackward0",
            "NotImplementedError",
            "the derivative for 'embedding_renorm' is not implemented.",
        )
    )
