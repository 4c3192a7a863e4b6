"""Pickling and deep-copying tensors with the conjugate / negative bits, against torch 2.13:
pickle keeps the bits (stored values and flags), deepcopy resolves them; deepcopy of a non-leaf
raises torch's message (tensor/serialization.py)."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import pytest
import torch

import tensordispatch as td

MAKERS: dict[str, Callable[[Any], Any]] = {
    "conj": lambda m: m.tensor([1 + 2j, 3 - 1j]).conj(),
    "neg view": lambda m: m.tensor([1.0, -2.0])._neg_view(),
    "slice of a conj": lambda m: m.tensor([1 + 2j, 3 - 1j, 5j]).conj()[1:],
    "imag of a conj": lambda m: m.tensor([1 + 2j, 3 - 1j]).conj().imag,
    "neg view of a conj": lambda m: m.tensor([1 + 2j])._neg_view().conj(),
    "plain": lambda m: m.tensor([1 + 2j]),
}


def _facts(t: Any) -> tuple[Any, ...]:
    return (t.is_conj(), t.is_neg(), t.tolist(), t._base is None, tuple(t.stride()), t.dtype)


@pytest.mark.parametrize("name", MAKERS)
def test_pickle_keeps_the_bits_as_torch(name: str) -> None:
    got = []
    for m in (torch, td):
        got.append(_facts(pickle.loads(pickle.dumps(MAKERS[name](m))))[:4])
    assert got[1] == got[0]  # strides differ: torch pickles a view's whole storage, we compact


@pytest.mark.parametrize("name", MAKERS)
def test_deepcopy_resolves_the_bits_as_torch(name: str) -> None:
    got = []
    for m in (torch, td):
        got.append(_facts(copy.deepcopy(MAKERS[name](m)))[:5])
    assert got[1] == got[0]
    assert got[0][:2] == (False, False)


def test_pickled_conj_computes_as_the_original() -> None:
    got = []
    for m in (torch, td):
        c = pickle.loads(pickle.dumps(m.tensor([1 + 2j, 3 - 1j]).conj()))
        got.append(((c * 1j).tolist(), c.resolve_conj().is_conj(), (c + c).is_conj()))
    assert got[1] == got[0]


def test_deepcopy_keeps_shared_tensors_shared() -> None:
    t = td.tensor([1 + 2j]).conj()
    a, b = copy.deepcopy([t, t])
    assert a is b and not a.is_conj()


def test_deepcopy_of_a_non_leaf_raises_torchs_message() -> None:
    messages = []
    for m in (torch, td):
        y = m.ones(2, requires_grad=True) * 2
        with pytest.raises(RuntimeError) as info:
            copy.deepcopy(y)
        messages.append(str(info.value))
    assert (
        messages[1]
        == messages[0]
        == (
            "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
            "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
            "because of a torch.nn.utils.weight_norm usage, see "
            "https://github.com/pytorch/pytorch/pull/103001"
        )
    )


def test_deepcopy_of_a_leaf_that_requires_grad_keeps_it() -> None:
    got = []
    for m in (torch, td):
        c = copy.deepcopy(m.tensor([1.0, 2.0], requires_grad=True))
        got.append((c.requires_grad, c.is_leaf, c.grad_fn))
    assert got[1] == got[0] == (True, True, None)
