"""Rebuild src/tensordispatch/ops/native_functions.yaml from torch 2.13's file (a developer tool,
not part of the package: it reads torchgen's packaged yaml, so it needs torch installed).

SPEC lists, in output order, each operator we declare and the `dispatch:` we give it
(None: drop ATen's dispatch; "keep": keep ATen's; a dict: ours). Entries are copied
verbatim otherwise (func, structured*, variants, autogen, tags); ufunc_inner_loop and
comments inside entries are dropped. Usage:

    python docs/codegen/select_aten_entries.py src/tensordispatch/ops/native_functions.yaml

tests/codegen/test_yaml_matches_aten.py checks the result field by field against ATen.
"""

# ruff: noqa
import sys, re, torchgen, os
Y = os.path.dirname(torchgen.__file__) + "/packaged/ATen/native/native_functions.yaml"
text = open(Y).read()
chunks = text.split('\n- func: ')
by = {}
for c in chunks[1:]:
    body = '- func: ' + c
    # cut trailing top-level comments / blank lines
    lines = body.split('\n')
    keep = []
    for ln in lines:
        if ln.startswith('#'):
            continue  # top-level comments may sit between an entry's fields
        if ln and not ln.startswith(' ') and not ln.startswith('- func'):
            break
        keep.append(ln)
    while keep and not keep[-1].strip():
        keep.pop()
    by[body.split('(')[0][len('- func: '):]] = keep

