"""`tensordispatch gen-backend-stubs`: exit codes and messages, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tensordispatch.cli import main
from tensordispatch.schema.native import DEFAULT_NATIVE_FUNCTIONS_PATH

GOOD = "backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- abs\n"


def _yaml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "backend.yaml"
    path.write_text(text)
    return path


def test_success_writes_the_module(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _yaml(tmp_path, GOOD)
    out = tmp_path / "out"
    assert main(["gen-backend-stubs", "--source-yaml", str(source), "--output-dir", str(out)]) == 0
    assert capsys.readouterr().out == f"{out}: wrote xla_native_functions.py\n"
    assert (out / "xla_native_functions.py").read_text().startswith('"""Kernels of the XLA')
    assert main(["gen-backend-stubs", "-s", str(source), "-o", str(out)]) == 0
    assert capsys.readouterr().out == (
        f"{out}: nothing to write (up to date, or no supported operators)\n"
    )


def test_dry_run_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _yaml(tmp_path, GOOD)
    out = tmp_path / "out"
    assert main(["gen-backend-stubs", "-s", str(source), "-o", str(out), "--dry-run"]) == 0
    assert capsys.readouterr().out == f"{out}: would write xla_native_functions.py\n"
    assert not out.exists()


def test_validation_error_exits_1_with_one_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _yaml(tmp_path, "backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- abs_BAD\n")
    assert main(["gen-backend-stubs", "-s", str(source), "-o", str(tmp_path / "out")]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    shown = DEFAULT_NATIVE_FUNCTIONS_PATH
    assert captured.err == (
        f"{source}: error: Found an invalid operator name: abs_BAD\n"
        f'  {source}:4: "supported" lists abs_BAD, which is not an operator of {shown}; '
        "write name[.overload] as that file does, e.g. add.Tensor.\n"
    )


def test_missing_kernels_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _yaml(tmp_path, GOOD)
    impl = tmp_path / "kernels.py"
    impl.write_text("def abs(self):\n    return self\n")
    argv = ["gen-backend-stubs", "-s", str(source), "-o", str(tmp_path / "o"), "--impl-path"]
    assert main([*argv, str(impl)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{source}: error: XLANativeFunctions (top-level functions of {impl};")
    assert "  _copy_from (aten::_copy_from, key XLA): missing\n" in err
    assert not (tmp_path / "o").exists()


def test_no_out_inplace_toggle(tmp_path: Path) -> None:
    source = _yaml(tmp_path, GOOD)
    impl = tmp_path / "kernels.py"
    impl.write_text("def abs(self):\n    return self\n")
    argv = ["gen-backend-stubs", "-s", str(source), "-o", str(tmp_path / "o"), "--impl-path"]
    assert main([*argv, str(impl), "--no-out-inplace"]) == 0
    assert "_make_abs_out" not in (tmp_path / "o" / "xla_native_functions.py").read_text()


def test_bad_native_functions_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _yaml(tmp_path, GOOD)
    missing = tmp_path / "nope.yaml"
    argv = ["gen-backend-stubs", "-s", str(source), "-o", str(tmp_path), "--native-functions"]
    assert main([*argv, str(missing)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {missing}:1: cannot read the file: ")
    assert "Traceback" not in err


def test_unreadable_backend_yaml_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.yaml"
    assert main(["gen-backend-stubs", "-s", str(missing), "-o", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{missing}: error: cannot read the backend yaml {missing}: ")


def test_python_dash_m_has_no_traceback(tmp_path: Path) -> None:
    source = _yaml(tmp_path, "cpp_namespace: torch_xla\nsupported:\n- abs\n")
    result = subprocess.run(
        [sys.executable, "-m", "tensordispatch", "gen-backend-stubs", "-s", str(source),
         "-o", str(tmp_path / "out")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stderr == (
        f'{source}: error: You must provide a value for "backend"\n'
        '  "backend" is the dispatch key the kernels register under, e.g. XLA or PrivateUse1.\n'
    )


def test_missing_arguments_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["gen-backend-stubs", "--output-dir", "x"])
    assert info.value.code == 2
    assert "the following arguments are required: -s/--source-yaml" in capsys.readouterr().err


def test_python_dash_m_on_the_subpackage(tmp_path: Path) -> None:
    source = _yaml(tmp_path, GOOD)
    out = tmp_path / "out"
    result = subprocess.run(
        [sys.executable, "-m", "tensordispatch.codegen.backend_stubs", "-s", str(source),
         "-o", str(out)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert (result.returncode, result.stdout) == (0, f"{out}: wrote xla_native_functions.py\n")


def test_check_flags_stale_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _yaml(tmp_path, GOOD)
    out = tmp_path / "out"
    argv = ["gen-backend-stubs", "-s", str(source), "-o", str(out)]
    assert main([*argv, "--check"]) == 1
    assert capsys.readouterr().err == (
        f"{out}: stale or missing: xla_native_functions.py; run `tensordispatch gen-backend-stubs` without --check to regenerate\n"
    )
    assert not out.exists()
    assert main(argv) == 0
    capsys.readouterr()
    assert main([*argv, "--check"]) == 0
    assert capsys.readouterr().out == f"{out}: up to date\n"
