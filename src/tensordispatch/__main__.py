"""`python -m tensordispatch` runs the same command line as the `tensordispatch` script."""

from tensordispatch.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
