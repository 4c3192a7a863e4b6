"""expand's plans (Note [Expand plans] in backends/views.py) and the views unsqueeze / permute
/ expand make with their NumPy-derived data (Note [NumPy-derived view data]): torch's
geometry, errors, autograd and view bookkeeping on every call, planned or not."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import tensordispatch as td
from tensordispatch.backends import views

CASES: list[tuple[Any, Any]] = [
    (lambda m: m.arange(16.0).view(4, 4), (2, 4, 4)),
    (lambda m: m.arange(16.0).view(4, 4), (1, 1, 4, 4)),
    (lambda m: m.arange(16.0).view(4, 4), (3, -1, -1)),
    (lambda m: m.arange(4.0).view(1, 4), (3, 4)),
    (lambda m: m.arange(4.0).view(4, 1), (2, 4, 5)),
    (lambda m: m.arange(16.0).view(4, 4).t()[1:], (2, 3, 4)),  # strides and an offset
    (lambda m: m.arange(3, dtype=m.int32), (2, 3)),  # another itemsize
    (lambda m: m.tensor(5.0), (2, 1, 3)),  # 0-d: every stride 0
    (lambda m: m.zeros(0, 1), (2, 0, 3)),
    (lambda m: m.arange(4.0).view(4, 1), (4, 2, 5)),  # mismatch at a non-singleton dim
    (lambda m: m.arange(4.0).view(4, 1), (-1, 4, 1)),  # -1 in a leading dim
]


def _outcome(t: Any, size: Any) -> Any:
    try:
        r = t.expand(size)
    except Exception as e:  # noqa: BLE001 - compared
        return type(e).__name__, str(e)
    return r.tolist(), tuple(r.shape), r.stride(), r.storage_offset()


@pytest.mark.parametrize("case", range(len(CASES)))
def test_expand_matches_torch_every_time(case: int) -> None:
    build, size = CASES[case]
    for _ in range(3):  # the first call plans, the next ones use the plan
        assert _outcome(build(td), size) == _outcome(build(torch), size)


def test_expand_error_message_for_a_leading_minus_one() -> None:
    with pytest.raises(RuntimeError) as e:
        td.arange(4.0).view(4, 1).expand(-1, 4, 1)
    assert str(e.value) == (
        "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0"
    )


def test_expand_error_message_names_the_last_bad_dim_as_torch() -> None:
    with pytest.raises(RuntimeError) as ours:
        td.ones(2, 3).expand(4, 5)
    with pytest.raises(RuntimeError) as theirs:
        torch.ones(2, 3).expand(4, 5)
    assert str(ours.value) == str(theirs.value)
    assert str(ours.value) == (
        "The expanded size of the tensor (5) must match the existing size (3) at "
        "non-singleton dimension 1.  Target sizes: [4, 5].  Tensor sizes: [2, 3]"
    )


def test_expand_error_message_for_too_few_sizes() -> None:
    # torch names the type as its legacy type (torch.FloatTensor), and so do we
    with pytest.raises(RuntimeError) as e:
        td.ones(2, 2).expand(2)
    assert str(e.value) == (
        "expand(torch.FloatTensor{[2, 2]}, size=[2]): the number of sizes provided (1) "
        "must be greater or equal to the number of dimensions in the tensor (2)"
    )


def test_a_plan_uses_each_calls_offset_and_data() -> None:
    a = td.arange(8.0).view(2, 4)
    first, second = a[0].expand(3, 4), a[1].expand(3, 4)
    assert first.tolist() == [[0.0, 1, 2, 3]] * 3
    assert second.tolist() == [[4.0, 5, 6, 7]] * 3
    assert second.storage_offset() == 4 and second._base is a._base


def test_a_tensor_size_is_read_on_every_call_not_planned() -> None:
    n = td.tensor(2)
    x = td.ones(1, 3)
    assert tuple(x.expand(n, 3).shape) == (2, 3)
    n.fill_(4)
    assert tuple(x.expand(n, 3).shape) == (4, 3)


def test_bool_and_numpy_sizes_give_the_int_plan() -> None:
    import numpy as np

    x = td.ones(1, 3)
    assert tuple(x.expand(1, 2, 3).shape) == (1, 2, 3)
    assert tuple(x.expand(True, 2, 3).shape) == (1, 2, 3)
    assert tuple(x.expand(np.int64(1), np.int64(2), 3).stride()) == (
        torch.ones(1, 3).expand(1, 2, 3).stride()
    )


def test_expand_plans_are_bounded() -> None:
    x = td.ones(1)
    for n in range(4100):
        x.expand(n + 1)
    assert len(views._EXPAND_PLANS) <= 4096


VIEW_CALLS: dict[str, Any] = {
    "unsqueeze": lambda x: x.unsqueeze(1),
    "unsqueeze of a transpose": lambda x: x.t().unsqueeze(-1),
    "permute": lambda x: x.permute(1, 0),
    "expand": lambda x: x.expand(2, 3, 4),
}


@pytest.mark.parametrize("name", list(VIEW_CALLS))
def test_views_share_version_counter_and_base_with_the_root(name: str) -> None:
    root = td.ones(3, 4)
    v = VIEW_CALLS[name](root[0:3])
    assert v._base is root and v._is_view()
    before = v._version
    root.add_(1)
    assert v._version == before + 1 == root._version
    assert v.tolist() == VIEW_CALLS[name](torch.ones(3, 4) + 1).tolist()


@pytest.mark.parametrize("name", list(VIEW_CALLS))
def test_views_follow_their_roots_requires_grad(name: str) -> None:
    root = td.ones(3, 4)
    v = VIEW_CALLS[name](root)
    assert not v.requires_grad
    root.requires_grad_()
    assert v.requires_grad  # Note [Views follow their root's requires_grad]


@pytest.mark.parametrize("name", list(VIEW_CALLS))
def test_views_backpropagate_as_torch(name: str) -> None:
    ours = td.arange(12.0).view(3, 4).requires_grad_()
    theirs = torch.arange(12.0).view(3, 4).requires_grad_()
    for m, x in ((td, ours), (torch, theirs)):
        v = VIEW_CALLS[name](x)
        weights = m.arange(float(v.numel())).view(tuple(v.shape))  # a distinct weight each
        v.mul(weights).sum().backward()
    assert ours.grad is not None and theirs.grad is not None
    assert ours.grad.tolist() == theirs.grad.tolist()
    assert VIEW_CALLS[name](ours).grad_fn.name() == VIEW_CALLS[name](theirs).grad_fn.name()
