"""Automatic variant generation: the out= and functional operators an entry's `autogen` asks for.

Same rules as torchgen's add_generated_native_functions (spec 2.4): bucket the functions by
signature(); in each bucket that is not manual, not a view and not (non-core) composite,
derive an out= variant from the mutable, inplace or functional member when the base entry's
`autogen` names one, and a functional variant whenever an out= variant exists. Generated
functions get one CompositeExplicitAutograd kernel and the `generated` tag.
"""

from __future__ import annotations

import string
from collections.abc import Sequence

from tensordispatch.schema import (
    AliasInfo,
    Argument,
    BaseOperatorName,
    FunctionSchema,
    OperatorName,
    Return,
    SchemaError,
    SchemaKind,
)
from tensordispatch.schema.native_group import issue, pre_group
from tensordispatch.schema.native_keys import CEA
from tensordispatch.schema.native_model import (
    BackendMetadata,
    DeviceCheckType,
    NativeFunction,
    Variant,
)
from tensordispatch.schema.native_parse import DEFAULT_KERNEL_NAMESPACE, cpp_name
from tensordispatch.schema.native_yaml import NativeIssue

# Out ops whose functional variant exists but does not pair up by signature.
OUT_OPS_THAT_DONT_GET_GROUPED_PROPERLY = frozenset(
    {"adaptive_avg_pool3d_backward.grad_input", "_slow_conv2d_backward.grad_input"}
)
# Mutable ops with no tensor-like return (so no out= variant can be derived).
MUTABLE_OPS_THAT_CANNOT_GET_AN_OUT_VARIANT = frozenset({"_cummax_helper", "_cummin_helper"})
# Functional ops with no tensor-like return (ints, bools, nothing).
FUNCTIONAL_OPS_THAT_CANNOT_GET_AN_OUT_VARIANT = frozenset(
    {
        "_assert_async", "_assert_async.msg", "_assert_tensor_metadata",
        "_cslt_sparse_mm_search", "_assert_scalar", "_dimI", "_dimV", "_has_same_storage_numel",
        "_linalg_check_errors", "_local_scalar_dense", "_nested_tensor_from_mask_left_aligned",
        "_nnz", "_use_cudnn_ctc_loss", "_use_cudnn_ctc_loss.Tensor", "_use_miopen_ctc_loss",
        "_use_miopen_ctc_loss.Tensor", "_validate_compressed_sparse_indices", "allclose",
        "dense_dim", "equal", "is_coalesced", "is_pinned", "is_same_size", "is_set_to",
        "q_per_channel_axis", "q_scale", "q_zero_point", "qscheme", "record_stream",
        "sparse_dim", "sym_constrain_range", "sym_constrain_range_for_size",
        "_nested_tensor_storage_offsets", "_chunk_grad_outputs_efficient_attention",
        "_fused_sdp_choice", "_print", "_sink_tokens", "_nested_get_ragged_idx",
    }
)  # fmt: skip
# Inplace ops whose schema keeps them from pairing with their functional/out variants.
INPLACE_OPS_THAT_DONT_GET_GROUPED_PROPERLY = frozenset({"polygamma_"})

_KEPT_TAGS = frozenset({"nondeterministic_seeded", "view_copy", "pt2_compliant_tag"})

# Generated kernels by dispatch key, then operator name.
KernelsByKey = dict[str, dict[OperatorName, BackendMetadata]]


def _out_overload(overload: str) -> str:
    return f"{overload}_out" if overload else "out"


def _with_out(
    name: OperatorName,
    base: tuple[Argument, ...],
    outs: list[Argument],
    returns: tuple[Return, ...],
) -> FunctionSchema:
    return FunctionSchema(name=name, arguments=base + tuple(outs), returns=returns)


def self_to_out_signature(func: FunctionSchema) -> FunctionSchema:
    """`foo_(Tensor(a!) self, ...)` -> `foo.out(Tensor self, ..., *, Tensor(a!) out)`.

    >>> from tensordispatch.schema import parse_schema
    >>> str(self_to_out_signature(parse_schema("zero_(Tensor(a!) self) -> Tensor(a!)")))
    'zero.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)'
    """
    self_arg = func.self_arg
    if self_arg is None:  # cannot happen: an inplace schema has a written self (checked at parse)
        raise SchemaError("an inplace schema needs a self argument", str(func))
    args = tuple(
        Argument(a.name, a.type, a.default, a.kwarg_only, None) if a is self_arg else a
        for a in func.arguments
    )
    out = Argument("out", self_arg.type, None, True, self_arg.alias_info)
    name = func.name.remove_inplace().with_overload(_out_overload(func.name.overload_name))
    return _with_out(name, args, [out], func.returns)


