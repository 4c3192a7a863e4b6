"""ops/native_functions.yaml describes our library with ATen 2.13's schemas: every entry's
`func:` line and its structured / structured_delegate / variants / autogen / tags fields are
ATen's, byte for byte; only `dispatch:` is ours (and `ufunc_inner_loop` is dropped)."""

from __future__ import annotations

import os

import pytest
import torchgen
import yaml

from tensordispatch.schema.native import DEFAULT_NATIVE_FUNCTIONS_PATH

ATEN = os.path.join(
    os.path.dirname(torchgen.__file__), "packaged", "ATen", "native", "native_functions.yaml"
)
FIELDS = ("structured", "structured_delegate", "structured_inherits", "variants", "autogen", "tags")


def _entries(path: str) -> dict[str, dict[str, object]]:
    with open(path, encoding="utf-8") as f:
        return {e["func"]: e for e in yaml.safe_load(f)}


OURS = _entries(str(DEFAULT_NATIVE_FUNCTIONS_PATH))
THEIRS = _entries(ATEN)


@pytest.mark.parametrize("func", sorted(OURS))
def test_entry_is_atens_except_dispatch(func: str) -> None:
    assert func in THEIRS, f"not an ATen 2.13 schema: {func}"
    ours, theirs = OURS[func], THEIRS[func]
    assert {k: ours.get(k) for k in FIELDS} == {k: theirs.get(k) for k in FIELDS}
    assert "ufunc_inner_loop" not in ours
