"""`tensordispatch schema check`: counts for a good file, every error with file:line for a bad one."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest
import torchgen
import torchgen.gen as tg
from torchgen.model import NativeFunctionsGroup, NativeFunctionsViewGroup

from tensordispatch.cli import main
from tensordispatch.schema.native import DEFAULT_NATIVE_FUNCTIONS_PATH

NATIVE = os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen", "native")
TAGS = os.path.join(NATIVE, "tags.yaml")

BAD = """\
- func: foo(Tensor self) -> Tensor
  variants: functio
- func: ok(Tensor self) -> Tensor
- func: bar(Tensor self) -> Tensor
  dispatch:
    XLA: bar_xla
- func: baz(Tensor self) -> Tensor
  dispatch: !!python/object/apply:os.system ['true']
"""


def _torchgen_counts(path: str) -> dict[str, int]:
    tg._GLOBAL_PARSE_NATIVE_YAML_CACHE.clear()
    parsed = tg.parse_native_yaml(path, TAGS)
    funcs = parsed.native_functions
    groups = [
        g for g in tg.get_grouped_native_functions(funcs) if isinstance(g, NativeFunctionsGroup)
    ]
    views = tg.get_grouped_by_view_native_functions(funcs)
    text = pathlib.Path(path).read_text()
    return {
        "entries": text.count("\n- func:") + text.startswith("- func:"),
        "native functions": len(funcs),
        "generated": sum(1 for f in funcs if "generated" in f.tags),
        "groups": len(groups),
        "structured groups": sum(1 for g in groups if g.structured),
        "view groups": sum(1 for g in views if isinstance(g, NativeFunctionsViewGroup)),
        "dispatch keys": len(parsed.backend_indices),
        **{
            f"kind {k}": sum(1 for f in funcs if f.func.kind().name == k)
            for k in ("functional", "inplace", "out", "mutable", "scratch")
        },
    }


def _printed_counts(out: str) -> dict[str, int]:
    rows = [line.strip().rsplit(None, 1) for line in out.splitlines()[1:]]
    return {name.strip(): int(value) for name, value in rows}


def test_module_entry_point_checks_the_package_file() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "tensordispatch", "schema", "check"],
        check=False,
        capture_output=True,
        text=True,
    )
    assert (out.returncode, out.stderr) == (0, "")
    assert out.stdout.splitlines()[0] == f"{DEFAULT_NATIVE_FUNCTIONS_PATH}: ok"
    assert _printed_counts(out.stdout) == _torchgen_counts(str(DEFAULT_NATIVE_FUNCTIONS_PATH))


def test_check_of_torch_file_prints_torchgen_counts(capsys: pytest.CaptureFixture[str]) -> None:
    path = os.path.join(NATIVE, "native_functions.yaml")
    assert main(["schema", "check", path, "--tags", TAGS]) == 0
    printed = _printed_counts(capsys.readouterr().out)
    assert printed == _torchgen_counts(path)
    assert (printed["native functions"], printed["groups"], printed["view groups"]) == (
        3101,
        1105,
        91,
    )


def test_bad_file_lists_every_error_and_exits_1(tmp_path: pathlib.Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD)
    out = subprocess.run(
        [sys.executable, "-m", "tensordispatch", "schema", "check", str(bad)],
        check=False,
        capture_output=True,
        text=True,
    )
    assert (out.returncode, out.stdout) == (1, "")
    assert out.stderr == "\n".join(
        [
            f"{bad}:1: foo: illegal variant functio",
            f"{bad}:4: bar: Dispatch key XLA of kernel bar_xla is not a supported dispatch key.",
            f"{bad}:8: baz: YAML tag 'tag:yaml.org,2002:python/object/apply:os.system' is not allowed: native_functions.yaml is read with a safe loader that builds only lists, mappings, strings, numbers and booleans, never Python objects; remove the tag",
            f"{bad}: 3 errors",
            "",
        ]
    )


def test_missing_file_is_an_error_not_a_traceback(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.yaml"
    assert main(["schema", "check", str(missing)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{missing}:1: cannot read the file: [Errno 2] No such file or directory")
    assert "Traceback" not in err


def test_schema_without_subcommand_prints_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 2
    assert "check" in capsys.readouterr().err


def test_missing_tags_file_is_an_error_not_a_traceback(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "tags.yaml"
    assert main(["schema", "check", "--tags", str(missing)]) == 1
    assert capsys.readouterr().err.startswith(f"{missing}:1: cannot read the file: [Errno 2]")


def test_bad_tags_file_reports_its_own_line(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tags = tmp_path / "tags.yaml"
    tags.write_text("- tag: core\n  desc: Core ops\n- tag: odd\n")
    assert main(["schema", "check", "--tags", str(tags)]) == 1
    assert capsys.readouterr().err.splitlines()[0] == (
        f"{tags}:3: odd: Tag 'odd' must have a non-empty description"
    )
