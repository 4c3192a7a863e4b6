"""Conjugation (Note [The conjugate and negative bits]): conj / conj_physical /
_conj_physical / conj_physical_ / adjoint / H against torch: values and strides on cpu and
meta, gradients, grad_fn names, out= checks. The bits themselves: test_math_bits.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td

Z = [[1 + 2j, 3j, -1.0], [0.5j, 2.0, 1 - 1j]]


def _z(m: Any, **kw: Any) -> Any:
    return m.tensor(Z, dtype=m.complex64, **kw)


def test_conj_on_meta_keeps_the_layout() -> None:
    for m in (torch, td):
        got = m.empty(2, 3, dtype=m.complex64, device="meta").mT.conj()
        assert tuple(got.shape) == (3, 2) and tuple(got.stride()) == (1, 3)


GRADS: dict[str, Callable[[Any, Any], Any]] = {
    "conj": lambda m, x: (x.conj() * m.tensor([1j, 2.0, -1.0])).abs().sum(),
    "H": lambda m, x: (x.H.matmul(x)).abs().sum(),
    "conj_physical": lambda m, x: (m.conj_physical(x) * x).real.sum(),
    "adjoint": lambda m, x: (x.adjoint() * 2j).imag.sum(),
}


@pytest.mark.parametrize("name", GRADS)
def test_gradient_matches_torch(name: str) -> None:
    grads = []
    for m in (torch, td):
        x = _z(m, requires_grad=True)
        GRADS[name](m, x).backward()
        grads.append(np.array(x.grad.tolist()))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6)


def test_conj_physical_in_place_records_torchs_node() -> None:
    names = []
    for m in (torch, td):
        x = _z(m, requires_grad=True).clone()
        names.append(type(x.conj_physical_().grad_fn).__name__)
    assert names == ["ConjPhysicalBackward1", "ConjPhysicalBackward1"]


def test_conj_grad_fn_is_torchs() -> None:
    names = [type(_z(m, requires_grad=True).conj().grad_fn).__name__ for m in (torch, td)]
    assert names == ["ConjBackward0", "ConjBackward0"]


def test_out_of_another_dtype_is_refused_as_torch() -> None:
    messages = []
    for m in (torch, td):
        with pytest.raises(RuntimeError) as info:
            m.conj_physical(_z(m), out=m.empty(6, dtype=m.float32))
        messages.append(str(info.value))
    assert messages[1] == messages[0] == "Found dtype Float but expected ComplexFloat"


def test_out_is_resized_as_torch() -> None:
    out_t, out = torch.empty(0, dtype=torch.complex64), td.empty(0, dtype=td.complex64)
    torch.conj_physical(_z(torch), out=out_t)
    assert td.conj_physical(_z(td), out=out) is out
    assert out.tolist() == out_t.tolist() and out.stride() == out_t.stride()
