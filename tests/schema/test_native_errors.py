"""Golden tests: every native_functions.yaml rule we check, one bad input each, exact message.

Each row is (id, yaml text, the full error we print with file:line, whether torchgen's first
error line is the same message). Where it is, torchgen 2.13 runs on the same text as the
oracle. Rows marked False differ on purpose: a "did you mean" hint, a what-to-do clause, a
duplicate reported as such, or a plain wording for YAML-level problems.
"""

from __future__ import annotations

import os

import pytest
import torchgen
import torchgen.gen as tg
import yaml

from tensordispatch.schema.native import parse_native_functions
from tensordispatch.schema.native_yaml import NativeFunctionsError

TAGS = os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen", "native", "tags.yaml")

CASES: list[tuple[str, str, str, bool]] = [
    (
        "missing_func",
        "- variants: function\n",
        "t.yaml:1: Missed 'func' in {'variants': 'function'}",
        False,
    ),
    (
        "func_not_str",
        "- func: [a]\n",
        "t.yaml:1: not a str: ['a']",
        True,
    ),
    (
        "bad_schema",
        "- func: foo(Tensorr self) -> Tensor\n",
        "t.yaml:1: foo(Tensorr self) -> Tensor: invalid function schema 'foo(Tensorr self) -> Tensor' at column 5: unrecognized type Tensorr",
        False,
    ),
    (
        "namespace_levels",
        "- func: a::b::foo(Tensor self) -> Tensor\n",
        "t.yaml:1: Codegen doesn't support more than 1 level(s) of custom namespace. Got a::b.",
        True,
    ),
    (
        "cpp_no_default_args_not_list",
        "- func: foo(Tensor self, int x=1) -> Tensor\n  cpp_no_default_args: x\n",
        "t.yaml:1: foo: cpp_no_default_args is not a list: x",
        True,
    ),
    (
        "const_ref_not_bool",
        "- func: foo(Tensor self) -> Tensor\n  use_const_ref_for_mutable_tensors: 'yes'\n",
        "t.yaml:1: foo: use_const_ref_for_mutable_tensors is not a bool: yes",
        True,
    ),
    (
        "const_ref_on_out",
        "- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  use_const_ref_for_mutable_tensors: True\n",
        "t.yaml:1: foo.out: see https://github.com/pytorch/pytorch/issues/145522",
        True,
    ),
    (
        "variants_list",
        "- func: foo(Tensor self) -> Tensor\n  variants: [function]\n",
        "t.yaml:1: foo: variants is not a str: ['function']",
        True,
    ),
    (
        "variants_no_space",
        "- func: foo(Tensor self) -> Tensor\n  variants: function,method\n",
        "t.yaml:1: foo: illegal variant function,method",
        True,
    ),
    (
        "bool_as_string",
        "- func: foo(Tensor self) -> Tensor\n  manual_cpp_binding: 'False'\n",
        "t.yaml:1: foo: not a bool: False",
        True,
    ),
    (
        "device_check_value",
        "- func: foo(Tensor self) -> Tensor\n  device_check: Sometimes\n",
        "t.yaml:1: foo: illegal device_check: Sometimes",
        True,
    ),
    (
        "delegate_namespace",
        "- func: foo(Tensor self) -> Tensor\n  structured_delegate: aten::foo.out\n",
        "t.yaml:1: foo: namespace is not supported in structured delegate, using the same namespace as the native function",
        True,
    ),
    (
        "inherits_namespace",
        "- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n  structured_inherits: at::TensorIteratorBase\n  dispatch:\n    CPU: foo_out\n",
        "t.yaml:1: foo.out: namespace is not supported in structured inherits, using the same namespace as the native function",
        True,
    ),
    (
        "python_module_method",
        "- func: foo(Tensor self) -> Tensor\n  variants: method\n  python_module: nn\n",
        "t.yaml:1: foo: functions in modules cannot be methods",
        True,
    ),
    (
        "precomputed_unstructured",
        "- func: foo.out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)\n  precomputed:\n  - dim -> int dim\n  dispatch:\n    CPU: foo_out\n",
        "t.yaml:1: foo.out: precomputed requires structured=True, got structured=False",
        True,
    ),
    (
        "tags_not_list",
        "- func: foo(Tensor self) -> Tensor\n  tags: {core: 1}\n",
        "t.yaml:1: foo: tags is not a list: {'core': 1}",
        False,
    ),
    (
        "illegal_tag",
        "- func: foo(Tensor self) -> Tensor\n  tags: [cor]\n",
        "t.yaml:1: foo: illegal tag cor (did you mean 'core'?)",
        False,
    ),
    (
        "dispatch_not_dict",
        "- func: foo(Tensor self) -> Tensor\n  dispatch: foo\n",
        "t.yaml:1: foo: dispatch is not a dict: foo",
        False,
    ),
    (
        "unknown_dispatch_key",
        "- func: foo(Tensor self) -> Tensor\n  dispatch:\n    CPU, Cuda: foo\n",
        "t.yaml:1: foo: unknown dispatch key Cuda",
        True,
    ),
    (
        "unsupported_dispatch_key",
        "- func: foo(Tensor self) -> Tensor\n  dispatch:\n    XLA: foo_xla\n",
        "t.yaml:1: foo: Dispatch key XLA of kernel foo_xla is not a supported dispatch key.",
        True,
    ),
    (
        "manual_registration_and_dispatch",
        "- func: foo(Tensor self) -> Tensor\n  manual_kernel_registration: True\n  dispatch:\n    CPU: foo\n",
        "t.yaml:1: foo: cannot specify both manual_kernel_registration and dispatch; with manual registration, dispatch has no effect!",
        True,
    ),
    (
        "unnecessary_dispatch",
        "- func: foo(Tensor self) -> Tensor\n  dispatch:\n    CompositeImplicitAutograd: foo\n",
        "t.yaml:1: foo: unnecessary dispatch table for this function; just delete the dispatch key entirely",
        True,
    ),
    (
        "unexpected_singleton_cia_name",
        "- func: foo(Tensor self) -> Tensor\n  dispatch:\n    CompositeImplicitAutograd: bar\n",
        "t.yaml:1: foo: unexpected name for singleton CompositeImplicitAutograd dispatch entry: expected foo but got BackendMetadata(kernel='bar', structured=False, cpp_namespace='at::native').  Rename your implementation to the expected name, then delete the dispatch table",
        True,
    ),
    (
        "factory_without_dispatch",
        "- func: new_foo(Tensor self) -> Tensor\n",
        "t.yaml:1: new_foo: expected new_foo to have a CompositeExplicitAutograd dispatch entry, but there was no dispatch table.  Factory functions should not have implicit dispatch as they should not be decomposed for __torch_dispatch__",
        True,
    ),
    (
        "two_composites",
        "- func: foo(Tensor self) -> Tensor\n  dispatch:\n    CompositeExplicitAutograd: foo\n    CompositeImplicitAutograd: foo_impl\n",
        "t.yaml:1: foo: cannot specify more than one of CompositeExplicitAutograd, CompositeExplicitAutogradNonFunctional, or CompositeImplicitAutograd on a single kernel; each strictly subsumes the other.  If you wanted to provide an explicit autograd implementation, specify CompositeExplicitAutograd; otherwise specify CompositeImplicitAutograd only",
        True,
    ),
    (
        "autogen_not_str",
        "- func: foo(Tensor self) -> Tensor\n  autogen: [foo.out]\n  dispatch:\n    CPU: foo\n",
        "t.yaml:1: foo: autogen is not a str: ['foo.out']",
        True,
    ),
    (
        "ufunc_unstructured",
        "- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  ufunc_inner_loop:\n    Generic: foo (AllAndComplex)\n",
        "t.yaml:1: foo.out: ufunc must be structured",
        True,
    ),
    (
        "ufunc_explicit_cpu",
        "- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n  ufunc_inner_loop:\n    Generic: foo (AllAndComplex)\n  dispatch:\n    CPU: foo_out\n",
        "t.yaml:1: foo.out: ufunc should not have explicit dispatch entry for CPU",
        True,
    ),
    (
        "ufunc_unknown_key",
        "- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n  ufunc_inner_loop:\n    Vector: foo (Float)\n",
        "t.yaml:1: foo.out: unknown ufunc key Vector",
        True,
    ),
    (
        "ufunc_unknown_dtype",
        "- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n  ufunc_inner_loop: foo (Float, Quad)\n",
        "t.yaml:1: foo.out: unknown dtype Quad",
        True,
    ),
    (
        "unknown_key",
        "- func: foo(Tensor self) -> Tensor\n  structred: True\n",
        "t.yaml:1: foo: leftover entries: {'structred': True} ('structred' -> did you mean 'structured'?)",
        False,
    ),
    (
        "delegate_with_cpu_kernel",
        "- func: foo(Tensor self) -> Tensor\n  structured_delegate: foo.out\n  dispatch:\n    CPU: foo_cpu\n",
        "t.yaml:1: foo: if structured_delegate, then must not have CPU in dispatch dictionary (it is delegated!)",
        True,
    ),
    (
        "out_with_method",
        "- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  variants: function, method\n",
        "t.yaml:1: foo.out: Native functions with out arguments MUST be declared with only function variant; e.g., variants: function; otherwise you will tickle a Python argument binding bug (which usually manifests itself as the result variable being undefined.)",
        True,
    ),
    (
        "structured_not_out",
        "- func: foo(Tensor self) -> Tensor\n  structured: True\n  dispatch:\n    CPU: foo\n",
        "t.yaml:1: foo: Put structured field on the out= variant of a function; did you mean structured_delegate?",
        True,
    ),
    (
        "delegate_on_out",
        "- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured_delegate: foo.out2\n",
        "t.yaml:1: foo.out: structured_delegate field not allowed on out= functions; did you mean structured?",
        True,
    ),
    (
        "structured_device_guard",
        "- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n  device_guard: False\n  dispatch:\n    CPU: foo_out\n",
        "t.yaml:1: foo.out: device_guard: False is not respected by structured kernels",
        True,
    ),
    (
        "invalid_cpp_no_default_args",
        "- func: foo(Tensor self, int x) -> Tensor\n  cpp_no_default_args: ['x']\n",
        "t.yaml:1: foo: Invalid cpp_no_default_args: {'x'}",
        True,
    ),
    (
        "inherits_without_structured",
        "- func: foo(Tensor self) -> Tensor\n  structured_inherits: TensorIteratorBase\n",
        "t.yaml:1: foo: structured_inherits must also imply structured: True",
        True,
    ),
    (
        "foreach_device_check",
        "- func: _foreach_foo(Tensor[] self) -> Tensor[]\n  dispatch:\n    CPU: foo\n",
        "t.yaml:1: _foreach_foo: foreach kernels fall back to slow path when tensor are on different devices, device_check not allowed to be enabled",
        True,
    ),
    (
        "random_without_tag",
        "- func: myrand(int n) -> Tensor\n  dispatch:\n    CPU: myrand\n",
        "t.yaml:1: myrand: nondeterministic_seeded tag missing for myrand",
        True,
    ),
    (
        "generator_without_tag",
        "- func: foo(Tensor self, *, Generator? generator=None) -> Tensor\n",
        "t.yaml:1: foo: nondeterministic_seeded tag missing for foo",
        True,
    ),
    (
        "delegate_missing",
        "- func: foo(Tensor self) -> Tensor\n  structured_delegate: foo.out\n",
        "t.yaml:1: foo: foo is marked as a structured_delegate pointing to foo.out, but foo.out is missing.",
        True,
    ),
    (
        "delegate_not_structured",
        "- func: foo(Tensor self) -> Tensor\n  structured_delegate: foo.out\n- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n    CPU: foo_out\n",
        "t.yaml:1: foo: foo is marked as a structured_delegate pointing to foo.out, but foo.out is not marked as structured. Consider adding 'structured=True' to the delegated operator",
        True,
    ),
    (
        "python_keyword",
        "- func: foo(Tensor self, int lambda) -> Tensor\n",
        "t.yaml:1: foo: Argument name 'lambda' in function 'foo' is a reserved Python keyword.",
        True,
    ),
    (
        "inplace_view_name",
        "- func: foo(Tensor(a) self) -> Tensor(a)\n  tags: inplace_view\n  dispatch:\n    CPU: foo\n",
        "t.yaml:1: foo: foo is marked with tag: inplace_view, but it doesn't follow the naming convention for inplace ops - the codegen expects the base name to have a trailing underscore.",
        True,
    ),
    (
        "inplace_view_without_base",
        "- func: foo_(Tensor(a!) self) -> Tensor(a!)\n  tags: inplace_view\n  dispatch:\n    CPU: foo_\n",
        "t.yaml:1: foo_: foo_ is marked with tag: inplace_view. The codegen expects there to be a corresponding out-of-place view op with the name 'foo_' and matching schema, but it didn't find one.",
        True,
    ),
    (
        "duplicate_operator",
        "- func: foo(Tensor self) -> Tensor\n- func: foo(Tensor self, int x) -> Tensor\n",
        "t.yaml:2: foo: duplicate operator foo: it is already declared at t.yaml:1; give one of them another overload name",
        False,
    ),
    (
        "duplicate_kind",
        "- func: foo.a(Tensor self) -> Tensor\n  dispatch:\n    CPU: foo_a\n- func: foo.b(Tensor self) -> Tensor\n  dispatch:\n    CPU: foo_b\n",
        "t.yaml:4: foo.b: Duplicate schema kind SchemaKind.functional for foo.b(Tensor self) -> Tensor",
        True,
    ),
    (
        "lonely_out",
        "- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n    CPU: foo_out\n",
        "t.yaml:1: foo.out: Found an out= operator that we could not find any other variants of: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!); add its functional variant to the yaml",
        False,
    ),
    (
        "no_out_possible",
        "- func: foo(Tensor self) -> int\n  dispatch:\n    CPU: foo\n",
        "t.yaml:1: foo: Found an operator that we could not generate an out= variant for: foo(Tensor self) -> int. This type of operators don't have tensor-like return, making it difficult to generate a proper out= variant; give it a tensor-like return, or implement it as CompositeImplicitAutograd (composite operators get no generated variants)",
        False,
    ),
    (
        "mixed_structured_group",
        "- func: foo(Tensor self) -> Tensor\n  dispatch:\n    CPU: foo\n- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n  dispatch:\n    CPU: foo_out\n",
        "t.yaml:1: foo: NativeFunctionsGroup constructed from structured and unstructured functions: foo.out and foo",
        True,
    ),
    (
        "delegates_elsewhere",
        "- func: foo(Tensor self) -> Tensor\n  structured_delegate: bar.out\n- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n  dispatch:\n    CPU: foo_out\n- func: bar(Tensor self, int x) -> Tensor\n  structured_delegate: bar.out\n- func: bar.out(Tensor self, int x, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n  dispatch:\n    CPU: bar_out\n",
        "t.yaml:1: foo: foo delegates to bar.out but its actual delegate is foo.out",
        True,
    ),
    (
        "structured_composite",
        "- func: foo(Tensor self) -> Tensor\n  structured_delegate: foo.out\n- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n  dispatch:\n    CompositeImplicitAutograd: foo_out_impl\n    Meta: foo_meta\n",
        "t.yaml:3: foo.out: structured composite kernels are not supported",
        True,
    ),
    (
        "autogen_missing",
        "- func: foo_(Tensor(a!) self) -> Tensor(a!)\n  dispatch:\n    CPU: foo_\n- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n    CPU: foo_out\n",
        "t.yaml:4: foo.out: The codegen expects to be able to generate 'foo'. In order to generate them however, we expect them to be called out explicitly in the yaml. Please add an 'autogen: foo' line to the entry for foo_",
        True,
    ),
    (
        "autogen_mismatch",
        "- func: foo(Tensor self) -> Tensor\n  autogen: foo.out2\n  dispatch:\n    CPU: foo\n",
        "t.yaml:1: foo: The codegen expects to be able to generate 'foo.out'. To do so, it expects a line: 'autogen: foo.out'. Instead, it found 'autogen: foo.out2'",
        True,
    ),
    (
        "view_without_copy",
        "- func: myview(Tensor(a) self) -> Tensor(a)\n  dispatch:\n    CPU: myview\n",
        "t.yaml:1: myview: myview appears to be a new operator that aliases its inputs. The codegen expects you to add a corresponding operator to native_functions.yaml: myview_copy. See Note [view_copy NativeFunctions] for details.",
        True,
    ),
    (
        "copy_without_tag",
        "- func: myview(Tensor(a) self) -> Tensor(a)\n  dispatch:\n    CPU: myview\n- func: myview_copy(Tensor self) -> Tensor\n  dispatch:\n    CompositeExplicitAutograd: myview_copy\n",
        "t.yaml:4: myview_copy: ('myview_copy', \"{'pt2_compliant_tag'}\") appears to be a view_copy operator. The codegen expects view_copy operators to be annotated with the 'view_copy' tag in native_functions.yaml. See Note [view_copy NativeFunction] for details.",
        True,
    ),
    (
        "same_view_signature",
        "- func: foo(Tensor self) -> Tensor\n  dispatch:\n    CPU: foo\n- func: foo_copy(Tensor self) -> Tensor\n  dispatch:\n    CPU: foo_copy\n",
        "t.yaml:4: foo_copy: foo_copy and foo (line 1) have the same view_signature() and are both SchemaKind.functional; only a view operator and its `_copy` operator may share one, so rename one of them",
        False,
    ),
    (
        "precomputed_all_caps",
        "- func: foo.out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n  precomputed:\n  - dim -> int DIM\n  dispatch:\n    CPU: foo_out\n",
        "t.yaml:1: foo.out: precomputed argument name must not be all uppercase: DIM",
        True,
    ),
    (
        "precomputed_addition_not_last",
        "- func: foo.out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n  precomputed:\n  - int extra\n  - dim -> int dim\n  dispatch:\n    CPU: foo_out\n",
        "t.yaml:1: foo.out: precomputed parameters without replacement are allowed only in the last line, got: int extra",
        True,
    ),
    (
        "ufunc_without_dtypes",
        "- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n  ufunc_inner_loop: add Float\n",
        "t.yaml:1: foo.out: expected '(' at start of supported_dtypes, got: Float",
        True,
    ),
    (
        "duplicate_dispatch_key",
        "- func: foo(Tensor self) -> Tensor\n  dispatch:\n    CPU: foo\n    CUDA: foo_cuda\n    CPU: foo_cpu\n",
        "t.yaml:5: foo: duplicate key 'CPU' in one mapping; keep only one of them",
        False,
    ),
    (
        "python_object_tag",
        "- func: foo(Tensor self) -> Tensor\n  dispatch: !!python/object/apply:os.system ['true']\n",
        "t.yaml:2: foo: YAML tag 'tag:yaml.org,2002:python/object/apply:os.system' is not allowed: native_functions.yaml is read with a safe loader that builds only lists, mappings, strings, numbers and booleans, never Python objects; remove the tag",
        False,
    ),
    (
        "yaml_syntax",
        "- func: foo(Tensor self) -> Tensor\n  variants: function: method\n",
        "t.yaml:2: invalid YAML: mapping values are not allowed in this context",
        False,
    ),
    (
        "not_a_list",
        "func: foo(Tensor self) -> Tensor\n",
        "t.yaml:1: expected a YAML list of operator entries (`- func: ...`), got a mapping; start each entry with `- func:`",
        False,
    ),
    (
        "entry_not_mapping",
        "- foo(Tensor self) -> Tensor\n",
        "t.yaml:1: expected a mapping with a `func:` key, got a scalar",
        False,
    ),
    (
        "duplicate_yaml_key",
        "- func: foo(Tensor self) -> Tensor\n  variants: function\n  variants: method\n",
        "t.yaml:3: foo: duplicate key 'variants' in one mapping; keep only one of them",
        False,
    ),
]


