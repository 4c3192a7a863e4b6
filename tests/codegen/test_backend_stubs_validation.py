"""Backend yaml validation: every case of torch's tools/test/test_gen_backend_stubs.py, ported.

Each case is an input yaml and either success or the exact message. Our message starts
with torchgen's own text and may add a hint line; `test_first_lines_match_torchgen` runs
torchgen's parse_backend_yaml on the same inputs (with torch's native_functions.yaml) and
checks that, so the goldens below cannot drift from torch.
"""

from __future__ import annotations

import collections
import os
import tempfile
from pathlib import Path

import pytest

from tensordispatch.codegen.backend_stubs import (
    BackendStubsError,
    build_external_backend,
    read_backend_yaml,
)
from tensordispatch.schema.native import (
    DEFAULT_NATIVE_FUNCTIONS_PATH,
    ParsedNativeFunctions,
    load_native_functions,
)

NATIVE = load_native_functions()
OURS = str(DEFAULT_NATIVE_FUNCTIONS_PATH)


def _errors(text: str, native: ParsedNativeFunctions = NATIVE) -> str:
    with pytest.raises(BackendStubsError) as info:
        build_external_backend(read_backend_yaml(text, "x.yaml"), native)
    return str(info.value).replace(native.path, "<native>")


def _ok(text: str, native: ParsedNativeFunctions = NATIVE) -> None:
    build_external_backend(read_backend_yaml(text, "x.yaml"), native)


# ----- the upstream cases: success ---------------------------------------------------------

VALID = {
    "single_op": "backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- abs",
    "multiple_ops": "backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- add.Tensor\n- abs",
    "zero_ops": "backend: XLA\ncpp_namespace: torch_xla\nsupported:",
    "zero_ops_doesnt_require_backend_dispatch_key": (
        "backend: BAD_XLA\ncpp_namespace: torch_xla\nsupported:"
    ),
    "with_autograd_ops": (
        "backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- abs\nautograd:\n- add.Tensor"
    ),
    "only_autograd_ops": "backend: XLA\ncpp_namespace: torch_xla\nautograd:\n- add.Tensor",
}


@pytest.mark.parametrize("name", list(VALID))
def test_valid(name: str) -> None:
    _ok(VALID[name])


def test_zero_ops_has_no_backend_key() -> None:
    b = build_external_backend(read_backend_yaml(VALID["zero_ops"]), NATIVE)
    assert (b.backend_key, b.kernels) == (None, ())


def test_only_autograd_ops_has_autograd_kernels_but_no_backend_key() -> None:
    b = build_external_backend(read_backend_yaml(VALID["only_autograd_ops"]), NATIVE)
    assert b.backend_key is None
    assert [(k.name, k.dispatch_key) for k in b.kernels] == [("add_Tensor", "AutogradXLA")]


# ----- the upstream cases: errors ----------------------------------------------------------

