"""``FunctionSchema.signature()``: the key that groups functional/inplace/out/mutable variants.

Same normalisation as torchgen (spec 1.10): overload, inplace marker, namespace and the
``_functional`` marker dropped; out arguments and TensorOptions dropped; alias annotations
and return names stripped; every written input that is not already returned becomes an
extra return (self, then out arguments, then positionals). ``strip_view`` also turns
``foo_copy`` into ``foo`` (every ``_copy`` substring, as torchgen does) and ``foo_scatter``
into ``foo_inverse``, which pairs view operators with their copies.
"""

from __future__ import annotations

from tensordispatch.schema.model import (
    Argument,
    BaseOperatorName,
    FunctionSchema,
    OperatorName,
    Return,
)

# Defaults injected into a signature so that variants written without them still group:
# operator -> {argument name: default text}. See torchgen's Note [bernoulli.p schema].
SIGNATURE_DEFAULT_PATCHES: dict[str, dict[str, str]] = {"bernoulli.p": {"p": "0.5"}}


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
    returned = [r.alias_info for r in schema.returns]
    written = [schema.self_arg] if schema.self_arg is not None else []
    written += [*schema.out, *schema.post_self_positional]
    extra = tuple(
        Return(f"{a.name}_out" if keep_return_names else None, a.type, None)
        for a in written
        if a is not None
        and a.alias_info is not None
        and a.alias_info.is_write
        and a.alias_info not in returned
    )
    returns = tuple(
        Return(r.name if keep_return_names else None, r.type, None) for r in schema.returns
    )
    patch = SIGNATURE_DEFAULT_PATCHES.get(str(schema.name))
    options = schema.tensor_options
    args = tuple(
        _strip(a, strip_default, patch)
        for a in schema.non_out
        if options is None or a not in options
    )
    name = BaseOperatorName(base, False, schema.name.name.dunder_method)
    return FunctionSchema(OperatorName(name, ""), args, returns + extra)