def _our_error(text: str) -> NativeFunctionsError:
    with pytest.raises(NativeFunctionsError) as info:
        parse_native_functions(text, "t.yaml")
    return info.value


@pytest.mark.parametrize(
    ("text", "expected"), [(c[1], c[2]) for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_yaml_reports_golden_error(text: str, expected: str) -> None:
    assert str(_our_error(text)) == expected


def _torchgen_error(text: str) -> str:
    tg._GLOBAL_PARSE_NATIVE_YAML_CACHE.clear()
    try:
        entries = yaml.load(text, Loader=tg.LineLoader)
        parsed = tg.parse_native_yaml_struct(entries, tg.parse_tags_yaml(TAGS), path="t.yaml")
        tg.get_grouped_native_functions(parsed.native_functions)
        tg.get_grouped_by_view_native_functions(parsed.native_functions)
    except (AssertionError, RuntimeError, yaml.YAMLError) as e:
        return str(e).splitlines()[0]
    return "no error"


SAME = [c for c in CASES if c[3]]


@pytest.mark.parametrize("text", [c[1] for c in SAME], ids=[c[0] for c in SAME])
def test_message_matches_torchgen(text: str) -> None:
    (issue,) = _our_error(text).issues
    assert issue.message == _torchgen_error(text)


def test_every_bad_entry_is_reported_in_line_order() -> None:
    text = """\
- func: foo(Tensor self) -> Tensor
  variants: functio
- func: ok(Tensor self) -> Tensor
- func: bar(Tensor self) -> Tensor
  dispatch:
    XLA: bar
- func: baz(Tensor self) -> Tensor
  structred: True
"""
    err = _our_error(text)
    assert [(i.line, i.subject) for i in err.issues] == [(1, "foo"), (4, "bar"), (7, "baz")]


def test_unsafe_tags_are_reported_for_every_entry() -> None:
    text = """\
- func: a(Tensor self) -> Tensor
  tags: !!python/name:os.system
- func: b(Tensor self) -> Tensor
- func: c(Tensor self) -> Tensor
  dispatch: !!python/object:object {}
"""
    assert [i.line for i in _our_error(text).issues] == [2, 5]


def test_empty_valid_tag_set_rejects_any_tag() -> None:
    with pytest.raises(NativeFunctionsError) as info:
        parse_native_functions(
            "- func: foo(Tensor self) -> Tensor\n  tags: core\n", "t.yaml", valid_tags=()
        )
    assert str(info.value) == "t.yaml:1: foo: valid_tags is empty"


def test_error_is_a_value_error() -> None:
    assert isinstance(_our_error("- func: [a]\n"), ValueError)
