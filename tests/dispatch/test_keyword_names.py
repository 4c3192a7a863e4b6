"""Schemas whose argument names are Python keywords (``float from``) get the generated entry
with those parameters renamed (Note [Keyword-named arguments] in calling.py): callers,
kernels, boxed kernels, modes and traces see the schema's names, as in torch 2.13."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import torch
from dispatch_oracle import fresh
from torch.utils import _python_dispatch as torch_pd

import tensordispatch as td
from tensordispatch import ops
from tensordispatch.backends.generator import Generator
from tensordispatch.dispatch import (
    BackendComponent,
    DispatchKey,
    DispatchKeySet,
    backend_tensor_keyset,
    dispatch_trace,
)
from tensordispatch.dispatch.errors import ArgumentTypeError
from tensordispatch.dispatch.modes import DispatchMode
from tensordispatch.library import Library

UNIFORM = "float from=0, float to=1, *, Generator? generator=None"


class T:
    __slots__ = ("_key_set",)

    def __init__(self) -> None:
        self._key_set = backend_tensor_keyset(BackendComponent.CPUBit).raw


@pytest.fixture
def both() -> Iterator[tuple[str, Library, Any]]:
    """A namespace defined on both sides: (name, our library, torch's library)."""
    ns = fresh("kwn")
    ours, theirs = Library(ns, "DEF"), torch.library.Library(ns, "DEF")
    yield ns, ours, theirs
    ours._destroy()
    theirs._destroy()


def _define_seen(both: tuple[str, Library, Any], schema: str) -> tuple[Any, Any, list[Any]]:
    """Define ``r(schema)`` on both sides with a CPU kernel logging (positional count,
    kwargs) into one list per side; returns (our op, torch's op, [our log, torch's log])."""
    ns, ours, theirs = both
    logs: list[list[Any]] = [[], []]
    for n, lib in enumerate((ours, theirs)):
        lib.define(f"r({schema}) -> Tensor")
        log = logs[n]
        lib.impl("r", lambda *a, _log=log, **k: _log.append((len(a), a[1:], k)) or a[0], "CPU")
    return getattr(ops, ns).r.default, getattr(torch.ops, ns).r.default, logs


def _calls(x: Any) -> list[Callable[[Any], Any]]:
    return [
        lambda r: r(x),
        lambda r: r(x, 2.0),
        lambda r: r(x, 2.0, 3.0),
        lambda r: r(x, **{"from": 2.0}),
        lambda r: r(x, to=3.0),
        lambda r: r(x, **{"from": 2.0, "to": 3.0}),
        lambda r: r(x, 2.0, to=3.0),
        lambda r: r(x, 2),  # an int for a float: converted
        lambda r: r(x, 2.0, generator=None),
        lambda r: r(self=x, **{"from": 1.5}),
    ]


def test_the_entry_is_generated_not_generic() -> None:
    uniform = ops.aten.uniform_.default
    td.ones(2).uniform_()
    code = uniform._entry.entry_function.__code__
    assert code.co_filename.startswith("<tensordispatch")
    assert code.co_varnames[:3] == ("self", "_td_arg1", "to")


def test_kernel_sees_the_arguments_torch_gives(both: tuple[str, Library, Any]) -> None:
    ours, theirs, (our_log, their_log) = _define_seen(both, f"Tensor self, {UNIFORM}")
    for call in _calls(T()):
        call(ours)
    for call in _calls(torch.ones(1)):
        call(theirs)
    assert our_log == their_log
    assert [type(v) for _, a, _ in our_log for v in a] == [float] * 13


def test_required_keyword_named_argument_binds_like_torch(both: tuple[str, Library, Any]) -> None:
    ours, theirs, (our_log, their_log) = _define_seen(both, "Tensor self, int from, int? to")
    for r, x in ((ours, T()), (theirs, torch.ones(1))):
        r(x, 1, None)
        r(x, **{"from": 2, "to": 3})
        r(x, 4, to=None)
    assert our_log == their_log == [(3, (1, None), {}), (3, (2, 3), {}), (3, (4, None), {})]


def test_keyword_only_keyword_named_argument(both: tuple[str, Library, Any]) -> None:
    ours, theirs, (our_log, their_log) = _define_seen(both, "Tensor self, *, int from, int to=2")
    for r, x in ((ours, T()), (theirs, torch.ones(1))):
        r(x, **{"from": 1})
        r(x, **{"from": 1, "to": 5})
    assert our_log == their_log == [(1, (), {"from": 1}), (1, (), {"from": 1, "to": 5})]


def _message(call: Callable[[], Any]) -> str:
    with pytest.raises(TypeError) as e:
        call()
    return str(e.value)


def test_binding_error_messages(both: tuple[str, Library, Any]) -> None:
    ours, _, _ = _define_seen(both, "Tensor self, int from, int? to=None")
    x = T()
    assert _message(lambda: ours(x)) == "r() missing required argument: 'from'"
    assert _message(lambda: ours(x, from_=1)) == ("r() got an unexpected keyword argument 'from_'")
    assert _message(lambda: ours(x, 1, **{"from": 2})) == (
        "r() got multiple values for argument 'from'"
    )
    assert _message(lambda: ours(x, 1, 2, 3)) == (
        "r() takes from 1 to 3 positional arguments but 4 were given"
    )


def test_conversion_error_names_the_schema_argument_like_torch() -> None:
    with pytest.raises(ArgumentTypeError) as ours:
        ops.aten.uniform_.default(td.ones(2), "a")
    with pytest.raises(RuntimeError) as theirs:
        torch.ops.aten.uniform_.default(torch.ones(2), "a")
    text = str(ours.value)
    declaration = (
        "aten::uniform_(Tensor(a!) self, float from=0, float to=1, *, Generator? generator=None)"
        " -> Tensor(a!)"
    )
    first = "Expected a value of type 'float' for argument 'from' but instead found type 'str'."
    assert text == f"aten::uniform_() {first}\nPosition: 1\nValue: 'a'\nDeclaration: {declaration}"
    # torch prints the defaults as 0. and 1. and adds a C++ cast line
    assert str(theirs.value).split("\n")[:3] == text.split("\n")[:3]


def test_an_int_bound_by_its_keyword_name_is_converted() -> None:
    g = Generator().manual_seed(3)
    got = td.empty(5, dtype=td.float64).uniform_(**{"from": 2, "to": 4}, generator=g).tolist()
    draws = np.random.Generator(np.random.PCG64(3)).random(5)
    assert got == (2.0 + 2.0 * draws).tolist()


def test_boxed_kernel_sees_the_full_stack(both: tuple[str, Library, Any]) -> None:
    ns, lib, _ = both
    lib.define(f"r(Tensor self, {UNIFORM}) -> Tensor")
    seen: list[Any] = []
    lib.impl("r", lambda op, ks, stack: seen.append(stack[1:]) or "ok", "CPU", boxed=True)
    r = getattr(ops, ns).r.default
    x = T()
    assert r(x, **{"from": 2.0}) == r(x, to=3.0) == r(x, generator=None) == "ok"
    cpu = DispatchKeySet(DispatchKey.CPU)
    assert r.redispatch(cpu, x, **{"from": 5.0}) == "ok"
    assert seen == [[2.0, 1.0, None], [0.0, 3.0, None], [0.0, 1.0, None], [5.0, 1.0, None]]
    with pytest.raises(TypeError, match="got an unexpected keyword argument 'from_'"):
        r.redispatch(cpu, x, from_=5.0)


def _logged(base: type) -> type:
    class Log(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__()
            self.log: list[Any] = []

        def __torch_dispatch__(
            self, func: Any, types: Any, args: Any = (), kwargs: Any = None
        ) -> Any:
            self.log.append((func.name(), args[1:], dict(kwargs or {})))
            return func(*args, **(kwargs or {}))

    return Log


def _mode_log(lib: Any, mode_cls: type) -> list[Any]:
    a = lib.ones(3)
    mode = mode_cls()
    with mode:
        a.uniform_()
        a.uniform_(0.25, 0.5)
        a.uniform_(**{"from": 0.25})
        lib.ops.aten.uniform_(a, **{"from": 0.25, "to": 0.75})
        lib.ops.aten.uniform_.default(a, to=0.75)
    return mode.log  # type: ignore[no-any-return]


def test_a_mode_sees_what_torchs_mode_sees() -> None:
    ours = _mode_log(td, _logged(DispatchMode))
    theirs = _mode_log(torch, _logged(torch_pd.TorchDispatchMode))
    assert ours == theirs
    assert ours[-1] == ("aten::uniform_", (0.0, 0.75), {})


def test_trace_records_the_call_and_the_kernel_its_arguments(
    both: tuple[str, Library, Any],
) -> None:
    ours, _, (log, _) = _define_seen(both, f"Tensor self, {UNIFORM}")
    with dispatch_trace() as trace:
        ours(T(), **{"from": 2.0})
    assert log == [(2, (2.0,), {})]
    assert [(h.op, h.key) for h in trace.hops][-1] == (f"{both[0]}::r", DispatchKey.CPU)


def test_left_out_positional_defaults_are_filled_in_like_torch(
    both: tuple[str, Library, Any],
) -> None:
    ours, theirs, (our_log, their_log) = _define_seen(both, "Tensor x, int a=1, int b=2")
    for r, x in ((ours, T()), (theirs, torch.ones(1))):
        r(x, b=3)
        r(x, a=4)
        r(x, b=5, a=6)
    assert our_log == their_log == [(3, (1, 3), {}), (2, (4,), {}), (3, (6, 5), {})]


def test_a_filled_in_list_default_is_a_fresh_list(both: tuple[str, Library, Any]) -> None:
    ns, lib, _ = both
    lib.define("r(Tensor x, int[] a=[1,2], int b=0) -> Tensor")
    seen: list[Any] = []
    lib.impl("r", lambda x, a=None, b=0: seen.append(list(a)) or a.append(9), "CPU")
    r = getattr(ops, ns).r.default
    r(T(), b=1)
    r(T(), b=1)
    assert seen == [[1, 2], [1, 2]]


def test_an_explicit_none_default_is_dropped_like_torch(both: tuple[str, Library, Any]) -> None:
    schema = "Tensor x, int? a=None, int b=2, *, Generator? generator=None, ScalarType? d=None"
    ours, theirs, (our_log, their_log) = _define_seen(both, schema)
    for r, x in ((ours, T()), (theirs, torch.ones(1))):
        r(x, None)
        r(x, None, 3)
        r(x, generator=None, d=None)
        r(x, 1, d=None)
        r(x, b=4, generator=None)
    assert our_log == their_log
    assert our_log == [
        (1, (), {}),
        (3, (None, 3), {}),
        (1, (), {}),
        (2, (1,), {}),
        (3, (None, 4), {}),
    ]


def test_a_name_of_the_generated_code_is_renamed_too(both: tuple[str, Library, Any]) -> None:
    ours, theirs, (our_log, their_log) = _define_seen(both, "Tensor self, int _td_e=1, int _NO=2")
    for r, x in ((ours, T()), (theirs, torch.ones(1))):
        r(x, _td_e=5)
        r(x, 3, _NO=4)
        r(x)
    assert our_log == their_log == [(2, (5,), {}), (3, (3, 4), {}), (1, (), {})]
