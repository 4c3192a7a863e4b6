"""The yaml model on small inputs: generated variants, kernels, defaults, groups (spec 2.4, 10.4)."""

from __future__ import annotations

import dataclasses
import os
import pathlib

import pytest
import torchgen

from tensordispatch.schema import OperatorName
from tensordispatch.schema.native import (
    ParsedNativeFunctions,
    load_native_functions,
    parse_native_functions,
    parse_tags_yaml,
)
from tensordispatch.schema.native_model import (
    BackendMetadata,
    DeviceCheckType,
    NativeFunctionsGroup,
    Variant,
    ViewSchemaKind,
)
from tensordispatch.schema.native_yaml import NativeFunctionsError

NATIVE = os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen", "native")


@pytest.fixture(scope="module")
def real() -> ParsedNativeFunctions:
    return load_native_functions(os.path.join(NATIVE, "native_functions.yaml"))


def _func(parsed: ParsedNativeFunctions, name: str) -> str:
    return next(str(f.func) for f in parsed.native_functions if str(f.func.name) == name)


def _cea_kernel(parsed: ParsedNativeFunctions, name: str) -> str:
    return (
        parsed.backend_indices["CompositeExplicitAutograd"].index[OperatorName.parse(name)].kernel
    )


def test_out_generated_from_functional() -> None:
    parsed = parse_native_functions("- func: op(Tensor self) -> Tensor\n  autogen: op.out\n"
                                    "  dispatch:\n    CPU: op\n")  # fmt: skip
    assert _func(parsed, "op.out") == "op.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"
    assert _cea_kernel(parsed, "op.out") == "op_out"


def test_out_generated_for_tuple_return() -> None:
    parsed = parse_native_functions("- func: op_2() -> (Tensor, Tensor)\n  autogen: op_2.out\n"
                                    "  dispatch:\n    CPU: op_2\n")  # fmt: skip
    assert (
        _func(parsed, "op_2.out")
        == "op_2.out(*, Tensor(a!) out0, Tensor(b!) out1) -> (Tensor(a!), Tensor(b!))"
    )
    assert _cea_kernel(parsed, "op_2.out") == "op_2_out"


def test_generated_function_fields() -> None:
    parsed = parse_native_functions("- func: op(Tensor self) -> Tensor\n  autogen: op.out\n"
                                    "  tags: [core, nondeterministic_seeded]\n"
                                    "  dispatch:\n    CPU: op\n")  # fmt: skip
    out = parsed.native_functions[1]
    assert (out.variants, out.device_guard, out.device_check) == (
        frozenset({Variant.function}), False, DeviceCheckType.NoCheck)  # fmt: skip
    assert out.tags == {"generated", "out", "nondeterministic_seeded", "pt2_compliant_tag"}
    assert out.loc == parsed.native_functions[0].loc


def test_no_out_generated_without_autogen() -> None:
    parsed = parse_native_functions("- func: op(Tensor self) -> Tensor\n  dispatch:\n    CPU: op\n")
    assert [str(f.func.name) for f in parsed.native_functions] == ["op"]
    assert parsed.groups == ()


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("zero.out", "zero.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"),
        (
            "_amp_update_scale",
            "_amp_update_scale(Tensor self, Tensor growth_tracker, Tensor found_inf, float scale_growth_factor, float scale_backoff_factor, int growth_interval) -> (Tensor, Tensor growth_tracker_out)",
        ),
        ("_foreach_zero.out", "_foreach_zero.out(Tensor[] self, *, Tensor(a!)[] out) -> ()"),
        (
            "view_copy.out",
            "view_copy.out(Tensor self, SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)",
        ),
    ],
)
def test_generated_schemas_of_the_real_file(
    real: ParsedNativeFunctions, name: str, expected: str
) -> None:
    assert _func(real, name) == expected


