"""torchdev's transfer hooks (examples/torchdev/torchdev/runtime.py): every transfer copies,
and the NumPy alias kept per payload (``TorchDevTensor._host``) never serves stale values.

The oracle is torch: the payload's values read through torch itself."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td

torchdev: Any = None  # imported by the fixture below, not at collection
runtime: Any = None


@pytest.fixture(scope="module", autouse=True)
def _torchdev_installed() -> Iterator[None]:
    """Install torchdev for this module only (as test_torchdev.py does)."""
    global torchdev, runtime
    torchdev = importlib.import_module("torchdev")
    runtime = importlib.import_module("torchdev.runtime")
    torchdev.install()
    yield
    torchdev.uninstall()


def test_to_cpu_copies_the_payload_values() -> None:
    x = torchdev.to_device(td.tensor([[1.0, 2.0], [3.0, 4.0]]))
    (c,) = runtime.batched_to_cpu([x])
    assert c.device == td.device("cpu") and c.dtype == td.float32
    assert c.tolist() == x._data.tolist()
    assert not np.shares_memory(c._data, x._data.numpy())


def test_to_cpu_of_a_strided_view_matches_torch() -> None:
    x = torchdev.to_device(td.arange(12, dtype=td.float32).reshape(3, 4))
    v = x.t()[1:, ::2]  # a torch as_strided view of x's payload
    (c,) = runtime.batched_to_cpu([v])
    assert c.tolist() == v._data.tolist()
    assert c.shape == tuple(v._data.shape)


def test_to_cpu_sees_writes_made_after_the_first_transfer() -> None:
    x = torchdev.to_device(td.tensor([1.0, 2.0]))
    runtime.batched_to_cpu([x])  # the alias of x's payload now exists
    x._data.add_(10.0)  # a write through torch, into the same memory
    (c,) = runtime.batched_to_cpu([x])
    assert c.tolist() == [11.0, 12.0]


def test_to_cpu_after_the_payload_is_replaced() -> None:
    x = torchdev.to_device(td.tensor([1.0, 2.0]))
    runtime.batched_to_cpu([x])
    runtime.resize_to(x, (3,))  # a new payload: the old alias must not be used
    x._data.copy_(torch.tensor([7.0, 8.0, 9.0]))
    (c,) = runtime.batched_to_cpu([x])
    assert c.tolist() == [7.0, 8.0, 9.0]


def test_from_cpu_copies_and_keeps_its_alias_in_step() -> None:
    src = td.tensor([[1, 2], [3, 4]], dtype=td.int64)
    (d,) = runtime.batched_from_cpu([src], torchdev.DEVICE)
    assert isinstance(d, torchdev.TorchDevTensor)
    assert (d.device, d.dtype, d.shape) == (torchdev.DEVICE, td.int64, (2, 2))
    assert d.stride() == tuple(d._data.stride())
    src._data[0, 0] = 100  # the device tensor is a copy
    assert d._data.tolist() == [[1, 2], [3, 4]]
    d._data.mul_(2)  # and its alias shares the payload's memory
    assert torchdev.to_cpu_tensor(d).tolist() == [[2, 4], [6, 8]]


def test_from_cpu_of_a_transposed_tensor_keeps_its_values() -> None:
    src = td.arange(6, dtype=td.float64).reshape(2, 3).t()
    (d,) = runtime.batched_from_cpu([src], torchdev.DEVICE)
    assert d._data.tolist() == src.tolist()
    assert d.shape == (3, 2)


def test_zero_dim_round_trip() -> None:
    (d,) = runtime.batched_from_cpu([td.tensor(2.5)], torchdev.DEVICE)
    assert d.shape == () and d._data.item() == 2.5
    (c,) = runtime.batched_to_cpu([d])
    assert c.shape == () and c.item() == 2.5


def test_host_array_of_a_plain_tensor_on_the_device() -> None:
    # A tensor of torchdev's device that is not a TorchDevTensor has no slot for the alias:
    # the array is made each time instead.
    pt = torch.tensor([1.0, 2.0])
    t = td.Tensor._make(pt, (2,), (1,), 0, td.float32, torchdev.DEVICE)
    assert runtime.host_array(t).tolist() == [1.0, 2.0]
    (c,) = runtime.batched_to_cpu([t])
    assert c.tolist() == [1.0, 2.0]
