"""The composite factories' direct calls of our CPU kernels (Note [Composite factories call
known kernels directly] in backends/composite_direct.py): the guard's answers, results equal
to torch's, and every situation in which the full dispatch must run instead."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch.backends import composite_direct
from tensordispatch.backends.aten import below_ad_inplace_or_view
from tensordispatch.backends.composite_direct import EMPTY_ONLY, FILL_TOO, direct_cpu_kernels
from tensordispatch.dispatch import DispatchMode, dispatch_trace
from tensordispatch.library import Library


def test_default_words_know_the_empty_kernels_only() -> None:
    assert direct_cpu_kernels() == EMPTY_ONLY


def test_factory_binding_words_know_fill_too() -> None:
    assert below_ad_inplace_or_view(direct_cpu_kernels) == FILL_TOO


def test_inside_a_mode_handler_nothing_is_known() -> None:
    seen: list[int] = []

    class M(DispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            seen.append(below_ad_inplace_or_view(direct_cpu_kernels))
            return func(*args, **(kwargs or {}))

    with M():
        z = td.zeros(2)
    assert seen == [0] and z.tolist() == [0.0, 0.0]


def test_a_trace_sees_every_inner_call() -> None:
    td.zeros(2)  # the guard has answered yes for these states
    with dispatch_trace() as trace:
        td.zeros(2)
        assert below_ad_inplace_or_view(direct_cpu_kernels) == 0
    ops = [h.op for h in trace.hops]
    assert ops == [
        "aten::zeros",
        "aten::zeros",
        "aten::empty.memory_format",
        "aten::empty.memory_format",
        "aten::fill_.Scalar",
    ]


def test_a_user_fill_kernel_is_called_by_zeros_and_ones_like() -> None:
    seen: list[Any] = []

    def my_fill(self: Any, value: Any) -> Any:
        seen.append(value)
        self._data[...] = 7
        return self

    td.zeros(2)
    base = td.empty(3)
    lib = Library("aten", "IMPL")
    with warnings.catch_warnings():  # torch's one-time "Overriding a previously registered"
        warnings.simplefilter("ignore")
        lib.impl("fill_.Scalar", my_fill, "CPU")
    try:
        assert below_ad_inplace_or_view(direct_cpu_kernels) == EMPTY_ONLY
        z = td.zeros(2)
        o = td.ones_like(base)
    finally:
        lib._destroy()
    assert seen == [0, 1] and z.tolist() == [7.0, 7.0] and o.tolist() == [7.0] * 3
    assert below_ad_inplace_or_view(direct_cpu_kernels) == FILL_TOO
    assert td.zeros(2).tolist() == [0.0, 0.0]


def test_a_user_empty_kernel_is_called_by_zeros() -> None:
    seen: list[Any] = []

    def my_empty(size: Any, **kwargs: Any) -> Any:
        seen.append(list(size))
        return td.from_numpy(np.ones(3, np.float32))

    td.zeros(2)
    lib = Library("aten", "IMPL")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lib.impl("empty.memory_format", my_empty, "CPU")
    try:
        assert direct_cpu_kernels() == 0
        z = td.zeros(2)
    finally:
        lib._destroy()
    assert seen == [[2]] and z.tolist() == [0.0, 0.0, 0.0]
    assert direct_cpu_kernels() == EMPTY_ONLY


def test_the_memo_is_rechecked_only_for_new_states() -> None:
    below_ad_inplace_or_view(direct_cpu_kernels)
    memo = composite_direct._MEMO
    below_ad_inplace_or_view(direct_cpu_kernels)
    assert composite_direct._MEMO is memo


FACTORIES = {
    "zeros": lambda m: m.zeros(2, 3),
    "ones int8": lambda m: m.ones(2, 3, dtype=m.int8),
    "full": lambda m: m.full((2,), 2.5),
    "full -0.0": lambda m: m.full((3,), -0.0),
    "full int": lambda m: m.full((2, 2), 7),
    "full bool": lambda m: m.full((2,), True),
    "zeros complex": lambda m: m.zeros(2, dtype=m.complex64),
    "zeros 0-d": lambda m: m.zeros(()),
    "zeros empty": lambda m: m.zeros(0, 3),
    "ones device cpu string": lambda m: m.ones(2, device="cpu"),
    "zeros_like transposed": lambda m: m.zeros_like(m.ones(2, 3).t()),
    "ones_like sliced": lambda m: m.ones_like(m.ones(4, 4)[:, ::2]),
    "full_like f64": lambda m: m.full_like(m.ones(2, dtype=m.float64), 3.5),
    "ones_like dtype": lambda m: m.ones_like(m.ones(2, 2), dtype=m.int32),
    "empty_like expanded": lambda m: m.empty_like(m.ones(3, 1).expand(3, 4)).fill_(1),
}


@pytest.mark.parametrize("name", list(FACTORIES))
def test_factories_match_torch(name: str) -> None:
    got, expected = FACTORIES[name](td), FACTORIES[name](torch)
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(expected.shape)
    assert got.stride() == expected.stride()
    assert got._version == expected._version == 0 or name == "empty_like expanded"
    assert torch.equal(torch.from_numpy(got.numpy().copy()), expected)
    assert str(got.tolist()) == str(expected.tolist())  # -0.0 keeps its sign


def test_negative_zeros_size_keeps_its_error() -> None:
    with pytest.raises(RuntimeError) as info:
        td.zeros(2, -1)
    assert str(info.value) == "zeros: Dimension size must be non-negative."


def test_full_out_of_range_value_still_errors_like_the_fill_kernel() -> None:
    with pytest.raises(RuntimeError) as direct:
        td.full((2,), 300, dtype=td.int8)
    with pytest.raises(RuntimeError) as dispatched:
        td.zeros(2, dtype=td.int8).fill_(300)
    assert str(direct.value) == str(dispatched.value)
