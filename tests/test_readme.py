"""The README's set-up commands are what CI runs: keep the two from drifting apart."""

from __future__ import annotations

import importlib
import pathlib

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = text.split("```sh", 1)[1].split("```", 1)[0]
    return [
        line.strip() for line in block.splitlines() if line.strip() and not line.startswith("#")
    ]


def test_readme_has_exactly_two_setup_commands() -> None:
    assert len(_readme_commands()) == 2


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    test_command = _readme_commands()[1]
    ci_lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert test_command in ci_lines


def test_readme_python_example_runs_and_computes_what_it_says(
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = (ROOT / "README.md").read_text()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict[str, object] = {}
    # The example prints a compile counter: start from a fresh lazy state, whatever ran before.
    lazy = importlib.import_module("tensordispatch.lazy")
    lazy.metrics.reset_metrics()
    lazy.clear_compile_cache()
    try:
        exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102 - the README is ours
    finally:
        lazy = importlib.import_module("tensordispatch.lazy")
        lazy.uninstall()
    x, w = namespace["x"].numpy(), namespace["w"].numpy()  # type: ignore[attr-defined]
    per_sample = namespace["per_sample"].numpy()  # type: ignore[attr-defined]
    # d/dw sin(x_i . w) = cos(x_i . w) x_i, one row per sample.
    np.testing.assert_allclose(per_sample, np.cos(x @ w)[:, None] * x, rtol=1e-5, atol=1e-6)
    # y <- 0.999 y + 0.5 ten times from 1: y = 500 - 499 * 0.999**10 (closed form).
    expected = 500 - 499 * 0.999**10
    printed = capsys.readouterr().out
    assert f"{expected:.4f}" in printed
    assert printed.rstrip().endswith(" 1")  # exactly one uncached compile
