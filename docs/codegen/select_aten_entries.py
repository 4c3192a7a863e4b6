"""Rebuild src/tensordispatch/ops/native_functions.yaml from torch 2.13's file (a developer tool,
not part of the package: it reads torchgen's packaged yaml, so it needs torch installed).

SPEC (aten_spec.py, next to this script) lists, in output order, each operator we declare and the `dispatch:` we give it
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

from aten_spec import SPEC  # the operator list (data), in its own module

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
