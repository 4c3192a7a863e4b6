"""The torchdev backend's direct entry points (issue 10 part 1): ``ops.privateuse1``, served by
the generated module's register() from the backend yaml's operators."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

import pytest

import tensordispatch as td

torchdev: Any = None


@pytest.fixture(scope="module", autouse=True)
def _torchdev_installed() -> Iterator[None]:
    global torchdev
    torchdev = importlib.import_module("torchdev")
    torchdev.install()
    yield
    torchdev.uninstall()


def test_entry_points_are_the_yaml_operators_and_generated_variants() -> None:
    generated = importlib.import_module("torchdev.generated.privateuse1_native_functions")
    ns = td.ops.privateuse1
    served = {
        f"{n}.{ov}" if ov != "default" else n for n in dir(ns) for ov in getattr(ns, n).overloads()
    }
    assert served == set(generated.DIRECT)
    assert {"add.Tensor", "mul.Tensor", "mul.out", "mul_.Tensor", "view"} <= served


def test_direct_call_runs_the_backend_kernel_without_dispatch() -> None:
    x = torchdev.to_device(td.tensor([1.0, 2.0]))
    torchdev.reset_stats()
    out = td.ops.privateuse1.mul.Tensor(x, x)
    assert out.device.type == "torchdev"
    assert torchdev.to_cpu_tensor(out).tolist() == [1.0, 4.0]
    assert torchdev.STATS["to_cpu_calls"] == 0  # native kernel, no fallback


def test_generated_variant_is_served_too() -> None:
    x = torchdev.to_device(td.tensor([3.0]))
    assert td.ops.privateuse1.mul_.Tensor(x, x) is x
    assert torchdev.to_cpu_tensor(x).tolist() == [9.0]


def test_operator_outside_the_yaml_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError) as info:
        td.ops.privateuse1.sin  # noqa: B018
    assert str(info.value).startswith(
        "ops.privateuse1.sin: operator sin has no PrivateUse1 kernel, so there is no direct "
        "PrivateUse1 entry point for it (it has direct entry points in"
    )


def test_uninstall_takes_the_namespace_away() -> None:
    from tensordispatch.ops.direct import is_direct

    torchdev.uninstall()
    try:
        assert not is_direct("privateuse1")
    finally:
        torchdev.install()
