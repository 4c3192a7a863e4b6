"""Random conv2d and cross_entropy configurations against torch (hypothesis, derandomized in
CI): shapes, stride, padding, dilation, groups, bias; reduction, ignore_index, weights."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.ops.conftest import assert_same_result, run_both


@st.composite
def convs(draw: Any) -> dict[str, Any]:
    groups = draw(st.integers(1, 2))
    return {
        "n": draw(st.integers(1, 2)), "cin": groups * draw(st.integers(1, 2)),
        "cout": groups * draw(st.integers(1, 2)), "h": draw(st.integers(1, 6)),
        "w": draw(st.integers(1, 6)), "kh": draw(st.integers(1, 3)), "kw": draw(st.integers(1, 3)),
        "stride": draw(st.sampled_from([1, 2, (1, 2)])), "padding": draw(st.sampled_from(
            [0, 1, (2, 0), "same", "valid"])), "dilation": draw(st.sampled_from([1, 2, (2, 1)])),
        "groups": groups, "bias": draw(st.booleans()), "seed": draw(st.integers(0, 999)),
    }  # fmt: skip


@settings(max_examples=80, deadline=None)
@given(convs())
def test_random_conv2d_matches_torch(c: dict[str, Any]) -> None:
    rng = np.random.default_rng(c["seed"])
    x = rng.standard_normal((c["n"], c["cin"], c["h"], c["w"])).round(3).tolist()
    w = rng.standard_normal((c["cout"], c["cin"] // c["groups"], c["kh"], c["kw"])).round(3)
    b = rng.standard_normal(c["cout"]).round(3).tolist()

    def build(L: Any, d: str) -> Any:
        bias = L.tensor(b, device=d) if c["bias"] else None
        return L.conv2d(
            L.tensor(x, device=d), L.tensor(w.tolist(), device=d), bias, stride=c["stride"],
            padding=c["padding"], dilation=c["dilation"], groups=c["groups"],
        )  # fmt: skip

    for device in ("cpu", "meta"):
        expected, got = run_both(build, device, "cpu" if device == "meta" else None)
        if isinstance(expected, BaseException):
            assert isinstance(got, type(expected)), (c, expected, got)
        else:
            assert not isinstance(got, BaseException), (c, expected, got)
            assert_same_result(expected, got, values=device == "cpu", where=str(c))


@st.composite
def losses(draw: Any) -> dict[str, Any]:
    return {
        "shape": draw(st.sampled_from([(4,), (3, 4), (2, 4, 3), (2, 4, 2, 3), (2, 4, 1, 2, 2)])),
        "reduction": draw(st.integers(0, 2)), "ignore": draw(st.sampled_from([-100, 1])),
        "weight": draw(st.booleans()), "smoothing": draw(st.sampled_from([0.0, 0.25])),
        "probs": draw(st.booleans()), "seed": draw(st.integers(0, 999)),
    }  # fmt: skip


@settings(max_examples=80, deadline=None)
@given(losses())
def test_random_cross_entropy_matches_torch(c: dict[str, Any]) -> None:
    rng = np.random.default_rng(c["seed"])
    shape = c["shape"]
    classes = shape[0] if len(shape) == 1 else shape[1]
    target_shape = () if len(shape) == 1 else (shape[0], *shape[2:])
    x = rng.standard_normal(shape).round(3).tolist()
    t = rng.integers(0, classes, target_shape).tolist()
    p = rng.dirichlet(np.ones(classes), target_shape or None)
    p = np.moveaxis(p, -1, 0 if len(shape) == 1 else 1).tolist()
    wt = rng.uniform(0.5, 2.0, classes).round(3).tolist()

    def build(L: Any, d: str) -> Any:
        target = L.tensor(p, device=d) if c["probs"] else L.tensor(t, dtype=L.int64, device=d)
        weight = L.tensor(wt, device=d) if c["weight"] else None
        return L.ops.aten.cross_entropy_loss(
            L.tensor(x, device=d), target, weight, c["reduction"],
            -100 if c["probs"] else c["ignore"], c["smoothing"],
        )  # fmt: skip

    for device in ("cpu", "meta"):
        expected, got = run_both(build, device, "cpu" if device == "meta" else None)
        if isinstance(expected, BaseException):
            assert isinstance(got, type(expected)), (c, expected, got)
        else:
            assert not isinstance(got, BaseException), (c, expected, got)
            assert_same_result(expected, got, values=device == "cpu", where=str(c))
