"""``tensordispatch codegen [--check]``: regenerate tensordispatch/generated/ from the yaml."""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_parser", "main"]


def add_parser(sub: Any) -> None:
    """Register the ``codegen`` subcommand on an argparse sub-parsers object."""
    parser = sub.add_parser(
        "codegen",
        help="generate the Python operator API and registrations from native_functions.yaml",
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if generated files are stale")
    parser.add_argument("--yaml", default=None, help="native_functions.yaml to read")
    parser.add_argument("--out", default=None, help="output directory (default: the package's)")
    parser.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    from tensordispatch.codegen import GENERATED_DIR, write_sources
    from tensordispatch.schema.native_yaml import NativeFunctionsError

    try:
        changed = write_sources(args.out, path=args.yaml, check=args.check)
    except NativeFunctionsError as err:
        print(err, file=sys.stderr)
        return 1
    where = args.out or str(GENERATED_DIR)
    if args.check:
        if changed:
            print(
                f"{where}: stale generated files: {', '.join(changed)}; run `tensordispatch "
                "codegen` to regenerate them",
                file=sys.stderr,
            )
            return 1
        print(f"{where}: up to date")
        return 0
    print(f"{where}: {'wrote ' + ', '.join(changed) if changed else 'unchanged'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m tensordispatch.codegen [--check] [--yaml PATH] [--out DIR]``."""
    parser = argparse.ArgumentParser(prog="python -m tensordispatch.codegen")
    add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["codegen", *(sys.argv[1:] if argv is None else argv)])
    code: int = args.run(args)
    return code
