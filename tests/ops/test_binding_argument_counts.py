"""Function bindings word missing and extra arguments as torch 2.13's Python arg parser (Note
[Functions count their arguments] in codegen/python_errors.py), and varargs size lists take
and refuse what torch's do (Note [Size lists given as varargs]); against torch itself."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch.codegen.model import PYTHON_FUNCTIONS
from tensordispatch.generated import functions

# torch's function, not its parser, words these: nothing to compare
_NOT_PARSED = {"split"}
_GENERATED = sorted(
    n
    for n in functions.__all__
    if n not in PYTHON_FUNCTIONS and not n.startswith("_") and hasattr(torch, n)
)


def _outcome(fn: Callable[[], Any]) -> tuple[type | None, str]:
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the outcome is compared, whatever it is
        return type(e), str(e)
    return None, ""


def _parser_texts(name: str) -> list[tuple[int, tuple[type | None, str], tuple[type | None, str]]]:
    """(count, torch's outcome, ours) of ``name`` called with 0..6 tensors, where torch's
    parser rejects the call's arguments (missing, too many, no signature)."""
    found = []
    for k in range(7):
        ours = _outcome(lambda k=k: getattr(td, name)(*[td.ones(2, 2)] * k))
        theirs = _outcome(lambda k=k: getattr(torch, name)(*[torch.ones(2, 2)] * k))
        words = ("missing", "invalid combination", "positional argument")
        if theirs[0] is TypeError and any(w in theirs[1] for w in words):
            found.append((k, theirs, ours))
    return found


def _counts_arguments(name: str) -> bool:
    """Whether the binding words missing arguments itself: it has keyword-only parameters
    (Note [Functions count their arguments]); the others leave Python's texts."""
    return bool(getattr(functions, name).__code__.co_kwonlyargcount)


@pytest.mark.parametrize("name", _GENERATED)
def test_function_argument_count_texts_are_torchs(name: str) -> None:
    """Every generated function, called with 0..6 tensors: each call torch's parser rejects
    for its count is rejected with torch's type and text (too many arguments only, where the
    binding leaves Python's texts)."""
    for k, theirs, ours in _parser_texts(name):
        if _counts_arguments(name) or " takes " in theirs[1]:
            assert (k, ours) == (k, theirs)


def test_most_functions_count_their_arguments() -> None:
    counting = [n for n in _GENERATED if _counts_arguments(n)]
    assert len(counting) > len(_GENERATED) - len(counting)
    assert "add" in counting and "t" not in counting


def test_the_sweep_covers_missing_and_extra_arguments() -> None:
    kinds = {"missing": 0, "takes": 0, "invalid combination": 0}
    for name in ("neg", "add", "addmm", "sum", "as_strided", "bitwise_and"):
        for _, theirs, _ in _parser_texts(name):
            for kind in kinds:
                kinds[kind] += kind in theirs[1]
    assert all(kinds.values()), kinds


# ----- golden texts (each also compared with torch's) ----------------------------------

GOLDEN: list[Any] = [
    pytest.param(
        lambda L: L.neg(),
        'neg() missing 1 required positional arguments: "input"',
        id="missing: torch's plural",
    ),
    pytest.param(
        lambda L: L.as_strided_copy(L.ones(4)),
        'as_strided_copy() missing 2 required positional argument: "size", "stride"',
        id="missing two",
    ),
    pytest.param(
        lambda L: L.add(L.ones(2)),
        "add() received an invalid combination of arguments - got (Tensor), but expected "
        "(Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None)",
        id="missing, hidden signature",
    ),
    pytest.param(
        lambda L: L.neg(L.ones(2), 1),
        "neg() takes 1 positional argument but 2 were given",
        id="too many",
    ),
    pytest.param(
        lambda L: L.sum(L.ones(2), 0, True, None, 5),
        "sum() takes from 2 to 3 positional arguments but 5 were given",
        id="too many, one plausible of several",
    ),
    pytest.param(
        lambda L: L.add(L.ones(2), L.ones(2), 1, alpha=2),
        "add() takes 2 positional arguments but 3 were given",
        id="too many with a keyword",
    ),
    pytest.param(
        lambda L: L.add(*[L.ones(2)] * 5),
        "add() received an invalid combination of arguments - got (Tensor, Tensor, !Tensor!, "
        "!Tensor!, !Tensor!), but expected (Tensor input, Tensor other, *, Number alpha = 1, "
        "Tensor out = None)",
        id="as many as the entries: marked",
    ),
    pytest.param(
        lambda L: L.add(alpha=2),
        "add() received an invalid combination of arguments - got unrecognized keyword "
        "arguments: alpha",
        id="keywords alone",
    ),
    pytest.param(
        lambda L: L.bitwise_and(),
        "bitwise_and() received an invalid combination of arguments - got (), but expected one "
        "of:\n * (Tensor input, Tensor other, *, Tensor out = None)\n * (Number self, Tensor "
        "other)\n * (Tensor input, Number other, *, Tensor out = None)\n",
        id="no overload fits",
    ),
    pytest.param(
        lambda L: L.zeros(L.int64),
        "zeros(): argument 'size' (position 1) must be tuple of ints, not torch.dtype",
        id="zeros(int64)",
    ),
    pytest.param(
        lambda L: L.zeros(2, L.int64),
        "zeros(): argument 'size' failed to unpack the object at pos 2 with error \"type must "
        'be tuple of ints,but got torch.dtype"',
        id="zeros(2, int64)",
    ),
    pytest.param(
        lambda L: L.zeros([2, 2.5]),
        "zeros(): argument 'size' failed to unpack the object at pos 2 with error \"type must "
        'be tuple of ints,but got float"',
        id="a list with a float",
    ),
    pytest.param(
        lambda L: L.zeros("ab"),
        "zeros(): argument 'size' (position 1) must be tuple of ints, not str",
        id="a str",
    ),
    pytest.param(
        lambda L: L.zeros([2, 3], [3]),
        "zeros() takes 1 positional argument but 2 were given",
        id="a list and more",
    ),
    pytest.param(
        lambda L: L.zeros(),
        'zeros() missing 1 required positional arguments: "size"',
        id="zeros()",
    ),
    pytest.param(
        lambda L: L.ones(2).flip(),
        'flip() missing 1 required positional arguments: "dims"',
        id="flip()",
    ),
    pytest.param(
        lambda L: L.tensor(1.0).expand(),
        'expand() missing 1 required positional arguments: "size"',
        id="expand() of a 0-dim tensor",
    ),
    pytest.param(
        lambda L: L.ones(1).view(),
        "view() received an invalid combination of arguments - got (), but expected one of:\n"
        " * (torch.dtype dtype)\n * (tuple of ints size)\n",
        id="view()",
    ),
    pytest.param(
        lambda L: L.ones(2, 2).permute(0, 1.5),
        "permute(): argument 'dims' failed to unpack the object at pos 2 with error \"type "
        'must be tuple of ints,but got float"',
        id="permute(0, 1.5)",
    ),
]


@pytest.mark.parametrize(("call", "expected"), GOLDEN)
def test_golden_argument_texts(call: Callable[[Any], Any], expected: str) -> None:
    assert _outcome(lambda: call(td)) == (TypeError, expected)
    assert _outcome(lambda: call(torch)) == (TypeError, expected)


# ----- what torch rejects and takes, ours alike ------------------------------------------

NO_SIZE: list[Any] = [
    pytest.param(lambda t: t.flip(), id="flip"),
    pytest.param(lambda t: t.permute(), id="permute"),
    pytest.param(lambda t: t.view(), id="view"),
    pytest.param(lambda t: t.reshape(), id="reshape"),
    pytest.param(lambda t: t.repeat(), id="repeat"),
    pytest.param(lambda t: t.expand(), id="expand"),
    pytest.param(lambda t: t.expand(size=()), id="expand(size=())"),
    pytest.param(lambda t: t.flip(dims=0), id="flip(dims=0)"),
]


@pytest.mark.parametrize("call", NO_SIZE)
@pytest.mark.parametrize("shape", [(), (2,), (2, 3)])
def test_size_list_methods_refuse_as_torch(call: Callable[[Any], Any], shape: tuple) -> None:
    """No size at all is a TypeError; an empty one is as valid as torch finds it."""
    ours = _outcome(lambda: call(td.ones(shape)))
    theirs = _outcome(lambda: call(torch.ones(shape)))
    assert ours[0] is theirs[0]
    if theirs[0] is TypeError:
        assert ours == theirs


@pytest.mark.parametrize("name", ["zeros", "ones", "empty"])
def test_factories_refuse_no_size_as_torch(name: str) -> None:
    assert _outcome(getattr(td, name)) == _outcome(getattr(torch, name))
    keyword = {"dtype": td.int64}, {"dtype": torch.int64}
    assert _outcome(lambda: getattr(td, name)(**keyword[0])) == _outcome(
        lambda: getattr(torch, name)(**keyword[1])
    )


TAKEN: list[Any] = [
    pytest.param(lambda L: L.zeros(np.int64(3)), id="zeros(np.int64)"),
    pytest.param(lambda L: L.zeros(np.int64(2), 3), id="zeros(np.int64, int)"),
    pytest.param(lambda L: L.ones((2, 3)), id="ones(tuple)"),
    pytest.param(lambda L: L.ones([]), id="ones([])"),
    pytest.param(lambda L: L.ones(()), id="ones(())"),
    pytest.param(lambda L: L.zeros(size=(2,)), id="zeros(size=)"),
    pytest.param(lambda L: L.zeros(2, True), id="a bool item"),
    pytest.param(lambda L: L.arange(6).view(np.int64(6)), id="view(np.int64)"),
    pytest.param(lambda L: L.arange(6).view(2, 3).flip(np.int64(1)), id="flip(np.int64)"),
    pytest.param(lambda L: L.arange(6).view(2, 3).permute([1, 0]), id="permute(list)"),
    pytest.param(lambda L: L.arange(6).view(2, 3).flip([]), id="flip([])"),
    pytest.param(lambda L: L.arange(3).expand(np.int64(2), 3), id="expand(np.int64, int)"),
    pytest.param(lambda L: L.tensor(1.0).expand([]), id="expand([]) of a 0-dim tensor"),
    pytest.param(lambda L: L.arange(3).repeat(np.int64(2)), id="repeat(np.int64)"),
]


@pytest.mark.parametrize("call", TAKEN)
def test_size_lists_torch_takes_are_taken(call: Callable[[Any], Any]) -> None:
    ours, theirs = call(td), call(torch)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.tolist() == theirs.tolist()


def test_function_calls_with_keywords_still_work() -> None:
    a, b = td.arange(4.0), td.ones(4)
    got = td.add(input=a, other=b, alpha=2)
    assert got.tolist() == torch.add(torch.arange(4.0), torch.ones(4), alpha=2).tolist()
    out = td.empty(4)
    td.neg(a, out=out)
    assert out.tolist() == [-0.0, -1.0, -2.0, -3.0]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "bool", "complex64"])