def test_generated_functional_of_mutable_op(real: ParsedNativeFunctions) -> None:
    text = _func(real, "_fused_moving_avg_obs_fq_helper_functional")
    assert text.endswith("-> (Tensor output, Tensor mask, Tensor running_min_out, Tensor running_max_out, "
                         "Tensor scale_out, Tensor zero_point_out)")  # fmt: skip


def test_generated_symint_kernel_names(real: ParsedNativeFunctions) -> None:
    assert _cea_kernel(real, "view_copy.out") == "view_copy_out_symint"
    assert _cea_kernel(real, "transpose_copy.int_out") == "transpose_copy_int_out"
    assert _cea_kernel(real, "zero") == "zero"


def test_comma_dispatch_keys_share_one_kernel() -> None:
    parsed = parse_native_functions("- func: op(Tensor self) -> Tensor\n  dispatch:\n"
                                    "    CPU, CUDA: op_kernel\n    Meta: ns::op_meta\n")  # fmt: skip
    name = OperatorName.parse("op")
    assert parsed.backend_indices["CUDA"].index[name] == BackendMetadata(
        "op_kernel", False, "at::native"
    )
    assert parsed.backend_indices["Meta"].index[name] == BackendMetadata(
        "op_meta", False, "ns::native"
    )
    assert (
        parsed.backend_indices["CUDA"].device_guard
        and not parsed.backend_indices["CPU"].device_guard
    )


def test_implicit_composite_kernel_and_abstractness() -> None:
    parsed = parse_native_functions("- func: op.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n"
                                    "- func: op(Tensor self) -> Tensor\n")  # fmt: skip
    cia = parsed.backend_indices["CompositeImplicitAutograd"].index
    assert {str(k): v.kernel for k, v in cia.items()} == {"op.out": "op_out", "op": "op"}
    assert not any(f.is_abstract for f in parsed.native_functions)


def test_ignore_keys_drops_kernels_silently() -> None:
    parsed = parse_native_functions("- func: op(Tensor self) -> Tensor\n  dispatch:\n    CPU, MPS: op\n",
                                    ignore_keys={"MPS"})  # fmt: skip
    assert sorted(parsed.backend_indices) == ["CPU"]


def test_structured_group_and_delegates() -> None:
    text = ("- func: op(Tensor self) -> Tensor\n  structured_delegate: op.out\n"
            "- func: op_(Tensor(a!) self) -> Tensor(a!)\n  structured_delegate: op.out\n"
            "- func: op.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
            "  structured_inherits: TensorIteratorBase\n  dispatch:\n    CPU, XLA: op_out\n"
            "    SparseCPU: op_sparse\n")  # fmt: skip
    parsed = parse_native_functions(text, ignore_keys={"XLA"})
    (group,) = parsed.groups
    assert isinstance(group, NativeFunctionsGroup) and group.structured
    assert [str(f.func.name) for f in group.functions()] == ["op", "op.out", "op_"]
    assert parsed.backend_indices["CPU"].get_kernel(group) == BackendMetadata(
        "op_out", True, "at::native"
    )
    assert parsed.backend_indices["SparseCPU"].index[group.out.func.name].structured is False
    assert all(f.is_abstract for f in group.functions())


def test_precomputed_and_ufunc_are_modelled(real: ParsedNativeFunctions) -> None:
    cat = next(f for f in real.native_functions if str(f.func.name) == "cat.out")
    assert cat.precomputed is not None
    assert [str(a) for a in dict(cat.precomputed.replace)["dim"]][:2] == ["int dim", "int valid"]
    add = next(f for f in real.native_functions if str(f.func.name) == "add.out")
    assert [(loop.ufunc_key.name, loop.name, loop.supported_dtypes[-1]) for loop in add.ufunc_inner_loop] == [
        ("Generic", "add", "ComplexHalf"), ("ScalarOnly", "add", "Bool")]  # fmt: skip
    assert real.backend_indices["CPU"].index[add.func.name].kernel == "ufunc_add_CPU"


