"""The operator API for the top-level package: generated functions and the format objects.

Importing this module imports tensordispatch.generated, which defines the aten operators,
registers their kernels under every dispatch key and installs the Tensor methods and
operators. The lead re-exports ``__all__`` from tensordispatch/__init__.py.

>>> from tensordispatch import _api as td
>>> td.add(td.ones(2), 1, alpha=2)
tensor([3., 3.])
"""

from __future__ import annotations

import tensordispatch.generated  # noqa: F401 - registrations and Tensor methods
from tensordispatch.backends.common import (
    channels_last,
    contiguous_format,
    preserve_format,
    strided,
)
from tensordispatch.backends.generator import (
    Generator,
    default_generator,
    initial_seed,
    manual_seed,
    seed,
)
from tensordispatch.generated.functions import *
from tensordispatch.generated.functions import __all__ as _functions

__all__: list[str] = [  # noqa: PLE0604 - the generated functions' names
    *_functions,
    "Generator",
    "default_generator",
    "initial_seed",
    "manual_seed",
    "seed",
    "channels_last",
    "contiguous_format",
    "preserve_format",
    "strided",
]
