"""Make the example backends importable without installing them (`pip install ./examples/<name>`
does the same for users)."""

from __future__ import annotations

import pathlib
import sys

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
for package_root in (EXAMPLES / "torchdev",):
    if str(package_root) not in sys.path:
        sys.path.insert(0, str(package_root))
