"""The whole torch 2.13 native_functions.yaml, modelled by us and by torchgen: same objects.

Compares the actual sets (every NativeFunction's fields, every group's members, every view
group, every kernel of every BackendIndex), not only counts.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
import torchgen
import torchgen.gen as tg
from torchgen.model import NativeFunctionsGroup as TgGroup
from torchgen.model import NativeFunctionsViewGroup as TgViewGroup

from tensordispatch.schema import load_native_functions
from tensordispatch.schema.native import ParsedNativeFunctions
from tensordispatch.schema.native_model import NativeFunctionsGroup, NativeFunctionsViewGroup

NATIVE = os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen", "native")
YAML = os.path.join(NATIVE, "native_functions.yaml")
TAGS = os.path.join(NATIVE, "tags.yaml")


@pytest.fixture(scope="module")
def ours() -> ParsedNativeFunctions:
    return load_native_functions(YAML, tags_path=TAGS)


@pytest.fixture(scope="module")
def theirs() -> tuple[Any, list[Any], list[Any]]:
    tg._GLOBAL_PARSE_NATIVE_YAML_CACHE.clear()
    parsed = tg.parse_native_yaml(YAML, TAGS)
    funcs = parsed.native_functions
    return (
        parsed,
        tg.get_grouped_native_functions(funcs),
        tg.get_grouped_by_view_native_functions(funcs),
    )


def _names(xs: Any) -> list[str]:
    return sorted(str(x) for x in xs)


def _function_facts(f: Any) -> tuple[object, ...]:
    pre = f.precomputed
    precomputed = None if pre is None else (pre.to_list(), [str(a) for a in pre.add])
    loops = f.ufunc_inner_loop
    loops = loops.values() if isinstance(loops, dict) else loops
    return (
        f.namespace,
        str(f.func),
        f.func.kind().name,
        f.loc.line,
        f.use_const_ref_for_mutable_tensors,
        f.device_guard,
        f.device_check.name,
        f.python_module,
        f.category_override,
        _names(v.name for v in f.variants),
        f.manual_kernel_registration,
        f.manual_cpp_binding,
        [str(x) for x in f.autogen],
        sorted((x.ufunc_key.name, x.name, _names(x.supported_dtypes)) for x in loops),
        f.structured,
        str(f.structured_delegate) if f.structured_delegate is not None else None,
        f.structured_inherits,
        str(precomputed),
        sorted(f.cpp_no_default_args),
        f.is_abstract,
        f.has_composite_implicit_autograd_kernel,
        f.has_composite_implicit_autograd_nested_tensor_kernel,
        f.has_composite_explicit_autograd_kernel,
        f.has_composite_explicit_autograd_non_functional_kernel,
        sorted(f.tags),
        f.is_view_op,
        f.view_schema_kind.name,
    )


def test_entry_and_function_counts(ours: ParsedNativeFunctions) -> None:
    assert (ours.entries, len(ours.native_functions)) == (2584, 3101)


def test_every_native_function_agrees_in_order(ours: ParsedNativeFunctions, theirs: Any) -> None:
    mine = [_function_facts(f) for f in ours.native_functions]
    reference = [_function_facts(f) for f in theirs[0].native_functions]
    assert mine == reference


def test_generated_functions_agree(ours: ParsedNativeFunctions, theirs: Any) -> None:
    mine = {str(f.func) for f in ours.native_functions if "generated" in f.tags}
    reference = {str(f.func) for f in theirs[0].native_functions if "generated" in f.tags}
    assert len(mine) == 517
    assert mine == reference


def _member(f: Any) -> str | None:
    return None if f is None else str(f.func)


def _group_facts(g: Any) -> tuple[object, ...]:
    return (
        _member(g.functional),
        _member(g.out),
        _member(g.inplace),
        _member(g.mutable),
        g.structured,
        str(g.signature()),
    )


def test_groups_agree(ours: ParsedNativeFunctions, theirs: Any) -> None:
    mine = {_group_facts(g) for g in ours.grouped if isinstance(g, NativeFunctionsGroup)}
    reference = {_group_facts(g) for g in theirs[1] if isinstance(g, TgGroup)}
    assert (len(mine), sum(1 for g in mine if g[4])) == (1105, 275)
    assert mine == reference


def test_ungrouped_functions_agree(ours: ParsedNativeFunctions, theirs: Any) -> None:
    mine = [str(x.func) for x in ours.grouped if not isinstance(x, NativeFunctionsGroup)]
    reference = [str(x.func) for x in theirs[1] if not isinstance(x, TgGroup)]
    assert len(ours.grouped) == len(theirs[1]) == 1691
    assert mine == reference


def _view_facts(g: Any) -> tuple[object, ...]:
    return (_member(g.view), _member(g.view_copy), _member(g.view_inplace), g.composite)


def test_view_groups_agree(ours: ParsedNativeFunctions, theirs: Any) -> None:
    mine = [_view_facts(g) for g in ours.view_grouped if isinstance(g, NativeFunctionsViewGroup)]
    reference = [_view_facts(g) for g in theirs[2] if isinstance(g, TgViewGroup)]
    assert len(mine) == 91
    assert mine == reference
    rest = [str(x.func) for x in ours.view_grouped if not isinstance(x, NativeFunctionsViewGroup)]
    assert rest == [str(x.func) for x in theirs[2] if not isinstance(x, TgViewGroup)]


def _index_facts(indices: Any) -> dict[str, tuple[object, ...]]:
    return {
        str(key): (
            index.use_out_as_primary,
            index.device_guard,
            index.external,
            {str(op): (m.kernel, m.structured, m.cpp_namespace) for op, m in index.index.items()},
        )
        for key, index in indices.items()
    }


def test_backend_indices_agree(ours: ParsedNativeFunctions, theirs: Any) -> None:
    mine = _index_facts(ours.backend_indices)
    reference = _index_facts(theirs[0].backend_indices)
    assert sorted(mine) == sorted(reference)
    assert mine == reference


def test_kernels_per_key_match_the_spec_table(ours: ParsedNativeFunctions) -> None:
    counts = {key: len(index.index) for key, index in ours.backend_indices.items()}
    assert (counts["CUDA"], counts["CompositeImplicitAutograd"], counts["CPU"]) == (885, 743, 682)
    assert counts["CompositeExplicitAutograd"] == 1061


def test_group_primary_kernel_lookup(ours: ParsedNativeFunctions) -> None:
    sin = next(g for g in ours.groups if str(g.functional.func.name) == "sin")
    cpu = ours.backend_indices["CPU"]
    assert cpu.primary(sin) is sin.out
    kernel = cpu.get_kernel(sin)
    assert kernel is not None and (kernel.kernel, kernel.structured) == ("sin_out", True)
    assert not ours.backend_index("XLA").has_kernel(sin)
    assert ours.backend_index("XLA").dispatch_key == "Undefined"


def _partition(keys: list[object]) -> list[list[int]]:
    buckets: dict[object, list[int]] = {}
    for i, key in enumerate(keys):
        buckets.setdefault(key, []).append(i)
    return sorted(buckets.values())


def test_signature_keys_partition_like_signature(ours: ParsedNativeFunctions) -> None:
    funcs = ours.native_functions
    assert _partition([f.signature_key() for f in funcs]) == _partition(
        [f.func.signature() for f in funcs]
    )
    views = [f.func.view_signature() for f in funcs]
    assert _partition([f.view_signature_key() for f in funcs]) == _partition(views)


def test_signature_keys_partition_like_torchgen(theirs: Any) -> None:
    from tensordispatch.schema import parse_schema
    from tensordispatch.schema.native_model import signature_key

    funcs = theirs[0].native_functions
    mine = [signature_key(parse_schema(str(f.func))) for f in funcs]
    assert _partition(mine) == _partition([f.func.signature() for f in funcs])