D = None  # remove dispatch
# (op name, new dispatch dict or None)
SPEC = [
 ("# Factories (BackendSelect picks the backend from dtype/layout/device)", None),
 ("empty.memory_format", {"CPU": "empty_cpu", "Meta": "empty_meta"}),
 ("empty_strided", {"CPU": "empty_strided_cpu", "Meta": "empty_strided_meta"}),
 ("zeros", {"CompositeExplicitAutograd": "zeros"}),
 ("zeros.out", {"CompositeExplicitAutograd": "zeros_out"}),
 ("ones", {"CompositeExplicitAutograd": "ones"}),
 ("ones.out", {"CompositeExplicitAutograd": "ones_out"}),
 ("full", {"CompositeExplicitAutograd": "full"}),
 ("full.out", {"CompositeExplicitAutograd": "full_out"}),
 ("empty_like", {"CompositeExplicitAutograd": "empty_like"}),
 ("zeros_like", {"CompositeExplicitAutograd": "zeros_like"}),
 ("ones_like", {"CompositeExplicitAutograd": "ones_like"}),
 ("fill.Scalar", {"CompositeExplicitAutograd": "fill_Scalar"}),
 ("fill_.Scalar", {"CPU": "fill_", "Meta": "fill_meta_"}),
 ("# Binary pointwise (structured: one meta function per group, one CPU impl)", None),
 ("add.Tensor", D), ("add_.Tensor", D), ("add.out", {"CPU": "add_out"}),
 ("add.Scalar", {"CompositeExplicitAutograd": "add_Scalar"}),
 ("add_.Scalar", {"CompositeExplicitAutograd": "add__Scalar"}),
 ("sub.Tensor", D), ("sub_.Tensor", D), ("sub.out", {"CPU": "sub_out"}),
 ("sub.Scalar", {"CompositeExplicitAutograd": "sub_Scalar"}),
 ("sub_.Scalar", {"CompositeExplicitAutograd": "sub__Scalar"}),
 ("rsub.Tensor", {"CompositeExplicitAutograd": "rsub_Tensor"}),
 ("rsub.Scalar", {"CompositeExplicitAutograd": "rsub_Scalar"}),
 ("mul.Tensor", D), ("mul_.Tensor", D), ("mul.out", {"CPU": "mul_out"}),
 ("mul.Scalar", {"CompositeExplicitAutograd": "mul_Scalar"}),
 ("mul_.Scalar", {"CompositeExplicitAutograd": "mul__Scalar"}),
 ("div.Tensor", D), ("div_.Tensor", D), ("div.out", {"CPU": "div_out"}),
 ("div.Tensor_mode", D), ("div_.Tensor_mode", D), ("div.out_mode", {"CPU": "div_out_mode"}),
 ("div.Scalar", {"CompositeExplicitAutograd": "div_Scalar"}),
 ("div_.Scalar", {"CompositeExplicitAutograd": "div__Scalar"}),
 ("div.Scalar_mode", {"CompositeExplicitAutograd": "div_Scalar_mode"}),
 ("div_.Scalar_mode", {"CompositeExplicitAutograd": "div__Scalar_mode"}),
 ("# Unary pointwise", None),
 ("abs", {"CompositeExplicitAutograd": "abs"}),
 ("abs_", {"CompositeExplicitAutograd": "abs_"}),
 ("abs.out", {"CPU": "abs_out", "Meta": "abs_out_meta"}),
 ("neg", D), ("neg_", D), ("neg.out", {"CPU": "neg_out"}),
 ("exp", D), ("exp_", D), ("exp.out", {"CPU": "exp_out"}),
 ("sin", D), ("sin_", D), ("sin.out", {"CPU": "sin_out"}),
 ("cos", D), ("cos_", D), ("cos.out", {"CPU": "cos_out"}),
 ("sqrt", D), ("sqrt_", D), ("sqrt.out", {"CPU": "sqrt_out"}),
 ("# Comparisons", None),
 ("eq.Scalar_out", {"CPU": "eq_Scalar_out"}), ("eq.Scalar", D),
 ("eq.Tensor_out", {"CPU": "eq_Tensor_out"}), ("eq.Tensor", D),
 ("eq_.Scalar", D), ("eq_.Tensor", D),
 ("ne.Scalar_out", {"CPU": "ne_Scalar_out"}), ("ne.Scalar", D),
 ("ne.Tensor_out", {"CPU": "ne_Tensor_out"}), ("ne.Tensor", D),
 ("ne_.Scalar", D), ("ne_.Tensor", D),
 ("lt.Scalar_out", {"CPU": "lt_Scalar_out"}), ("lt.Scalar", D),
 ("lt.Tensor_out", {"CPU": "lt_Tensor_out"}), ("lt.Tensor", D),
 ("lt_.Scalar", D), ("lt_.Tensor", D),
 ("le.Scalar_out", {"CPU": "le_Scalar_out"}), ("le.Scalar", D),
 ("le.Tensor_out", {"CPU": "le_Tensor_out"}), ("le.Tensor", D),
 ("le_.Scalar", D), ("le_.Tensor", D),
 ("gt.Scalar_out", {"CPU": "gt_Scalar_out"}), ("gt.Scalar", D),
 ("gt.Tensor_out", {"CPU": "gt_Tensor_out"}), ("gt.Tensor", D),
 ("gt_.Scalar", D), ("gt_.Tensor", D),
 ("ge.Scalar_out", {"CPU": "ge_Scalar_out"}), ("ge.Scalar", D),
 ("ge.Tensor_out", {"CPU": "ge_Tensor_out"}), ("ge.Tensor", D),
 ("ge_.Scalar", D), ("ge_.Tensor", D),
 ("# Copies", None),
 ("clone", {"CompositeExplicitAutograd": "clone"}),
 ("copy", {"Meta": "copy_meta", "CompositeExplicitAutogradNonFunctional": "copy"}),
 ("copy_", {"CPU": "copy_", "Meta": "copy_meta_"}),
 ("# Views (device-generic: they only compute metadata) and their view_copy twins", None),
 ("view", {"CPU, Meta": "view"}),
 ("view_copy", "keep"),
 ("reshape", D),
 ("transpose.int", {"CompositeExplicitAutograd": "transpose"}),
 ("transpose_copy.int", "keep"),
 ("t", {"CompositeExplicitAutograd": "t"}),
 ("t_copy", "keep"),
 ("unsqueeze", {"CompositeExplicitAutograd": "unsqueeze"}),
 ("unsqueeze_copy", "keep"),
 ("squeeze.dim", {"CompositeExplicitAutograd": "squeeze_dim"}),
 ("squeeze_copy.dim", {"CompositeExplicitAutogradNonFunctional": "squeeze_copy_dim"}),
 ("select.int", {"CompositeExplicitAutograd": "select"}),
 ("select_copy.int", {"CompositeExplicitAutogradNonFunctional": "select_copy_symint"}),
 ("slice.Tensor", {"CompositeExplicitAutograd": "slice"}),
 ("slice_copy.Tensor", "keep"),
 ("expand", {"CompositeExplicitAutograd": "expand"}),
 ("expand_copy", "keep"),
 ("# Reductions", None),
 ("sum", {"CompositeExplicitAutograd": "sum"}),
 ("sum.dim_IntList", D), ("sum.IntList_out", {"CPU": "sum_out"}),
 ("mean", {"CompositeExplicitAutograd": "mean"}),
 ("mean.dim", D), ("mean.out", {"CPU": "mean_out"}),
 ("aminmax", D), ("aminmax.out", {"CPU": "aminmax_out"}),
 ("# Linear algebra", None),
 ("mm", D), ("mm.out", {"CPU": "mm_out"}),
 ("bmm", D), ("bmm.out", {"CPU": "bmm_out"}),
 ("addmm", D), ("addmm.out", {"CPU": "addmm_out"}), ("addmm_", D),
 ("dot", {"CPU": "dot", "Meta": "dot_meta"}),
 ("dot.out", {"CompositeExplicitAutograd": "dot_out"}),
 ("mv", {"CompositeExplicitAutograd": "mv"}),
 ("mv.out", {"CompositeExplicitAutograd": "mv_out"}),
 ("matmul", D),
 ("matmul.out", D),
]

