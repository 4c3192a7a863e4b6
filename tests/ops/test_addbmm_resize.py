"""addbmm_ on a self that only broadcasts to the result, and addbmm(out=) of another shape,
against torch's CPU kernel: self / out are resized without a warning (ATen's resize_as_, not
resize_output), self's old values are copied back from its expanded view of the same storage
(so a (3, 1) self reads rows already written, as in torch), non-broadcasting selfs are refused
with torch's expand message."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td

g = torch.Generator().manual_seed(0)
B1, B2 = torch.randn(2, 3, 4, generator=g), torch.randn(2, 4, 5, generator=g)


def _td(t: torch.Tensor) -> Any:
    return td.tensor(t.tolist(), dtype=td.float32)


SELVES = {
    "[1]": [1.5],
    "[]": 2.0,
    "[3, 1]": [[1.0], [2.0], [3.0]],
    "[1, 5]": [[1.0, 2.0, 3.0, 4.0, 5.0]],
    "[5]": [1.0, 2.0, 3.0, 4.0, 5.0],
}


@pytest.mark.parametrize("beta", [1, 0, 0.5])
@pytest.mark.parametrize("name", SELVES)
def test_inplace_resizes_self_as_torch(name: str, beta: float) -> None:
    t_self = torch.tensor(SELVES[name])
    ours = _td(t_self)
    expected = t_self.addbmm_(B1, B2, beta=beta)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch does not warn
        got = ours.addbmm_(_td(B1), _td(B2), beta=beta)
    assert got is ours
    assert tuple(got.shape) == tuple(expected.shape) == (3, 5)
    assert tuple(got.stride()) == tuple(expected.stride())
    np.testing.assert_allclose(np.array(got.tolist()), expected.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(1,), (2, 2), (0,), (5, 3)])
def test_out_of_another_shape_is_resized_without_warning(shape: tuple[int, ...]) -> None:
    t_self = torch.randn(3, 5, generator=g)
    t_out = torch.zeros(shape)
    torch.addbmm(t_self, B1, B2, out=t_out)
    out = td.zeros(*shape)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        td.addbmm(_td(t_self), _td(B1), _td(B2), out=out)
    assert tuple(out.shape) == tuple(t_out.shape) and out.stride() == t_out.stride()
    np.testing.assert_allclose(np.array(out.tolist()), t_out.numpy(), rtol=1e-5, atol=1e-6)


def _message(module: Any, self: Any) -> str:
    with pytest.raises(RuntimeError) as info:
        self.addbmm_(module.zeros(2, 3, 4), module.zeros(2, 4, 5))
    return str(info.value)


def test_non_broadcasting_self_message_is_torchs() -> None:
    expected = _message(torch, torch.zeros(15))
    assert (
        _message(td, td.zeros(15))
        == expected
        == (
            "The expanded size of the tensor (5) must match the existing size (15) at "
            "non-singleton dimension 1.  Target sizes: [3, 5].  Tensor sizes: [15]"
        )
    )
