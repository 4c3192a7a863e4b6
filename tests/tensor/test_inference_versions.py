"""Version counters of results made from inference tensors, against torch 2.13.

torch's clone is empty_like + copy_: with an inference input outside inference mode no
autograd kernel excludes ADInplaceOrView first, so the copy bumps the fresh result to version 1
(Note [clone of an inference tensor] in backends/composite.py). ``torch.zeros_like`` and the
other ``_like`` factories run below ADInplaceOrView in the binding (version 0), while
``torch.ops.aten.zeros_like`` does not (version 1) (Note [Factories run below
ADInplaceOrView] in codegen/gen_python.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import tensordispatch as td

OPS: dict[str, Callable[[Any, Any], Any]] = {
    "clone": lambda m, t: t.clone(),
    "clone_contiguous": lambda m, t: t.clone(memory_format=m.contiguous_format),
    "contiguous": lambda m, t: t.expand(2, 3).t().contiguous(),
    "empty_like": lambda m, t: m.empty_like(t),
    "zeros_like": lambda m, t: m.zeros_like(t),
    "ones_like": lambda m, t: m.ones_like(t),
    "full_like": lambda m, t: m.full_like(t, 2.0),
    "rand_like": lambda m, t: m.rand_like(t),
    "randn_like": lambda m, t: m.randn_like(t),
    "zeros_like_dtype": lambda m, t: m.zeros_like(t, dtype=m.float64),
    "aten_zeros_like": lambda m, t: m.ops.aten.zeros_like(t),
    "aten_full_like": lambda m, t: m.ops.aten.full_like(t, 2.0),
    "aten_clone": lambda m, t: m.ops.aten.clone(t),
    "copy_": lambda m, t: m.empty(3).copy_(t),
    "to_float64": lambda m, t: t.to(m.float64),
    "add": lambda m, t: t + 1,
    "reshape_copy": lambda m, t: t.expand(2, 3).t().reshape(-1),
}


def _version(t: Any) -> int | str:
    try:
        return int(t._version)
    except RuntimeError:
        return "no version"


def _observe(m: Any, name: str, source: str, inside: bool) -> tuple[int | str, bool]:
    if source == "inference":
        with m.inference_mode():
            t = m.ones(3)
    else:
        t = m.ones(3)
    if inside:
        with m.inference_mode():
            r = OPS[name](m, t)
    else:
        r = OPS[name](m, t)
    return (_version(r), bool(r.is_inference()))


@pytest.mark.parametrize("inside", [False, True], ids=["outside", "inside"])
@pytest.mark.parametrize("source", ["inference", "normal"])
@pytest.mark.parametrize("name", list(OPS))
def test_result_version_matches_torch(name: str, source: str, inside: bool) -> None:
    assert _observe(td, name, source, inside) == _observe(torch, name, source, inside)


def test_clone_of_an_inference_tensor_is_at_version_one() -> None:
    with td.inference_mode():
        t = td.ones(3)
    r = t.clone()
    assert (r._version, r.is_inference(), r.tolist()) == (1, False, [1.0, 1.0, 1.0])


def test_zeros_like_binding_and_aten_operator_differ_as_torchs() -> None:
    def versions(m: Any) -> tuple[int, int]:
        with m.inference_mode():
            t = m.ones(3)
        return (m.zeros_like(t)._version, m.ops.aten.zeros_like(t)._version)

    assert versions(td) == versions(torch) == (0, 1)


def test_reshape_copy_is_no_view_as_torchs() -> None:
    def fields(m: Any) -> tuple[bool, int, str, list[list[float]]]:
        x = m.ones(2, 3, requires_grad=True)
        y = x.t().reshape(-1)
        (y * m.arange(6.0)).sum().backward()
        return (y._base is None, y._version, type(y.grad_fn).__name__, x.grad.tolist())

    assert fields(td) == fields(torch)
    assert fields(td)[:3] == (True, 0, "UnsafeViewBackward0")


def test_unsafe_view_result_has_its_own_version_counter() -> None:
    def fields(m: Any) -> tuple[bool, int, int, bool]:
        c = m.ones(2, 3)
        u = m.ops.aten._unsafe_view(c, [6])
        c.add_(1)
        return (u._base is None, c._version, u._version, u.tolist() == [2.0] * 6)

    assert fields(td) == fields(torch) == (True, 1, 0, True)
