"""aten::squeeze_.dims (``x.squeeze_(dims)`` with a tuple or list) against torch: geometry,
the method's overload choice, autograd (SqueezeBackward5) and refusals."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import tensordispatch as td

CASES: dict[str, tuple[tuple[int, ...], Any]] = {
    "tuple": ((2, 1, 3, 1), (1, 3)),
    "list with a non-1 dim": ((2, 1, 3, 1), [0, 1]),
    "negative dims": ((1, 2, 1), (-1, 0)),
    "empty tuple": ((1, 2), ()),
    "int (squeeze_.dim)": ((1, 2), 0),
    "no dim (squeeze_)": ((1, 2, 1), None),
}


@pytest.mark.parametrize("name", CASES)
def test_squeeze_inplace_matches_torch(name: str) -> None:
    shape, dims = CASES[name]
    args = () if dims is None else (dims,)
    t = torch.zeros(*shape)[..., :]
    x = td.zeros(*shape)[..., :]
    assert x.squeeze_(*args) is x
    t.squeeze_(*args)
    assert tuple(x.shape) == tuple(t.shape) and x.stride() == t.stride()


def test_squeeze_dims_inplace_backward_matches_torch() -> None:
    t = torch.arange(6.0).reshape(2, 1, 3, 1).requires_grad_()
    x = td.arange(6.0).reshape(2, 1, 3, 1).requires_grad_()
    tt, xx = t.clone(), x.clone()
    tt.squeeze_((1, 3))
    xx.squeeze_((1, 3))
    assert type(xx.grad_fn).__name__ == type(tt.grad_fn).__name__ == "SqueezeBackward5"
    (tt * torch.arange(6.0).reshape(2, 3)).sum().backward()
    (xx * td.arange(6.0).reshape(2, 3)).sum().backward()
    assert x.grad.tolist() == t.grad.tolist()


def test_squeeze_dims_out_of_range_message_is_torchs() -> None:
    with pytest.raises(IndexError) as ours:
        td.zeros(2, 1).squeeze_((0, 2))
    with pytest.raises(IndexError) as theirs:
        torch.zeros(2, 1).squeeze_((0, 2))
    assert (
        str(ours.value)
        == str(theirs.value)
        == ("Dimension out of range (expected to be in range of [-2, 1], but got 2)")
    )
