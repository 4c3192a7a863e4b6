"""A generated backend module, imported and used: registration through the dispatcher.

The backend is PrivateUse1 with kernels in a scratch module; "tensors" are stand-ins that
carry PrivateUse1's key set (the dispatcher reads one attribute, `_key_set`), so calls
reach our kernels without a tensor implementation for the backend.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
import textwrap
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import tensordispatch.generated  # noqa: F401 - defines the aten operators
from tensordispatch.codegen.backend_stubs import MissingKernelsError, run
from tensordispatch.dispatch import BackendComponent, backend_tensor_keyset, dump
from tensordispatch.dispatch.op_overload import ops_namespace

aten = ops_namespace("aten")
_KEY_SET = backend_tensor_keyset(BackendComponent.PrivateUse1Bit).raw

YAML = """\
backend: PrivateUse1
cpp_namespace: {module}
class_name: PU1Kernels
supported:
- abs
- add.Tensor
autograd:
- mul.Tensor
"""

KERNELS = """\
class Box:
    # A stand-in for a backend tensor: the dispatcher reads only its key set; the autograd
    # kernel also looks at a result's version counter (None: not a fresh view result).
    _vc = None

    def __init__(self, value):
        self.value = value
        self._key_set = KEY_SET


class PU1Kernels:
    @staticmethod
    def abs(self):
        return Box(("abs", self.value))

    @staticmethod
    def add_Tensor(self, other, *, alpha=1):
        return Box(self.value + alpha * other.value)

    @staticmethod
    def mul_Tensor(self, other):
        return Box(self.value * other.value)

    @staticmethod
    def _copy_from(self, dst, non_blocking=False):
        dst.value = self.value
        return dst

    @staticmethod
    def _copy_from_and_resize(self, dst):
        dst.value = self.value
        return dst
