"""Versions of results made from inference tensors outside inference mode, against torch 2.13
(Note [Versions of results made from inference tensors] in autograd/inference_versions.py):
torch's kernels write their results through the dispatcher (sum, mean = sum.out + div_, sort,
mv, repeat ...), and only a call whose tensors are all inference tensors counts the writes.
Normal tensors (grad mode on or off, requiring grad or not) and calls inside the mode are
compared too."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td

Op = Callable[[Any, dict[str, Any]], Any]

# Python-level calls; t holds the inputs (made by _inputs)
API: dict[str, Op] = {
    "add": lambda m, t: t["a"] + t["c"],
    "exp": lambda m, t: t["a"].exp(),
    "sum": lambda m, t: t["a"].sum(),
    "sum dim": lambda m, t: t["a"].sum(0),
    "sum int": lambda m, t: t["ai"].sum(),
    "mean": lambda m, t: t["a"].mean(),
    "mean dim": lambda m, t: t["a"].mean(1),
    "mean keepdim": lambda m, t: t["a"].mean(0, keepdim=True),
    "prod": lambda m, t: t["a"].prod(),
    "amax": lambda m, t: t["a"].amax(),
    "max": lambda m, t: t["a"].max(),
    "max dim": lambda m, t: t["a"].max(0)[0],
    "max dim keepdim": lambda m, t: t["a"].max(0, keepdim=True)[1],
    "min": lambda m, t: t["a"].min(),
    "std": lambda m, t: t["a"].std(),
    "var": lambda m, t: t["a"].var(),
    "var dim": lambda m, t: t["a3"].var(1),
    "logsumexp": lambda m, t: t["a"].logsumexp(1),
    "sort values": lambda m, t: t["a"].sort()[0],
    "sort indices": lambda m, t: t["a"].sort()[1],
    "matmul 2d": lambda m, t: t["a"] @ t["b"],
    "matmul mv": lambda m, t: t["a"] @ t["v"],
    "mm": lambda m, t: t["a"].mm(t["b"]),
    "mm empty inner": lambda m, t: m.mm(t["e0"], t["e1"]),
    "bmm": lambda m, t: t["a3"].bmm(t["b3"]),
    "mv": lambda m, t: t["a"].mv(t["v"]),
    "dot": lambda m, t: t["v"].dot(t["v"]),
    "addmm": lambda m, t: m.addmm(t["s"], t["a"], t["b"]),
    "baddbmm": lambda m, t: m.baddbmm(t["z3"], t["a3"], t["b3"]),
    "repeat": lambda m, t: t["a"].repeat(2, 1),
    "repeat empty": lambda m, t: t["a"].repeat(0, 1),
    "clone": lambda m, t: t["a"].clone(),
    "contiguous": lambda m, t: t["a"].t().contiguous(),
    "reshape copy": lambda m, t: t["a"].t().reshape(-1),
    "abs": lambda m, t: t["a"].abs(),
    "flip": lambda m, t: t["a"].flip(0),
    "roll": lambda m, t: t["a"].roll(1, 0),
    "ceil float": lambda m, t: t["a"].ceil(),
    "ceil int": lambda m, t: t["ai"].ceil(),
    "masked_fill": lambda m, t: t["a"].masked_fill(t["mask"], 0.0),
    "cumsum": lambda m, t: t["a"].cumsum(0),
    "index": lambda m, t: t["a"][t["i"]],
    "narrow_copy": lambda m, t: t["a"].narrow_copy(0, 0, 2),
    "softmax": lambda m, t: t["a"].softmax(1),
    "where": lambda m, t: m.where(t["mask"], t["a"], t["c"]),
}


def _inputs(m: Any) -> dict[str, Any]:
    rng = np.random.default_rng(0)

    def f(*shape: int) -> Any:
        return m.tensor(rng.standard_normal(shape), dtype=m.float32)

    return {
        "a": f(3, 4), "b": f(4, 3), "c": f(3, 4), "s": f(3, 3), "v": f(4),
        "a3": f(2, 3, 4), "b3": f(2, 4, 3), "z3": f(2, 3, 3), "e0": f(2, 0), "e1": f(0, 3),
        "ai": m.tensor([[1, -2], [3, 4]]), "i": m.tensor([0, 2]),
        "mask": m.tensor([[True, False, True, False]] * 3),
    }  # fmt: skip


def _version(r: Any) -> tuple[bool, int | str]:
    try:
        return (bool(r.is_inference()), int(r._version))
    except RuntimeError as e:
        return (bool(r.is_inference()), str(e))


def _observe(m: Any, name: str, how: str) -> tuple[bool, int | str]:
    with m.inference_mode() if how.startswith("inference") else contextlib.nullcontext():
        t = _inputs(m)
    if how == "requiring grad":
        t = {k: v.requires_grad_() if v.dtype == m.float32 else v for k, v in t.items()}
    mode = {
        "inference tensors inside": m.inference_mode(),
        "normal, no_grad": m.no_grad(),
    }.get(how, contextlib.nullcontext())
    with mode:
        r = API[name](m, t)
    return _version(r)


@pytest.mark.parametrize(
    "how",
    [
        "inference tensors outside",
        "inference tensors inside",
        "normal",
        "normal, no_grad",
        "requiring grad",
    ],
)
def test_result_versions_match_torch(how: str) -> None:
    theirs = {name: _observe(torch, name, how) for name in API}
    ours = {name: _observe(td, name, how) for name in API}
    assert ours == theirs
    if how == "inference tensors outside":  # the sweep sees every count
        assert {v[1] for v in theirs.values()} == {0, 1, 2}


# Overload-level calls (torch.ops.aten / td.ops.aten) covering each rule's branches
ATEN: dict[str, Op] = {
    "max.dim": lambda m, t: m.ops.aten.max.dim(t["a"], 1),
    "max.dim keepdim": lambda m, t: m.ops.aten.max.dim(t["a"], 1, True),
    "max.dim 0-d": lambda m, t: m.ops.aten.max.dim(t["0d"], 0),
    "min.dim": lambda m, t: m.ops.aten.min.dim(t["a"], 0),
    "aminmax": lambda m, t: m.ops.aten.aminmax(t["a"]),
    "aminmax dim": lambda m, t: m.ops.aten.aminmax(t["a"], dim=1),
    "aminmax dim keepdim": lambda m, t: m.ops.aten.aminmax(t["a"], dim=1, keepdim=True),
    "std.correction": lambda m, t: m.ops.aten.std.correction(t["a"]),
    "var.correction dim": lambda m, t: m.ops.aten.var.correction(t["a3"], [1], correction=1),
    "var.correction every dim": lambda m, t: m.ops.aten.var.correction(t["a"], [0, 1]),
    "addmm empty": lambda m, t: m.ops.aten.addmm(t["e3"], t["e0"].t(), t["b"][:2]),
    "flip empty": lambda m, t: m.ops.aten.flip(t["e0"], [1]),
    "roll empty": lambda m, t: m.ops.aten.roll(t["e0"], [1], [1]),
    "round int": lambda m, t: m.ops.aten.round(t["ai"]),
    "floor float": lambda m, t: m.ops.aten.floor(t["a"]),
    "mean.dim": lambda m, t: m.ops.aten.mean.dim(t["a"], [1]),
    "select_scatter": lambda m, t: m.ops.aten.select_scatter(t["a"], t["v"], 0, 1),
    "slice_scatter": lambda m, t: m.ops.aten.slice_scatter(t["a"], t["c"][:1], 0, 0, 1),
    "index_put": lambda m, t: m.ops.aten.index_put(t["v"], [t["i"]], t["v"][:2]),
    "sort.stable": lambda m, t: m.ops.aten.sort.stable(t["a"], stable=True),
    "scatter.src": lambda m, t: m.ops.aten.scatter.src(t["a"], 1, t["ii"], t["c"]),
    "_to_copy": lambda m, t: m.ops.aten._to_copy(t["a"], dtype=m.float64),
    "prod.dim_int": lambda m, t: m.ops.aten.prod.dim_int(t["a"], 1),
    "addbmm": lambda m, t: m.ops.aten.addbmm(t["s"], t["a3"], t["b3"]),
    "addbmm beta 0": lambda m, t: m.ops.aten.addbmm(t["s"], t["a3"][:1], t["b3"][:1], beta=0),
}


def _aten_inputs(m: Any) -> dict[str, Any]:
    t = _inputs(m)
    t["0d"] = m.tensor(2.0)
    t["e3"] = m.zeros(0, 3)
    t["ii"] = m.tensor([[0, 1], [2, 3], [1, 0]])
    return t


def _aten_versions(m: Any, name: str) -> list[tuple[bool, int | str]]:
    with m.inference_mode():
        t = _aten_inputs(m)
    r = ATEN[name](m, t)
    return [_version(o) for o in (r if isinstance(r, tuple) else (r,))]


@pytest.mark.parametrize("name", ATEN)
def test_overload_result_versions_match_torch(name: str) -> None:
    assert _aten_versions(td, name) == _aten_versions(torch, name)


def test_an_inference_operand_with_a_normal_one_gives_version_0() -> None:
    got = []
    for m in (torch, td):
        with m.inference_mode():
            a = m.ones(3, 4)
        v = m.ones(4)
        got.append((a.mv(v)._version, (a.sum() + v.sum())._version, a.mean()._version))
    assert got[1] == got[0] == (0, 0, 2)


def test_normal_calls_never_reach_the_result_version_kernel(monkeypatch: Any) -> None:
    # the no-grad and recording paths of functional autograd kernels skip ADInplaceOrView,
    # so the per-op cost of normal calls is unchanged (the kernel body never runs)
    from tensordispatch.autograd import inference_versions

    entered: list[Any] = []
    below = inference_versions._below_ad_inplace_or_view
    monkeypatch.setattr(
        inference_versions, "_below_ad_inplace_or_view", lambda *a: entered.append(a) or below(*a)
    )
    t = _inputs(td)
    x = td.ones(4, 4, requires_grad=True)
    calls = [API[name] for name in ("sum", "mean dim", "sort values", "mv", "max dim", "repeat")]
    for f in calls:
        f(td, t)
    x.sum(), x.max(0), x.sort()
    with td.no_grad():
        x.mean(), x.max(0)
    assert entered == []
    with td.inference_mode():
        i = td.ones(3)
    assert i.sum()._version == 1 and len(entered) == 1
