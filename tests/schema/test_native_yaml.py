"""The yaml reader: the fast line reader agrees with PyYAML's safe loader, lines are right."""

from __future__ import annotations

import os
import pathlib

import torchgen
import yaml
from hypothesis import given
from hypothesis import strategies as st

from tensordispatch.schema.native import DEFAULT_NATIVE_FUNCTIONS_PATH
from tensordispatch.schema.native_yaml import _fast_entries, _safe_entries, read_entries

YAML = os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen", "native",
                    "native_functions.yaml")  # fmt: skip


def _torchgen_entries(text: str) -> list[tuple[int, dict[object, object]]]:
    import torchgen.gen as tg

    result = []
    for e in yaml.load(text, Loader=tg.LineLoader):
        line = e.pop("__line__")
        for value in e.values():
            if isinstance(value, dict):
                value.pop("__line__", None)
        result.append((line, e))
    return result


def test_fast_reader_reads_the_real_file_like_torchgen() -> None:
    text = pathlib.Path(YAML).read_text(encoding="utf-8")
    fast = _fast_entries(text)
    assert fast is not None
    assert fast == _torchgen_entries(text)


def test_package_file_reads_like_the_safe_loader() -> None:
    text = DEFAULT_NATIVE_FUNCTIONS_PATH.read_text(encoding="utf-8")
    assert read_entries(text, "f") == _safe_entries(text, "f")


def test_safe_loader_gives_the_line_of_each_entry() -> None:
    text = "# c\n\n- func: a() -> ()\n\n  variants: function\n- {func: b() -> ()}\n"
    entries, issues = _safe_entries(text, "f")
    assert issues == []
    assert [line for line, _ in entries] == [3, 6]


def test_fast_reader_gives_up_outside_its_subset() -> None:
    for text in ("- func: a\r\n  variants: method\r\n", "- func: a\x0c\n", "- func: 'quoted'\n", "- func: a\n  device_guard: no\n", "- {func: a}\n",
                 "- func: a\n  x:\n      deep:\n        deeper: 1\n", "---\n- func: a\n"):  # fmt: skip
        assert _fast_entries(text) is None, text


# Scalars chosen to hit YAML's implicit typing (YAML 1.1 booleans, null, numbers), comments,
# quoting and characters that end a plain scalar.
_SCALARS = st.sampled_from(
    ["function", "True", "false", "yes", "No", "on", "null", "~", "1", "1.5", "1e3", ".inf",
     "'quoted'", '"dq"', "a: b", "a #c", "a#c", "x -> int y, int z", "[a, b]", "['a', 'b']",
     "[]", "{}", "[yes]", "foo(Tensor self) -> Tensor(a!)", "CPU, CUDA", "-x", "*x", "&x",
     "!x", "%x", "@x", "`x", "|", ">", "a:", "a:b", "_x", "é"]
)  # fmt: skip
_KEYS = st.sampled_from(["func", "variants", "dispatch", "tags", "x_y", "CPU, CUDA", "yes"])


@st.composite
def _documents(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        lines.append(f"- func: {draw(_SCALARS)}")
        for _ in range(draw(st.integers(0, 3))):
            key = draw(_KEYS)
            shape = draw(st.sampled_from(["scalar", "map", "list", "list2", "comment"]))
            if shape == "scalar":
                lines.append(f"  {key}: {draw(_SCALARS)}")
            elif shape == "map":
                lines.append(f"  {key}:")
                lines += [
                    f"    {draw(_KEYS)}: {draw(_SCALARS)}" for _ in range(draw(st.integers(1, 2)))
                ]
            elif shape in ("list", "list2"):
                indent = "  " if shape == "list" else "    "
                lines.append(f"  {key}:")
                lines += [f"{indent}- {draw(_SCALARS)}" for _ in range(draw(st.integers(1, 2)))]
            else:
                lines.append(f"  # {draw(_SCALARS)}")
    return "\n".join(lines) + "\n"


@given(_documents())
def test_fast_reader_agrees_with_the_safe_loader(text: str) -> None:
    fast = _fast_entries(text)
    try:
        reference = yaml.load(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        assert fast is None
        return
    if fast is not None:
        assert [entry for _, entry in fast] == reference
        assert [line for line, _ in fast] == [line for line, _ in _safe_entries(text, "f")[0]]


def test_read_entries_uses_the_fast_path_result() -> None:
    entries, issues = read_entries("- func: a() -> ()\n  dispatch:\n    CPU, CUDA: k  # note\n")
    assert issues == []
    assert entries == [(1, {"func": "a() -> ()", "dispatch": {"CPU, CUDA": "k"}})]