@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_expand_with_too_few_sizes_names_torchs_type(dtype: str, device: str) -> None:
    ours = _outcome(lambda: td.ones(2, 2, dtype=getattr(td, dtype), device=device).expand(2))
    theirs = _outcome(
        lambda: torch.ones(2, 2, dtype=getattr(torch, dtype), device=device).expand(2)
    )
    assert ours == theirs
    assert ours[0] is RuntimeError


HAND_WRITTEN: list[Any] = [
    pytest.param(lambda L: L.cat(), id="cat()"),
    pytest.param(lambda L: L.cat(dim=0), id="cat(dim=0)"),
    pytest.param(lambda L: L.cat(5), id="cat(5)"),
    pytest.param(lambda L: L.cat(tensors=5), id="cat(tensors=5)"),
    pytest.param(lambda L: L.rand(), id="rand()"),
    pytest.param(lambda L: L.randn(), id="randn()"),
    pytest.param(lambda L: L.rand(dtype=L.float64), id="rand(dtype=)"),
    pytest.param(lambda L: L.ones(2).resize_(), id="resize_()"),
    pytest.param(lambda L: L.cat([L.ones(1)], 0, 1), id="cat: too many"),
    pytest.param(lambda L: L.where(), id="where()"),
    pytest.param(lambda L: L.ones(2).where(), id="Tensor.where()"),
    pytest.param(lambda L: L.clamp(), id="clamp()"),
    pytest.param(lambda L: L.clamp_(), id="clamp_()"),
    pytest.param(lambda L: L.squeeze(), id="squeeze()"),
    pytest.param(lambda L: L.squeeze(L.ones(2), L.ones(2)), id="squeeze: no signature fits"),
    pytest.param(lambda L: L.squeeze_copy(), id="squeeze_copy()"),
    pytest.param(lambda L: L.where(*[L.ones(2)] * 4), id="where: too many"),
    pytest.param(lambda L: L.where(*[L.ones(2)] * 5), id="where: no signature fits"),
    pytest.param(lambda L: L.clamp(*[L.ones(2)] * 4), id="clamp: too many"),
    pytest.param(lambda L: L.ones(4).split(), id="Tensor.split()"),
    pytest.param(lambda L: L.ones(4).split(dim=0), id="Tensor.split(dim=0)"),
    pytest.param(lambda L: L.split(L.ones(4)), id="split(t)"),
    pytest.param(lambda L: L.ones(2).std(0, "a"), id="Tensor.std(0, 'a')"),
    pytest.param(lambda L: L.all(), id="all()"),
    pytest.param(lambda L: L.any(L.ones(2), L.ones(2)), id="any: no signature fits"),
    pytest.param(lambda L: L.ones(2).all(L.ones(2)), id="Tensor.all: no signature fits"),
    pytest.param(lambda L: L.any(L.ones(2, 2), "a", True), id="any(t, 'a', True)"),
    pytest.param(lambda L: L.scatter(), id="scatter()"),
    pytest.param(lambda L: L.zeros(3).scatter(0, L.tensor([0, 2])), id="Tensor.scatter: no src"),
    pytest.param(lambda L: L.zeros(3).scatter_(), id="Tensor.scatter_()"),
    pytest.param(lambda L: L.scatter(L.zeros(3), 0, L.tensor([0, 2]), "a"), id="scatter: str"),
    pytest.param(lambda L: L.conv1d(), id="conv1d()"),
    pytest.param(lambda L: L.conv2d(L.ones(1, 1, 3, 3)), id="conv2d(input)"),
    pytest.param(lambda L: L.var(), id="var()"),
    pytest.param(lambda L: L.std(), id="std()"),
    pytest.param(lambda L: L.var(L.ones(2), "a"), id="var: no signature fits"),
    pytest.param(lambda L: L.ones(2).std("a"), id="Tensor.std: no signature fits"),
]


