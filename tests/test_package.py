"""Packaging rules that every layer must keep: no torch at runtime, imports flow downward."""

from __future__ import annotations

import ast
import fnmatch
import pathlib
import subprocess
import sys

import tensordispatch

SRC = pathlib.Path(tensordispatch.__file__).parent

# Layer -> the tensordispatch layers it may import (besides itself). DESIGN.md, "Layers".
ALLOWED: dict[str, set[str]] = {
    "schema": set(),
    "dispatch": {"schema"},
    "codegen": {"schema"},
    "tensor": {"dispatch", "schema"},
    # The upper layers stack in DESIGN.md's order: a backend never reaches up into autograd,
    # the transforms or lazy; the transforms never into lazy.
    "backends": {"schema", "dispatch", "tensor", "library", "ops", "generated"},
    "autograd": {"schema", "dispatch", "tensor", "library", "ops", "generated", "backends"},
    "transforms": {
        "schema",
        "dispatch",
        "tensor",
        "library",
        "ops",
        "generated",
        "backends",
        "autograd",
    },
    "lazy": {
        "schema",
        "dispatch",
        "tensor",
        "library",
        "ops",
        "generated",
        "backends",
        "autograd",
        "transforms",
    },
}


def _modules() -> list[str]:
    names = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        if parts[-1] == "__main__":
            continue
        names.append(".".join(parts))
    return names


def test_library_never_imports_torch() -> None:
    code = (
        "import importlib, sys\n"
        f"for m in {_modules()!r}:\n"
        "    importlib.import_module(m)\n"
        "bad = sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"the library imported torch: {out.stdout.strip()}"


def _imported_layers(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    layers = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            if parts[0] == "tensordispatch" and len(parts) > 1:
                layers.add(parts[1])
    return layers


def test_import_graph_flows_downward() -> None:
    problems = []
    for layer, allowed in ALLOWED.items():
        for path in sorted((SRC / layer).rglob("*.py")):
            extra = _imported_layers(path) - allowed - {layer}
            if extra:
                problems.append(f"{path.relative_to(SRC)} imports {sorted(extra)}")
    assert problems == []


def test_cli_help_runs() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "tensordispatch", "--help"],
        check=False,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0
    assert "tensordispatch" in out.stdout


def test_every_data_file_of_the_package_ships_in_the_wheel() -> None:
    # A non-editable install carries only the package-data patterns of pyproject.toml; a data
    # file they miss (a yaml a layer reads at run time) would be absent from `pip install .`.
    text = (SRC.parents[1] / "pyproject.toml").read_text()
    section = text.split("[tool.setuptools.package-data]", 1)[1]
    line = next(x for x in section.splitlines() if x.startswith("tensordispatch ="))
    patterns = ast.literal_eval(line.split("=", 1)[1].strip())
    data_files = [
        p.relative_to(SRC).as_posix()
        for p in SRC.rglob("*")
        if p.is_file() and p.suffix not in {".py", ".pyc"} and "__pycache__" not in p.parts
    ]
    assert data_files, "expected the operator yaml files at least"
    missing = [f for f in data_files if not any(fnmatch.fnmatch(f, pat) for pat in patterns)]
    assert missing == [], f"not in [tool.setuptools.package-data]: {missing}"


def test_the_test_extra_installs_the_example_backend() -> None:
    # Issue 6: examples/torchdev is installed by the `test` extra (setup.py states it as a
    # direct reference to this checkout), so it imports from the environment, with no
    # sys.path help from the test suite's conftest.
    import importlib.metadata

    requires = importlib.metadata.requires("tensordispatch") or []
    extra = [r for r in requires if r.startswith("torchdev") and 'extra == "test"' in r]
    assert len(extra) == 1, requires
    assert "/examples/torchdev" in extra[0]  # a file:// URL into the checkout
    assert importlib.metadata.version("torchdev") == "0.1.0"
    code = (
        "import torchdev, tensordispatch as td\n"
        "x = td.ones(3).to('torchdev')\n"
        "print((x + x).cpu().tolist())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        capture_output=True,
        text=True,
        cwd=SRC.parents[1] / "src",
        env={k: v for k, v in __import__("os").environ.items() if k != "PYTHONPATH"},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[2.0, 2.0, 2.0]"


def test_subpackages_are_attributes_loaded_on_first_use() -> None:
    """``td.linalg`` / ``td.nn`` / ``td.optim`` / ``td.func`` need no import of their own, as
    ``torch.linalg`` and friends, and are not imported by ``import tensordispatch``."""
    import torch

    code = (
        "import sys, tensordispatch as td\n"
        "names = ['linalg', 'nn', 'optim', 'func']\n"
        "print([f'tensordispatch.{n}' in sys.modules for n in names])\n"
        "print([getattr(td, n) is sys.modules[f'tensordispatch.{n}'] for n in names])\n"
        "print(td.linalg.matrix_norm(td.tensor([[3.0, 1.0], [0.0, 4.0]]), 'nuc').item())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded, attributes, nuc = out.stdout.splitlines()
    assert loaded == "[False, False, False, False]"
    assert attributes == "[True, True, True, True]"
    expected = torch.linalg.matrix_norm(torch.tensor([[3.0, 1.0], [0.0, 4.0]]), "nuc").item()
    assert float(nuc) == expected
