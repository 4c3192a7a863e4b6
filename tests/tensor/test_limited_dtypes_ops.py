"""Operators on the limited dtypes (uint16, uint32, uint64) against torch 2.13: an OpInfo-style
sweep (Note [Limited unsigned dtypes] in tensor/dtypes.py).

For every operator of torch's op_db (no variants) that has int64 samples and that the library
has (the names listed in tests/lazy/opinfo_names.txt), the first samples are run in torch and
in tensordispatch with every int64 tensor turned into a uint16, uint32 or uint64 tensor (its
absolute values, so they fit), and a dtype=int64 argument into that dtype. Where torch
computes, ours must give the same dtype, shape and values; where torch raises, ours must
raise the same exception type, and for torch's "not implemented for 'UInt16'" and promotion
errors the same text. A second sweep (test_more_calls_match_torch) covers calls the OpInfo
samples do not reach (full reductions, scalar bounds, rounding modes, factories).
"""

from __future__ import annotations

import functools
import pathlib
import warnings
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch.tensor import dtypes as tdd

SAMPLES_PER_OP = 3
LIMITED = {"uint16": torch.uint16, "uint32": torch.uint32, "uint64": torch.uint64}
NAMES_FILE = pathlib.Path(__file__).parents[1] / "lazy" / "opinfo_names.txt"
# Results whose values are not defined (uninitialized memory, random draws).
VALUES_UNDEFINED = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"}
VALUES_UNDEFINED |= {"randint", "randint_like", "rand_like", "randn_like", "bernoulli"}
# torch's own texts that ours repeats word for word.
EXACT_TEXTS = ("not implemented for", "Promotion for uint16")


def _has(name: str) -> bool:
    # torch's function where torch has one (td.float is a dtype, not an operator), else the
    # Tensor method or property
    if callable(getattr(torch, name, None)) and not isinstance(getattr(torch, name), torch.dtype):
        return callable(getattr(td, name, None))
    return hasattr(td.Tensor, name)


def _names() -> list[str]:
    lines = NAMES_FILE.read_text(encoding="utf-8").splitlines()
    cases = [line.split(":") for line in lines if line and not line.startswith("#")]
    return [n for n, codes in cases if "i" in codes and _has(n)]


NAMES = _names()


@functools.cache
def _opinfos() -> dict[str, Any]:
    from torch.testing._internal.common_methods_invocations import op_db

    return {o.name: o for o in op_db if not o.variant_test_name}


