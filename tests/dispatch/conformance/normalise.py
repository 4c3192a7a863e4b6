"""Normalisation of ``_dispatch_dump`` / ``_dispatch_dump_table`` text before comparison.

Every rewrite applied here is listed below; each applies identically to both sides, and
nothing else is rewritten (a difference anywhere else is a real discrepancy).

Note [Conformance normalisations]
1. Namespace: each run uses a fresh scratch namespace; it is replaced by ``test``.
2. ``debug:`` line of the schema: torch's scratch libraries say ``registered at
   /dev/null:0``, ours name the Python line that built the Library. Replaced by
   ``debug: <def>`` (its presence still counts).
3. Built-in global fallbacks: torch's carry C++ source locations, ours our own module
   lines. A ``[backend fallback]`` row whose debug string is not one a scenario registered
   becomes ``<global>``; the ``fallthrough`` prefix is kept (fallthrough-ness must match).
6. Global fallbacks of backends initialised elsewhere in the test process (torch's
   ``torch._lazy.ts_backend.init()``, our lazy layer's import): a ``<global>`` row at a key
   where torch 2.13 has no built-in global fallback is dropped on both sides (a scenario's
   own fallbacks are never ``<global>``, so nothing a scenario did is hidden).
4. Test-hook kernels: torch's C++ ``impl_t_t`` kernels have an inferred schema and flags
   ``[ boxed unboxed ]``; our kernels are Python (``(none)``, ``[ boxed ]``), as torch's
   Python kernels are. The hook tail is rewritten to the Python one.
5. Errors of a registration: only the first clause (before ``; `` or ``. ``) is compared;
   the rest names registration sites. Missing-kernel errors of a call: the first sentence
   and the bracketed list of keys the operator is available for (we word the advice
   around it differently on purpose).
Not a rewrite but a matching choice (torch_side.py): torch's side is driven through the
raw library binding, so it applies torch.library's one Python-level rule itself (a Meta
impl is refused while the operator has a CompositeImplicitAutograd kernel).
"""

from __future__ import annotations

import re

HOOK_TAIL = " :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]"
PYTHON_TAIL = " :: (none) [ boxed ]"
FALLBACK_LABEL = " [backend fallback]"
FALLTHROUGH = "fallthrough "
GLOBAL = "<global>"


def normalise_dump(text: str, namespace: str) -> str:
    """Apply rewrites 1, 2 and 4 to a ``_dispatch_dump`` text."""
    lines = []
    for line in text.replace(namespace, "test").splitlines():
        if line.startswith("debug: "):
            line = "debug: <def>"
        if line.endswith(HOOK_TAIL):
            line = line[: -len(HOOK_TAIL)] + PYTHON_TAIL
        lines.append(line)
    return "\n".join(lines)


def normalise_row(entry: str, scenario_debugs: frozenset[str]) -> str:
    """Apply rewrite 3 to the part of one table row after ``Key: ``."""
    if not entry.endswith(FALLBACK_LABEL):
        return entry
    body = entry[: -len(FALLBACK_LABEL)]
    prefix = FALLTHROUGH if body.startswith(FALLTHROUGH) else ""
    debug = body[len(prefix) :]
    if debug in scenario_debugs:
        return entry
    return f"{prefix}{GLOBAL}{FALLBACK_LABEL}"


def builtin_global_keys() -> frozenset[str]:
    """The keys torch 2.13 has a built-in global fallback for (ours mirror them; the
    initial-state comparison of every scenario checks that in a clean process)."""
    from tensordispatch.dispatch.fallbacks import _KERNELS
    from tensordispatch.dispatch.keys import key_name

    return frozenset(key_name(k) for k in _KERNELS)


def parse_table(text: str, namespace: str, scenario_debugs: frozenset[str]) -> dict[str, str]:
    """``_dispatch_dump_table`` text as an insertion-ordered ``{key: normalised entry}``."""
    rows: dict[str, str] = {}
    builtin = builtin_global_keys()
    for line in text.replace(namespace, "test").splitlines():
        if not line:
            continue
        key, sep, entry = line.partition(": ")
        if not sep or key in rows:
            raise AssertionError(f"malformed or repeated dump_table row: {line!r}")
        row = normalise_row(entry, scenario_debugs)
        if row.endswith(f"{GLOBAL}{FALLBACK_LABEL}") and key not in builtin:
            continue  # rewrite 6
        rows[key] = row
    return rows


def first_clause(message: str, namespace: str) -> str:
    """The part of an error message before its first ``; `` or ``. `` (location-free)."""
    text = message.replace(namespace, "test")
    cut = len(text)
    for sep in ("; ", ". "):
        pos = text.find(sep)
        if pos != -1:
            cut = min(cut, pos)
    return text[:cut]


def table_diff(expected: dict[str, str], actual: dict[str, str]) -> list[str]:
    """Human-readable key-by-key differences (``[]`` when equal, order included)."""
    diffs = []
    for key in list(expected) + [k for k in actual if k not in expected]:
        want, got = expected.get(key, "<missing>"), actual.get(key, "<missing>")
        if want != got:
            diffs.append(f"{key}: torch={want!r} ours={got!r}")
    if not diffs and list(expected) != list(actual):
        diffs.append(f"row order differs: torch={list(expected)} ours={list(actual)}")
    return diffs


_BACKEND_LIST = re.compile(
    r"(?:only available for these backends: |Available functions are )(\[[^\]]*\])"
)


_SCRATCH: list[str] = []


def extra_global_keys() -> frozenset[str]:
    """Keys at which torch or tensordispatch has a global fallback right now that torch 2.13
    does not have built in (rewrite 6: a backend initialised elsewhere in the process)."""
    import torch

    from tensordispatch.dispatch.dispatcher import DISPATCHER
    from tensordispatch.dispatch.keys import key_name, key_of_slot

    if not _SCRATCH:  # one operator without kernels, kept for the process
        lib = torch._C._dispatch_library("FRAGMENT", "tdnormscratch", "", "/dev/null", 0)
        lib.def_("f(Tensor x) -> Tensor")
        _SCRATCH.append("tdnormscratch::f")
        _KEEP.append(lib)
    rows = torch._C._dispatch_dump_table(_SCRATCH[0]).splitlines()
    theirs = {r.split(":")[0] for r in rows if r.endswith(FALLBACK_LABEL)}
    ours = {key_name(key_of_slot(i)) for i, k in enumerate(DISPATCHER.fallbacks) if k}
    return frozenset((theirs | ours) - builtin_global_keys())


_KEEP: list[object] = []


def missing_kernel_summary(message: str, namespace: str) -> str:
    """A missing-kernel error reduced to what both sides must agree on: the first sentence
    (which names the operator and the key) and the list of keys the operator has kernels
    for (torch's text around them is partly ours to word differently), without the keys of
    rewrite 6."""
    text = message.replace(namespace, "test")
    first = text.split(". ")[0].split(".  ")[0]
    found = _BACKEND_LIST.search(text)
    if not found:
        return first
    extra = extra_global_keys()
    keys = [k for k in found.group(1)[1:-1].split(", ") if k and k not in extra]
    return f"{first} | [{', '.join(keys)}]"
