"""The conjugate and negative bits against torch 2.13 (Note [The conjugate and negative bits]):
the views, writes through them, the fallback's results, copy_, values, printing, NumPy."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import tensordispatch as td
from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import keyset_raw

Z = [[1 + 2j, 3 - 4j, 0.5j], [2 + 0j, -1 - 1j, 7 + 3j]]


def _conj(m: Any) -> Any:
    """A complex64 conjugate view of Z (its base holds Z)."""
    return m.tensor(Z, dtype=m.complex64).conj()


def _norm(r: Any) -> Any:
    """A comparable form: tensors as (values, dtype name, is_conj, is_neg)."""
    if isinstance(r, (tuple, list)):
        return [_norm(v) for v in r]
    if isinstance(r, (torch.Tensor, td.Tensor)):
        return (r.tolist(), str(r.dtype).split(".")[-1], r.is_conj(), r.is_neg())
    return r


def _same(case: Callable[[Any, Any], Any]) -> None:
    got = [_norm(case(m, _conj(m))) for m in (torch, td)]
    np.testing.assert_equal(got[1], got[0])


def test_conj_is_a_view_of_its_input_with_the_conjugate_key() -> None:
    x = td.tensor([1 + 2j, 3j])
    c = x.conj()
    assert c.is_conj() and not x.is_conj()
    assert c._base is x and c.data_ptr() == x.data_ptr()
    assert c._key_set & keyset_raw(DispatchKey.Conjugate)
    assert c._data.tolist() == x._data.tolist()  # the storage keeps the unconjugated values


def test_conj_of_a_conj_view_clears_the_bit_and_stays_a_view() -> None:
    x = td.tensor([1 + 2j])
    cc = x.conj().conj()
    assert not cc.is_conj() and cc._base is x
    assert cc.tolist() == [1 + 2j]


def test_conj_view_shares_the_version_counter() -> None:
    x = td.tensor([1 + 2j, 3j])
    c = x.conj()
    c.add_(1)
    assert x._version == c._version == 1


def test_imag_of_a_conj_view_is_a_negative_view_of_the_base() -> None:
    x, t = td.tensor([1 + 2j, 3 - 4j]), torch.tensor([1 + 2j, 3 - 4j])
    i, it = x.conj().imag, t.conj().imag
    assert (i.is_neg(), i._base is x, i.tolist()) == (True, True, it.tolist())
    r = x.conj().real
    assert not r.is_neg() and r.tolist() == t.conj().real.tolist()


def test_neg_view_values_and_bit_as_torch() -> None:
    got = [m.tensor([1.0, -2.0])._neg_view() for m in (torch, td)]
    assert [g.is_neg() for g in got] == [True, True]
    assert got[1].tolist() == got[0].tolist() == [-1.0, 2.0]


VIEWS_KEEP_THE_BIT: dict[str, Callable[[Any], Any]] = {
    "t": lambda c: c.t(),
    "slice": lambda c: c[:, 1:],
    "select": lambda c: c[1],
    "view": lambda c: c.view(6),
    "reshape": lambda c: c.reshape(3, 2),
    "expand": lambda c: c[0:1].expand(3, 3),
    "unsqueeze": lambda c: c.unsqueeze(0),
    "permute": lambda c: c.permute(1, 0),
    "diagonal": lambda c: c.diagonal(),
}


@pytest.mark.parametrize("name", VIEWS_KEEP_THE_BIT)
def test_views_keep_the_bit_as_torch(name: str) -> None:
    _same(lambda m, c: VIEWS_KEEP_THE_BIT[name](c))


def test_alias_keeps_the_bit_as_torch() -> None:
    _same(lambda m, c: m.ops.aten.alias.default(c))


FALLBACK_RESULTS: dict[str, Callable[[Any, Any], Any]] = {
    "add scalar": lambda m, c: c + 1,
    "add tensor": lambda m, c: c + c.clone(),
    "mul self": lambda m, c: c * c,
    "rsub": lambda m, c: 1 - c,
    "div": lambda m, c: c / 2,
    "sum": lambda m, c: c.sum(),
    "mean": lambda m, c: c.mean(),
    "prod": lambda m, c: c.prod(),
    "abs": lambda m, c: c.abs(),
    "exp": lambda m, c: c.exp(),
    "mm": lambda m, c: c @ c.mT,
    "matmul vec": lambda m, c: c @ c[0],
    "cat": lambda m, c: m.cat([c, c.resolve_conj()]),
    "stack": lambda m, c: m.stack([c, c]),
    "index": lambda m, c: c[m.tensor([1, 0])],
    "where": lambda m, c: m.where(c.real > 1, c, m.zeros_like(c)),
    "contiguous": lambda m, c: c.t().contiguous(),
    "clone": lambda m, c: c.clone(),
    "to": lambda m, c: c.to(m.complex128),
    "eq": lambda m, c: c == c.resolve_conj(),
    "resolve_conj": lambda m, c: c.resolve_conj(),
    "conj_physical": lambda m, c: c.conj_physical(),
    "imag clone": lambda m, c: c.imag.clone(),
    "imag sum": lambda m, c: c.imag.sum(),
    "imag add": lambda m, c: c.imag + 1,
    "imag resolve_neg": lambda m, c: c.imag.resolve_neg(),
    "empty_like has no bit": lambda m, c: m.empty_like(c).is_conj(),
    "zeros_like": lambda m, c: m.zeros_like(c),
    "unbind": lambda m, c: c.unbind(0),
    "split": lambda m, c: c.split(1),
    "item": lambda m, c: c[0, 0].item(),
}


@pytest.mark.parametrize("name", FALLBACK_RESULTS)
def test_results_on_conj_views_match_torch(name: str) -> None:
    _same(FALLBACK_RESULTS[name])


WRITES: dict[str, Callable[[Any, Any], Any]] = {
    "add_": lambda m, c: c.add_(1j),
    "mul_ of imag": lambda m, c: c.imag.mul_(2),
    "fill_": lambda m, c: c.fill_(2j),
    "zero_": lambda m, c: c.zero_(),
    "neg_": lambda m, c: c.neg_(),
    "setitem": lambda m, c: c.__setitem__((0, 0), 9j),
    "conj_physical_": lambda m, c: c.conj_physical_(),
    "copy_ plain into conj": lambda m, c: c.copy_(m.ones(2, 3) * 1j),
    "copy_ conj into conj": lambda m, c: c.copy_(c.resolve_conj().conj() * 2),
    "copy_ conj into its base": lambda m, c: c._base.copy_(c),
    "copy_ base into its conj": lambda m, c: c.copy_(c._base),
    "out=": lambda m, c: m.mul(m.ones(2, 3, dtype=m.complex64) * 1j, 2, out=c),
    "index_put_": lambda m, c: c.__setitem__((m.tensor([0, 1]), m.tensor([2, 0])), 5j),
    "mask assignment": lambda m, c: c.__setitem__(c.real > 1.5, 7j),
    "slice assignment": lambda m, c: c.__setitem__((slice(None), slice(1, 2)), 2 + 2j),
    "masked_fill_": lambda m, c: c.masked_fill_(c.imag > 0, 9),
}


@pytest.mark.parametrize("name", WRITES)
def test_writes_through_conj_views_reach_the_base_as_torch(name: str) -> None:
    def case(m: Any, c: Any) -> Any:
        result = WRITES[name](m, c)
        is_self = result is c if isinstance(result, type(c)) else None
        return c, c._base, is_self

    _same(case)


def test_copy_from_a_conj_view_materializes() -> None:
    _same(lambda m, c: m.zeros(2, 3, dtype=m.complex64).copy_(c))


def test_copy_between_negative_and_plain_views() -> None:
    def case(m: Any, _: Any) -> Any:
        base = m.tensor([1.0, -2.0, 3.0])
        n = base._neg_view()
        n.copy_(m.tensor([5.0, 6.0, 7.0]))
        plain = m.zeros(3).copy_(n)
        return base, plain

    _same(case)


def test_printing_shows_the_resolved_values() -> None:
    for make in (lambda m: _conj(m), lambda m: _conj(m).imag):
        texts = [repr(make(m)).replace("tensordispatch", "torch") for m in (torch, td)]
        assert texts[1] == texts[0]


def test_tolist_and_item_resolve() -> None:
    c = _conj(td)
    assert c.tolist() == _conj(torch).tolist()
    assert c[0, 0].item() == 1 - 2j and c.imag[0, 0].item() == -2.0


def test_numpy_refuses_a_conj_view_with_torchs_text() -> None:
    messages = []
    for m in (torch, td):
        with pytest.raises(RuntimeError) as info:
            _conj(m).numpy()
        messages.append(str(info.value))
    assert messages[1] == messages[0]
    assert messages[1] == (
        "Can't call numpy() on Tensor that has conjugate bit set. Use "
        "tensor.resolve_conj().numpy() instead."
    )


def test_numpy_refuses_a_negative_view_with_torchs_text() -> None:
    messages = []
    for m in (torch, td):
        with pytest.raises(RuntimeError) as info:
            _conj(m).imag.numpy()
        messages.append(str(info.value))
    assert messages[1] == messages[0]
    assert messages[1] == (
        "Can't call numpy() on Tensor that has negative bit set. Use "
        "tensor.resolve_neg().numpy() instead."
    )


def test_numpy_force_and_asarray_as_torch() -> None:
    assert _conj(td).numpy(force=True).tolist() == _conj(torch).numpy(force=True).tolist()
    for m in (torch, td):
        with pytest.raises(RuntimeError, match="conjugate bit set"):
            np.asarray(_conj(m))


def test_view_as_real_refuses_a_conj_view_with_torchs_text() -> None:
    messages = []
    for m in (torch, td):
        with pytest.raises(RuntimeError) as info:
            m.view_as_real(_conj(m))
        messages.append(str(info.value))
    assert messages[1] == messages[0]
    assert messages[1] == (
        "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the "
        "conjugate tensor so you can view it as real, use self.resolve_conj(); however, be "
        "warned that the resulting tensor will NOT alias the original."
    )


def test_resolve_of_a_tensor_without_the_bit_is_the_tensor() -> None:
    x = td.tensor([1j])
    assert x.resolve_conj() is x and x.resolve_neg() is x
    assert td.tensor([1.0]).conj() is not None and not td.tensor([1.0]).conj().is_conj()


def test_meta_conj_view_carries_the_bit() -> None:
    got = [m.empty(2, 3, dtype=m.complex64, device="meta").conj() for m in (torch, td)]
    assert [g.is_conj() for g in got] == [True, True]
    assert [tuple(g.add(1).shape) for g in got] == [(2, 3), (2, 3)]
    assert [g.add(1).is_conj() for g in got] == [False, False]


def test_deepcopy_is_resolved_as_torch() -> None:
    got = []
    for m in (torch, td):
        c, n = _conj(m), m.tensor([1.0, -2.0])._neg_view()
        dc, dn = copy.deepcopy(c), copy.deepcopy(n)
        got.append((dc.tolist(), dc.is_conj(), dn.tolist(), dn.is_neg()))
    assert got[1] == got[0]


def test_dlpack_refuses_a_conj_view_with_torchs_text() -> None:
    messages = []
    for m in (torch, td):
        with pytest.raises(BufferError) as info:
            _conj(m).__dlpack__()
        messages.append(str(info.value))
    assert messages[1] == messages[0] == "Can't export tensors with the conjugate bit set"


def test_detach_and_data_keep_the_bits_as_torch() -> None:
    def case(m: Any, c: Any) -> Any:
        n = m.tensor([1.0, -2.0])._neg_view()
        return c.detach(), c.data, m.ops.aten.detach.default(c), n.detach(), n.data

    _same(case)


def test_unsafe_view_and_reshapes_keep_or_resolve_the_bit_as_torch() -> None:
    def case(m: Any, c: Any) -> Any:
        u = m.ops.aten._unsafe_view.default(c, [6])
        return u, c.t().reshape(6), c.expand(2, 2, 3).reshape(12), c.flatten()

    _same(case)


# -- property: chains of views, bits and writes agree with torch ---------------------------------

_STEPS: dict[str, Callable[[Any, Any], Any]] = {
    "conj": lambda m, t: t.conj(),
    "neg view": lambda m, t: t._neg_view(),
    "transpose": lambda m, t: t.mT,
    "slice": lambda m, t: t[..., 1:],
    "unsqueeze": lambda m, t: t.unsqueeze(0),
    "imag": lambda m, t: t.imag if t.dtype.is_complex else t,
    "add": lambda m, t: t + 1j if t.dtype.is_complex else t + 1,
    "write": lambda m, t: t.mul_(2),
    "resolve": lambda m, t: t.resolve_conj().resolve_neg(),
}


@given(st.lists(st.sampled_from(sorted(_STEPS)), min_size=1, max_size=6))
@settings(max_examples=60, deadline=None)
def test_chains_of_bit_views_match_torch(steps: list[str]) -> None:
    got = []
    for m in (torch, td):
        base = m.tensor(Z, dtype=m.complex128)
        t = base
        for step in steps:
            t = _STEPS[step](m, t)
        # values up to the sign of zero (torch's vectorized complex negation gives +0 where a
        # scalar one, and NumPy, give -0), then the dtype and bits
        values = [np.array(r.tolist()) + 0 for r in (t, base)]
        got.append((values, [_norm(r)[1:] for r in (t, base)]))
    np.testing.assert_equal(got[1], got[0])


def test_dot_reads_the_conjugate_bit_as_torch() -> None:
    def case(m: Any, _: Any) -> Any:
        a, b = m.tensor([1j, 2.0, 1 + 1j]), m.tensor([1.0, 1j, 2 - 1j])
        c = a.conj()
        out = m.zeros((), dtype=m.complex64)
        m.dot(c, b.conj(), out=out)
        return m.dot(c, b.conj()), m.dot(c, b), m.dot(a, b.conj()), c.dot(c), out

    _same(case)
