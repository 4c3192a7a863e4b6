"""The duplicate-impl override warning (spec 6.8) matches torch 2.13.

The warning is emitted once per process, so both sides run in a fresh subprocess: first an
override on Meta (suppressed), then on CUDA (warns), then on CPU (already warned once).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from . import known

SCRIPT = textwrap.dedent(
    """
    import json, sys, warnings

    def torch_side():
        import torch
        C = torch._C
        libs = [C._dispatch_library("FRAGMENT", "ovns", "", "/dev/null", 0)]
        libs[0].def_("q(Tensor x) -> Tensor")
        def impl(key, name):
            lib = C._dispatch_library("FRAGMENT", "ovns", "", name, 0)
            lib.impl("q", key, lambda x: x, False)
            libs.append(lib)
        return impl

    def our_side():
        from tensordispatch.library import Library
        lib = Library("ovns", "FRAGMENT")
        lib.define("q(Tensor x) -> Tensor")
        def impl(key, name):
            lib.impl("q", lambda x: x, key, debug=f"registered at {name}:0")
        return impl

    impl = torch_side() if sys.argv[1] == "torch" else our_side()
    out = []
    for key in ("Meta", "CUDA", "CPU"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            impl(key, f"{key}_first")
            impl(key, f"{key}_second")
        out.append([str(w.message).split(" (Triggered internally at")[0] for w in caught])
    print(json.dumps(out))
    """
)


def _run(side: str) -> list[list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, side], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    result: list[list[str]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _normalise(message: str) -> str:
    """Hide the def's debug line (torch: its scratch library; ours: the Library's line)."""
    lines = message.splitlines()
    if len(lines) > 3 and lines[3].startswith("    registered at "):
        lines[3] = "    registered at <def>"
    return "\n".join(lines)


_RESULTS: dict[str, list[list[str]]] = {}


def _results(side: str) -> list[list[str]]:
    if side not in _RESULTS:
        _RESULTS[side] = _run(side)
    return _RESULTS[side]


def test_override_warns_once_per_process_and_never_for_meta() -> None:
    counts = [len(messages) for messages in _results("ours")]
    assert counts == [len(messages) for messages in _results("torch")] == [0, 1, 0]


@known.xfail_if_known("override_warning_text")
def test_override_warning_text_matches_torch() -> None:
    ours = [_normalise(m) for messages in _results("ours") for m in messages]
    want = [_normalise(m) for messages in _results("torch") for m in messages]
    assert ours == want
