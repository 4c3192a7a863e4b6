"""``FunctionSchema.signature()``: the key that groups functional/inplace/out/mutable variants.

Same normalisation as torchgen (spec 1.10): overload, inplace marker, namespace and the
``_functional`` marker dropped; out arguments and TensorOptions dropped; alias annotations
and return names stripped; every written input that is not already returned becomes an
extra return (self, then out arguments, then positionals). ``strip_view`` also turns
``foo_copy`` into ``foo`` (every ``_copy`` substring, as torchgen does) and ``foo_scatter``
into ``foo_inverse``, which pairs view operators with their copies.
"""

from __future__ import annotations

import functools

from tensordispatch.schema.invariants import Layout, SchemaKind
from tensordispatch.schema.model import (
    Argument,
    BaseOperatorName,
    FunctionSchema,
    OperatorName,
    Return,
    trusted_schema,
)
from tensordispatch.schema.types import Type

# Defaults injected into a signature so that variants written without them still group:
# printed operator name -> {argument name: default text}. See torchgen's Note [bernoulli.p
# schema].
SIGNATURE_DEFAULT_PATCHES: dict[str, dict[str, str]] = {"bernoulli.p": {"p": "0.5"}}
_PATCHED_BASES = frozenset(name.split(".")[0].split("::")[-1] for name in SIGNATURE_DEFAULT_PATCHES)


@functools.lru_cache(maxsize=1024)
def _plain_return(name: str | None, t: Type) -> Return:
    return Return(name, t, None)


def _strip(a: Argument, strip_default: bool, patch: dict[str, str] | None) -> Argument:
    default = None if strip_default else a.default
    if patch is not None and a.name in patch and a.default is None:
        default = patch[a.name]
    if a.alias_info is None and default == a.default:
        return a
    return Argument(a.name, a.type, default, a.kwarg_only, None)


def signature(
    schema: FunctionSchema, strip_default: bool, strip_view: bool, keep_return_names: bool
) -> FunctionSchema:
    """See FunctionSchema.signature."""
    base = schema.name.name.base
    if strip_view:
        if base.endswith("_copy"):
            base = base.replace("_copy", "")
        elif base.endswith("_scatter"):
            base = base.replace("scatter", "inverse")
    returns = [_plain_return(r.name if keep_return_names else None, r.type) for r in schema.returns]
    if schema.is_mutable:
        returned = [r.alias_info for r in schema.returns]
        self_arg = schema.self_arg
        written = [self_arg] if self_arg is not None else []
        written += [*schema.out, *schema.post_self_positional]
        for a in written:
            info = a.alias_info
            if info is not None and info.is_write and info not in returned:
                returns.append(
                    _plain_return(f"{a.name}_out" if keep_return_names else None, a.type)
                )
    patch = None
    if base in _PATCHED_BASES:
        patch = SIGNATURE_DEFAULT_PATCHES.get(str(schema.name))
    layout = schema._layout
    args = schema.arguments[: layout.first_out]
    if layout.tensor_options >= 0:
        args = args[: layout.tensor_options] + args[layout.tensor_options + 4 :]
    if strip_default or patch is not None or any(a.alias_info is not None for a in args):
        args = tuple([_strip(a, strip_default, patch) for a in args])
    name = OperatorName(BaseOperatorName(base, False, schema.name.name.dunder_method), "")
    # Without annotations, TensorOptions or out arguments there is nothing left to check: the
    # result is functional, and its partitions are the original ones minus the dropped parts.
    sig_layout = Layout(layout.first_kwarg, len(args), layout.self_index, -1, SchemaKind.functional)
    return trusted_schema(name, args, tuple(returns), sig_layout)
