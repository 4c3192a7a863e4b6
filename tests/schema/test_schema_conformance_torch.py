"""Every `func:` of the torch 2.13 yaml against torch._C.parse_schema, structurally.

torch prints canonicalised defaults (`Mean` -> 1, `0.0` -> 0.), so text does not round-trip
through it; we compare names, types, defaults (as values), keyword-only / out flags, alias
sets and returns instead (spec 1.11). torch's Python binding shows types with SymInt ->
int, DeviceIndex -> int, SymBool -> bool, Scalar -> number, and for an annotated Tensor[]
only the write flag (the letters live on the element type, which it does not expose).
"""

from __future__ import annotations

import functools
import os

import torch
import torchgen
import yaml

from tensordispatch.schema import (
    AliasInfo,
    FunctionSchema,
    ListType,
    OptionalType,
    Type,
    parse_schema,
)

YAML = os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen", "native", "native_functions.yaml")  # fmt: skip
_TORCH_BASE = {"SymInt": "int", "DeviceIndex": "int", "SymBool": "bool", "Scalar": "number"}


@functools.lru_cache(maxsize=1)
def funcs() -> tuple[str, ...]:
    with open(YAML) as f:
        return tuple(e["func"] for e in yaml.load(f, Loader=yaml.CSafeLoader))


def torch_type(t: Type) -> str:
    if isinstance(t, OptionalType):
        return f"Optional[{torch_type(t.elem)}]"
    if isinstance(t, ListType):
        return f"List[{torch_type(t.elem)}]"
    return _TORCH_BASE.get(str(t), str(t))


def list_size(t: Type) -> int | None:
    t = t.elem if isinstance(t, OptionalType) else t
    return t.size if isinstance(t, ListType) else None


def alias(t: Type, info: AliasInfo | None) -> tuple[object, ...] | None:
    if info is None:
        return None
    if isinstance(t, ListType):
        return (set(), set(), info.is_write)
    return (set(info.before_set), set(info.after_set or info.before_set), info.is_write)


def torch_alias(info: object) -> tuple[object, ...] | None:
    if info is None:
        return None
    return (info.before_set, info.after_set, info.is_write)  # type: ignore[attr-defined]


def ours_view(s: FunctionSchema) -> tuple[object, ...]:
    first_out = len(s.arguments) - len(s.out)
    args = [
        (a.name, torch_type(a.type), list_size(a.type), a.default_value, a.kwarg_only,
         i >= first_out, alias(a.type, a.alias_info))
        for i, a in enumerate(s.arguments)
    ]  # fmt: skip
    rets = [(r.name or "", torch_type(r.type), alias(r.type, r.alias_info)) for r in s.returns]
    return (str(s.name.name), s.overload_name, args, rets, s.is_mutable, s.is_view)


def torch_view(t: torch._C.FunctionSchema) -> tuple[object, ...]:
    args = [
        (a.name, str(a.real_type), a.N, a.default_value, a.kwarg_only, a.is_out,
         torch_alias(a.alias_info))
        for a in t.arguments
    ]  # fmt: skip
    rets = [(r.name, str(r.real_type), torch_alias(r.alias_info)) for r in t.returns]
    return (t.name, t.overload_name, args, rets, t.is_mutable, t._is_view_op())


def first_difference(a: tuple[object, ...], b: tuple[object, ...]) -> str:
    for label, x, y in zip(
        ("name", "overload", "arguments", "returns", "is_mutable", "is_view"), a, b
    ):
        if x != y:
            if isinstance(x, list) and isinstance(y, list):
                for p, q in zip(x, y):
                    if p != q:
                        return f"{label}: ours {p!r} != torch {q!r}"
            return f"{label}: ours {x!r} != torch {y!r}"
    return "?"


def test_structure_agrees_with_torch_parse_schema_on_every_entry() -> None:
    bad = []
    for f in funcs():
        ours, theirs = ours_view(parse_schema(f)), torch_view(torch._C.parse_schema(f))
        if ours != theirs:
            bad.append(f"{f}\n    {first_difference(ours, theirs)}")
    assert bad == [], "\n".join(bad[:5])


def test_default_values_agree_including_canonicalised_ones() -> None:
    # Spot-check the spellings torch canonicalises: Mean, long, contiguous_format, 0.0, 1e-05.
    seen: dict[str, object] = {}
    for f in funcs():
        for ours, theirs in zip(parse_schema(f).arguments, torch._C.parse_schema(f).arguments):
            if ours.default is not None:
                seen[f"{ours.type} {ours.default}"] = (ours.default_value, theirs.default_value)
    for key in ("int Mean", "ScalarType? long", "MemoryFormat contiguous_format", "float 1e-05",
                "float 1", "SymInt[2] 1", "int[1] 0", "str 'linear'"):  # fmt: skip
        ours_value, torch_value = seen[key]
        assert ours_value == torch_value and type(ours_value) is type(torch_value), key
    assert len(seen) > 80
