"""Generation-time missing-kernel detection: the backend's source read with ast, not imported."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tensordispatch.codegen.backend_stubs import (
    BackendStubsError,
    MissingKernelsError,
    generate_backend_stubs,
)

YAML = """\
backend: XLA
cpp_namespace: torch_xla
use_out_as_primary: true
supported:
- abs
autograd:
- add.Tensor
"""


def _check(tmp_path: Path, source: str, yaml_text: str = YAML) -> str:
    impl = tmp_path / "kernels.py"
    impl.write_text(textwrap.dedent(source))
    with pytest.raises(MissingKernelsError) as info:
        generate_backend_stubs(yaml_text, impl_path=str(impl))
    return str(info.value).replace(str(impl), "kernels.py")


def test_upstream_case_wrong_names(tmp_path: Path) -> None:
    # torch's test: the file defines absWRONG and add, but abs and add.Tensor are listed.
    message = _check(
        tmp_path,
        """\
        class XLANativeFunctions:
            @staticmethod
            def absWRONG(self):
                return self

            @staticmethod
            def add(self, other, *, alpha=1):
                return self
        """,
    )
    assert (
        message
        == textwrap.dedent("""\
        XLANativeFunctions (class XLANativeFunctions in kernels.py) is missing or mis-declares 2 kernel(s) its backend yaml lists:
          abs (aten::abs, key XLA): missing
            expected: def abs(self: Tensor) -> Tensor
          add_Tensor (aten::add.Tensor, key AutogradXLA): missing
            expected: def add_Tensor(self: Tensor, other: Tensor, *, alpha: Scalar = ...) -> Tensor
        Define each as a @staticmethod of XLANativeFunctions with exactly the expected parameters (a schema default needs a Python default).""")
    )


def test_every_problem_is_listed(tmp_path: Path) -> None:
    yaml_text = YAML + "- sub.Tensor\n- mul.Tensor\n- neg\n"
    message = _check(
        tmp_path,
        """\
        class XLANativeFunctions:
            def abs(self):
                return self

            @staticmethod
            def add_Tensor(self, other, alpha=1):
                return self

            @staticmethod
            def sub_Tensor(self, other, *, alpha):
                return self

            @staticmethod
            def mul_Tensor(self, other):
                return self

            @staticmethod
            def mul_Tensor(self, other):
                return self

            neg = staticmethod(lambda self: self)
        """,
        yaml_text,
    )
    assert (
        message
        == textwrap.dedent("""\
        XLANativeFunctions (class XLANativeFunctions in kernels.py) is missing or mis-declares 4 kernel(s) its backend yaml lists:
          abs (aten::abs, key XLA): not a @staticmethod (kernels are called with the schema's arguments only)
            expected: def abs(self: Tensor) -> Tensor
          add_Tensor (aten::add.Tensor, key AutogradXLA): positional parameters (self, other, alpha) but the schema has (self, other); keyword-only parameters () but the schema has (alpha)
            expected: def add_Tensor(self: Tensor, other: Tensor, *, alpha: Scalar = ...) -> Tensor
          mul_Tensor (aten::mul.Tensor, key AutogradXLA): defined 2 times (the last definition wins)
            expected: def mul_Tensor(self: Tensor, other: Tensor) -> Tensor
          sub_Tensor (aten::sub.Tensor, key AutogradXLA): no default for (alpha): the schema has one, so callers may leave them out
            expected: def sub_Tensor(self: Tensor, other: Tensor, *, alpha: Scalar = ...) -> Tensor
        Define each as a @staticmethod of XLANativeFunctions with exactly the expected parameters (a schema default needs a Python default).""")
    )


def test_module_functions_when_there_is_no_class(tmp_path: Path) -> None:
    message = _check(tmp_path, "def abs(self):\n    return self\n")
    assert message.splitlines()[0] == (
        "XLANativeFunctions (top-level functions of kernels.py; it has no class XLANativeFunctions) is missing or mis-declares 1 kernel(s) its backend yaml lists:"
    )
    assert "add_Tensor (aten::add.Tensor, key AutogradXLA): missing" in message


def test_complete_module_passes(tmp_path: Path) -> None:
    impl = tmp_path / "ok_kernels.py"
    impl.write_text(
        "def abs(self):\n    return self\n\n\n"
        "def add_Tensor(self, other, *, alpha=1):\n    return self\n"
    )
    assert generate_backend_stubs(YAML, impl_path=str(impl))


def test_generic_kernels_accept_anything(tmp_path: Path) -> None:
    impl = tmp_path / "generic_kernels.py"
    impl.write_text("def abs(*args, **kwargs):\n    pass\n\n\nadd_Tensor = abs\n")
    assert generate_backend_stubs(YAML, impl_path=str(impl))


def test_copy_hooks_are_required_when_kernels_are_synthesized(tmp_path: Path) -> None:
    yaml_text = "backend: XLA\ncpp_namespace: torch_xla\nsupported: [abs]\n"
    message = _check(tmp_path, "def abs(self):\n    return self\n", yaml_text)
    assert [line.split(" (")[0].strip() for line in message.splitlines()[1:-1:2]] == [
        "_copy_from",
        "_copy_from_and_resize",
    ]


def test_dotted_module_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "xla_pkg_for_test"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "kernels.py").write_text("raise RuntimeError('must not be imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(MissingKernelsError) as info:
        generate_backend_stubs(YAML, impl_path="xla_pkg_for_test.kernels")
    assert str(package / "kernels.py") in str(info.value).splitlines()[0]


def test_unreadable_impl_path() -> None:
    with pytest.raises(BackendStubsError) as info:
        generate_backend_stubs(YAML, impl_path="/no/such/file.py")
    assert str(info.value) == (
        "Unable to read from the specified impl_path file: /no/such/file.py\n"
        "  --impl-path must be the backend's kernel module, as a .py file path or a dotted module name."
    )


def test_impl_with_syntax_error(tmp_path: Path) -> None:
    impl = tmp_path / "broken.py"
    impl.write_text("def abs(self:\n")
    with pytest.raises(BackendStubsError) as info:
        generate_backend_stubs(YAML, impl_path=str(impl))
    assert str(info.value).startswith(f"{impl}:1: cannot parse the impl_path file: ")
