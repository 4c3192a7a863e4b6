"""`tensordispatch gen-backend-stubs --source-yaml FILE --output-dir DIR [...]`.

torchgen's gen_backend_stubs command line (same option names, with `--native-functions`
added, `--no-out-inplace` as the generation toggle and `--check` for CI). Exits 0 after writing (or finding
up to date) the generated module, 1 with one message on stderr (never a traceback) when
the yaml or the kernels break a rule, 2 on bad usage.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_parser", "main"]


def add_parser(sub: Any) -> None:
    """Register `gen-backend-stubs` on the top-level sub-parsers."""
    parser = sub.add_parser(
        "gen-backend-stubs",
        help="generate the kernel protocol and registration module of an external backend",
        description=(
            "Validate a backend yaml (torchgen's keys and rules) against native_functions.yaml and write <backend>_native_functions.py: a Protocol declaring every kernel's signature and register(), which registers them under the backend's key and Autograd<backend>."
        ),
    )
    parser.add_argument("-s", "--source-yaml", "--source_yaml", required=True, metavar="FILE",
                        help="the backend yaml (backend, cpp_namespace, supported, autograd, ...)")  # fmt: skip
    parser.add_argument("-o", "--output-dir", "--output_dir", required=True, metavar="DIR",
                        help="where to write the generated module")  # fmt: skip
    parser.add_argument("--impl-path", "--impl_path", default=None, metavar="MODULE_OR_FILE",
                        help="the backend's kernel module (.py path or dotted name): check that it defines every kernel (read with ast, not imported)")  # fmt: skip
    parser.add_argument("--native-functions", default=None, metavar="PATH",
                        help="native_functions.yaml to check against (default: the package's own)")  # fmt: skip
    parser.add_argument("--dry-run", "--dry_run", action="store_true",
                        help="validate and report, write nothing")  # fmt: skip
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if the generated module is missing or stale (for CI)")  # fmt: skip
    parser.add_argument("--ir-only", action="store_true",
                        help="write only the lazy IR module (<backend>_ir.py: node classes and kernels of full_codegen/ir_gen operators), e.g. for tensordispatch's own lazy backend")  # fmt: skip
    parser.add_argument("--no-out-inplace", action="store_true",
                        help="do not generate out=/inplace kernels from functional ones")  # fmt: skip
    parser.set_defaults(run=run_command)


def run_command(args: argparse.Namespace) -> int:
    """Run the command; return the exit code."""
    from tensordispatch.codegen.backend_stubs import BackendStubsError, run
    from tensordispatch.schema.native_yaml import NativeFunctionsError

    try:
        changed = run(args.source_yaml, args.output_dir, dry_run=args.dry_run or args.check,
                      impl_path=args.impl_path, native_functions=args.native_functions,
                      synthesize=not args.no_out_inplace, ir_only=args.ir_only)  # fmt: skip
    except BackendStubsError as err:
        print(f"{args.source_yaml}: error: {err}", file=sys.stderr)
        return 1
    except NativeFunctionsError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    if args.check:
        if changed:
            print(
                f"{args.output_dir}: stale or missing: {', '.join(changed)}; run `tensordispatch gen-backend-stubs` without --check to regenerate",
                file=sys.stderr,
            )
            return 1
        print(f"{args.output_dir}: up to date")
        return 0
    verb = "would write" if args.dry_run else "wrote"
    if changed:
        print(f"{args.output_dir}: {verb} {', '.join(changed)}")
    else:
        print(f"{args.output_dir}: nothing to write (up to date, or no supported operators)")
    return 0


def main(argv: list[str] | None = None) -> int:
    """`python -m tensordispatch.codegen.backend_stubs ...`."""
    parser = argparse.ArgumentParser(prog="python -m tensordispatch.codegen.backend_stubs")
    add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["gen-backend-stubs", *(sys.argv[1:] if argv is None else argv)])
    code: int = args.run(args)
    return code
