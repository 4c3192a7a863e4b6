"""The `tensordispatch` command line.

Each subcommand lives next to the layer it exercises and is listed in `_COMMANDS` as
"module:function". The function receives the argparse sub-parsers object and registers
its parser with `set_defaults(run=...)`; `run(args)` returns the process exit code.
Modules are imported only when the command line is built, so `tensordispatch --help`
stays cheap and a layer that is not needed is never loaded twice.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# Ordered as they appear in `tensordispatch --help`.
_COMMANDS: tuple[str, ...] = (
    "tensordispatch.tour:add_parser",
    "tensordispatch.schema.cli:add_parser",
    "tensordispatch.codegen.cli:add_parser",
    "tensordispatch.codegen.backend_stubs.cli:add_parser",
    "tensordispatch.transforms.functionalize.cli:add_parser",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tensordispatch",
        description="PyTorch's operator machinery in pure Python.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for spec in _COMMANDS:
        module_name, func_name = spec.split(":")
        getattr(importlib.import_module(module_name), func_name)(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    run = getattr(args, "run", None)
    if run is None:
        parser.print_help(sys.stderr)
        return 2
    code: int = run(args)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
