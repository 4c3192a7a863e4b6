"""Note [Shadow views] (shadow.py): unobserved mutations through exact view chains are written
back with one NumPy copy; values, sizes and strides stay torch's (eager torch for values,
our own run of torch's exact operator sequence for sizes and strides)."""

from __future__ import annotations

import gc
import random
import weakref
from functools import partial
from typing import Any

import pytest
import torch

import tensordispatch as td
from tensordispatch.transforms.functionalize import (
    functionalize,
    storage_of,
    sync,
    to_functional,
    view_metas,
)
from tensordispatch.transforms.functionalize.shadow import shadow_of
from tensordispatch.transforms.functionalize.wrapper import set_replay_skipping

MODES = ("mutations", "mutations_and_views")
Step = tuple[Any, ...]


def _view_step(rng: random.Random, i: int, t: torch.Tensor) -> Step | None:
    shape = list(t.shape)
    n = len(shape)
    kind = rng.choice(
        ["view", "transpose", "select", "slice", "diagonal", "unsqueeze", "permute", "split"]
        + ["unbind", "detach", "squeeze"]
    )
    if kind == "view" and t.is_contiguous():
        return (kind, i, rng.choice([(-1,), (*shape, 1), (1, -1)]))
    if kind in ("transpose", "diagonal") and n >= 2:
        d0, d1 = rng.sample(range(n), 2)
        return (kind, i, (d0, d1) if kind == "transpose" else (rng.choice([-1, 0, 1]), d0, d1))
    if kind == "permute" and n >= 2:
        return (kind, i, (rng.sample(range(n), n),))
    if kind in ("select", "unbind") and n and min(shape) > 0:
        d = rng.randrange(n)
        return (kind, i, (d, rng.randrange(shape[d])))
    if kind == "slice" and n and min(shape) > 0:
        d = rng.randrange(n)
        start = rng.randrange(shape[d])
        return (kind, i, (d, start, rng.randrange(start, shape[d] + 1), rng.choice([1, 2])))
    if kind == "split" and n and max(shape) >= 2:
        d = shape.index(max(shape))
        size = rng.randrange(1, shape[d])
        return (kind, i, (size, d, rng.randrange(-(-shape[d] // size))))
    if kind == "unsqueeze" and n <= 3:
        return (kind, i, (rng.randrange(n + 1),))
    if kind in ("detach", "squeeze"):
        return (kind, i, ())
    return None


def _input(T: Any, layout: str) -> Any:
    if layout == "prefix":  # a dense base inside a larger storage
        return T.arange(30.0)[:24].view(2, 3, 4)
    x = T.arange(24.0).reshape(2, 3, 4)
    if layout == "transposed":  # a base without the dense layout: no shadows
        x = x.transpose(0, 2).contiguous().transpose(0, 2)
    return x


def _program(seed: int, layout: str) -> list[Step]:
    """A random program of views, in-place writes and reads, valid in eager torch."""
    rng = random.Random(seed)
    steps: list[Step] = []
    live = [_input(torch, layout)]
    while len(steps) < 14:
        i = rng.randrange(len(live))
        roll = rng.random()
        if roll < 0.5:
            step = _view_step(rng, i, live[i])
        elif roll < 0.7:
            kind = rng.choice(["add_", "mul_", "zero_", "fill_", "copy_"])
            step = (kind, i, rng.choice([1.5, -2.0, 3.0]))
        elif roll < 0.85:  # another live tensor (maybe an alias) as the source
            step = (rng.choice(["add_t", "copy_t"]), i, rng.randrange(len(live)))
        else:
            step = ("read", i, ())
        if step is not None:
            try:
                _run_step(torch, live, [], step)
            except RuntimeError:  # eager refuses it (broadcast, overlap): not a program
                continue
            steps.append(step)
    return steps


def _run_step(T: Any, live: list[Any], outs: list[Any], step: Step) -> None:
    kind, i, arg = step
    t = live[i]
    if kind == "read":
        outs.append(t * 1)
    elif kind in ("add_", "mul_", "fill_"):
        getattr(t, kind)(arg)
    elif kind == "zero_":
        t.zero_()
    elif kind == "copy_":
        t.copy_(T.full(tuple(t.shape), arg))
    elif kind in ("add_t", "copy_t"):
        getattr(t, kind[:-1])(live[arg])
    elif kind == "slice":
        d, start, end, step_ = arg
        live.append(t[(slice(None),) * d + (slice(start, end, step_),)])
    elif kind in ("split", "unbind"):
        *rest, k = arg
        live.append(getattr(t, kind)(*rest)[k])
    else:
        live.append(getattr(t, kind)(*arg))


def _run(T: Any, steps: list[Step], x: Any) -> list[Any]:
    live = [x]
    outs: list[Any] = []
    for step in steps:
        _run_step(T, live, outs, step)
    return outs + live[1:]


def _facts(t: Any) -> Any:
    return (t.tolist(), list(t.shape), list(t.stride()))


def _ours(steps: list[Step], mode: str, layout: str, skipping: bool) -> list[Any]:
    x = _input(td, layout)
    previous = set_replay_skipping(skipping)
    try:
        out = functionalize(partial(_run, td, steps), remove=mode)(x)
    finally:
        set_replay_skipping(previous)
    return [_facts(t) for t in [*out, x]]


@pytest.mark.parametrize("layout", ["dense", "prefix", "transposed"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("seed", range(30))
def test_random_program_matches_eager_and_exact_sequence(seed: int, mode: str, layout: str) -> None:
    steps = _program(seed, layout)
    x = _input(torch, layout)
    eager = [t.tolist() for t in [*_run(torch, steps, x), x]]
    shadowed = _ours(steps, mode, layout, skipping=True)
    assert [f[0] for f in shadowed] == eager, steps
    assert shadowed == _ours(steps, mode, layout, skipping=False), steps


def _bench_program(t: Any) -> Any:
    b = t.clone()
    v = b.view(4, 16).transpose(0, 1)[3]
    v.mul_(2)
    b[1:5].add_(1)
    w = b.view(8, 8)
    w.diagonal().zero_()
    return b.sum() + w[0, 0]


@pytest.mark.parametrize("mode", MODES)
def test_exact_chains_neither_replay_nor_scatter(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    for name in ("replay", "reverse"):
        real = getattr(view_metas.ViewRule, name)
        monkeypatch.setattr(
            view_metas.ViewRule,
            name,
            lambda rule, *a, _n=name, _real=real: calls.append(_n) or _real(rule, *a),
        )
    x = td.arange(64.0)
    result = functionalize(_bench_program, remove=mode)(x).item()
    assert (result, calls) == (float(_bench_program(torch.arange(64.0))), [])


def test_mutation_writes_a_new_base_of_the_same_layout() -> None:
    x = to_functional(td.arange(12.0).reshape(3, 4).clone())
    before = storage_of(x).base
    v = x.t()[1]
    v.mul_(10)
    after = storage_of(x).base
    assert after is not before and before.tolist()[0] == [0.0, 1.0, 2.0, 3.0]
    assert (after.tolist(), after.stride()) == (
        [[0.0, 10.0, 2.0, 3.0], [4.0, 50.0, 6.0, 7.0], [8.0, 90.0, 10.0, 11.0]],
        (4, 1),
    )


def test_shadow_follows_the_new_base() -> None:
    x = to_functional(td.arange(6.0))
    v = x.view(2, 3).t()
    x.add_(1)  # a new base: v's shadow was recorded against the old one
    s = shadow_of(v)
    assert s is not None and s._base is storage_of(x).base
    assert (s.tolist(), s.stride()) == ([[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]], (1, 3))


def _view_of_transposed(t: Any) -> Any:
    # without views, contiguous() of the transposed *_copy value is that value itself, so
    # the last view still aliases t (torch's behaviour too); its shadow cannot be a strided
    # view of the base (view of a transposed shadow fails), so it takes the general path
    u = t.view(2, 3).t().contiguous().view(6)
    u.add_(1)
    return u


@pytest.mark.parametrize("mode", MODES)
def test_view_of_a_transposed_shadow_matches_torch(mode: str) -> None:
    x, tx = td.arange(6.0), torch.arange(6.0)
    out = functionalize(_view_of_transposed, remove=mode)(x)
    expected = torch.func.functionalize(_view_of_transposed, remove=mode)(tx)
    assert (out.tolist(), x.tolist()) == (expected.tolist(), tx.tolist())


def test_no_shadow_for_a_base_requiring_grad() -> None:
    x = td.arange(4.0).requires_grad_()
    w = to_functional(x)
    assert shadow_of(w.view(2, 2)) is None


def _alias_sources(T: Any, t: Any) -> Any:
    b = t.clone()
    top, bottom = b[:2], b[2:]
    top.add_(bottom)  # the source is a live alias of the written base
    bottom.t().copy_(top.t() * 2)
    b.view(-1)[::5].mul_(b.view(-1)[1::5])
    return b


@pytest.mark.parametrize("mode", MODES)
def test_sources_aliasing_the_written_base_read_their_old_values(mode: str) -> None:
    x = td.arange(12.0).reshape(4, 3)
    out = functionalize(partial(_alias_sources, td), remove=mode)(x)
    expected = _alias_sources(torch, torch.arange(12.0).reshape(4, 3))
    assert (out.tolist(), out.stride()) == (expected.tolist(), expected.stride())


def _refused_write(T: Any, t: Any) -> Any:
    b = t.clone()
    v = b.view(2, 3)[1]
    try:
        v.add_(T.ones(2, 3))  # would grow v: the in-place form's error, nothing written
    except RuntimeError as e:
        error = str(e)
    return b * 1, v * 1, error


@pytest.mark.parametrize("mode", MODES)
def test_a_refused_write_changes_nothing(mode: str) -> None:
    b, v, error = functionalize(partial(_refused_write, td), remove=mode)(td.arange(6.0))
    tb, tv, terror = _refused_write(torch, torch.arange(6.0))
    assert (b.tolist(), v.tolist()) == (tb.tolist(), tv.tolist())
    assert error == terror


def test_a_stale_view_does_not_keep_an_old_base_alive() -> None:
    # without views (the default outside functionalize) a wrapper's value is a copy; its
    # place in the base is geometry only, so old bases go away as in torch
    x = to_functional(td.arange(6.0))
    v, w = x.view(2, 3), x.view(6)
    old = weakref.ref(storage_of(x).base)
    v.add_(1)  # a new base; w and x are stale
    sync(x)  # x's own value moves to the new base
    gc.collect()
    assert old() is None
    assert w.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]


def _masked_fill_through_transpose(T: Any, t: Any) -> Any:
    b = t.clone()
    v = b.view(4, 4).t()
    v.masked_fill_(T.eye(4, dtype=T.bool), 9.0)
    return b


def test_write_through_succeeds_where_torchs_inverse_view_fails() -> None:
    # torch (and our exact path) undo `t` with a view of the contiguous masked_fill result,
    # then cannot `view` it back to the base's shape; writing through the shadow needs no
    # inverse, so the default path returns eager's values (docs/FUNCTIONALIZATION.md)
    expected = "view size is not compatible with input tensor's size and stride"
    with pytest.raises(RuntimeError, match=expected):
        torch.func.functionalize(partial(_masked_fill_through_transpose, torch))(torch.arange(16.0))
    f = functionalize(partial(_masked_fill_through_transpose, td))
    previous = set_replay_skipping(False)
    try:
        with pytest.raises(RuntimeError, match=expected):
            f(td.arange(16.0))
    finally:
        set_replay_skipping(previous)
    eager = _masked_fill_through_transpose(torch, torch.arange(16.0))
    assert f(td.arange(16.0)).tolist() == eager.tolist()


def _writes_of_each_kind(T: Any, dtype: Any, t: Any) -> Any:
    b = t.clone()
    b.view(4, 4).t()[1].fill_(3)
    b[2:5].zero_()
    w = b.view(2, 8)
    w.diagonal().copy_(T.ones(2, dtype=dtype))
    return b, w[1]


@pytest.mark.parametrize("dtype", ["float64", "int32", "bool", "float16", "complex64"])
@pytest.mark.parametrize("mode", MODES)
def test_write_through_keeps_every_dtype(dtype: str, mode: str) -> None:
    tx = torch.arange(16).to(getattr(torch, dtype))
    x = td.tensor(tx.tolist(), dtype=getattr(td, dtype))
    ours = functionalize(partial(_writes_of_each_kind, td, getattr(td, dtype)), remove=mode)(x)
    eager = _writes_of_each_kind(torch, getattr(torch, dtype), tx)
    assert [(t.tolist(), str(t.dtype).split(".")[-1]) for t in ours] == [
        (t.tolist(), dtype) for t in eager
    ]


def _view_add(t: Any) -> Any:
    t.view(2, 2).add_(1)
    return t


def test_first_functionalize_call_under_a_tracer_records_only_the_program() -> None:
    # installing the kernels (first use in a process) must not run any operator a tracer
    # active at that moment would record
    from tensordispatch.transforms.functionalize import install, installed, uninstall
    from tensordispatch.transforms.functionalize.trace import make_fx
    from tensordispatch.transforms.functionalize.wrapper import _PLAIN_CPU_KS

    was_installed, saved = installed(), list(_PLAIN_CPU_KS)
    uninstall()
    _PLAIN_CPU_KS.clear()
    try:
        names = make_fx(functionalize(_view_add))(td.zeros(4)).op_names
    finally:
        _PLAIN_CPU_KS[:] = saved or _PLAIN_CPU_KS
        if not was_installed:
            uninstall()
        else:
            install()
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    graph = torch_make_fx(torch.func.functionalize(_view_add))(torch.zeros(4)).graph
    expected = [n.target.__name__.split(".")[0] for n in graph.nodes if n.op == "call_function"]
    assert names == expected
