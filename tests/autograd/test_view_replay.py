"""In-place writes through views that ``as_strided`` of the root cannot reproduce (another
dtype: real / imag / view_as_real / view_as_complex; conjugate / negative bits), against
torch 2.13: values, gradients (first and second order) and the view's regenerated grad_fn
(Note [Replayed view history], Note [Views of another dtype] in autograd/view_replay.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td

Case = tuple[Callable[[Any, Any], Any], Callable[[Any, Any], Any]]


def _mul(k: Any) -> Callable[[Any, Any], Any]:
    return lambda m, v: v.mul_(k)


# view made from the clone y of a complex leaf, then the in-place write
COMPLEX_ROOT: dict[str, Case] = {
    "conj": (lambda m, y: y.conj(), _mul(2)),
    "conj, root written": (lambda m, y: y.conj(), lambda m, v: v._base.mul_(2)),
    "conj of a row": (lambda m, y: y[0].conj(), _mul(1j)),
    "row of a conj": (lambda m, y: y.conj()[0], _mul(1j)),
    "neg view": (lambda m, y: y._neg_view(), _mul(2)),
    "view_as_real": (lambda m, y: m.view_as_real(y), _mul(2)),
    "row of view_as_real": (lambda m, y: m.view_as_real(y)[0], _mul(2)),
    "view_as_real of a row": (lambda m, y: m.view_as_real(y[0]), _mul(2)),
    "real": (lambda m, y: y.real, lambda m, v: v.add_(1)),
    "imag": (lambda m, y: y.imag, _mul(3)),
    "imag, root written": (lambda m, y: y.imag, lambda m, v: v._base.mul_(2)),
    "imag of a conj": (lambda m, y: y.conj().imag, _mul(2)),
    "element of imag": (lambda m, y: y.imag[1], _mul(2)),
    "imag of a transpose": (lambda m, y: y.t().imag, _mul(2)),
    "view_as_complex of view_as_real": (lambda m, y: m.view_as_complex(m.view_as_real(y)), _mul(2)),
}
# view made from the clone y of a real (3, 2) leaf
REAL_ROOT: dict[str, Case] = {
    "view_as_complex": (lambda m, y: m.view_as_complex(y), _mul(2j)),
    "view_as_complex, root written": (
        lambda m, y: m.view_as_complex(y),
        lambda m, v: v._base.mul_(2),
    ),
    "rows of view_as_complex": (lambda m, y: m.view_as_complex(y)[1:], _mul(1 + 1j)),
    "conj of view_as_complex": (lambda m, y: m.view_as_complex(y).conj(), _mul(1 + 1j)),
    "view_as_complex of rows": (lambda m, y: m.view_as_complex(y[1:]), _mul(1 + 1j)),
}


def _chain(fn: Any) -> list[str]:
    names = []
    while fn is not None:
        names.append(fn.name().replace("torch::autograd::", ""))
        nexts = [f for f, _ in fn.next_functions if f is not None]
        fn = nexts[0] if nexts else None
    return names


def _run(m: Any, case: Case, complex_root: bool) -> tuple[list[str], Any, Any]:
    if complex_root:
        x = m.tensor([[1 + 2j, 3 - 1j], [2 + 0j, 1j]], dtype=m.complex128, requires_grad=True)
    else:
        x = m.tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 2.0]], dtype=m.float64, requires_grad=True)
    y = x.clone()
    make, write = case
    v = make(m, y)
    write(m, v)
    chain = _chain(v.grad_fn)
    weights = m.arange(y.numel()).reshape(y.shape)
    ((y.abs() ** 2 * weights).sum() + (v.abs() ** 3).sum()).backward()
    values = np.array(y.detach().resolve_conj().tolist())
    return chain, values, np.array(x.grad.tolist())


def _compare(case: Case, complex_root: bool) -> tuple[list[str], list[str]]:
    theirs = _run(torch, case, complex_root)
    ours = _run(td, case, complex_root)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)
    return ours[0], theirs[0]


# torch replays each view's own recorded ops; ours replays a canonical sequence (Note
# [Replayed view history]): for these the view nodes differ in order or number (torch's
# replay of y.conj().imag holds two ConjBackward0, of view_as_complex(view_as_real(y))
# ViewAsComplexBackward0 over ViewAsRealBackward0 where ours has one AsStridedBackward0).
ORDER_DIFFERS = {
    "imag of a transpose",
    "row of a conj",
    "view_as_real of a row",
    "imag of a conj",
    "element of imag",
    "view_as_complex of view_as_real",
    "rows of view_as_complex",
}


def _assert_chains(name: str, ours: list[str], theirs: list[str]) -> None:
    if name not in ORDER_DIFFERS:
        assert ours == theirs
    else:  # other view nodes over the same history
        assert ours[-3:] == theirs[-3:]


@pytest.mark.parametrize("name", COMPLEX_ROOT)
def test_write_through_a_view_of_a_complex_root_matches_torch(name: str) -> None:
    ours, theirs = _compare(COMPLEX_ROOT[name], complex_root=True)
    _assert_chains(name, ours, theirs)


@pytest.mark.parametrize("name", REAL_ROOT)
def test_write_through_a_complex_view_of_a_real_root_matches_torch(name: str) -> None:
    ours, theirs = _compare(REAL_ROOT[name], complex_root=False)
    _assert_chains(name, ours, theirs)


def test_the_briefs_example_matches_torch() -> None:
    results = []
    for m in (torch, td):
        x = m.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        y = x.clone()
        y.imag.mul_(3)
        y.real.add_(1)
        (y.abs() ** 2).sum().backward()
        results.append((y.detach().tolist(), x.grad.tolist(), type(y.grad_fn).__name__))
    assert results[1] == results[0] == (
        [(2 + 6j), (4 - 3j)], [(4 + 36j), (8 - 18j)], "CopySlices"
    )  # fmt: skip


def _double(m: Any, kind: str) -> tuple[Any, ...]:
    z = [[1 + 2j, 3 - 1j, 0.5j], [2 + 0j, 1j, -1 - 1j]]
    if kind == "imag then real":
        x = m.tensor(z, dtype=m.complex128, requires_grad=True)
        y = x.clone()
        y.imag[:, 1:].mul_(3)
        y.real.add_(y.imag * 2)
    elif kind == "view_as_real of a strided view":
        x = m.tensor(z, dtype=m.complex128, requires_grad=True)
        y = x * 1
        m.view_as_real(y[:, ::2])[..., 1].mul_(3)
    elif kind == "view_as_complex, padded":  # 7 floats: the last one is no whole complex
        x = m.tensor([1.0, 2.0, -3.0, 4.0, 5.0, 6.0, 7.0], dtype=m.float64, requires_grad=True)
        y = x.clone()
        m.view_as_complex(y[2:6].view(2, 2)).mul_(1 + 2j)
    elif kind == "imag of a root with gaps":
        x = m.tensor(z, dtype=m.complex128, requires_grad=True)
        y = m.empty_strided((2, 3), (4, 1), dtype=m.complex128)
        y.copy_(x)
        y.imag[:, 1:].mul_(3)
    else:  # view_as_complex of a real root with gaps
        x = m.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=m.float64, requires_grad=True)
        y = m.empty_strided((3, 2), (4, 1), dtype=m.float64)
        y.copy_(x)
        m.view_as_complex(y[1:]).mul_(2j)
    loss = (y.abs() ** 2 * m.arange(y.numel()).reshape(y.shape)).sum()
    (g,) = m.autograd.grad(loss, x, create_graph=True)
    (gg,) = m.autograd.grad((g.abs() ** 2).sum(), x)
    return tuple(np.array(t.detach().tolist()) for t in (y, g, gg))


@pytest.mark.parametrize(
    "kind",
    [
        "imag then real",
        "view_as_real of a strided view",
        "view_as_complex, padded",
        "imag of a root with gaps",
        "view_as_complex of a real root with gaps",
    ],
)
def test_double_backward_through_a_dtype_changing_view_matches_torch(kind: str) -> None:
    for ours, theirs in zip(_double(td, kind), _double(torch, kind), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_abs_gradient_of_a_negative_view_matches_torch() -> None:
    grads = []
    for m in (torch, td):
        a = m.tensor([1.0, -2.0], requires_grad=True)
        b = m.tensor([1 + 1j, -2 - 3j], requires_grad=True)
        (ga,) = m.autograd.grad(a._neg_view().abs().sum(), a)
        (gb,) = m.autograd.grad(b.conj().imag.abs().sum(), b)
        grads.append((ga.tolist(), gb.tolist()))
    assert grads[1] == grads[0] == ([1.0, -1.0], [1j, -1j])


def test_prod_gradient_of_a_negative_view_matches_torch() -> None:
    grads = []
    for m in (torch, td):
        a = m.tensor([1.0, -2.0, 0.0, 3.0], requires_grad=True)
        (g0,) = m.autograd.grad(a._neg_view().prod(), a)
        (g1,) = m.autograd.grad(a[:3]._neg_view().prod(), a)
        grads.append((g0.tolist(), g1.tolist()))
    assert grads[1] == grads[0]
    assert grads[0][0][2] == -6.0  # (-1) * 2 * (-3) * (-1): the others' negatives, negated
