"""Registered operators vs torchgen's gen_backend_stubs on random backend yamls (torch's file).

For random picks of operators from torch 2.13's native_functions.yaml (whole groups or some
of their members, singles, with or without use_out_as_primary), the operators our generated
module registers must be exactly the `m.impl("...")` names of torchgen's RegisterXLA.cpp and RegisterAutogradXLA.cpp.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensordispatch.codegen.backend_stubs import generate_backend_stubs
from tensordispatch.schema.native import ParsedNativeFunctions, load_native_functions
from tensordispatch.schema.native_model import NativeFunctionsGroup


@pytest.fixture(scope="module")
def torch_native() -> ParsedNativeFunctions:
    import torchgen

    d = Path(os.path.dirname(torchgen.__file__)) / "packaged" / "ATen" / "native"
    return load_native_functions(d / "native_functions.yaml", tags_path=d / "tags.yaml")


def _torchgen_registered(yaml_text: str, tmp: Path) -> list[tuple[str, str]]:
    from torchgen.gen import _GLOBAL_PARSE_NATIVE_YAML_CACHE
    from torchgen.gen_backend_stubs import run as torchgen_run
    from torchgen.model import DispatchKey

    source = tmp / "backend.yaml"
    source.write_text(yaml_text)
    try:
        torchgen_run(str(source), str(tmp), False)
    finally:
        # run() adds the external keys to the cached parse (spec 4.7); take them out again
        # so the next run reuses the parse instead of failing with "Duplicate backend key".
        for cached in _GLOBAL_PARSE_NATIVE_YAML_CACHE.values():
            cached.backend_indices.pop(DispatchKey.XLA, None)
            cached.backend_indices.pop(DispatchKey.AutogradXLA, None)
    found = set()
    for key in ("XLA", "AutogradXLA"):
        cpp = tmp / f"Register{key}.cpp"
        if cpp.exists():
            found |= {(op, key) for op in re.findall(r'm\.impl\("([^"]+)"', cpp.read_text())}
            cpp.unlink()
    return sorted(found)


def _ours(yaml_text: str, native: ParsedNativeFunctions) -> list[tuple[str, str]]:
    sources = generate_backend_stubs(yaml_text, native_functions=native)
    rows = []
    for source in sources.values():
        rows += re.findall(r'^    \("aten", "([^"]+)", "(\w+)", ', source, flags=re.MULTILINE)
    return sorted(set(rows))


@st.composite
def _backend_yaml(draw: Any, native: ParsedNativeFunctions) -> str:
    # torchgen asserts (instead of generating) for groups with a mutable member, for
    # inplace members returning nothing (`_foreach_pow_.List(...) -> ()`) and when it has to
    # generate an out= wrapper with several out arguments ("Expected exactly 1 out argument");
    # we generate the latter two (several outs are copied one by one, docs/BACKENDS.md). All are
    # left out here.
    groups = [
        g
        for g in native.groups
        if g.mutable is None
        and (g.inplace is None or g.inplace.func.returns)
        and len(g.out.func.out) == 1
    ]
    picked: dict[str, list[str]] = {"supported": [], "autograd": []}
    for g in draw(st.lists(st.sampled_from(groups), min_size=1, max_size=4, unique_by=id)):
        assert isinstance(g, NativeFunctionsGroup)
        members = [str(f.func.name) for f in g.functions()]
        # A group's members go all to one list (mixing is an error, tested elsewhere).
        where = "autograd" if draw(st.booleans()) else "supported"
        picked[where] += draw(st.lists(st.sampled_from(members), min_size=1, unique=True))
    singles = [str(f.func.name) for f in native.grouped if not isinstance(f, NativeFunctionsGroup)]
    picked["supported"] += draw(st.lists(st.sampled_from(singles), max_size=2))
    out_primary = draw(st.booleans())
    lines = ["backend: XLA", "cpp_namespace: torch_xla"]
    lines.append(f"use_out_as_primary: {str(out_primary).lower()}")
    for key, names in picked.items():
        if names:
            lines += [f"{key}:", *(f"- {name}" for name in names)]
    return "\n".join(lines) + "\n"


def test_registered_operators_match_torchgen_on_random_yamls(
    torch_native: ParsedNativeFunctions, tmp_path: Path
) -> None:
    @settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
    @given(_backend_yaml(torch_native))
    def check(yaml_text: str) -> None:
        assert _ours(yaml_text, torch_native) == _torchgen_registered(yaml_text, tmp_path)

    check()


def test_generic_schemas_get_generic_wrappers(
    torch_native: ParsedNativeFunctions, tmp_path: Path
) -> None:
    text = "backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- random.from\n"
    assert _ours(text, torch_native) == _torchgen_registered(text, tmp_path)
    assert ("random.from_out", "XLA") in _ours(text, torch_native)
    (source,) = generate_backend_stubs(text, native_functions=torch_native).values()
    namespace: dict[str, Any] = {}
    exec(compile(source, "generated.py", "exec"), namespace)  # noqa: S102 - generated code under test
    seen: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    class K:
        @staticmethod
        def random_from(*args: Any, **kwargs: Any) -> list[int]:
            seen.append((args, kwargs))
            return [7]

        @staticmethod
        def _copy_from(src: Any, dst: Any, non_blocking: bool = False) -> Any:
            dst[:] = src
            return dst

        _copy_from_and_resize = _copy_from

    x, out = [0], [0, 0]
    random_ = namespace["_make_random__from"](K)
    assert random_(x, 1, 5) is x and x == [7]
    random_out = namespace["_make_random_from_out"](K)
    assert random_out(x, 1, None, generator=None, out=out) is out and out == [7]
    assert seen == [((x, 1, 5), {}), ((x, 1, None), {"generator": None})]


def test_inplace_without_returns_is_generated_where_torchgen_asserts(
    torch_native: ParsedNativeFunctions,
) -> None:
    text = "backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- _foreach_pow.List\n"
    (source,) = generate_backend_stubs(text, native_functions=torch_native).values()
    namespace: dict[str, Any] = {}
    exec(compile(source, "generated.py", "exec"), namespace)  # noqa: S102 - generated code under test

    class K:
        @staticmethod
        def _foreach_pow_List(self: Any, exponent: Any) -> list[list[int]]:  # noqa: PLW0211
            return [
                [a**b for a, b in zip(x, e, strict=True)]
                for x, e in zip(self, exponent, strict=True)
            ]

        @staticmethod
        def _copy_from(src: Any, dst: Any, non_blocking: bool = False) -> Any:
            dst[:] = src
            return dst

    xs = [[2], [3]]
    first = xs[0]
    assert namespace["_make__foreach_pow__List"](K)(xs, [[3], [2]]) is None
    assert xs == [[8], [9]] and xs[0] is first