def _out_args(func: FunctionSchema) -> tuple[list[Return], list[Argument]]:
    """Out arguments for each tensor-like return, and the returns the out= variant keeps."""
    used = {x for a in func.arguments if a.alias_info is not None for x in a.alias_info.before_set}
    letters = [x for x in string.ascii_lowercase if x not in used]
    all_tensors = all(str(r.type) == "Tensor" for r in func.returns)
    outs: list[Argument] = []
    returns: list[Return] = []
    for i, r in enumerate(func.returns):
        if not r.type.is_tensor_like():
            returns.append(r)
            continue
        if i >= len(letters):
            raise SchemaError(
                "too many returns to give each out= argument an alias letter", str(func)
            )
        info = AliasInfo((letters[i],), (), True)
        name = "out" if len(func.returns) == 1 else f"out{i}"
        outs.append(Argument(name, r.type, None, True, info))
        if all_tensors:
            returns.append(Return(None, r.type, info))
    return returns, outs


def functional_to_out_signature(func: FunctionSchema) -> FunctionSchema:
    """`foo(...) -> Tensor` -> `foo.out(..., *, Tensor(a!) out) -> Tensor(a!)`.

    >>> from tensordispatch.schema import parse_schema
    >>> str(functional_to_out_signature(parse_schema("op_2() -> (Tensor, Tensor)")))
    'op_2.out(*, Tensor(a!) out0, Tensor(b!) out1) -> (Tensor(a!), Tensor(b!))'
    """
    returns, outs = _out_args(func)
    sig = func.signature()
    name = func.name.with_overload(_out_overload(func.name.overload_name))
    return _with_out(name, sig.arguments, outs, tuple(returns))


def mutable_to_out_signature(func: FunctionSchema) -> FunctionSchema:
    """A mutable op keeps its (written) positionals and gains outs for its returns.

    >>> from tensordispatch.schema import parse_schema
    >>> str(mutable_to_out_signature(parse_schema("f(Tensor self, Tensor(a!) s) -> Tensor")))
    'f.out(Tensor self, Tensor(a!) s, *, Tensor(b!) out) -> Tensor(b!)'
    """
    returns, outs = _out_args(func)
    name = func.name.remove_inplace().with_overload(_out_overload(func.name.overload_name))
    return _with_out(name, func.arguments, outs, tuple(returns))


def to_functional_signature(func: FunctionSchema) -> FunctionSchema:
    """Written inputs become returns; a mutable op's functional twin is named `*_functional`.

    >>> from tensordispatch.schema import parse_schema
    >>> str(to_functional_signature(parse_schema("f(Tensor self, Tensor(a!) s) -> Tensor")))
    'f_functional(Tensor self, Tensor s) -> (Tensor, Tensor s_out)'
    """
    sig = func.signature(keep_return_names=True)
    base = BaseOperatorName(
        base=func.name.name.base,
        inplace=False,
        dunder_method=func.name.name.dunder_method,
        functional_overload=func.kind() is SchemaKind.mutable,
    )
    name = OperatorName(base, func.name.overload_name)
    return FunctionSchema(name=name, arguments=sig.arguments, returns=sig.returns)


