"""`python -m tensordispatch.codegen.backend_stubs ...`: the gen-backend-stubs command."""

from tensordispatch.codegen.backend_stubs.cli import main

raise SystemExit(main())