@functools.cache
def _samples(name: str) -> list[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        samples = _opinfos()[name].sample_inputs("cpu", torch.int64)
        return [s for _, s in zip(range(SAMPLES_PER_OP), samples, strict=False)]


def _to_torch(x: Any, dt: torch.dtype) -> Any:
    if isinstance(x, torch.Tensor):
        return x.abs().to(dt) if x.dtype == torch.int64 else x
    if x is torch.int64:  # factories' dtype= argument
        return dt
    if isinstance(x, (list, tuple)):
        return type(x)(_to_torch(v, dt) for v in x)
    return x


def _to_td(x: Any) -> Any:
    if isinstance(x, torch.Tensor):
        dt = getattr(tdd, str(x.dtype).removeprefix("torch."))
        data = np.array(x.detach().numpy(), copy=True)
        if x.dim() == 0:
            return (
                td.tensor(data.item(), dtype=dt)
                if dt is not tdd.uint64
                else td.tensor(int(data), dtype=dt)
            )
        return td.tensor(data, dtype=dt)
    if isinstance(x, (list, tuple)):
        return type(x)(_to_td(v) for v in x)
    if isinstance(x, torch.dtype):
        return getattr(tdd, str(x).removeprefix("torch."))
    if isinstance(x, torch.memory_format):
        return getattr(td, str(x).removeprefix("torch."))
    return x


def _run(module: Any, info: Any, inp: Any, args: Any, kwargs: Any) -> Any:
    name = info.name
    if module is td:
        function = getattr(td, name, None)
        if callable(function) and (
            info.op is getattr(torch, name, None) or not isinstance(inp, td.Tensor)
        ):
            return function(inp, *args, **kwargs)
        method = getattr(inp, name)
        return method(*args, **kwargs) if callable(method) else method
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return info.op(inp, *args, **kwargs)


def _flat(result: Any) -> list[Any]:
    if isinstance(result, (list, tuple)):
        return [t for r in result for t in _flat(r)]
    return [result]


def _outcome(fn: Any) -> tuple[str, Any]:
    try:
        return "ok", _flat(fn())
    except Exception as error:  # noqa: BLE001 - the error is the outcome compared
        return "error", error


def _compare(name: str, expected: list[Any], got: list[Any]) -> str | None:
    if len(expected) != len(got):
        return f"{len(got)} results, torch {len(expected)}"
    for e, g in zip(expected, got, strict=True):
        if not isinstance(e, torch.Tensor):
            if e != g:
                return f"value {g!r}, torch {e!r}"
            continue
        if not isinstance(g, td.Tensor):
            return f"gave {type(g).__name__}, torch a Tensor"
        if str(g.dtype).split(".")[-1] != str(e.dtype).split(".")[-1]:
            return f"dtype {g.dtype}, torch {e.dtype}"
        if tuple(g.shape) != tuple(e.shape):
            return f"shape {tuple(g.shape)}, torch {tuple(e.shape)}"
        if name not in VALUES_UNDEFINED and g.tolist() != e.tolist():
            ours, theirs = np.asarray(g.tolist()), np.asarray(e.tolist())
            if not np.allclose(ours, theirs, rtol=1e-5, atol=1e-5, equal_nan=True):
                return f"values {g.tolist()}, torch {e.tolist()}"
    return None


def _mismatch(name: str, sample: Any, dt: torch.dtype) -> str | None:
    info = _opinfos()[name]
    t_inp, t_args = _to_torch(sample.input, dt), _to_torch(tuple(sample.args), dt)
    t_kwargs = {k: _to_torch(v, dt) for k, v in sample.kwargs.items()}
    kind, expected = _outcome(lambda: _run(torch, info, t_inp, t_args, t_kwargs))
    inp, args = _to_td(t_inp), _to_td(t_args)
    kwargs = {k: _to_td(v) for k, v in t_kwargs.items()}
    got_kind, got = _outcome(lambda: _run(td, info, inp, args, kwargs))
    if kind == "error":
        if got_kind != "error":
            return f"computed, torch raised {type(expected).__name__}: {expected}"
        if type(got) is not type(expected):
            return (
                f"raised {type(got).__name__}: {got}; torch {type(expected).__name__}: {expected}"
            )
        if any(text in str(expected) for text in EXACT_TEXTS) and str(got) != str(expected):
            return f"message {got}; torch {expected}"
        return None
    if got_kind == "error":
        return f"raised {type(got).__name__}: {got}; torch computed"
    return _compare(name, expected, got)


@pytest.mark.parametrize("name", NAMES)
def test_limited_dtypes_match_torch(name: str) -> None:
    problems = []
    for i, sample in enumerate(_samples(name)):
        for dt_name, dt in LIMITED.items():
            problem = _mismatch(name, sample, dt)
            if problem is not None:
                problems.append(f"sample {i} {dt_name}: {problem}")
    assert problems == []


# -- calls the OpInfo samples do not reach -----------------------------------------------------

MORE_CALLS: dict[str, Any] = {
    "max()": lambda m, t: m.max(t),
    "min()": lambda m, t: m.min(t),
    "max(dim)": lambda m, t: m.max(t, 0),
    "min(dim)": lambda m, t: m.min(t, 0),
    "sort": lambda m, t: m.sort(t),
    "clamp(1, 2)": lambda m, t: m.clamp(t, 1, 2),
    "clamp_min(1)": lambda m, t: m.clamp_min(t, 1),
    "clamp_max(1)": lambda m, t: m.clamp_max(t, 1),
    "clamp(t, t)": lambda m, t: m.clamp(t, t, t),
    "div trunc": lambda m, t: m.div(t, t, rounding_mode="trunc"),
    "div floor": lambda m, t: m.div(t, t, rounding_mode="floor"),
    "div": lambda m, t: m.div(t, t),
    "t / 2": lambda m, t: t / 2,
    "remainder(2)": lambda m, t: m.remainder(t, 2),
    "t * 2": lambda m, t: t * 2,
    "t + 1": lambda m, t: t + 1,
    "t - 1": lambda m, t: t - 1,
    "t == 1": lambda m, t: t == 1,
    "t < 1": lambda m, t: t < 1,
    "t >= t": lambda m, t: t >= t.clone(),
    "cumsum": lambda m, t: m.cumsum(t, 0),
    "prod": lambda m, t: m.prod(t),
    "sum": lambda m, t: m.sum(t),
    "sum(dtype)": lambda m, t: m.sum(t, dtype=m.float32),
    "mean": lambda m, t: m.mean(t),
    "exp": lambda m, t: m.exp(t),
    "floor": lambda m, t: m.floor(t),
    "t & t": lambda m, t: t & t,
    "t ^ t": lambda m, t: t ^ t,
    "~t": lambda m, t: ~t,
    "t << 1": lambda m, t: t << 1,
    "t ** 2": lambda m, t: t**2,
    "t ** 1": lambda m, t: t**1,
    "2 ** t": lambda m, t: 2**t,
    "arange": lambda m, t: m.arange(5, dtype=t.dtype),
    "arange(1, 7, 2)": lambda m, t: m.arange(1, 7, 2, dtype=t.dtype),
    "linspace": lambda m, t: m.linspace(0, 4, 3, dtype=t.dtype),
    "linspace 1 step": lambda m, t: m.linspace(0, 4, 1, dtype=t.dtype),
    "eye": lambda m, t: m.eye(2, dtype=t.dtype),
    "cat": lambda m, t: m.cat([t, t]),
    "stack": lambda m, t: m.stack([t, t]),
    "t[index]": lambda m, t: t[m.tensor([0, 2])],
    "t[mask]": lambda m, t: t[m.tensor([True, False, True])],
    "where": lambda m, t: m.where(m.tensor([True, False, True]), t, t),
    "where scalar": lambda m, t: m.where(m.tensor([True, False, True]), t, 0),
    "fill_": lambda m, t: t.clone().fill_(7),
    "zero_": lambda m, t: t.clone().zero_(),
    "abs": lambda m, t: m.abs(t),
    "-t": lambda m, t: -t,
    "any": lambda m, t: m.any(t),
    "all": lambda m, t: m.all(t),
    "nonzero": lambda m, t: m.nonzero(t),
    "flip": lambda m, t: m.flip(t, [0]),
    "flip rows": lambda m, t: m.flip(t.reshape(3, 1).expand(3, 2).contiguous(), [0]),
    "roll": lambda m, t: m.roll(t, 1),
    "repeat": lambda m, t: t.repeat(2),
    "logical_not": lambda m, t: m.logical_not(t),
    "logical_and": lambda m, t: m.logical_and(t, t),
    "t @ t": lambda m, t: t @ t,
    "mm": lambda m, t: m.mm(t.reshape(3, 1), t.reshape(1, 3)),
    "mm empty": lambda m, t: m.mm(t.reshape(3, 1)[:, :0], t.reshape(1, 3)[:0]),
    "maximum": lambda m, t: m.maximum(t, t),
    "amax": lambda m, t: m.amax(t),
    "argmax": lambda m, t: m.argmax(t),
    "topk": lambda m, t: m.topk(t, 1),
    "tril": lambda m, t: m.tril(t.reshape(1, 3)),
    "index_select": lambda m, t: m.index_select(t, 0, m.tensor([0, 2])),
    "masked_fill": lambda m, t: t.masked_fill(m.tensor([True, False, True]), 1),
    "setitem": lambda m, t: t.clone().__setitem__(0, 5),
    "setitem index": lambda m, t: t.clone().__setitem__(m.tensor([0]), 5),
    "t + float tensor": lambda m, t: t + m.ones(3),
    "t + int64 tensor": lambda m, t: t + m.ones(3, dtype=m.int64),
    "t * 0-dim int64": lambda m, t: t * m.tensor(2),
    "t == int64 tensor": lambda m, t: t == m.ones(3, dtype=m.int64),
    "softmax": lambda m, t: m.softmax(t, 0),
    "log_softmax": lambda m, t: m.log_softmax(t, 0),
    "lerp": lambda m, t: m.lerp(t, t, 0.5),
    "std": lambda m, t: m.std(t),
    "var": lambda m, t: m.var(t),
    "norm": lambda m, t: m.norm(t),
    "relu": lambda m, t: m.relu(t),
    "sigmoid": lambda m, t: m.sigmoid(t),
    "logsumexp": lambda m, t: m.logsumexp(t, 0),
    "addcdiv": lambda m, t: m.addcdiv(t, t, t),
    "addcmul": lambda m, t: m.addcmul(t, t, t),
    "round": lambda m, t: m.round(t),
    "sqrt": lambda m, t: m.sqrt(t),
    "rsqrt": lambda m, t: m.rsqrt(t),
    "floor_divide": lambda m, t: m.floor_divide(t, t),
    "floor_divide(2)": lambda m, t: m.floor_divide(t, 2),
    "outer": lambda m, t: m.outer(t, t),
    "narrow": lambda m, t: m.narrow(t, 0, 1, 2),
    "logical_xor": lambda m, t: m.logical_xor(t, t),
    "aminmax": lambda m, t: m.aminmax(t),
    "gelu": lambda m, t: m.nn.functional.gelu(t),
    "silu": lambda m, t: m.nn.functional.silu(t),
    "one_hot": lambda m, t: m.nn.functional.one_hot(t),
    "linear": lambda m, t: m.nn.functional.linear(t, t.reshape(1, 3)),
    "t.add_(t)": lambda m, t: t.clone().add_(t),
    "t.mul_(2)": lambda m, t: t.clone().mul_(2),
    "t.sub_(1)": lambda m, t: t.clone().sub_(1),
    "add out=": lambda m, t: m.add(t, t, out=m.empty(3, dtype=t.dtype)),
    "mul out=": lambda m, t: m.mul(t, t, out=m.empty(3, dtype=t.dtype)),
    "float out=": lambda m, t: m.mul(t, 2, out=m.empty(3)),
    "requires_grad_": lambda m, t: t.requires_grad_(),
    "t[None] expand add": lambda m, t: t[None].expand(2, 3) + t,
    "sum(dim)": lambda m, t: m.sum(t.reshape(3, 1), 1),
    "t.bool()": lambda m, t: t.to(m.bool),
    "layer_norm": lambda m, t: m.nn.functional.layer_norm(t.reshape(1, 3), (3,)),
    "cross_entropy target": lambda m, t: m.nn.functional.cross_entropy(m.ones(3, 4), t),
    "ones(5)[t]": lambda m, t: m.ones(5)[t],
    "gather by t": lambda m, t: m.gather(m.ones(5), 0, t),
    "index_select by t": lambda m, t: m.index_select(m.ones(5), 0, t),
    "cumsum(dtype)": lambda m, t: m.cumsum(t, 0, dtype=m.float64),
    "mean(dtype)": lambda m, t: m.mean(t, dtype=m.float32),
    "t & 3": lambda m, t: t & 3,
    "t == 2.5": lambda m, t: t == 2.5,
    "t * 2.5": lambda m, t: t * 2.5,
    "t + 1.5": lambda m, t: t + 1.5,
    "t.div_(2)": lambda m, t: t.clone().div_(2),
    "t.mul_(2.5)": lambda m, t: t.clone().mul_(2.5),
    "copy_ from int64": lambda m, t: t.clone().copy_(m.tensor([1, 2, 3])),
    "t.to(float16)": lambda m, t: t.to(m.float16),
    "t.to(complex64)": lambda m, t: t.to(m.complex64),
    "complex.to(t.dtype)": lambda m, t: m.tensor([1 + 1j, 2, 3]).to(t.dtype),
    "prod(dim)": lambda m, t: m.prod(t.reshape(3, 1), 0),
    "all(dim)": lambda m, t: m.all(t.reshape(3, 1), 1),
    "channels_last": lambda m, t: t.reshape(1, 3, 1, 1).contiguous(memory_format=m.channels_last),
    "scatter_add": lambda m, t: m.zeros(3, dtype=t.dtype).scatter_add(0, m.tensor([0, 1, 2]), t),
    "item": lambda m, t: t[1].item(),
    "int(t[0])": lambda m, t: int(t[0]),
    "float(t[0])": lambda m, t: float(t[0]),
    "bool(t[0])": lambda m, t: bool(t[0]),
}


def _call_outcome(module: Any, name: str, dt: torch.dtype) -> tuple[str, Any]:
    if module is td:
        t = td.tensor([1, 2, 3], dtype=getattr(tdd, str(dt).removeprefix("torch.")))
    else:
        t = torch.tensor([1, 2, 3], dtype=dt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _outcome(lambda: MORE_CALLS[name](module, t))


@pytest.mark.parametrize("name", MORE_CALLS)
def test_more_calls_match_torch(name: str) -> None:
    problems = []
    for dt_name, dt in LIMITED.items():
        kind, expected = _call_outcome(torch, name, dt)
        got_kind, got = _call_outcome(td, name, dt)
        if kind == "error" or got_kind == "error":
            if (kind, type(expected)) != (got_kind, type(got)):
                problems.append(f"{dt_name}: {got_kind} {got!r}; torch {kind} {expected!r}")
            elif any(text in str(expected) for text in EXACT_TEXTS) and str(got) != str(expected):
                problems.append(f"{dt_name}: message {got}; torch {expected}")
            continue
        problem = _compare(name, expected, got)
        if problem is not None:
            problems.append(f"{dt_name}: {problem}")
    assert problems == []
