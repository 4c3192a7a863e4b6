"""Functionalization: the Functionalize dispatch key, removing mutations and views above any
backend while keeping torch's aliasing semantics (issue 8, reference spec section 1).

Modules: wrapper.py (FunctionalTensor, FunctionalStorage, ViewMeta, the five core
operations), view_metas.py (forward/reverse rule per view operator), shadow.py (where a
view sits in its base: the unobserved write-through fast path), view_kernels.py (the view
operators' kernels), kernels.py (the Functionalize kernels generated from the YAML model,
registered on first use), api.py
(``functionalize``, ``functionalize_aten_op``), trace.py (``make_fx``: the operators that
reach the layers below, printed as Python). docs/FUNCTIONALIZATION.md has the overview.
"""

from __future__ import annotations

from tensordispatch.transforms.functionalize.api import functionalize, functionalize_aten_op
from tensordispatch.transforms.functionalize.kernels import install, installed, uninstall
from tensordispatch.transforms.functionalize.view_metas import VIEW_RULES, ViewRule
from tensordispatch.transforms.functionalize.wrapper import (
    FunctionalStorage,
    FunctionalTensor,
    ViewMeta,
    apply_updates,
    commit_update,
    from_functional,
    is_functional,
    regenerate,
    replace_,
    storage_of,
    sync,
    to_functional,
)

__all__ = [
    "VIEW_RULES",
    "FunctionalStorage",
    "FunctionalTensor",
    "ViewMeta",
    "ViewRule",
    "apply_updates",
    "commit_update",
    "from_functional",
    "functionalize",
    "functionalize_aten_op",
    "install",
    "installed",
    "is_functional",
    "regenerate",
    "replace_",
    "storage_of",
    "sync",
    "to_functional",
    "uninstall",
]
