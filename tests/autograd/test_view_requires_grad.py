"""A view's ``requires_grad`` against torch 2.13 when its root's flag changes after the view
was made. torch's views read their base's flag each time; ours get it pushed by the root
(Note [Views follow their root's requires_grad] in views.py)."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import tensordispatch as td


def _made_then_root_requires_grad(m: Any, mode: str) -> tuple[bool, Any, bool]:
    x = m.ones(3)
    if mode == "normal":
        v = x[:2]
    else:
        with m.no_grad() if mode == "no_grad" else m.inference_mode():
            v = x[:2]
    x.requires_grad_()
    return (v.requires_grad, v.grad_fn, v.is_leaf)


@pytest.mark.parametrize("mode", ["normal", "no_grad", "inference"])
def test_view_follows_its_root_turning_requires_grad_on(mode: str) -> None:
    ours = _made_then_root_requires_grad(td, mode)
    assert ours == _made_then_root_requires_grad(torch, mode) == (True, None, True)


def test_no_grad_view_follows_its_root_turning_requires_grad_off() -> None:
    def fields(m: Any) -> bool:
        x = m.ones(3, requires_grad=True)
        with m.no_grad():
            v = x[:2]
        x.requires_grad_(False)
        return bool(v.requires_grad)

    assert fields(td) == fields(torch) is False


def test_view_made_after_the_flag_is_set_matches_torch() -> None:
    def fields(m: Any) -> tuple[bool, str, bool]:
        x = m.ones(3).requires_grad_()
        v = x[:2]
        return (v.requires_grad, type(v.grad_fn).__name__, v.is_leaf)

    assert fields(td) == fields(torch) == (True, "SliceBackward0", False)


def _name(fn: Any) -> str | None:
    return None if fn is None else type(fn).__name__


def test_view_follows_its_root_turning_on_then_off() -> None:
    def fields(m: Any) -> tuple[bool, bool]:
        x = m.ones(3)
        v = x[:2]
        x.requires_grad_()
        on = v.requires_grad
        x.requires_grad_(False)
        return (on, v.requires_grad)

    assert fields(td) == fields(torch) == (True, False)


def test_view_follows_its_root_set_through_the_attribute() -> None:
    def fields(m: Any) -> bool:
        x = m.ones(3)
        v = x.t()
        x.requires_grad = True
        return bool(v.requires_grad)

    assert fields(td) == fields(torch) is True


def test_view_of_a_view_made_before_follows_the_root() -> None:
    def fields(m: Any) -> tuple[bool, Any, bool]:
        x = m.ones(4)
        w = x[:3][1:]
        x.requires_grad_()
        return (w.requires_grad, w.grad_fn, w.is_leaf)

    assert fields(td) == fields(torch) == (True, None, True)


def test_computation_on_a_following_view_records_but_sends_no_gradient_to_the_root() -> None:
    def fields(m: Any) -> tuple[bool, str | None, Any]:
        x = m.ones(3)
        v = x[:2]
        x.requires_grad_()
        y = v * 2
        y.sum().backward()
        return (y.requires_grad, _name(y.grad_fn), x.grad)

    assert fields(td) == fields(torch) == (True, "MulBackward0", None)


def test_detached_view_does_not_follow_its_root() -> None:
    def fields(m: Any) -> bool:
        x = m.ones(3)
        d = x[:2].detach()
        x.requires_grad_()
        return bool(d.requires_grad)

    assert fields(td) == fields(torch) is False


def test_detach_in_place_of_the_root_turns_its_views_off() -> None:
    def fields(m: Any) -> bool:
        x = m.ones(3)
        v = x[:2]
        x.requires_grad_()
        x.detach_()
        return bool(v.requires_grad)

    assert fields(td) == fields(torch) is False


def test_view_turning_its_own_flag_off_keeps_its_roots() -> None:
    def fields(m: Any) -> tuple[bool, bool, bool, str | None]:
        x = m.ones(3)
        v = x[:2]
        v.requires_grad_()
        own = (v.requires_grad, x.requires_grad)
        x.requires_grad_()
        edge = _name((v * 2).grad_fn.next_functions[0][0])
        v.requires_grad_(False)
        return (*own, v.requires_grad, edge)

    assert fields(td) == fields(torch) == (True, False, True, "AccumulateGrad")


def test_following_view_written_through_its_root_regenerates_its_grad_fn() -> None:
    def fields(m: Any) -> tuple[str | None, list[float]]:
        x = m.ones(3)
        v = x[:2]
        x.requires_grad_()
        with m.no_grad():
            x.add_(1)
        fn = _name(v.grad_fn)
        (v * 2).sum().backward()
        return (fn, x.grad.tolist())

    assert fields(td) == fields(torch) == ("AsStridedBackward0", [2.0, 2.0, 0.0])


def test_view_written_before_its_root_requires_grad_regenerates_its_grad_fn() -> None:
    def fields(m: Any) -> tuple[str | None, list[float]]:
        x = m.ones(3)
        v = x[1:]
        v.add_(1)
        x.requires_grad_()
        (v * 3).sum().backward()
        return (_name(v.grad_fn), x.grad.tolist())

    assert fields(td) == fields(torch) == ("AsStridedBackward0", [0.0, 3.0, 3.0])


def test_in_place_op_making_the_root_require_grad_reaches_its_views() -> None:
    def fields(m: Any) -> tuple[bool, str | None, list[float]]:
        y = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        x = m.ones(3)
        v = x[:2]
        x.mul_(y)
        (v * 3).sum().backward()
        return (v.requires_grad, _name(v.grad_fn), y.grad.tolist())

    assert fields(td) == fields(torch) == (True, "AsStridedBackward0", [3.0, 3.0, 0.0])


def test_in_place_op_on_one_view_reaches_the_roots_other_views() -> None:
    def fields(m: Any) -> tuple[bool, str | None, list[float]]:
        y = m.tensor([2.0, 5.0], requires_grad=True)
        x = m.ones(3)
        v1, v2 = x[:2], x[1:]
        v1.mul_(y)
        v2.sum().backward()
        return (v2.requires_grad, _name(v2.grad_fn), y.grad.tolist())

    assert fields(td) == fields(torch) == (True, "AsStridedBackward0", [0.0, 1.0])


@pytest.mark.parametrize("mode", ["no_grad", "inference", "split"])
def test_following_view_refuses_a_write_its_creation_meta_forbids(mode: str) -> None:
    def message(m: Any) -> str:
        x = m.ones(3)
        if mode == "split":
            v = x.split(2)[1]
        else:
            with m.no_grad() if mode == "no_grad" else m.inference_mode():
                v = x[:2]
        x.requires_grad_()
        with m.no_grad():
            x.add_(1)
        with pytest.raises(RuntimeError) as info:
            _ = v.grad_fn
        return str(info.value)

    ours = message(td)
    assert ours == message(torch)
    assert ours.startswith("A view was created in ")


def test_follow_list_of_a_root_drops_dead_views() -> None:
    x = td.ones(8)
    for i in range(1000):
        _ = x[i % 8]
    keep = [x[:2], x[2:]]
    x.requires_grad_()
    assert all(v.requires_grad for v in keep)
    assert len(x._vc.views) < 64


@pytest.mark.parametrize("mode", ["normal", "no_grad", "made_after"])
def test_following_view_edge_is_none_as_torchs(mode: str) -> None:
    def edges(m: Any) -> list[tuple[str | None, int]]:
        x = m.ones(3)
        if mode == "made_after":
            x.requires_grad_()
            with m.no_grad():
                v = x[:2]
        elif mode == "no_grad":
            with m.no_grad():
                v = x[:2]
            x.requires_grad_()
        else:
            v = x[:2]
            x.requires_grad_()
        fn = (v * m.ones(2, requires_grad=True)).grad_fn
        return [(_name(n), nr) for n, nr in fn.next_functions]

    assert edges(td) == edges(torch) == [(None, 0), ("AccumulateGrad", 0)]


def test_only_views_of_a_dtype_that_can_require_grad_are_listed() -> None:
    f = td.ones(4)
    i = td.ones(4, dtype=td.int64)
    kept = [f[:2], f.t(), i[:2], i.t()]
    assert (len(f._vc.views), len(i._vc.views)) == (2, 0)
    assert all(v._base is not None for v in kept)
