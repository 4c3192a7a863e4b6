"""Device guards and device checks (issue 10 part 3) on the torchdev example backend, with two
device indices. torchdev's backend yaml says ``device_guard: true``: the generated wrappers
check the devices of ExactSame entries (torch's error text) and make the arguments' device
current around each kernel; torchdev's kernels put results on the current device."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

import pytest

import tensordispatch as td
from tensordispatch.backends.device_guard import device_guard, register_device_guard

torchdev: Any = None


@pytest.fixture(scope="module", autouse=True)
def _torchdev_installed() -> Iterator[None]:
    global torchdev
    torchdev = importlib.import_module("torchdev")
    torchdev.install()
    yield
    torchdev.uninstall()


def _on(index: int, values: list[float]) -> Any:
    return torchdev.to_device(td.tensor(values), td.device("torchdev", index))


def test_kernel_runs_with_the_arguments_device_current() -> None:
    x = _on(1, [1.0, 2.0])
    assert torchdev.runtime.get_device_index() == 0
    y = td.neg(x)  # torchdev's kernel allocates on the current device
    assert y.device == td.device("torchdev", 1)
    assert torchdev.to_cpu_tensor(y).tolist() == [-1.0, -2.0]
    assert torchdev.runtime.get_device_index() == 0  # restored


def test_factory_guard_uses_the_device_argument() -> None:
    t = td.empty(2, 3, device="torchdev:1")
    assert t.device == td.device("torchdev", 1)
    assert torchdev.runtime.get_device_index() == 0


def test_current_device_is_restored_after_an_error() -> None:
    a, b = _on(1, [1.0, 2.0]), _on(1, [[1.0], [2.0], [3.0]])
    with pytest.raises(RuntimeError):
        td.mm(a, b)  # torch rejects the shapes inside the kernel
    assert torchdev.runtime.get_device_index() == 0


def test_exact_same_entries_check_devices_with_torchs_message() -> None:
    a, b = _on(0, [[1.0]]), _on(1, [[2.0]])
    with pytest.raises(RuntimeError) as info:
        td.mm(a, b)
    assert str(info.value) == (
        "Expected all tensors to be on the same device, but got mat2 is on torchdev:1, "
        "different from other tensors on torchdev:0 (when checking argument in method "
        "wrapper_PrivateUse1_mm)"
    )


def test_no_check_entries_are_not_checked() -> None:
    # add.Tensor is device_check: NoCheck (TensorIterator) in native_functions.yaml, as in
    # torch: the wrapper does not compare devices; the guard follows self.
    out = td.add(_on(1, [1.0]), _on(0, [2.0]))
    assert out.device == td.device("torchdev", 1)
    assert torchdev.to_cpu_tensor(out).tolist() == [3.0]


def test_same_device_index_does_not_switch() -> None:
    calls: list[int] = []
    real = torchdev.runtime.set_device_index

    def spy(i: int) -> None:
        calls.append(i)
        real(i)

    guard = torchdev._INSTALLED[3]
    guard.remove()
    handle = register_device_guard("torchdev", torchdev.runtime.get_device_index, spy)
    try:
        td.neg(_on(0, [1.0]))
        td.neg(_on(1, [1.0]))
    finally:
        handle.remove()
        torchdev._INSTALLED[3] = register_device_guard(
            "torchdev", torchdev.runtime.get_device_index, real
        )
    assert calls == [1, 0]


def test_device_guard_context_manager_switches_and_restores() -> None:
    with device_guard(td.device("torchdev", 1)):
        assert torchdev.runtime.current_device() == td.device("torchdev", 1)
    assert torchdev.runtime.current_device() == td.device("torchdev", 0)


def test_device_types_without_a_guard_are_left_alone() -> None:
    with device_guard(td.device("cpu")):
        assert torchdev.runtime.get_device_index() == 0


def test_registering_a_guard_twice_is_refused() -> None:
    with pytest.raises(ValueError) as info:
        register_device_guard("torchdev", lambda: 0, lambda i: None)
    assert str(info.value) == (
        "register_device_guard('torchdev'): device type torchdev already has a device guard "
        "implementation; remove that registration first"
    )