"""

_OPS = ("abs", "abs.out", "abs_", "add.Tensor", "add.out", "add_.Tensor", "mul.Tensor",
        "mul.out", "mul_.Tensor", "sub.Tensor", "neg")  # fmt: skip
_counter = itertools.count()


def _dumps() -> dict[str, str]:
    return {op: dump(f"aten::{op}") for op in _OPS}


@pytest.fixture
def backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[types.ModuleType]:
    """The generated module for YAML, with the kernel module importable."""
    n = next(_counter)
    kernel_module = f"pu1_kernels_{n}"
    (tmp_path / f"{kernel_module}.py").write_text(f"KEY_SET = {_KEY_SET}\n\n\n{KERNELS}")
    monkeypatch.syspath_prepend(str(tmp_path))
    source = tmp_path / "pu1.yaml"
    source.write_text(YAML.format(module=kernel_module))
    run(source, tmp_path / "out")
    path = tmp_path / "out" / "privateuse1_native_functions.py"
    spec = importlib.util.spec_from_file_location(f"pu1_generated_{n}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.kernels = importlib.import_module(kernel_module)  # type: ignore[attr-defined]
    yield module
    sys.modules.pop(kernel_module, None)


def _key_lines(text: str) -> list[str]:
    return [line.split(":")[0] for line in text.splitlines()[4:]]


def test_dump_shows_kernels_under_the_right_keys(backend: types.ModuleType) -> None:
    before = _dumps()
    registration = backend.register()
    try:
        after = _dumps()
        added = {
            op: sorted(set(_key_lines(after[op])) - set(_key_lines(before[op]))) for op in _OPS
        }
        assert added == {
            "abs": ["PrivateUse1"],
            "abs.out": ["PrivateUse1"],
            "abs_": ["PrivateUse1"],
            "add.Tensor": ["PrivateUse1"],
            "add.out": ["PrivateUse1"],
            "add_.Tensor": ["PrivateUse1"],
            "mul.Tensor": ["AutogradPrivateUse1"],
            "mul.out": ["AutogradPrivateUse1"],
            "mul_.Tensor": ["AutogradPrivateUse1"],
            "sub.Tensor": [],
            "neg": [],
        }
        line = next(x for x in after["abs"].splitlines() if x.startswith("PrivateUse1:"))
        assert line.startswith(f"PrivateUse1: registered at {backend.__file__}:")
        assert len(registration.handles) == 9
    finally:
        registration.remove()
    assert _dumps() == before


def test_calls_reach_the_kernels(backend: types.ModuleType) -> None:
    box = backend.kernels.Box
    with backend.register():
        assert aten.abs.default(box(-2)).value == ("abs", -2)
        assert aten.add.Tensor(box(1), box(2), alpha=10).value == 21
        assert aten.mul.Tensor(box(3), box(4)).value == 12
        out = box(None)
        assert aten.add.out(box(1), box(2), out=out) is out
        assert out.value == 3
        x = box(5)
        assert aten.mul_.Tensor(x, box(2)) is x
        assert x.value == 10


def test_default_kernels_come_from_cpp_namespace(backend: types.ModuleType) -> None:
    registration = backend.register()
    try:
        assert aten.abs.default(backend.kernels.Box(1)).value == ("abs", 1)
    finally:
        registration.remove()


def test_missing_kernels_are_listed_at_once_and_nothing_is_registered(
    backend: types.ModuleType,
) -> None:
    class Partial:
        @staticmethod
        def abs(x: Any) -> Any:
            return x

        @staticmethod
        def add_Tensor(self: Any, other: Any, alpha: Any) -> Any:  # noqa: PLW0211
            return self

        mul_Tensor = 3

        @staticmethod
        def _copy_from(self: Any, dst: Any, non_blocking: bool = False) -> Any:  # noqa: PLW0211
            return dst

    before = _dumps()
    with pytest.raises(MissingKernelsError) as info:
        backend.register(Partial)
    assert (
        str(info.value)
        == textwrap.dedent("""\
        PU1Kernels (class Partial) is missing or mis-declares 4 kernel(s) its backend yaml lists:
          abs (aten::abs, key PrivateUse1): positional parameters (x) but the schema has (self)
            expected: def abs(self: Tensor) -> Tensor
          add_Tensor (aten::add.Tensor, key PrivateUse1): positional parameters (self, other, alpha) but the schema has (self, other); keyword-only parameters () but the schema has (alpha); no default for (alpha): the schema has one, so callers may leave them out
            expected: def add_Tensor(self: Tensor, other: Tensor, *, alpha: Scalar = ...) -> Tensor
          mul_Tensor (aten::mul.Tensor, key AutogradPrivateUse1): not callable (it is a int)
            expected: def mul_Tensor(self: Tensor, other: Tensor) -> Tensor
          _copy_from_and_resize (aten::_copy_from_and_resize, key PrivateUse1): missing
            expected: def _copy_from_and_resize(self: Tensor, dst: Tensor) -> Tensor
        Define each as a @staticmethod of PU1Kernels with exactly the expected parameters (a schema default needs a Python default).""")
    )
    assert _dumps() == before


def test_failed_registration_leaves_no_trace(backend: types.ModuleType) -> None:
    from tensordispatch.library import Library

    handles: list[Any] = []

    class Failing(Library):
        def impl(self, op_name: Any, fn: Any, dispatch_key: str = "", **kw: Any) -> Any:
            if op_name == "mul.Tensor":
                raise RuntimeError("boom")
            handles.append(super().impl(op_name, fn, dispatch_key, **kw))
            return handles[-1]

    before = _dumps()
    with pytest.raises(RuntimeError, match="boom"):
        backend.register(library_factory=Failing)
    assert _dumps() == before
    assert len(handles) == 2
    assert all(h.removed for h in handles)


def test_remove_twice_is_harmless(backend: types.ModuleType) -> None:
    before = _dumps()
    registration = backend.register()
    registration.remove()
    registration.remove()
    assert _dumps() == before


def test_unimportable_kernel_module(backend: types.ModuleType) -> None:
    from tensordispatch.codegen.backend_stubs import BackendStubsError

    backend.KERNEL_MODULE = "no_such_backend_module"
    with pytest.raises(BackendStubsError) as info:
        backend.register()
    assert str(info.value) == (
        "register(): cannot import the kernel module no_such_backend_module (cpp_namespace in the backend yaml): No module named 'no_such_backend_module'; fix the module path or pass the kernels object to register()"
    )


def _added_keys_torch(registrations: list[tuple[str, str]]) -> dict[str, list[str]]:
    """Keys torch's dump gains when Python kernels are registered on the same op/key pairs."""
    import torch

    before = {op: torch._C._dispatch_dump(f"aten::{op}") for op in _OPS}
    lib = torch.library.Library("aten", "IMPL")
    try:
        for op, key in registrations:
            lib.impl(op, lambda *args, **kwargs: None, key)
        after = {op: torch._C._dispatch_dump(f"aten::{op}") for op in _OPS}
    finally:
        lib._destroy()
    return {op: sorted(set(_key_lines(after[op])) - set(_key_lines(before[op]))) for op in _OPS}


def test_dump_keys_match_torch_for_the_same_registrations(backend: types.ModuleType) -> None:
    before = _dumps()
    with backend.register():
        after = _dumps()
    ours = {op: sorted(set(_key_lines(after[op])) - set(_key_lines(before[op]))) for op in _OPS}
    pairs = [(op, key) for _, op, key, _ in backend.REGISTRATIONS]
    assert ours == _added_keys_torch(pairs)
