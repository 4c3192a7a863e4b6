"""Views of normal tensors made in inference_mode against torch 2.13 (views.py, Note [View
creation meta]: CreationMeta INFERENCE_MODE and torch's errors for in-place writes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import tensordispatch as td

SUFFIX = (
    "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
    "your code by moving both the view and the inplace either both inside the inference_mode "
    "block (if you don't want the inplace to be tracked) or both outside (if you want the "
    "inplace to be tracked)."
)
DIRECT = (
    f"A view was created in inference mode and is being modified inplace in normal mode. {SUFFIX}"
)
INDIRECT = (
    "A view was created in inference mode and its base or another view of its base has been "
    f"modified inplace in normal mode. {SUFFIX}"
)


def _outcome(fn: Callable[[], Any]) -> tuple[str, str]:
    try:
        r = fn()
    except RuntimeError as e:
        return ("RuntimeError", str(e))
    return ("ok", repr(r.tolist()) if hasattr(r, "tolist") else repr(r))


def _nonleaf(m: Any) -> tuple[Any, Any]:
    x = m.ones(4, requires_grad=True)
    return x, x * 1


def _slice_written(m: Any) -> tuple[str, str]:
    _, y = _nonleaf(m)
    with m.inference_mode():
        v = y[:2]
    return _outcome(lambda: v.mul_(2))


def _transpose_written(m: Any) -> tuple[str, str]:
    _, y = _nonleaf(m)
    with m.inference_mode():
        v = y.view(2, 2).t()
    return _outcome(lambda: v.add_(1))


def _split_written(m: Any) -> tuple[str, str]:
    _, y = _nonleaf(m)
    with m.inference_mode():
        a, _ = y.split(2)
    return _outcome(lambda: a.mul_(2))


def _of_a_no_grad_view(m: Any) -> tuple[str, str]:
    _, y = _nonleaf(m)
    with m.no_grad():
        v = y[:3]
    with m.inference_mode():
        w = v[:1]
    return _outcome(lambda: w.mul_(2))


def _no_grad_view_of_it(m: Any) -> tuple[str, str]:  # INFERENCE_MODE sticks
    _, y = _nonleaf(m)
    with m.inference_mode():
        v = y[:3]
    with m.no_grad():
        w = v[:1]
    return _outcome(lambda: w.mul_(2))


def _plain_view_requiring_operand(m: Any) -> tuple[str, str]:
    z = m.ones(4)
    with m.inference_mode():
        v = z[:2]
    return _outcome(lambda: v.mul_(m.ones(2, requires_grad=True)))


@pytest.mark.parametrize(
    "scenario",
    [
        _slice_written,
        _transpose_written,
        _split_written,
        _of_a_no_grad_view,
        _no_grad_view_of_it,
        _plain_view_requiring_operand,
    ],
    ids=lambda f: f.__name__.strip("_"),
)
def test_inplace_in_normal_mode_raises_torchs_error(scenario: Any) -> None:
    assert scenario(td) == scenario(torch) == ("RuntimeError", DIRECT)


def _recorded_view_of_it(m: Any) -> tuple[str, str]:
    _, y = _nonleaf(m)
    with m.inference_mode():
        v = y[:2]
    vv = v.view(2)
    return (type(vv.grad_fn).__name__, _outcome(lambda: vv.mul_(2))[1])


def test_a_recorded_view_of_it_names_its_node_as_torch() -> None:
    assert _recorded_view_of_it(td) == _recorded_view_of_it(torch)
    assert _recorded_view_of_it(td) == (
        "ViewBackward0",
        (
            "Output 0 of View is a view of a view which was created in inference mode and is "
            f"being modified inplace in normal mode. {SUFFIX}"
        ),
    )


def _view_made_under_inference_false(m: Any) -> tuple[str, str]:
    _, y = _nonleaf(m)
    with m.inference_mode():
        v = y[:3]
        with m.inference_mode(False):
            w = v[:1]
    return _outcome(lambda: w.mul_(2))


def test_a_view_made_under_inference_mode_false_inherits_it_as_torch() -> None:
    ours = _view_made_under_inference_false(td)
    assert ours == _view_made_under_inference_false(torch)
    assert ours[1].startswith(
        "Output 0 of Slice is a view of a view which was created in inference"
    )


def _writes_allowed(m: Any) -> list[tuple[str, str]]:
    seen = []
    _, y = _nonleaf(m)
    with m.inference_mode():
        v = y[:2]
        seen.append(_outcome(lambda: v.mul_(2)))  # inside: not tracked
    z = m.ones(4)
    with m.inference_mode():
        p = z[:2]
    seen.append(_outcome(lambda: p.mul_(3)))  # nothing requires grad
    with m.inference_mode():
        d = y.detach()  # not a view for autograd
    seen.append(_outcome(lambda: d.mul_(2)))
    return seen


def test_writes_torch_allows() -> None:
    assert _writes_allowed(td) == _writes_allowed(torch)


def _indirect(m: Any, use: str) -> tuple[str, str]:
    _, y = _nonleaf(m)
    with m.inference_mode():
        v = y[:2]
    y.add_(1)
    if use == "grad_fn":
        return _outcome(lambda: v.grad_fn)
    return _outcome(lambda: v * 2)


@pytest.mark.parametrize("use", ["grad_fn", "compute"])
def test_base_written_in_normal_mode_then_view_used_raises_as_torch(use: str) -> None:
    assert _indirect(td, use) == _indirect(torch, use) == ("RuntimeError", INDIRECT)


def _fields(m: Any) -> tuple[Any, ...]:
    x, y = _nonleaf(m)
    with m.inference_mode():
        v = y[:2]
    fields = (v.is_leaf, v.requires_grad, v.grad_fn, v._base is y, v.is_inference())
    (v * 3).sum().backward()  # the gradient goes nowhere, as for a no_grad view
    return (*fields, x.grad)


def test_view_fields_and_backward_as_torch() -> None:
    assert _fields(td) == _fields(torch) == (True, True, None, True, False, None)