def test_view_kinds(real: ParsedNativeFunctions) -> None:
    kinds = {str(f.func.name): f.view_schema_kind for f in real.native_functions}
    assert kinds["transpose.int"] is ViewSchemaKind.aliasing
    assert kinds["transpose_"] is ViewSchemaKind.aliasing_inplace
    assert kinds["transpose_copy.int"] is ViewSchemaKind.non_aliasing


def test_signature_is_cached_and_not_part_of_equality(real: ParsedNativeFunctions) -> None:
    f = real.native_functions[0]
    assert f.signature() is f.signature()
    assert dataclasses.replace(f) == f


def test_native_function_rejects_broken_invariant_on_construction(
    real: ParsedNativeFunctions,
) -> None:
    f = next(f for f in real.native_functions if str(f.func.name) == "add.out")
    with pytest.raises(NativeFunctionsError) as info:
        dataclasses.replace(f, variants=frozenset({Variant.method, Variant.function}))
    assert str(info.value).startswith(f"{f.loc}: add.out: Native functions with out arguments MUST")


def test_tags_yaml_needs_descriptions() -> None:
    assert parse_tags_yaml("- tag: core\n  desc: |\n    Core ops.\n") == {"core"}
    with pytest.raises(NativeFunctionsError) as info:
        parse_tags_yaml("- tag: core\n  desc: ''\n", "tags.yaml")
    assert str(info.value) == "tags.yaml:1: core: Tag 'core' must have a non-empty description"


def test_real_tags_yaml_matches_default_tags() -> None:
    from tensordispatch.schema.native import DEFAULT_VALID_TAGS

    text = pathlib.Path(NATIVE, "tags.yaml").read_text(encoding="utf-8")
    assert parse_tags_yaml(text) == DEFAULT_VALID_TAGS


def test_package_namespace_exports_the_loader() -> None:
    from tensordispatch import schema

    assert schema.load_native_functions is load_native_functions
    assert schema.NativeFunctionsGroup is NativeFunctionsGroup


def test_generate_false_keeps_only_yaml_entries() -> None:
    text = "- func: op(Tensor self) -> Tensor\n  autogen: op.out\n  dispatch:\n    CPU: op\n"
    parsed = parse_native_functions(text, generate=False)
    assert [str(f.func.name) for f in parsed.native_functions] == ["op"]
    assert sorted(parsed.backend_indices) == ["CPU"]


def test_get_grouped_functions_match_the_parsed_file(real: ParsedNativeFunctions) -> None:
    from tensordispatch.schema.native import (
        get_grouped_by_view_native_functions,
        get_grouped_native_functions,
    )

    assert get_grouped_native_functions(real.native_functions) == list(real.grouped)
    assert get_grouped_by_view_native_functions(real.native_functions) == list(real.view_grouped)


def test_ungroupable_generated_function_is_reported_at_its_entry(
    real: ParsedNativeFunctions,
) -> None:
    from tensordispatch.schema.native import get_grouped_native_functions

    kept = [f for f in real.native_functions if str(f.func.name) != "zero.out"]
    with pytest.raises(NativeFunctionsError) as info:
        get_grouped_native_functions(kept)
    zero_ = next(f for f in kept if str(f.func.name) == "zero_")
    assert str(info.value) == (
        f"{zero_.loc}: zero: Generated NativeFunctions should have been grouped into "
        "NativeFunctionsGroup objects: zero_, zero"
    )


def test_parsed_file_repr_is_a_summary() -> None:
    parsed = parse_native_functions(
        "- func: neg(Tensor self) -> Tensor\n  dispatch:\n    CPU: neg\n"
    )
    assert repr(parsed) == (
        "ParsedNativeFunctions(path='<string>', entries=1, native_functions=1, groups=0, "
        "view_groups=0, dispatch_keys=1)"
    )