def generate_function(f: NativeFunction, kind: SchemaKind) -> tuple[NativeFunction, KernelsByKey]:
    """The out= or functional variant of `f`, with its one CompositeExplicitAutograd kernel."""
    base_kind = f.func.kind()
    if kind is SchemaKind.functional:
        func = to_functional_signature(f.func)
    elif base_kind is SchemaKind.inplace:
        func = self_to_out_signature(f.func)
    elif base_kind is SchemaKind.mutable:
        func = mutable_to_out_signature(f.func)
    else:
        func = functional_to_out_signature(f.func)
    is_out = bool(func.out)
    kernel = func.name.unambiguous_name() if is_out else cpp_name(func)
    if any(a.type.is_symint_like() for a in f.func.non_out):
        kernel += "_symint"
    tags = {"generated"} | (f.tags & _KEPT_TAGS)
    if is_out:
        tags.add("out")
    if func.name.name.inplace:
        tags.add("inplace")
    generated = NativeFunction(
        namespace=f.namespace,
        func=func,
        use_const_ref_for_mutable_tensors=f.use_const_ref_for_mutable_tensors,
        device_guard=False,
        device_check=DeviceCheckType.NoCheck,
        python_module=None,
        category_override=None,
        variants=frozenset({Variant.function}),
        manual_kernel_registration=False,
        manual_cpp_binding=False,
        loc=f.loc,
        autogen=(),
        ufunc_inner_loop=(),
        structured=False,
        structured_delegate=None,
        structured_inherits=None,
        precomputed=None,
        cpp_no_default_args=frozenset(),
        is_abstract=f.is_abstract,
        has_composite_implicit_autograd_kernel=False,
        has_composite_implicit_autograd_nested_tensor_kernel=False,
        has_composite_explicit_autograd_kernel=True,
        has_composite_explicit_autograd_non_functional_kernel=False,
        tags=frozenset(tags),
    )
    return generated, {CEA: {func.name: BackendMetadata(kernel, False, DEFAULT_KERNEL_NAMESPACE)}}


def add_generated_native_functions(
    funcs: list[NativeFunction], kernels: KernelsByKey
) -> list[NativeIssue]:
    """Append the generated variants to `funcs` and their kernels to `kernels`; list problems."""
    issues: list[NativeIssue] = []
    for d in pre_group(funcs, issues).values():
        try:
            _generate_for_bucket(d, funcs, kernels, issues)
        except SchemaError as err:
            member = next(iter(d.values()))
            issues.append(issue(member, f"could not generate a variant: {err}"))
    return issues


def _skip_bucket(d: dict[SchemaKind, NativeFunction]) -> bool:
    members = d.values()
    if all(f.manual_cpp_binding for f in members):
        return True
    if any(f.is_view_op and str(f.func.name.name) != "set_" for f in members):
        return True
    is_core = any("core" in f.tags for f in members)
    return all(f.has_composite_implicit_autograd_kernel for f in members) and not is_core


def _generate_for_bucket(
    d: dict[SchemaKind, NativeFunction],
    funcs: list[NativeFunction],
    kernels: KernelsByKey,
    issues: list[NativeIssue],
) -> None:
    if _skip_bucket(d):
        return
    out = d.get(SchemaKind.out)
    if out is not None and len(d) == 1:
        if str(out.func.name) not in OUT_OPS_THAT_DONT_GET_GROUPED_PROPERLY:
            issues.append(issue(out, _lonely_out_message(out)))
        return
    inplace = d.get(SchemaKind.inplace)
    if inplace is not None and str(inplace.func.name) in INPLACE_OPS_THAT_DONT_GET_GROUPED_PROPERLY:
        return
    base = d.get(SchemaKind.mutable) or inplace or out or d[SchemaKind.functional]
    base_kind = base.func.kind()
    base_valid = base_kind is SchemaKind.inplace or any(
        r.type.is_tensor_like() for r in base.func.returns
    )
    needs_out = any("out" in str(name) for name in base.autogen)
    gets_out = out is None and base_valid and needs_out
    if out is None and not base_valid:
        name = str(base.func.name)
        if (
            name not in MUTABLE_OPS_THAT_CANNOT_GET_AN_OUT_VARIANT
            and name not in FUNCTIONAL_OPS_THAT_CANNOT_GET_AN_OUT_VARIANT
        ):
            issues.append(issue(base, _no_out_message(base)))
    todo = ([SchemaKind.out] if gets_out else []) + (
        [SchemaKind.functional]
        if SchemaKind.functional not in d and (out is not None or gets_out)
        else []
    )
    for kind in todo:
        fn, new = generate_function(base, kind)
        d[kind] = fn
        for key, by_name in new.items():
            kernels.setdefault(key, {}).update(by_name)
        funcs.append(fn)


def _lonely_out_message(out: NativeFunction) -> str:
    return f"Found an out= operator that we could not find any other variants of: {out.func}; add its functional variant to the yaml"


def _no_out_message(base: NativeFunction) -> str:
    return f"Found an operator that we could not generate an out= variant for: {base.func}. This type of operators don't have tensor-like return, making it difficult to generate a proper out= variant; give it a tensor-like return, or implement it as CompositeImplicitAutograd (composite operators get no generated variants)"


def generated_count(funcs: Sequence[NativeFunction]) -> int:
    """How many functions were generated (not written in the yaml)."""
    return sum(1 for f in funcs if "generated" in f.tags)