ERRORS = {
    "missing_backend": (
        "cpp_namespace: torch_xla\nsupported:\n- abs",
        """\
You must provide a value for "backend"
  "backend" is the dispatch key the kernels register under, e.g. XLA or PrivateUse1.""",
    ),
    "empty_backend": (
        "backend:\ncpp_namespace: torch_xla\nsupported:\n- abs",
        """\
You must provide a value for "backend"
  "backend" is the dispatch key the kernels register under, e.g. XLA or PrivateUse1.""",
    ),
    "backend_invalid_dispatch_key": (
        "backend: NOT_XLA\ncpp_namespace: torch_xla\nsupported:\n- abs",
        """\
unknown dispatch key NOT_XLA
  The provided value for "backend" must be a valid DispatchKey, but got NOT_XLA.""",
    ),
    "missing_cpp_namespace": (
        "backend: XLA\nsupported:\n- abs",
        """\
You must provide a value for "cpp_namespace"
  "cpp_namespace" is the Python module that holds the kernels, e.g. my_backend.kernels.""",
    ),
    "whitespace_cpp_namespace": (
        "backend: XLA\ncpp_namespace:\t\nsupported:\n- abs",
        """\
You must provide a value for "cpp_namespace"
  "cpp_namespace" is the Python module that holds the kernels, e.g. my_backend.kernels.""",
    ),
    "nonlist_supported": (
        "backend: XLA\ncpp_namespace: torch_xla\nsupported: abs",
        """\
expected "supported" to be a list, but got: abs (of type <class 'str'>)
  Write "supported" as a yaml list, one "- name[.overload]" per line.""",
    ),
    "nonlist_symint": (
        "backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- abs\nsymint: abs",
        """\
expected "symint" to be a list, but got: abs (of type <class 'str'>)
  Write "symint" as a yaml list, one "- name[.overload]" per line.""",
    ),
    "nonlist_autograd": (
        "backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- abs\nautograd: abs",
        """\
expected "autograd" to be a list, but got: abs
  Write "autograd" as a yaml list, one "- name[.overload]" per line.""",
    ),
    "null_autograd": (
        "backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- abs\nautograd:",
        """\
expected "autograd" to be a list, but got: None
  Write "autograd" as a yaml list, one "- name[.overload]" per line.""",
    ),
    "supported_invalid_op": (
        "backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- abs_BAD",
        """\
Found an invalid operator name: abs_BAD
  x.yaml:4: "supported" lists abs_BAD, which is not an operator of <native>; write name[.overload] as that file does, e.g. add.Tensor.""",
    ),
    "backend_has_no_autograd_key_but_provides_entries": (
        "backend: Vulkan\ncpp_namespace: torch_vulkan\nsupported:\n- add\nautograd:\n- sub",
        """\
Found an invalid operator name: add
  x.yaml:4: "supported" lists add, which is not an operator of <native>; write name[.overload] as that file does, e.g. add.Tensor.""",
    ),
    "backend_has_no_autograd_key_valid_ops": (
        "backend: Vulkan\ncpp_namespace: torch_vulkan\nsupported:\n- add.Tensor\nautograd:\n- sub.Tensor",
        """\
unknown dispatch key AutogradVulkan
  The "autograd" key was specified, which indicates that you would like to override the behavior of autograd for some operators on your backend. However "AutogradVulkan" is not a valid DispatchKey.""",
    ),
    "backend_autograd_kernel_mismatch_out_functional": (
        "backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- add.Tensor\nautograd:\n- add.out",
        """\
Currently, all variants of an op must either be registered to a backend key, or to a backend's autograd key. They cannot be mix and matched. If this is something you need, feel free to create an issue! add is listed under "supported", but add_out is listed under "autograd".
  Operators: add.Tensor under "supported", add.out under "autograd"; list every variant of add under one of the two keys.""",
    ),
    "backend_autograd_kernel_mismatch_functional_inplace": (
        "backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- add.Tensor\nautograd:\n- add_.Tensor",
        """\
Currently, all variants of an op must either be registered to a backend key, or to a backend's autograd key. They cannot be mix and matched. If this is something you need, feel free to create an issue! add is listed under "supported", but add_ is listed under "autograd".
  Operators: add.Tensor under "supported", add_.Tensor under "autograd"; list every variant of add under one of the two keys.""",
    ),
    "op_appears_in_supported_and_autograd_lists": (
        "backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- add.Tensor\nautograd:\n- add.Tensor",
        """\
Currently, all variants of an op must either be registered to a backend key, or to a backend's autograd key. They cannot be mix and matched. If this is something you need, feel free to create an issue! add is listed under "supported", but add is listed under "autograd".
  add.Tensor is listed under both "supported" and "autograd"; list every variant of add under one of the two keys.""",
    ),
    "unrecognized_key": (
        "backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- abs\ninvalid_key: invalid_val",
        "x.yaml contains unexpected keys: invalid_key. Only the following keys are supported: backend, class_name, cpp_namespace, supported, autograd, full_codegen, non_native, ir_gen, symint, use_out_as_primary, device_guard",
    ),
    "use_out_as_primary_non_bool": (
        "backend: XLA\ncpp_namespace: torch_xla\nuse_out_as_primary: frue\nsupported:\n- abs",
        "You must provide either True or False for use_out_as_primary. Provided: frue",
    ),
    "device_guard_non_bool": (
        "backend: XLA\ncpp_namespace: torch_xla\ndevice_guard: frue\nsupported:\n- abs",
        "You must provide either True or False for device_guard. Provided: frue",
    ),
    # Spec 5.2's extra probes.
    "in_tree_backend_key": (
        "backend: CPU\ncpp_namespace: torch_xla\nsupported:\n- abs",
        """\
Duplicate backend key: CPU
  CPU is a key native_functions.yaml gives its own kernels; an external backend needs its own key (e.g. PrivateUse1, XLA).""",
    ),
    "yaml_is_a_list": (
        "- backend: XLA\n",
        """\
Expected yaml_values to be a dict, got <class 'list'>
  x.yaml must be a mapping with the keys backend, class_name, cpp_namespace, supported, autograd, full_codegen, non_native, ir_gen, symint, use_out_as_primary, device_guard.""",
    ),
    "symint_without_symint_in_schema": (
        "backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- abs\nsymint:\n- abs",
        """\
attempted to define symint kernel for XLA without SymInt in schema
  abs has no SymInt argument (abs(Tensor self) -> Tensor); remove it from "symint".""",
    ),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_error(name: str) -> None:
    text, expected = ERRORS[name]
    assert _errors(text) == expected


# ----- beyond torch: types torchgen does not check -----------------------------------------


def test_supported_entry_must_be_a_string() -> None:
    text = "backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- abs\n- {add: Tensor}"
    assert _errors(text) == (
        "\"supported\" entry 1 (line 5) must be an operator name such as add.Tensor, but got {'add': 'Tensor'} (of type dict)"
    )


def test_cpp_namespace_must_be_a_module_path() -> None:
    text = "backend: XLA\ncpp_namespace: torch::xla\nsupported:\n- abs"
    assert _errors(text) == (
        "\"cpp_namespace\" must name the Python module that holds the kernels (dotted identifiers, e.g. my_backend.kernels), but got 'torch::xla'"
    )


def test_class_name_must_be_an_identifier() -> None:
    text = "backend: XLA\ncpp_namespace: torch_xla\nclass_name: 3d\nsupported:\n- abs"
    assert _errors(text) == (
        "\"class_name\" must be a Python class name (an identifier), but got '3d'\n"
        "  It names the class in the kernel module whose static methods are the kernels."
    )


def test_backend_must_be_a_string() -> None:
    text = "backend: 3\ncpp_namespace: torch_xla\nsupported:\n- abs"
    assert _errors(text) == (
        '"backend" must be a dispatch key name such as XLA or PrivateUse1, but got 3 (of type int)'
    )


def test_invalid_yaml_names_the_file() -> None:
    message = _errors("backend: [XLA\n")
    assert message.startswith("x.yaml is not valid YAML: ")


def test_non_native_entry_needs_func() -> None:
    text = "backend: XLA\ncpp_namespace: torch_xla\nnon_native:\n- opkind: ltc_cast"
    assert _errors(text) == (
        "\"non_native\" entry 0 (line 4) must be a mapping with a \"func\" schema string, but got {'opkind': 'ltc_cast'}"
    )


def test_non_native_unknown_key() -> None:
    text = "backend: XLA\ncpp_namespace: torch_xla\nnon_native:\n- func: f(Tensor x) -> Tensor\n  shape: 1"
    assert _errors(text) == (
        '"non_native" entry 0 (line 4) has unexpected keys: shape. Only the following keys are supported: func, opkind, properties'
    )


def test_full_codegen_ops_are_validated_as_supported() -> None:
    text = "backend: XLA\ncpp_namespace: torch_xla\nfull_codegen:\n- nope"
    assert _errors(text).splitlines()[0] == "Found an invalid operator name: nope"


def test_ir_gen_ops_must_exist() -> None:
    text = "backend: XLA\ncpp_namespace: torch_xla\nir_gen:\n- abs\n- nope.Tensor"
    assert _errors(text) == (
        "Found an invalid operator name: nope.Tensor\n"
        '  x.yaml:5: "ir_gen" lists nope.Tensor, which is not an operator of <native>; write name[.overload] as that file does, e.g. add.Tensor.'
    )


def test_lazy_lists_are_recorded() -> None:
    text = (
        "backend: XLA\ncpp_namespace: torch_xla\nfull_codegen:\n- abs\nir_gen:\n- neg\n"
        "non_native:\n- func: scalar(Scalar value, ScalarType type) -> Tensor\n  opkind: at::prim::Constant\n"
    )
    y = read_backend_yaml(text)
    assert (y.supported, y.full_codegen, y.ir_gen) == (("abs",), ("abs",), ("neg",))
    assert y.non_native[0].opkind == "at::prim::Constant"
    b = build_external_backend(y, NATIVE)
    assert [(k.name, k.full_codegen) for k in b.kernels] == [("abs", True)]


def test_symint_listed_for_unlisted_op_is_ignored() -> None:
    _ok("backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- abs\nsymint:\n- neg")


def test_symint_kernel_name() -> None:
    text = "backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- zeros\nsymint:\n- zeros"
    b = build_external_backend(read_backend_yaml(text), NATIVE)
    assert b.kernels[0].signature.text().startswith("def zeros_symint(size: Sequence[SymInt], *,")
    assert b.backend_index is not None
    assert [m.kernel for m in b.backend_index.index.values()] == ["zeros_symint"]


def test_backend_index_is_external_with_yaml_flags() -> None:
    text = "backend: XLA\ncpp_namespace: torch_xla\nuse_out_as_primary: true\ndevice_guard: true\nsupported: [abs, abs]"
    b = build_external_backend(read_backend_yaml(text), NATIVE)
    idx = b.backend_index
    assert idx is not None
    assert (idx.dispatch_key, idx.use_out_as_primary, idx.device_guard, idx.external) == (
        "XLA", True, True, True,
    )  # fmt: skip
    assert [(str(k), m.kernel, m.cpp_namespace) for k, m in idx.index.items()] == [
        ("abs", "abs", "torch_xla")
    ]
    assert idx.native_function_class_name() == "XLANativeFunctions"


# ----- the same inputs through torchgen ----------------------------------------------------


def _torch_native_dir() -> Path:
    import torchgen

    return Path(os.path.dirname(torchgen.__file__)) / "packaged" / "ATen" / "native"


@pytest.fixture(scope="module")
def torchgen_native() -> tuple[object, list[object], ParsedNativeFunctions]:
    from torchgen.gen import (
        _GLOBAL_PARSE_NATIVE_YAML_CACHE,
        get_grouped_native_functions,
        parse_native_yaml,
    )

    # torchgen caches the parse and its run() adds the external key to the cached indices
    # (spec 4.7); start from a fresh parse, as torch's own tests do.
    _GLOBAL_PARSE_NATIVE_YAML_CACHE.clear()
    d = _torch_native_dir()
    parsed = parse_native_yaml(str(d / "native_functions.yaml"), str(d / "tags.yaml"))
    grouped = get_grouped_native_functions(parsed.native_functions)
    ours = load_native_functions(d / "native_functions.yaml", tags_path=d / "tags.yaml")
    return parsed.backend_indices, grouped, ours


def _torchgen_error(text: str, indices: object, grouped: list[object]) -> str | None:
    from torchgen.gen_backend_stubs import parse_backend_yaml

    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as fp:
        fp.write(text)
    try:
        parse_backend_yaml(fp.name, grouped, collections.defaultdict(dict, indices))  # type: ignore[arg-type]
    except AssertionError as e:
        return str(e).replace(fp.name, "x.yaml")
    finally:
        os.unlink(fp.name)
    return None


# Where we say something else than torchgen, on purpose (docs/BACKENDS.md).
_DIFFERENT = {
    # torchgen lists extra_headers (which it rejects) and omits two keys it accepts.
    "unrecognized_key",
    # torchgen fails later, while emitting C++.
    "symint_without_symint_in_schema",
}


@pytest.mark.parametrize("name", [n for n in ERRORS if n not in _DIFFERENT])
def test_first_lines_match_torchgen(
    name: str, torchgen_native: tuple[object, list[object], ParsedNativeFunctions]
) -> None:
    indices, grouped, ours = torchgen_native
    text = ERRORS[name][0]
    theirs = _torchgen_error(text, indices, grouped)
    assert theirs is not None
    assert _errors(text, ours).startswith(theirs)


@pytest.mark.parametrize("name", list(VALID))
def test_valid_for_torchgen_too(
    name: str, torchgen_native: tuple[object, list[object], ParsedNativeFunctions]
) -> None:
    indices, grouped, ours = torchgen_native
    assert _torchgen_error(VALID[name], indices, grouped) is None
    _ok(VALID[name], ours)


def test_unrecognized_key_differs_from_torchgen_only_in_the_key_list(
    torchgen_native: tuple[object, list[object], ParsedNativeFunctions],
) -> None:
    indices, grouped, _ = torchgen_native
    theirs = _torchgen_error(ERRORS["unrecognized_key"][0], indices, grouped)
    assert theirs is not None
    prefix = "x.yaml contains unexpected keys: invalid_key. Only the following keys are supported: "
    assert theirs.startswith(prefix)
    assert "extra_headers" in theirs and "use_out_as_primary" not in theirs
    assert ERRORS["unrecognized_key"][1].startswith(prefix)


def test_ops_created_by_variant_generation_may_be_listed(
    torchgen_native: tuple[object, list[object], ParsedNativeFunctions],
) -> None:
    indices, grouped, ours = torchgen_native
    text = "backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- zero.out\n- abs"
    assert _torchgen_error(text, indices, grouped) is None
    _ok(text, ours)
