"""tensordispatch: PyTorch's operator machinery in pure Python.

Layers (one subpackage each, imports flow downward only; see docs/ARCHITECTURE.md):
schema -> dispatch -> tensor -> backends/ops/codegen -> autograd -> transforms -> lazy.

The library never imports torch; torch 2.13 is only the oracle of the test suite.
"""

from __future__ import annotations

__version__ = "0.1.0"
