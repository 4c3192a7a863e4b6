"""Mutated yaml files never crash the loader: it succeeds or raises NativeFunctionsError."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tensordispatch.schema.native import DEFAULT_NATIVE_FUNCTIONS_PATH, parse_native_functions
from tensordispatch.schema.native_yaml import NativeFunctionsError

# The package's own file: valid, self-contained (views with their copies), and small.
_TEXT = DEFAULT_NATIVE_FUNCTIONS_PATH.read_text(encoding="utf-8")
_LINES = _TEXT.splitlines()

_VALUES = st.sampled_from(
    ["", "True", "False", "'False'", "1", "[]", "{}", "[a, b]", "function", "method",
     "function, method", "NoCheck", "foo.out", "foo::bar", "CPU", "XLA", "CompositeImplicitAutograd",
     "core", "!!python/name:os.system", "{CPU: k}", "foo(Tensor self) -> Tensor", "a -> int b",
     "Generic: add (Float)", "nn", "null", "~", "[core, nope]", "add.out, add.Scalar_out"]
)  # fmt: skip
_KEYS = st.sampled_from(
    ["func", "variants", "dispatch", "structured", "structured_delegate", "structured_inherits",
     "autogen", "tags", "device_check", "device_guard", "python_module", "precomputed",
     "ufunc_inner_loop", "cpp_no_default_args", "manual_kernel_registration", "bogus",
     "    CPU", "    CompositeExplicitAutograd", "  - x"]
)  # fmt: skip


@st.composite
def _mutated(draw: st.DrawFn) -> str:
    lines = list(_LINES)
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["replace_value", "delete", "insert", "duplicate"]))
        if action == "replace_value" and ":" in lines[i]:
            head = lines[i].split(":", 1)[0]
            lines[i] = f"{head}: {draw(_VALUES)}"
        elif action == "delete":
            del lines[i]
        elif action == "insert":
            key = draw(_KEYS)
            lines.insert(i, f"{key if key.startswith(' ') else '  ' + key}: {draw(_VALUES)}")
        else:
            lines.insert(i, lines[i])
    return "\n".join(lines) + "\n"


@settings(max_examples=150, deadline=None)
@given(_mutated())
def test_mutated_files_load_or_raise_native_functions_error(text: str) -> None:
    try:
        parsed = parse_native_functions(text, "m.yaml")
    except NativeFunctionsError as err:
        assert err.issues
        assert all(i.file == "m.yaml" and i.line >= 1 for i in err.issues)
    else:
        assert parsed.entries >= 1


def test_unmutated_file_loads() -> None:
    assert parse_native_functions(_TEXT, "m.yaml").entries == _TEXT.count("- func:")


def _torchgen_rejects(text: str) -> bool:
    import os

    import torchgen.gen as tg
    import yaml

    tags = os.path.join(os.path.dirname(tg.__file__), "packaged", "ATen", "native", "tags.yaml")
    try:
        entries = yaml.load(text, Loader=tg.LineLoader)
        parsed = tg.parse_native_yaml_struct(entries, tg.parse_tags_yaml(tags), path="m.yaml")
        tg.get_grouped_native_functions(parsed.native_functions)
        tg.get_grouped_by_view_native_functions(parsed.native_functions)
    except (AssertionError, RuntimeError, ValueError, TypeError, LookupError, yaml.YAMLError):
        return True  # torchgen reports some input errors as bare KeyError/IndexError/ValueError
    return False


@settings(max_examples=60, deadline=None)
@given(_mutated())
def test_mutated_files_are_rejected_exactly_when_torchgen_rejects_them(text: str) -> None:
    try:
        parse_native_functions(text, "m.yaml")
    except NativeFunctionsError:
        rejected = True
    else:
        rejected = False
    assert rejected == _torchgen_rejects(text)
