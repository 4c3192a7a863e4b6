"""The operator API for the top-level package: generated functions and the format objects.

Importing this module imports tensordispatch.generated, which hands the aten operator names
to the dispatcher (each is defined, with its kernels, on first lookup: Note [Operators
defined on first lookup] in codegen/gen_registrations.py) and installs the Tensor methods
and operators. The lead re-exports ``__all__`` from tensordispatch/__init__.py; the random
number API (Generator, manual_seed, ...) is re-exported there lazily.

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
from tensordispatch.generated.functions import *
from tensordispatch.generated.functions import __all__ as _functions

__all__: list[str] = [  # noqa: PLE0604 - the generated functions' names
    *_functions,
    "channels_last",
    "contiguous_format",
    "preserve_format",
    "strided",
]