out = ["# The operators tensordispatch implements, in the native_functions.yaml format of torch 2.13.",
       "# Every `func:` line is byte-identical to torch 2.13's aten/src/ATen/native/native_functions.yaml",
       "# (so ops.aten.X.Y lines up with torch.ops.aten.X.Y), as are structured, structured_delegate,",
       "# variants, autogen and tags. `dispatch:` lists the keys WE implement with OUR kernel names",
       "# (tables in backends/cpu, backends/meta, backends/composite.py, ops/decompositions.py); ATen's",
       "# other keys and ufunc_inner_loop are dropped. Validate with `tensordispatch schema check`;",
       "# regenerate the Python with `tensordispatch codegen` (docs/CODEGEN.md).",
       ""]
for name, disp in SPEC:
    if name.startswith("#"):
        out.append(name); out.append(""); continue
    lines = by[name]
    res = []
    i = 0
    while i < len(lines):
        ln = lines[i]
        s = ln.strip()
        if ln.startswith("  ") and not ln.startswith("    ") and (s.startswith("dispatch:") or s.startswith("ufunc_inner_loop:")):
            j = i + 1
            while j < len(lines) and (lines[j].startswith("    ") or (lines[j].strip().startswith("#") and not lines[j].startswith("  #"))):
                j += 1
            if s.startswith("dispatch:") and disp == "keep":
                res.extend(lines[i:j])
            elif s.startswith("dispatch:") and disp:
                res.append("  dispatch:")
                for k, v in disp.items():
                    res.append(f"    {k}: {v}")
            i = j
            continue
        if ln.strip().startswith("#") and ln.startswith("  "):
            i += 1; continue  # drop ATen comments inside entries
        res.append(ln)
        i += 1
    if disp not in (None, "keep") and not any(l.strip() == "dispatch:" for l in res):
        res.insert(1, "  dispatch:")
        for n, (k, v) in enumerate(disp.items()):
            res.insert(2 + n, f"    {k}: {v}")
    out.extend(res); out.append("")
open(sys.argv[1], "w").write("\n".join(out))
