"""BatchedTensors made in inference_mode are inference tensors, as torch.func.vmap's wrappers
(a wrapper made while the mode is on gets no version counter and no autograd keys); made
outside the mode they are normal, even over an inference tensor. Compared with torch 2.13."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.func

import tensordispatch as td
import tensordispatch.func

Body = Callable[[Any, Any, list[Any]], Any]


def _run(m: Any, body: Body, made_inside: bool, call_inside: bool) -> tuple[Any, ...]:
    seen: list[Any] = []

    def f(x: Any) -> Any:
        return body(m, x, seen)

    if made_inside:
        with m.inference_mode():
            x = m.ones(3, 2)
    else:
        x = m.ones(3, 2)
    if call_inside:
        with m.inference_mode():
            r = m.func.vmap(f)(x)
    else:
        r = m.func.vmap(f)(x)
    return (seen, r.is_inference(), r.tolist())


def _flags(m: Any, x: Any, seen: list[Any]) -> Any:
    y = x * 2
    seen.append((x.is_inference(), y.is_inference()))
    return y


def _in_place(m: Any, x: Any, seen: list[Any]) -> Any:
    x.add_(1)
    seen.append(x.is_inference())
    return x * 1


def _version(m: Any, x: Any, seen: list[Any]) -> Any:
    try:
        seen.append(x._version)
    except RuntimeError as e:
        seen.append(str(e))
    return x


def _nested(m: Any, x: Any, seen: list[Any]) -> Any:
    def g(y: Any) -> Any:
        seen.append(y.is_inference())
        return y.sum()

    return m.func.vmap(g)(x)


def _view(m: Any, x: Any, seen: list[Any]) -> Any:
    v = x[:1]
    seen.append((v.is_inference(), v._base is None))
    return v


BODIES: dict[str, Body] = {
    "flags": _flags,
    "in_place": _in_place,
    "version": _version,
    "nested": _nested,
    "view": _view,
}


_PLACES = [(True, True), (False, True), (True, False), (False, False)]
# (writing an inference tensor outside the mode raises in both: the in-place body leaves
# that case out)
CASES = [
    (body, *where) for body in BODIES for where in _PLACES
    if not (body == "in_place" and where == (True, False))
]  # fmt: skip


@pytest.mark.parametrize(("body", "made_inside", "call_inside"), CASES)
def test_batched_tensor_inference_flags_match_torch(
    body: str, made_inside: bool, call_inside: bool
) -> None:
    ours = _run(td, BODIES[body], made_inside, call_inside)
    assert ours == _run(torch, BODIES[body], made_inside, call_inside)


def test_batched_tensor_seen_in_inference_mode_is_an_inference_tensor() -> None:
    seen: list[bool] = []

    def f(x: Any) -> Any:
        seen.append(x.is_inference())
        return x + 1

    x = td.ones(3, 2)
    with td.inference_mode():
        r = td.func.vmap(f)(x)
    assert (seen, r.is_inference(), x.is_inference()) == ([True], True, False)
