"""The key set of a call (spec 4.1-4.5) matches torch 2.13 for every kind of tensor argument.

Each operator gets CPU and Meta kernels registered ``with_keyset=True`` (and a
CompositeExplicitAutograd kernel, which is the only thing that can serve an Undefined key
set); a call records which kernel ran and the key set it received. torch's side calls with
real CPU / Meta tensors; ours with stand-ins carrying the same raw key-set words.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch

from .td_side import StandIn

_ns = itertools.count()
CEA = "CompositeExplicitAutograd"

# name -> (schema, {call id: (args, kwargs)}) with "cpu" / "meta" standing for tensors
CASES: dict[str, tuple[str, dict[str, tuple[tuple[Any, ...], dict[str, Any]]]]] = {
    "two_tensors": (
        "f(Tensor a, Tensor b) -> Tensor",
        {
            "cpu_cpu": (("cpu", "cpu"), {}),
            "cpu_meta": (("cpu", "meta"), {}),
            "meta_cpu": (("meta", "cpu"), {}),
        },
    ),
    "optional_tensor": (
        "f(Tensor a, Tensor? b=None) -> Tensor",
        {"none": (("cpu", None), {}), "meta": (("cpu", "meta"), {}), "default": (("cpu",), {})},
    ),
    "tensor_list": (
        "f(Tensor[] xs) -> Tensor",
        {"mixed": ((["cpu", "meta"],), {}), "cpu": ((["cpu"],), {}), "empty": (([],), {})},
    ),
    "optional_tensor_list": (
        "f(Tensor?[] xs) -> Tensor",
        {"none_meta": (([None, "meta"],), {}), "all_none": (([None, None],), {})},
    ),
    "kwarg_only_tensor": (
        "f(Tensor a, *, Tensor? b=None) -> Tensor",
        {"kw_meta": (("cpu",), {"b": "meta"}), "kw_none": (("cpu",), {"b": None})},
    ),
    "out_argument": (
        "f(Tensor a, *, Tensor(a!) out) -> Tensor(a!)",
        {"out_meta": (("cpu",), {"out": "meta"})},
    ),
    "no_tensor_argument": (
        "f(int n) -> Tensor",
        {"int": ((3,), {})},
    ),
}


def _first_tensor(values: Any, kind: type) -> Any:
    for v in values:
        if isinstance(v, kind):
            return v
        if isinstance(v, list):
            found = _first_tensor(v, kind)
            if found is not None:
                return found
    return None


def _recorder(ran: list[str], name: str, kind: type, empty: Callable[[], Any]) -> Any:
    def kernel(keyset: Any, *args: Any, **kwargs: Any) -> Any:
        ran.append(f"{name} {keyset!r}")
        found = _first_tensor(list(args) + list(kwargs.values()), kind)
        return found if found is not None else empty()

    return kernel


def _outcome(call: Callable[[], Any], ran: list[str]) -> str:
    ran.clear()
    try:
        call()
    except NotImplementedError:
        return "raised NotImplementedError"
    except RuntimeError:
        return "raised RuntimeError"
    return f"ran {ran[0]}" if ran else "ran <nothing>"


def _torch_value(v: Any, tensors: dict[str, Any]) -> Any:
    if isinstance(v, list):
        return [_torch_value(x, tensors) for x in v]
    return tensors[v] if isinstance(v, str) else v


def _our_value(v: Any, raws: dict[str, int]) -> Any:
    if isinstance(v, list):
        return [_our_value(x, raws) for x in v]
    return StandIn(raws[v]) if isinstance(v, str) else v


def _torch_outcomes(schema: str, calls: dict[str, Any], with_cea: bool) -> dict[str, str]:
    C: Any = torch._C
    ns = f"tdext{next(_ns)}x"
    ran: list[str] = []
    libs = [C._dispatch_library("FRAGMENT", ns, "", "/dev/null", 0)]
    libs[0].def_(schema)
    keys = ["CPU", "Meta"] + ([CEA] if with_cea else [])
    try:
        for key in keys:
            lib = C._dispatch_library("FRAGMENT", ns, "", key, 0)
            lib.impl("f", key, _recorder(ran, key, torch.Tensor, lambda: torch.empty(0)), True)
            libs.append(lib)
        op = getattr(torch.ops, ns).f.default
        tensors = {"cpu": torch.ones(1), "meta": torch.ones(1, device="meta")}
        return {
            cid: _outcome(
                lambda: op(*_torch_value(list(a), tensors), **_torch_value_kw(k, tensors)), ran
            )
            for cid, (a, k) in calls.items()
        }
    finally:
        for lib in reversed(libs):
            lib.reset()


def _torch_value_kw(kwargs: dict[str, Any], tensors: dict[str, Any]) -> dict[str, Any]:
    return {k: _torch_value(v, tensors) for k, v in kwargs.items()}


def _our_outcomes(schema: str, calls: dict[str, Any], with_cea: bool) -> dict[str, str]:
    from tensordispatch import ops
    from tensordispatch.library import Library

    ns = f"tdextours{next(_ns)}x"
    ran: list[str] = []
    lib = Library(ns, "FRAGMENT")
    try:
        lib.define(schema)
        for key in ["CPU", "Meta"] + ([CEA] if with_cea else []):
            fn = _recorder(ran, key, StandIn, lambda: StandIn(0))
            lib.impl("f", fn, key, with_keyset=True, debug=key)
        op = getattr(ops, ns).f.default
        raws = {
            "cpu": _raw(torch.ones(1)),
            "meta": _raw(torch.ones(1, device="meta")),
        }
        return {
            cid: _outcome(
                lambda: op(
                    *_our_value(list(a), raws), **{n: _our_value(v, raws) for n, v in k.items()}
                ),
                ran,
            )
            for cid, (a, k) in calls.items()
        }
    finally:
        lib._destroy()


def _raw(tensor: Any) -> int:
    raw: int = torch._C._dispatch_keys(tensor).raw_repr()
    return raw


@pytest.mark.parametrize("with_cea", [False, True], ids=["cpu_meta", "cpu_meta_cea"])
@pytest.mark.parametrize("name", list(CASES))
def test_call_key_set_matches_torch(name: str, with_cea: bool) -> None:
    schema, calls = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _torch_outcomes(schema, calls, with_cea)
    got = _our_outcomes(schema, calls, with_cea)
    assert got == want
