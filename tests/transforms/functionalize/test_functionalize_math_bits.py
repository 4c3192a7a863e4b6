"""functionalize over the conjugate and negative bits against torch.func.functionalize: the
wrapper of a conjugate view carries the bit, mutations through it reach the input, and
remove='mutations_and_views' replays the views as _conj_copy (no bit), as torch's."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import tensordispatch as td

X = [[1j, 2j], [3 + 1j, 4 + 0j]]


def _program(x: Any) -> Any:
    y = x.conj()
    z = y * 2
    y.add_(1)
    return z, y.is_conj()


@pytest.mark.parametrize("remove", ["mutations", "mutations_and_views"])
def test_program_matches_torch(remove: str) -> None:
    got = []
    for m in (torch, td):
        x = m.tensor(X)
        z, is_conj = m.func.functionalize(_program, remove=remove)(x)
        got.append((z.tolist(), is_conj, x.tolist()))
    assert got[1] == got[0]


def test_negative_view_matches_torch() -> None:
    got = []
    for m in (torch, td):
        x = m.tensor([1.0, 2.0])
        r = m.func.functionalize(lambda t: t._neg_view() * 2)(x)
        got.append(r.tolist())
    assert got[1] == got[0] == [-2.0, -4.0]


def _imag_after_add(m: Any, x: Any) -> Any:
    y = x.conj()
    y.add_(1)
    return y.imag * 1


def _write_imag(m: Any, x: Any) -> Any:
    y = x.conj()
    y.imag.mul_(2)
    return y * 1


def _write_neg_view(m: Any, x: Any) -> Any:
    y = x.conj().imag  # a negative view
    y[0].add_(5)
    return x.conj() * 1, y * 1


def _view_as_real_of_conj(m: Any, x: Any) -> Any:
    return m.view_as_real(x.conj()) * 1


def _write_then_read_conj_row(m: Any, x: Any) -> Any:
    y = x.conj()[1]
    x.mul_(2)
    return y * 1


BIT_PROGRAMS = {
    "imag of a conj view after add_": _imag_after_add,
    "write through the imag of a conj view": _write_imag,
    "write through a negative view": _write_neg_view,
    "view_as_real of a conj view": _view_as_real_of_conj,
    "conj row read after a write to the base": _write_then_read_conj_row,
}


@pytest.mark.parametrize("remove", ["mutations", "mutations_and_views"])
@pytest.mark.parametrize("name", BIT_PROGRAMS)
def test_views_with_bits_after_mutations_match_torch(name: str, remove: str) -> None:
    # torch accepts y.imag of a conj view here (its imag is a negative view of view_as_real
    # of the resolved conj): values of the results and of the mutated input are torch's
    got: list[Any] = []
    for m in (torch, td):
        x = m.tensor(X)
        try:
            out = m.func.functionalize(lambda t, m=m: BIT_PROGRAMS[name](m, t), remove=remove)(x)
        except RuntimeError as e:
            got.append(str(e))
            continue
        outs = out if isinstance(out, tuple) else (out,)
        got.append(([o.resolve_conj().resolve_neg().tolist() for o in outs], x.tolist()))
    assert got[1] == got[0]


@pytest.mark.parametrize("name", ["imag of a conj view after add_", "view_as_real of a conj view"])
def test_view_as_real_of_a_conj_view_is_refused_as_torch(name: str) -> None:
    # with views kept, the conj view's wrapper holds a conj inner tensor, which
    # view_as_real refuses (torch's text); without views it holds the resolved values
    messages = []
    for m in (torch, td):
        with pytest.raises(RuntimeError) as info:
            m.func.functionalize(lambda t, m=m: BIT_PROGRAMS[name](m, t))(m.tensor(X))
        messages.append(str(info.value))
    assert (
        messages[1]
        == messages[0]
        == (
            "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate "
            "tensor so you can view it as real, use self.resolve_conj(); however, be warned that "
            "the resulting tensor will NOT alias the original."
        )
    )
