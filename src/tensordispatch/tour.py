"""``tensordispatch tour``: a live walk through one operator call, the README's main job.

Seed 003 walks through what happens when `torch.add(x, y)` runs; this command does the
same for real, on this installation: it builds a small tensor program, records the
dispatch trace of `add`, prints the registrations and the computed dispatch table of
`aten::add.Tensor`, runs the three variants the structured kernel generates (functional,
in-place, out=) on CPU and on Meta, and prints the results. Every line comes from the live
objects, so the tour changes as the library grows (an autograd kernel, a mode, a backend).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any, TextIO

__all__ = ["add_parser", "run_tour"]

_OP = "aten::add.Tensor"
# The rows of the computed table that the calls below can reach, in table order.
_TABLE_KEYS = (
    "Undefined",
    "CPU",
    "Meta",
    "BackendSelect",
    "Python",
    "ADInplaceOrView",
    "AutogradCPU",
    "AutogradMeta",
    "AutocastCPU",
)


def _section(out: TextIO, title: str) -> None:
    out.write(f"\n== {title} {'=' * max(0, 74 - len(title))}\n")


def _traced(out: TextIO, label: str, thunk: Callable[[], Any]) -> Any:
    import tensordispatch as td

    with td.dispatch_trace() as trace:
        result = thunk()
    out.write(f">>> {label}\n{trace}\n")
    return result


def run_tour(out: TextIO = sys.stdout) -> int:
    """Print the walkthrough to ``out``; return the exit code.

    >>> import io
    >>> buf = io.StringIO()
    >>> run_tour(buf)
    0
    >>> "aten::add.Tensor" in buf.getvalue()
    True
    """
    import tensordispatch as td

    _section(out, "1. A tensor program")
    out.write(
        ">>> x = td.tensor([[1., 2.], [3., 4.]])\n>>> y = td.ones(2, 2)\n"
        ">>> z = td.add(x, y, alpha=10)\n"
    )
    x = td.tensor([[1.0, 2.0], [3.0, 4.0]])
    y = td.ones(2, 2)
    out.write(f"x carries the keys {td.DispatchKeySet.from_raw(x._key_set)!r}\n")

    _section(out, "2. The dispatch trace of td.add(x, y, alpha=10)")
    out.write(
        "Each line is one hop: operator, the key set the kernel received, the key that chose\n"
        "it, the kernel's registration site and why the table holds it. BackendSelect,\n"
        "ADInplaceOrView and AutocastCPU do not appear: their fallbacks are fallthroughs,\n"
        "masked out of the key set before the lookup.\n"
    )
    z = _traced(out, "td.add(x, y, alpha=10)", lambda: td.add(x, y, alpha=10))
    out.write(f"{z}\n")

    _section(out, f"3. Registrations of {_OP} (td.dump)")
    out.write(td.dump(_OP))

    _section(out, "4. Its computed dispatch table (td.dump_table, the rows used here)")
    rows = td.dump_table(_OP).splitlines()
    out.write("\n".join(r for r in rows if r.split(":", 1)[0] in _TABLE_KEYS) + "\n")
    out.write(f"({len(rows)} of 137 slots hold a kernel; the rest would raise 'Could not run')\n")

    _section(out, "5. One structured kernel, three variants (meta function + CPU impl)")
    out.write(
        "add.out is `structured: True`: one meta function checks the inputs and computes the\n"
        "output's shape, dtype and strides, one CPU impl writes into the output. The code\n"
        "generator builds the functional, in-place and out= kernels from them.\n"
    )
    w = _traced(out, "functional: td.add(x, y)", lambda: td.add(x, y))
    out.write(f"{w}\n")
    a = td.tensor([[1.0, 2.0], [3.0, 4.0]])
    _traced(out, "in-place: a.add_(y)", lambda: a.add_(y))
    out.write(f"a is now\n{a}\n")
    o = td.empty(2, 2)
    r = _traced(out, "out=: td.add(x, y, out=o)", lambda: td.add(x, y, out=o))
    out.write(f"returned the out tensor itself: {r is o}\n")

    _section(out, "6. The same meta function on device='meta' (shapes only, no data)")
    m = td.empty(2, 2, device="meta")
    mm = _traced(out, "td.add(m, m)", lambda: td.add(m, m))
    out.write(f"{mm}\n")

    _section(out, "7. The result")
    out.write(f"z = td.add(x, y, alpha=10)\n{z}\n")

    from tensordispatch.transforms.functionalize.cli import show as show_functionalize

    _section(out, "Functionalization: the operators a backend sees (td.func.functionalize)")
    show_functionalize(out, ("mutations_and_views",))
    return 0


def _run(args: argparse.Namespace) -> int:
    return run_tour()


def add_parser(sub: Any) -> None:
    """Register ``tensordispatch tour``."""
    parser = sub.add_parser("tour", help="walk live through one operator call (the main demo)")
    parser.set_defaults(run=_run)
