"""Print every discrepancy of every scenario (a developer tool, not a test).

Run from tests/dispatch:  python3 -m conformance.report [--calls] [name-substring ...]
"""

from __future__ import annotations

import sys
import warnings

from .harness import run_both
from .scenarios import CASES


def main(argv: list[str]) -> int:
    calls = "--calls" in argv
    wanted = [a for a in argv if not a.startswith("--")]
    failing = 0
    for case in CASES:
        if wanted and not any(w in str(case) for w in wanted):
            continue
        for flavour in ("py", "hook"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    report = run_both(case, flavour, calls=calls and flavour == "py")
                except Exception as e:  # noqa: BLE001 - a developer report lists everything
                    print(f"== {case} [{flavour}] CRASHED: {e!r}")
                    failing += 1
                    continue
            if report.problems:
                failing += 1
                print(f"== {case} [{flavour}]: {len(report.problems)} problem(s)")
                for problem in report.problems[:8]:
                    print("   " + problem.replace("\n", "\n   "))
    print(f"{failing} failing runs")
    return 1 if failing else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
