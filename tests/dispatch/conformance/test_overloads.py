"""``ops.<ns>.<op>(...)`` picks the same overload as ``torch.ops`` (issue 3 section 3), and
``dump`` / ``dump_table`` of an overload name match torch's.

Each overload gets a CPU kernel recording its overload name; the same argument lists are
passed to both packets (torch tensors on torch's side, stand-ins with the same key-set
word on ours). No overload matching must fail on both sides with the same builtin
exception type.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch

from . import known
from .normalise import normalise_dump, parse_table
from .td_side import StandIn

_ns = itertools.count()

FAMILIES: dict[str, tuple[str, ...]] = {
    "arity_and_kwargs": (
        "f(Tensor x) -> Tensor",
        "f.int(Tensor x, int n) -> Tensor",
        "f.two(Tensor x, Tensor y) -> Tensor",
        "f.kw(Tensor x, *, float alpha) -> Tensor",
    ),
    "tensor_scalar_list": (
        "f.Tensor(Tensor self, Tensor other) -> Tensor",
        "f.Scalar(Tensor self, Scalar other) -> Tensor",
        "f.list(Tensor[] xs) -> Tensor",
    ),
    "optional_and_defaults": (
        "f.opt(Tensor x, Tensor? y=None, int n=1) -> Tensor",
        "f.str(Tensor x, str mode) -> Tensor",
    ),
}

T = "T"  # stands for a CPU tensor in argument lists
CALLS: dict[str, list[tuple[tuple[Any, ...], dict[str, Any]]]] = {
    "arity_and_kwargs": [
        ((T,), {}),
        ((T, 3), {}),
        ((T, T), {}),
        ((T,), {"alpha": 1.0}),
        ((T, 2.5), {}),
        ((T, True), {}),
        ((T,), {"n": 2}),
        ((), {}),
        ((T, 3, 4), {}),
    ],
    "tensor_scalar_list": [
        ((T, T), {}),
        ((T, 2), {}),
        ((T, 2.5), {}),
        ((T, True), {}),
        (([T, T],), {}),
        ((T,), {"other": T}),
        ((T,), {"other": 3}),
        (((T, T),), {}),
    ],
    "optional_and_defaults": [
        ((T,), {}),
        ((T, None), {}),
        ((T, T, 2), {}),
        ((T, "a"), {}),
        ((T,), {"mode": "a"}),
        ((T, None, 2), {}),
        ((T,), {"n": 3}),
        ((T, None, True), {}),
        ((T,), {"n": 2.5}),
    ],
}


def _builtin(e: BaseException) -> str:
    return next(c.__name__ for c in type(e).__mro__ if c.__module__ == "builtins")


def _run(call: Callable[[], Any], ran: list[str]) -> str:
    ran.clear()
    try:
        call()
    except Exception as e:  # noqa: BLE001 - the exception type is the observation
        return f"raised {_builtin(e)}"
    return f"ran {ran[0]}" if ran else "ran nothing"


def _recorder(ran: list[str], overload: str) -> Callable[..., Any]:
    def kernel(*args: Any, **kwargs: Any) -> Any:
        ran.append(overload)
        first = args[0]
        return first[0] if isinstance(first, (list, tuple)) else first

    return kernel


def _subst(value: Any, tensor: Any) -> Any:
    if isinstance(value, list):
        return [_subst(v, tensor) for v in value]
    if isinstance(value, tuple):
        return tuple(_subst(v, tensor) for v in value)
    return tensor() if isinstance(value, str) and value == T else value


def _overload(schema: str) -> str:
    return schema.split("(")[0]


def _torch(family: str) -> tuple[list[str], dict[str, tuple[str, dict[str, str]]]]:
    C: Any = torch._C
    ns = f"tdovl{next(_ns)}x"
    ran: list[str] = []
    libs = [C._dispatch_library("FRAGMENT", ns, "", "/dev/null", 0)]
    try:
        for schema in FAMILIES[family]:
            libs[0].def_(schema)
            lib = C._dispatch_library("FRAGMENT", ns, "", _overload(schema), 0)
            lib.impl(_overload(schema), "CPU", _recorder(ran, _overload(schema)), False)
            libs.append(lib)
        packet = getattr(torch.ops, ns).f
        outcomes = [
            _run(lambda: packet(*_subst(a, _cpu), **_subst_kw(k, _cpu)), ran)
            for a, k in CALLS[family]
        ]
        states = {}
        for schema in FAMILIES[family]:
            name = f"{ns}::{_overload(schema)}"
            states[_overload(schema)] = (
                normalise_dump(C._dispatch_dump(name), ns),
                parse_table(C._dispatch_dump_table(name), ns, _debugs(family)),
            )
        return outcomes, states
    finally:
        for lib in reversed(libs):
            lib.reset()


def _cpu() -> Any:
    # two elements: a one-element tensor would also match ``int`` arguments in torch.ops
    return torch.ones(2)


def _subst_kw(kwargs: dict[str, Any], tensor: Any) -> dict[str, Any]:
    return {k: _subst(v, tensor) for k, v in kwargs.items()}


def _debugs(family: str) -> frozenset[str]:
    return frozenset(f"registered at {_overload(s)}:0" for s in FAMILIES[family])


def _ours(family: str) -> tuple[list[str], dict[str, tuple[str, dict[str, str]]]]:
    from tensordispatch import ops
    from tensordispatch.dispatch import dump, dump_table
    from tensordispatch.library import Library

    ns = f"tdovlours{next(_ns)}x"
    ran: list[str] = []
    lib = Library(ns, "FRAGMENT")
    raw = torch._C._dispatch_keys(torch.ones(1)).raw_repr()
    try:
        for schema in FAMILIES[family]:
            lib.define(schema)
            debug = f"registered at {_overload(schema)}:0"
            lib.impl(_overload(schema), _recorder(ran, _overload(schema)), "CPU", debug=debug)
        packet = getattr(ops, ns).f
        outcomes = [
            _run(
                lambda: packet(
                    *_subst(a, lambda: StandIn(raw)), **_subst_kw(k, lambda: StandIn(raw))
                ),
                ran,
            )
            for a, k in CALLS[family]
        ]
        states = {}
        for schema in FAMILIES[family]:
            name = f"{ns}::{_overload(schema)}"
            states[_overload(schema)] = (
                normalise_dump(dump(name), ns),
                parse_table(dump_table(name), ns, _debugs(family)),
            )
        return outcomes, states
    finally:
        lib._destroy()


_CACHE: dict[str, Any] = {}


def _both(family: str) -> Any:
    if family not in _CACHE:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _CACHE[family] = (_torch(family), _ours(family))
    return _CACHE[family]


@pytest.mark.parametrize("family", list(FAMILIES))
def test_overload_dumps_match_torch(family: str) -> None:
    (_, want), (_, got) = _both(family)
    assert got == want


@pytest.mark.parametrize("family", known.params(list(FAMILIES), known.PACKET))
def test_packet_picks_the_same_overload_as_torch_ops(family: str) -> None:
    (want, _), (got, _) = _both(family)
    calls = [f"{a!r} {k!r}" for a, k in CALLS[family]]
    assert dict(zip(calls, got, strict=True)) == dict(zip(calls, want, strict=True))


# Direct OpOverload calls with non-tensor arguments of the wrong Python type: torch
# converts (bool -> int, int -> float) or raises; the kernel records what it received.
DIRECT: dict[str, tuple[Any, ...]] = {
    "g.int(Tensor x, int n) -> Tensor": (3, True, 2.5, "a", None),
    "g.float(Tensor x, float v) -> Tensor": (2.5, 3, True, "a"),
    "g.bool(Tensor x, bool b) -> Tensor": (True, 1, 0.0),
    "g.str(Tensor x, str s) -> Tensor": ("a", 1),
    "g.ints(Tensor x, int[] dims) -> Tensor": ([1, 2], (1, 2), 3, [1.5]),
}
# More types, in a namespace of their own (torch 2.13 aborts in Library.reset when all of
# these share one namespace with the table above: an internal assert on a missing schema).
DIRECT_MORE: dict[str, tuple[Any, ...]] = {
    "g.bools(Tensor x, bool b) -> Tensor": (None, 1 + 2j, 2.5, "", [1], (1,)),
    "g.pair(Tensor x, int[2] p) -> Tensor": (3, True, 2.5, [True], [], (4, 5, 6), None),
    "g.floats(Tensor x, float[] v) -> Tensor": ([1, 2], (True,), [1.5], 2.5, ["a"], []),
    "g.flags(Tensor x, bool[] v) -> Tensor": ([1, 0.0], [None], (True,), True, ["a"]),
    "g.optint(Tensor x, int? n) -> Tensor": (None, 3, True, 2.5, [1]),
    "g.optints(Tensor x, int[]? d) -> Tensor": (None, (1,), [1.5], 3),
    "g.optfloat(Tensor x, float? v) -> Tensor": (None, 3, "a"),
    "g.itemopt(Tensor x, int?[] d) -> Tensor": ([None, 1], (True, None), [1.5], None),
    "g.optstr(Tensor x, str? s) -> Tensor": (None, "a", 1),
}


def _value_recorder(ran: list[str]) -> Callable[..., Any]:
    def kernel(x: Any, value: Any) -> Any:
        ran.append(f"{type(value).__name__} {value!r}")
        return x

    return kernel


def _direct(side: str, table: dict[str, tuple[Any, ...]]) -> dict[str, str]:
    ran: list[str] = []
    out: dict[str, str] = {}
    if side == "torch":
        C: Any = torch._C
        ns = f"tddir{next(_ns)}x"
        libs = [C._dispatch_library("FRAGMENT", ns, "", "/dev/null", 0)]
        for schema in table:
            libs[0].def_(schema)
            lib = C._dispatch_library("FRAGMENT", ns, "", "k", 0)
            lib.impl(_overload(schema), "CPU", _value_recorder(ran), False)
            libs.append(lib)
        packet, tensor = getattr(torch.ops, ns).g, _cpu
    else:
        from tensordispatch import ops
        from tensordispatch.library import Library

        ns = f"tddirours{next(_ns)}x"
        libs = [Library(ns, "FRAGMENT")]
        for schema in table:
            libs[0].define(schema)
            libs[0].impl(_overload(schema), _value_recorder(ran), "CPU", debug="k")
        raw = torch._C._dispatch_keys(torch.ones(2)).raw_repr()
        packet, tensor = getattr(ops, ns).g, lambda: StandIn(raw)
    try:
        for schema, values in table.items():
            overload = getattr(packet, _overload(schema).split(".")[1])
            for value in values:
                out[f"{schema} <- {value!r}"] = _run(lambda: overload(tensor(), value), ran)
    finally:
        for lib in reversed(libs):
            if side == "torch":
                lib.reset()
            else:
                lib._destroy()
    return {k: v.replace("ran ", "received ") for k, v in out.items()}


@pytest.mark.parametrize("table", [DIRECT, DIRECT_MORE], ids=["scalars", "lists_optionals"])
def test_direct_overload_call_converts_or_rejects_arguments_like_torch(
    table: dict[str, tuple[Any, ...]],
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _direct("torch", table)
    assert _direct("ours", table) == want
