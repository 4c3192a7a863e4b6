"""The function-schema language and the native_functions.yaml model (pure data, no dispatch).

Schema text -> :func:`parse_schema` -> :class:`FunctionSchema` (types.py, model.py,
parse.py), classification (invariants.py, signature.py), boxed-kernel facts (boxing.py).
The yaml model lives in the ``native*`` modules and is re-exported lazily from here.
"""

from __future__ import annotations

import importlib
from typing import Any

from tensordispatch.schema.errors import SchemaError
from tensordispatch.schema.types import (
    BaseTy,
    BaseType,
    CustomClassType,
    ListType,
    OptionalType,
    Type,
    parse_type,
)

__all__ = [
    "AliasInfo",
    "Argument",
    "BaseOperatorName",
    "BaseTy",
    "BaseType",
    "BoxingInfo",
    "CustomClassType",
    "FunctionSchema",
    "ListType",
    "OperatorName",
    "OptionalType",
    "Return",
    "SchemaError",
    "SchemaKind",
    "Type",
    "boxing_info",
    "default_value",
    "parse_alias_info",
    "parse_argument",
    "parse_operator_name",
    "parse_return",
    "parse_schema",
    "parse_type",
]

# Names of the yaml model (native*.py) reachable as tensordispatch.schema.<name>; they are
# imported on first use so that the schema language does not pay for the yaml model.
_NATIVE_MODULES = ("native", "native_model", "native_yaml", "native_parse", "native_group")


# The schema model, its parser and the boxing facts are imported on first use too: `import
# tensordispatch` parses no schema (operators are defined on first lookup; the dispatcher
# names the model in annotations only), so it should not pay for them (issue 4).
_DEFERRED: dict[str, str] = {
    **dict.fromkeys(("BoxingInfo", "boxing_info"), "boxing"),
    "default_value": "defaults",
    "SchemaKind": "invariants",
    **dict.fromkeys(
        ("AliasInfo", "Argument", "BaseOperatorName", "FunctionSchema", "OperatorName", "Return"),
        "model",
    ),
    **dict.fromkeys(
        (
            "parse_alias_info",
            "parse_argument",
            "parse_operator_name",
            "parse_return",
            "parse_schema",
        ),
        "parse",
    ),
}


# Submodules not imported yet: `from tensordispatch.schema import model` asks this module
# first, and must get to the import system without loading the yaml model on the way.
_SUBMODULES = frozenset(
    ("boxing", "cli", "defaults", "errors", "invariants", "model", "parse", "signature", "types")
)


def __getattr__(name: str) -> Any:
    deferred = _DEFERRED.get(name)
    if deferred is not None:
        value = getattr(importlib.import_module(f"tensordispatch.schema.{deferred}"), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        raise AttributeError(f"module 'tensordispatch.schema' has no attribute '{name}'")
    for module_name in _NATIVE_MODULES:
        try:
            module = importlib.import_module(f"tensordispatch.schema.{module_name}")
        except ModuleNotFoundError as e:
            if e.name != f"tensordispatch.schema.{module_name}":
                raise
            continue
        public = getattr(module, "__all__", None)
        if public is None:
            public = [n for n in vars(module) if not n.startswith("_")]
        if name in public:
            return getattr(module, name)
    raise AttributeError(f"module 'tensordispatch.schema' has no attribute '{name}'")
