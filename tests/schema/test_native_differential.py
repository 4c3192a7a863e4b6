"""Small valid files that exercise one feature each: same model as torchgen's, field by field."""

from __future__ import annotations

import os
from typing import Any

import pytest
import torchgen.gen as tg
import yaml

from tensordispatch.schema.native import parse_native_functions

TAGS = os.path.join(os.path.dirname(tg.__file__), "packaged", "ATen", "native", "tags.yaml")

FILES: dict[str, str] = {
    "custom_namespace": """\
- func: myns::foo(Tensor self) -> Tensor
  dispatch:
    CPU: foo_cpu
    CompositeExplicitAutograd: foo
""",
    "kernel_namespaces": """\
- func: foo(Tensor self) -> Tensor
  dispatch:
    CPU: custom::foo_cpu
    CUDA: a::b::foo_cuda
    Meta: foo_meta
""",
    "ufunc_string_form": """\
- func: foo(Tensor self, Tensor other) -> Tensor
  structured_delegate: foo.out
- func: foo.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  structured_inherits: TensorIteratorBase
  ufunc_inner_loop: foo (AllAndComplex, BFloat16)
""",
    "precomputed_with_addition": """\
- func: foo(Tensor self, int dim) -> Tensor
  structured_delegate: foo.out
- func: foo.out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  precomputed:
  - dim -> int dim, bool keep
  - int extra, bool flag
  dispatch:
    CPU: foo_out
""",
    "mutable_op_autogen": """\
- func: foo(Tensor self, Tensor(a!) running, float m) -> (Tensor out, Tensor stat)
  autogen: foo_functional, foo.out
  dispatch:
    CPU: foo_cpu
""",
    "factory_autogen_out": """\
- func: foo(int n, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
  autogen: foo.out
  dispatch:
    CompositeExplicitAutograd: foo
""",
    "inplace_autogen": """\
- func: foo_(Tensor(a!) self, Scalar s) -> Tensor(a!)
  variants: method
  autogen: foo, foo.out
  dispatch:
    CPU: foo_
""",
    "view_and_copy": """\
- func: foo(Tensor(a) self, SymInt n) -> Tensor(a)
  variants: function, method
  dispatch:
    CPU, Meta: foo
- func: foo_copy(Tensor self, SymInt n) -> Tensor
  tags: view_copy
  autogen: foo_copy.out
  dispatch:
    CompositeExplicitAutogradNonFunctional: foo_copy
""",
    "misc_keys": """\
- func: foo(Tensor self, int x=0, *, bool flag=False) -> Tensor
  python_module: nn
  category_override: dummy
  cpp_no_default_args: ['x']
  device_guard: False
  device_check: NoCheck
  manual_cpp_binding: True
  tags: [core, pointwise]
  dispatch: {}
- func: bar(Tensor self) -> Tensor
  dispatch:
    CompositeImplicitAutograd: bar
    CompositeImplicitAutogradNestedTensor: bar_nested
- func: baz(Tensor self) -> Tensor
  tags: core
  use_const_ref_for_mutable_tensors: True
""",
}


def _facts(f: Any) -> tuple[object, ...]:
    loops = f.ufunc_inner_loop
    loops = loops.values() if isinstance(loops, dict) else loops
    pre = f.precomputed
    return (
        f.namespace, str(f.func), f.loc.line, f.device_guard, f.device_check.name,
        f.python_module, f.category_override, sorted(v.name for v in f.variants),
        f.manual_kernel_registration, f.manual_cpp_binding, [str(x) for x in f.autogen],
        sorted((x.ufunc_key.name, x.name, sorted(str(d) for d in x.supported_dtypes)) for x in loops),
        f.structured, str(f.structured_delegate), f.structured_inherits,
        None if pre is None else (pre.to_list(), [str(a) for a in pre.add]),
        sorted(f.cpp_no_default_args), f.is_abstract, f.has_composite_implicit_autograd_kernel,
        f.has_composite_implicit_autograd_nested_tensor_kernel,
        f.has_composite_explicit_autograd_kernel,
        f.has_composite_explicit_autograd_non_functional_kernel, sorted(f.tags),
        f.use_const_ref_for_mutable_tensors, f.is_view_op,
    )  # fmt: skip


def _indices(indices: Any) -> dict[str, object]:
    return {
        str(k): (
            i.device_guard,
            {str(op): (m.kernel, m.structured, m.cpp_namespace) for op, m in i.index.items()},
        )
        for k, i in indices.items()
    }


def _groups(grouped: Any) -> list[object]:
    return [
        [str(f.func) for f in g.functions()] if hasattr(g, "functions") else str(g.func)
        for g in grouped
    ]


@pytest.mark.parametrize("text", list(FILES.values()), ids=list(FILES))
def test_small_file_models_like_torchgen(text: str) -> None:
    ours = parse_native_functions(text, "t.yaml")
    tg._GLOBAL_PARSE_NATIVE_YAML_CACHE.clear()
    entries = yaml.load(text, Loader=tg.LineLoader)
    theirs = tg.parse_native_yaml_struct(entries, tg.parse_tags_yaml(TAGS), path="t.yaml")
    assert [_facts(f) for f in ours.native_functions] == [
        _facts(f) for f in theirs.native_functions
    ]
    assert _indices(ours.backend_indices) == _indices(theirs.backend_indices)
    funcs = theirs.native_functions
    assert _groups(ours.grouped) == _groups(tg.get_grouped_native_functions(funcs))
    assert _groups(ours.view_grouped) == _groups(tg.get_grouped_by_view_native_functions(funcs))
