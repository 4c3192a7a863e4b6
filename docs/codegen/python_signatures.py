"""Rebuild src/tensordispatch/ops/python_signatures.py: torch 2.13's visible Python signatures
of every bound name that has several (a developer tool: it runs torch). For each Python
function and Tensor method the library binds, it calls torch's binding with no argument, then
with seven objects, which match no signature, and keeps the list torch's "expected one of"
names; a name whose
one visible signature hides others (torch then says "but expected (<signature>)") goes to
the second table. Usage:

    python docs/codegen/python_signatures.py src/tensordispatch/ops/python_signatures.py
"""

# ruff: noqa
import sys

import torch

from tensordispatch.generated import functions, methods

SKIP = {"H", "T", "mT", "mH", "real", "imag", "data"}


def attempt(target, count):
    try:
        target(*[object()] * count)
    except TypeError as e:
        text = str(e)
        if "received an invalid combination" in text and "but expected (" in text:
            return (text.split("but expected (", 1)[1][:-1], None)
        return tuple(l[4:-1] for l in text.splitlines() if l.startswith(" * ("))
    except Exception:
        return ()
    return ()


def listed(target):
    # no argument fits no signature (torch then lists them all); seven objects are
    # too many for most
    return attempt(target, 0) or attempt(target, 7)


table = {}
hidden = {}
probe = torch.ones(2)
for method, names in ((False, functions.__all__), (True, methods.METHODS)):
    for name in sorted(names):
        if name.startswith("_") or name in SKIP:
            continue
        target = getattr(probe if method else torch, name, None)
        sigs = listed(target) if callable(target) else ()
        if len(sigs) == 2 and sigs[1] is None:
            hidden[(name, method)] = sigs[0]
        elif len(sigs) > 1:
            table[(name, method)] = sigs

lines = [
    '"""torch 2.13\'s visible Python signatures of the names with several, in torch\'s order',
    "(what its \"received an invalid combination of arguments\" TypeError lists), and of the",
    "names whose one visible signature hides others (deprecated forms: torch words any",
    "mismatch as an invalid combination naming the visible one), keyed by (Python name, is a",
    "Tensor method). Data from torch: rebuild with docs/codegen/python_signatures.py;",
    "ops/binding_errors.py words the errors.",
    '"""',
    "",
    "PYTHON_SIGNATURES: dict[tuple[str, bool], tuple[str, ...]] = {",
]
for key, sigs in sorted(table.items()):
    lines.append(f"    {key!r}: (")
    lines += [f"        {s!r}," for s in sigs]
    lines.append("    ),")
lines += [
    "}",
    "",
    "HIDDEN_SIGNATURES: dict[tuple[str, bool], str] = {",
    *[f"    {key!r}: {sig!r}," for key, sig in sorted(hidden.items())],
    "}",
    "",
]
open(sys.argv[1], "w").write("\n".join(lines))
print(len(table), "+", len(hidden), "names; now run: ruff format", sys.argv[1])
