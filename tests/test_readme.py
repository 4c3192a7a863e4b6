"""The README's set-up commands are what CI runs: keep the two from drifting apart."""

from __future__ import annotations

import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = text.split("```sh", 1)[1].split("```", 1)[0]
    return [line.strip() for line in block.splitlines() if line.strip() and not line.startswith("#")]


def test_readme_has_exactly_two_setup_commands() -> None:
    assert len(_readme_commands()) == 2


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    test_command = _readme_commands()[1]
    ci_lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert test_command in ci_lines
