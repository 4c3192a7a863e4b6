"""`tensordispatch schema check [FILE]`: validate a native_functions.yaml-format file.

Prints counts by kind and exits 0 when the file is fine; otherwise prints every problem as
`file:line: operator: message` on stderr and exits 1 (never a traceback).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tensordispatch.schema.native import (
    DEFAULT_NATIVE_FUNCTIONS_PATH,
    ParsedNativeFunctions,
    load_native_functions,
)
from tensordispatch.schema.native_yaml import NativeFunctionsError


def add_parser(subparsers: Any) -> None:
    """Register `schema` (with its `check` subcommand) on the top-level sub-parsers."""
    schema = subparsers.add_parser("schema", help="operator schemas and native_functions.yaml")
    sub = schema.add_subparsers(dest="schema_command", metavar="SUBCOMMAND")
    check = sub.add_parser(
        "check",
        help="validate a native_functions.yaml file and print counts by kind",
        description=(
            "Load FILE as torchgen would (entries, automatic variants, groups, view groups), print counts by kind, and report every error with its file:line."
        ),
    )
    check.add_argument(
        "file",
        nargs="?",
        default=None,
        metavar="FILE",
        help=f"the yaml file (default: the package's own {DEFAULT_NATIVE_FUNCTIONS_PATH.name})",
    )
    check.add_argument("--tags", default=None, metavar="TAGS_YAML",
                       help="tags.yaml listing the valid tags (default: torch 2.13's tags)")  # fmt: skip
    check.set_defaults(run=run_check)
    schema.set_defaults(run=lambda args: _usage(schema))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def format_counts(parsed: ParsedNativeFunctions) -> str:
    """The report printed for a valid file."""
    counts = parsed.counts()
    width = max(len(k) for k in counts)
    lines = [f"{parsed.path}: ok"]
    lines += [f"  {name:<{width}}  {value:>6}" for name, value in counts.items()]
    return "\n".join(lines)


def run_check(args: argparse.Namespace) -> int:
    """Run `schema check`; return the exit code."""
    try:
        parsed = load_native_functions(args.file, tags_path=args.tags)
    except NativeFunctionsError as err:
        for issue in err.issues:
            print(issue, file=sys.stderr)
        count = len(err.issues)
        shown = args.file if args.file is not None else str(DEFAULT_NATIVE_FUNCTIONS_PATH)
        print(f"{shown}: {count} error{'s' if count != 1 else ''}", file=sys.stderr)
        return 1
    print(format_counts(parsed))
    return 0
