"""gen_registrations: only the ``_copy`` member of a view group gets a generated clone(view)
kernel; an op merely tagged ``view_copy`` (ATen tags slice_scatter so) keeps its yaml kernel."""

from __future__ import annotations

import pathlib

from tensordispatch.codegen.gen_registrations import emit_registrations
from tensordispatch.schema.native import load_native_functions

SLICE_SCATTER = """\
- func: slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor
  variants: function, method
  dispatch:
    CompositeExplicitAutogradNonFunctional: slice_scatter
  tags: [core, view_copy]
"""


def test_view_copy_tag_without_view_group_uses_the_yaml_kernel(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "vc.yaml"
    path.write_text(SLICE_SCATTER)
    text = emit_registrations(load_native_functions(path), "vc.yaml")
    lines = text.splitlines()
    at = [n for n, line in enumerate(lines, 1) if ".impl('slice_scatter'" in line]
    kernel = "_k_CompositeExplicitAutogradNonFunctional_slice_scatter"
    assert [lines[n - 1].strip() for n in at] == [
        (
            f"_lib['aten:CompositeExplicitAutogradNonFunctional'].impl('slice_scatter', {kernel}, "
            f"debug=_SITE + '{at[0]}')"
        )
    ]
    assert (
        f"\n{kernel} = _kernel(_CEA, 'tensordispatch.backends.composite:COMPOSITE_KERNELS', "
        "'slice_scatter', 'CompositeExplicitAutogradNonFunctional', 'vc.yaml:1')\n"
    ) in text
    assert "def generated_slice_scatter" not in text


def test_view_group_copy_still_gets_a_generated_kernel() -> None:
    text = emit_registrations(load_native_functions(), "ops/native_functions.yaml")
    assert "def generated_transpose_copy_int(" in text
