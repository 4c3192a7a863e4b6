"""``tensordispatch func functionalize [--show] [--remove MODE]``: functionalize a small
program and print the operators that reach the backend as Python (also the tour's section).

Owns only presentation: the program, its eager result, and ``make_fx``'s printout.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

__all__ = ["EXAMPLE_SOURCE", "add_parser", "show"]

EXAMPLE_SOURCE = """\
def f(x):
    y = x.view(2, 2)      # a view of the input
    y[0].mul_(10)         # mutate a view of the view
    return x + 1          # read the input through its base"""


def _example() -> Any:
    namespace: dict[str, Any] = {}
    exec(EXAMPLE_SOURCE, namespace)  # noqa: S102 - our own constant, shown verbatim
    return namespace["f"]


def show(
    out: TextIO = sys.stdout, modes: tuple[str, ...] = ("mutations", "mutations_and_views")
) -> int:
    """Print the example program, eager and functionalized results, and the traced graphs.

    >>> import io
    >>> buf = io.StringIO()
    >>> show(buf, ("mutations_and_views",))
    0
    >>> "select_scatter" in buf.getvalue() and "copy_" in buf.getvalue()
    True
    """
    import tensordispatch as td_module
    from tensordispatch.transforms.functionalize import functionalize
    from tensordispatch.transforms.functionalize.trace import make_fx

    td: Any = td_module  # its operator functions come from a star export mypy cannot see
    f = _example()
    out.write(f"{EXAMPLE_SOURCE}\n\n")
    x = td.arange(4.0)
    eager = f(x)
    out.write(f">>> x = td.arange(4.0); f(x)\n{eager}   (x is now {x.tolist()})\n")
    x = td.arange(4.0)
    result = functionalize(f)(x)
    out.write(f">>> functionalize(f)(x)\n{result}   (x is now {x.tolist()}: written back)\n")
    for mode in modes:
        graph = make_fx(functionalize(f, remove=mode))(td.arange(4.0))
        out.write(
            f"\n>>> make_fx(functionalize(f, remove={mode!r}))(x).code"
            f"   # what the backend sees\n{graph.code}\n"
        )
    return 0


def _run(args: argparse.Namespace) -> int:
    modes = (args.remove,) if args.remove else ("mutations", "mutations_and_views")
    if not args.show:
        print("tensordispatch func functionalize: pass --show to print the example's graphs")
        return 0
    return show(sys.stdout, modes)


def add_parser(sub: Any) -> None:
    """Register ``tensordispatch func functionalize``."""
    parser = sub.add_parser("func", help="function transforms (functionalize) on an example")
    transforms = parser.add_subparsers(dest="transform", metavar="TRANSFORM", required=True)
    fp = transforms.add_parser(
        "functionalize", help="remove mutations (and views) and print the traced program"
    )
    fp.add_argument("--show", action="store_true", help="print the example and its graphs")
    fp.add_argument(
        "--remove",
        choices=("mutations", "mutations_and_views"),
        help="only this mode (default: both)",
    )
    fp.set_defaults(run=_run)