@pytest.mark.parametrize("call", HAND_WRITTEN)
def test_hand_written_bindings_word_missing_lists_as_torch(call: Callable[[Any], Any]) -> None:
    ours, theirs = _outcome(lambda: call(td)), _outcome(lambda: call(torch))
    assert ours == theirs
    assert ours[0] is TypeError


def test_cat_golden_missing_text() -> None:
    assert _outcome(td.cat) == (
        TypeError,
        'cat() missing 1 required positional arguments: "tensors"',
    )


def _counting_methods() -> list[str]:
    """Tensor methods taking ``*_td_more`` (Note [Functions count their arguments])."""
    from tensordispatch.generated import methods

    found = []
    for name, fn in methods.METHODS.items():
        code = getattr(fn, "__code__", None)
        if code is not None and "_td_more" in code.co_varnames and hasattr(torch.Tensor, name):
            found.append(name)
    return sorted(found)


@pytest.mark.parametrize("name", _counting_methods())
def test_method_extra_argument_texts_are_torchs(name: str) -> None:
    """Methods with keyword-only parameters, called with 1..5 tensors: each call torch's
    parser rejects for its count is rejected with torch's text."""
    checked = 0
    for k in range(1, 6):
        theirs = _outcome(lambda k=k: getattr(torch.ones(2, 2), name)(*[torch.ones(2, 2)] * k))
        if theirs[0] is TypeError and (" takes " in theirs[1] or "combination" in theirs[1]):
            ours = _outcome(lambda k=k: getattr(td.ones(2, 2), name)(*[td.ones(2, 2)] * k))
            assert (k, ours) == (k, theirs)
            checked += 1
    assert checked
