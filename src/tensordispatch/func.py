"""`tensordispatch.func`: the function transforms, named as in `torch.func`.

The transforms live in their layers (`transforms/functionalize/`, `transforms/vmap/`); this
module only gathers them under torch's names. Each name is imported on first use, so
`import tensordispatch` does not pay for transforms a program never touches.

>>> import tensordispatch.func as F
>>> callable(F.functionalize), callable(F.vmap)
(True, True)
"""

from __future__ import annotations

import importlib
from typing import Any

# public name -> (module, attribute)
_EXPORTS: dict[str, tuple[str, str]] = {
    "functionalize": ("tensordispatch.transforms.functionalize", "functionalize"),
    "vmap": ("tensordispatch.transforms.vmap", "vmap"),
    "grad": ("tensordispatch.transforms.vmap", "grad"),
    "grad_and_value": ("tensordispatch.transforms.vmap", "grad_and_value"),
    "vjp": ("tensordispatch.transforms.vmap", "vjp"),
    "jacrev": ("tensordispatch.transforms.vmap", "jacrev"),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    try:
        module, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'tensordispatch.func' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
