"""reshape's and flatten's one hops (Note [One-hop reshape] in
backends/composite_fast_inplace.py): views equal to torch's, results and errors equal to the
full dispatch's, and every registration, mode, trace, grad mode or argument that must send
the method back to the full dispatch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch.backends import composite_fast_inplace as hop
from tensordispatch.dispatch import dispatch_trace
from tensordispatch.generated import methods
from tensordispatch.library import Library

from .overrides import impl_quietly
from .recording_modes import recording_modes

SHAPES: list[tuple[tuple[int, ...], tuple[Any, ...]]] = [
    ((4, 4), (16,)), ((4, 4), (2, -1)), ((4, 4), (-1,)), ((2, 3, 4), (6, 4)),
    ((2, 3, 4), (4, 3, 2)), ((6,), (2, 3)), ((), (1,)), ((1,), ()), ((0, 3), (3, 0)),
    ((0, 3), (-1, 3)), ((4, 4), (4, 4)), ((3, 1), (1, 3)),
]  # fmt: skip


@pytest.mark.parametrize(("shape", "target"), SHAPES, ids=str)
def test_reshape_views_match_torch(shape: tuple[int, ...], target: tuple[Any, ...]) -> None:
    n = int(np.prod(shape))
    t = td.arange(float(n)).reshape(shape) if shape else td.ones(())
    tt = torch.arange(float(n)).reshape(shape) if shape else torch.ones(())
    got, expected = t.reshape(target), tt.reshape(target)
    assert tuple(got.shape) == tuple(expected.shape) and got.stride() == expected.stride()
    assert got.tolist() == expected.tolist()
    assert (got._base is t) is (expected._base is tt)
    if n:
        got.view(-1)[0] = 7.0  # a view: the source sees the write
        assert t.reshape(-1)[0].item() == 7.0


def _outcome(call: Any) -> Any:
    try:
        r = call()
    except Exception as e:  # noqa: BLE001 - compared below
        return type(e), str(e)
    return tuple(r.shape), r.stride(), r.storage_offset(), r._base is not None, r.tolist()


CALLS = [
    lambda t: t.reshape(16), lambda t: t.reshape(2, -1), lambda t: t.reshape([8, 2]),
    lambda t: t.reshape((4, 2, 2)), lambda t: t.reshape(5), lambda t: t.reshape(-1, -1),
    lambda t: t.reshape(3, -1), lambda t: t.reshape(-2, 8), lambda t: t.reshape(2.0, 8),
    lambda t: t.reshape(True, 16), lambda t: t.reshape(np.int64(16)), lambda t: t.flatten(),
    lambda t: t[0].flatten(), lambda t: t.t().reshape(16), lambda t: t.t().flatten(),
    lambda t: t[1:3].reshape(8), lambda t: t.sum().flatten(), lambda t: t.reshape(0, -1),
    lambda t: t.reshape(-1, 0), lambda t: t[:0].reshape(-1, 4), lambda t: t[:0].reshape(0, -1),
    lambda t: t.view(16), lambda t: t.view(2, -1), lambda t: t.view(5), lambda t: t.view(-1, -1),
    lambda t: t.t().view(16), lambda t: t.view(2.0, 8), lambda t: t[1:3].view(8),
    lambda t: t.view(-3, 4), lambda t: t.reshape(-3, 4),
]  # fmt: skip


@pytest.mark.parametrize("k", range(len(CALLS)))
def test_the_hops_are_the_full_dispatch(k: int, monkeypatch: Any) -> None:
    t = td.arange(16.0).reshape(4, 4).clone()
    hopped = _outcome(lambda: CALLS[k](t))
    monkeypatch.setattr(methods, "_H_reshape", lambda self, shape: None)
    monkeypatch.setattr(methods, "_H_flatten", lambda self: None)
    assert hopped == _outcome(lambda: CALLS[k](t))


def test_an_error_message() -> None:
    with pytest.raises(RuntimeError) as info:
        td.ones(4, 4).reshape(5)
    assert str(info.value) == "shape '[5]' is invalid for input of size 16"


def test_the_hops_answer_for_plain_tensors_under_grad_mode_only() -> None:
    t = td.ones(2, 3)
    assert hop.reshape(t, [6]) is not None and hop.flatten(t) is not None
    assert hop.reshape(t, [-1, 2]).shape == (3, 2)  # type: ignore[union-attr]
    assert hop.reshape(td.ones(2, 3, requires_grad=True), [6]) is None
    assert hop.reshape(t.t(), [6]) is None and hop.reshape(t, (6,)) is None
    assert hop.reshape(td.ones(2, device="meta"), [2]) is None
    tt = torch.ones(2, 3)
    with td.no_grad():
        assert hop.reshape(t, [6]) is None
        v = t.reshape(6)
    with torch.no_grad():
        tv = tt.reshape(6)
    assert v.is_leaf is tv.is_leaf and (v._base is t) is (tv._base is tt)
    with td.inference_mode():
        assert hop.reshape(t, [6]) is None and hop.flatten(t) is None


def test_requires_grad_takes_the_full_path_with_torchs_graph() -> None:
    t, tt = td.ones(2, 3, requires_grad=True), torch.ones(2, 3, requires_grad=True)
    got, expected = t.reshape(6), tt.reshape(6)
    assert type(got.grad_fn).__name__ == type(expected.grad_fn).__name__
    (got * td.arange(6.0)).sum().backward()
    (expected * torch.arange(6.0)).sum().backward()
    assert t.grad is not None and tt.grad is not None and t.grad.tolist() == tt.grad.tolist()
    assert t.flatten().grad_fn is not None and tt.flatten().grad_fn is not None


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("reshape", "CompositeImplicitAutograd"),
        ("view", "CPU"),
        ("flatten.using_ints", "CompositeImplicitAutograd"),
    ],
)
def test_a_user_kernel_registered_later_is_called(lib: Library, name: str, key: str) -> None:
    t = td.ones(2, 3)
    assert hop.reshape(t, [6]) is not None
    seen: list[Any] = []

    def mine(self: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(name)
        return td.zeros(6)

    impl_quietly(lib, name, mine, key)
    call = t.flatten if name.startswith("flatten") else lambda: t.reshape(6)
    assert call().tolist() == [0.0] * 6 and seen == [name]
    lib._destroy()
    assert hop.reshape(t, [6]) is not None and hop.flatten(t) is not None


def test_a_mode_sees_torchs_ops_and_a_trace_the_full_paths(monkeypatch: Any) -> None:
    ours, theirs, Ours, Theirs = recording_modes()
    t, tt = td.ones(2, 3), torch.ones(2, 3)
    with Ours():
        t.reshape(6), t.flatten(), t.reshape(3, -1), t.view(-1)
    with Theirs():
        tt.reshape(6), tt.flatten(), tt.reshape(3, -1), tt.view(-1)
    assert ours == theirs
    with dispatch_trace() as binding:
        t.reshape(6), t.flatten(), t.view(-1)
    monkeypatch.setattr(methods, "_H_reshape", lambda self, shape: None)
    monkeypatch.setattr(methods, "_H_flatten", lambda self: None)
    with dispatch_trace() as full:
        t.reshape(6), t.flatten(), t.view(-1)
    monkeypatch.undo()
    hops = [(h.op, h.key.name, h.depth) for h in binding.hops]
    assert hops == [(h.op, h.key.name, h.depth) for h in full.hops]
    assert "aten::view" in [h[0] for h in hops]
    assert hop.reshape(t, [6]) is not None  # plain states again
