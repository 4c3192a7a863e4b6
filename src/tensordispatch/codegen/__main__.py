"""``python -m tensordispatch.codegen``."""

from tensordispatch.codegen.cli import main

raise SystemExit(main())
