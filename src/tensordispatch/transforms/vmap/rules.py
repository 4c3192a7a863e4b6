"""Batching rules, part 1: the table, pointwise ops, dim-taking ops (reductions, softmax,
views) and ops that act on trailing dims only.

A rule is ``rule(op, plan, stack, level) -> result``: ``stack`` is the boxed call (every
argument, defaults filled in), ``level`` the vmap level being removed; arguments batched at
that level have their batch dim first in their inner tensor (Note [Batch dim at the front]
in batched.py). A rule calls operators on inner tensors through the dispatcher (so lower
levels and autograd see ordinary calls) and wraps the results at ``level``.

``RULES`` maps ``ns::name.overload`` to a rule: the "table keyed by operator" of the issue.
Operators without a rule go to the for-loop fallback (fallback.py), except
CompositeImplicitAutograd ones, which decompose (kernel.py).

Note [Logical dims]
Dim arguments are the user's logical dims: they are wrapped against the logical rank (the
error says so with torch's IndexError text) and shifted by one past the batch dim. A
logical 0-dim tensor is treated as shape [1] for ops that accept dim 0 / -1 on scalars
(reductions, softmax, ...), and the size-1 dim is squeezed off the result again.

Note [Promotion with batched scalars]
A logical 0-dim tensor batched at a level is 1-dim physically, and type promotion treats
dimensioned tensors differently from 0-dim ones (``float32[3] + float64[]`` is float32).
The pointwise rule therefore computes the result type on the logical arguments and casts a
batched 0-dim argument to it when it differs (torch's binary pointwise rules do the same).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensordispatch.tensor.dtypes import _result_type_of
from tensordispatch.tensor.tensor import Tensor
from tensordispatch.transforms.vmap.batched import BatchedTensor, wrap
from tensordispatch.transforms.vmap.plan import OpPlan

__all__ = ["DECLINE", "RULES", "Rule", "broadcast_error", "wrap_dim", "wrap_result"]

Rule = Callable[[Any, OpPlan, list[Any], int], Any]
RULES: dict[str, Rule] = {}
#: What a rule returns to decline a call it cannot batch (the kernel then loops).
DECLINE: Any = object()


def wrap_dim(dim: int, rank: int, scalar_ok: bool = True) -> int:
    """``dim`` wrapped into [0, rank) with torch's IndexError (Note [Logical dims])."""
    n = rank if rank or not scalar_ok else 1
    if -n <= dim < n:
        return dim + n if dim < 0 else dim
    raise IndexError(
        f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
    )


def wrap_result(res: Any, level: int) -> Any:
    """Wrap every tensor of an operator's result at ``level``."""
    if isinstance(res, Tensor):
        return wrap(res, level)
    if isinstance(res, tuple):
        return tuple(wrap_result(r, level) for r in res)
    if isinstance(res, list):
        return [wrap_result(r, level) for r in res]
    if res is None or not hasattr(res, "_key_set"):
        return res
    return wrap(res, level)


def _unsqueeze_after_batch(p: Any, count: int) -> Any:
    for _ in range(count):
        p = p.unsqueeze(1)
    return p


def _broadcast(shapes: list[tuple[int, ...]]) -> tuple[int, ...] | None:
    rank = max(len(s) for s in shapes)
    out = []
    for k in range(rank):
        size = 1
        for s in shapes:
            d = s[k - rank + len(s)] if k - rank + len(s) >= 0 else 1
            if d != 1:
                if size not in (1, d):
                    return None
                size = d
        out.append(size)
    return tuple(out)


def broadcast_error(self_shape: tuple[int, ...], shapes: list[tuple[int, ...]]) -> RuntimeError:
    """torch's error for an in-place op whose arguments broadcast past ``self``."""
    b = _broadcast([self_shape, *shapes])
    return RuntimeError(
        f"output with shape {list(self_shape)} doesn't match the broadcast shape "
        f"{list(b if b is not None else ())}"
    )


def inplace_error() -> RuntimeError:
    """Note [In-place on an unbatched tensor] (fallback.py), the rules' wording (torch's)."""
    return RuntimeError(
        "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a "
        "Tensor `other` in extra_args that has more elements than `self`. This happened due "
        "to `other` being vmapped over but `self` not being vmapped over in a vmap. Please "
        "try to use out-of-place operators instead of inplace arithmetic. If said operator is "
        "being called inside the PyTorch framework, please file a bug report instead."
    )


_NOT_PROMOTED = ("condition", "mask")


def pointwise_rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
    """Broadcasting elementwise ops: align ranks after the batch dim, call, wrap."""
    rank = 0
    batched = []
    zero_dim = False
    for i in plan.tensors:
        v = stack[i]
        if v is None:
            continue
        r = len(v._shape)
        rank = max(rank, r)
        if type(v) is BatchedTensor and v._level == level:
            batched.append(i)
            zero_dim = zero_dim or r == 0
    s = list(stack)
    if plan.mutable:
        _check_inplace(plan, stack, level, rank)
    if zero_dim:
        _promote_batched_scalars(plan, stack, s, batched)
    for i in batched:
        v = s[i]
        p = v._data
        r = len(v._shape)
        s[i] = _unsqueeze_after_batch(p, rank - r) if r < rank else p
    res = plan.call(op, s)
    if plan.mutable:
        return stack[plan.returns[0][1]]
    return wrap(res, level)


def _check_inplace(plan: OpPlan, stack: list[Any], level: int, rank: int) -> None:
    for i in plan.mutable:
        v = stack[i]
        if not (type(v) is BatchedTensor and v._level == level):
            raise inplace_error()
        if len(v._shape) < rank:
            others = [stack[j]._shape for j in plan.tensors if j != i and stack[j] is not None]
            raise broadcast_error(v._shape, others)


def _promote_batched_scalars(
    plan: OpPlan, stack: list[Any], s: list[Any], batched: list[int]
) -> None:
    """Note [Promotion with batched scalars]."""
    operands = [
        stack[i]
        for i in range(len(stack))
        if plan.names[i] not in _NOT_PROMOTED
        and (i in plan.tensors or isinstance(stack[i], bool | int | float | complex))
        and stack[i] is not None
        and (i in plan.tensors or plan.names[i] in ("other", "self", "exponent", "value"))
    ]
    if plan.mutable:
        target = stack[plan.mutable[0]].dtype
    else:
        try:
            target = _result_type_of(tuple(operands))
        except TypeError:
            return
    for i in batched:
        v = stack[i]
        if len(v._shape) == 0 and v.dtype != target and plan.names[i] not in _NOT_PROMOTED:
            s[i] = wrap(v._data.to(target), v._level)


def pointwise_unboxed(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The common case of ``pointwise_rule`` without boxing: out-of-place, tensors passed
    positionally, no batched 0-dim tensor. Declines anything else."""
    # the common shapes of a call first: f(x) and f(x, other) with one level involved
    n = len(args)
    if n == 1:
        a = args[0]
        if type(a) is BatchedTensor:
            return wrap(op(a._data, **kwargs), a._level)
    elif n == 2:
        a, c = args
        if type(a) is BatchedTensor:
            ra = len(a._shape)
            if type(c) is BatchedTensor:
                if c._level == a._level and len(c._shape) == ra:
                    return wrap(op(a._data, c._data, **kwargs), a._level)
            elif ra and ra >= len(getattr(c, "_shape", ())):
                return wrap(op(a._data, c, **kwargs), a._level)
        elif type(c) is BatchedTensor:
            rc = len(c._shape)
            if rc and rc >= len(getattr(a, "_shape", ())):
                return wrap(op(a, c._data, **kwargs), c._level)
    level = 0
    rank = 0
    for a in args:
        shape = getattr(a, "_shape", None)
        if shape is not None:
            r = len(shape)
            rank = max(rank, r)
            if type(a) is BatchedTensor and a._level > level:
                level = a._level
    if level == 0:
        return DECLINE
    new = list(args)
    for i, a in enumerate(args):
        if type(a) is BatchedTensor and a._level == level:
            r = len(a._shape)
            if r == rank:
                new[i] = a._data
            elif r == 0:
                return DECLINE  # Note [Promotion with batched scalars]
            else:
                new[i] = _unsqueeze_after_batch(a._data, rank - r)
    return wrap(op(*new, **kwargs), level)


# -- ops acting on trailing dims only (the batch dim rides along) -----------------------------


def direct_rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
    """Ops whose only tensor is ``self`` and that act elementwise or on trailing dims."""
    s = list(stack)
    for i in plan.tensors:
        v = stack[i]
        if type(v) is BatchedTensor and v._level == level:
            s[i] = v._data
        elif v is not None:
            return DECLINE  # another tensor argument: not this rule's business
    res = plan.call(op, s)
    if plan.mutable:
        return stack[plan.mutable[0]]
    return wrap_result(res, level)


# -- dim-taking ops (Note [Logical dims]) ------------------------------------------------------

# kinds: "dim" an int; "dim?" an int or None (None: every dim, via flattening);
# "dims" a list, empty or None meaning every dim (reductions); "dimlist" a list (empty: none);
# "newdim" an int wrapped against rank + 1 (unsqueeze).
DimSpec = tuple[tuple[str, str], ...]


def _shift(value: Any, kind: str, rank: int) -> Any:
    if kind in ("dim", "dim?"):
        return wrap_dim(value, rank) + 1
    if kind == "newdim":
        return wrap_dim(value, rank + 1, scalar_ok=False) + 1
    dims = [value] if isinstance(value, int) else list(value or [])
    if kind == "dims" and not dims:
        return list(range(1, max(rank, 1) + 1))
    return [wrap_dim(d, rank) + 1 for d in dims]


def dims_rule(spec: DimSpec, scalar_ok: bool = True) -> Rule:
    """A rule for an op whose tensor is ``self`` and whose dim arguments are ``spec``."""

    def rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
        i0 = plan.tensors[0]
        x = stack[i0]
        for j in plan.tensors[1:]:
            if type(stack[j]) is BatchedTensor and stack[j]._level == level:
                return DECLINE
        rank = len(x._shape)
        p = x._data
        scalar = rank == 0 and not any(k == "newdim" for _, k in spec)
        if scalar and not scalar_ok:
            return DECLINE  # let the loop run the op on 0-dim slices (torch's own error)
        if scalar:
            p = p.unsqueeze(1)
        s = list(stack)
        s[i0] = p
        for name, kind in spec:
            k = plan.index(name)
            value = stack[k]
            if kind == "dim?" and value is None:
                return _flattened(op, plan, s, i0, k, rank, level)
            s[k] = _shift(value, kind, 1 if scalar else rank)
        res = plan.call(op, s)
        if scalar:
            res = _squeeze_scalar(res)
        return wrap_result(res, level)

    return rule


def _squeeze_scalar(res: Any) -> Any:
    if isinstance(res, tuple | list):
        return type(res)(_squeeze_scalar(r) for r in res)
    return res.squeeze(1) if res is not None and res.dim() > 1 else res


def _flattened(op: Any, plan: OpPlan, s: list[Any], i0: int, k: int, rank: int, level: int) -> Any:
    """``dim=None`` (argmax, aminmax): reduce the flattened sample, keep keepdim's shape."""
    p = s[i0]
    size = p.shape[0]
    s[i0] = p.reshape([size, -1])
    s[k] = 1
    keep = plan.index("keepdim")
    keepdim = keep >= 0 and bool(s[keep])
    if keep >= 0:
        s[keep] = False
    res = plan.call(op, s)
    if keepdim:
        shape = [size] + [1] * rank
        res = tuple(r.reshape(shape) for r in res) if isinstance(res, tuple) else res.reshape(shape)
    return wrap_result(res, level)


# operators (space-separated names) -> their dim arguments (Note [Logical dims])
DIM_ARGS: dict[str, DimSpec] = {
    "sum.dim_IntList mean.dim amax amin var.correction std.correction var.dim std.dim "
    "norm.ScalarOpt_dim norm.ScalarOpt_dim_dtype logsumexp all.dims any.dims": (("dim", "dims"),),
    "max.dim min.dim prod.dim_int all.dim any.dim cumsum softmax.int log_softmax.int _softmax "
    "_log_softmax sort sort.stable topk squeeze.dim squeeze_copy.dim": (("dim", "dim"),),
    "argmax argmin aminmax": (("dim", "dim?"),),
    "transpose.int transpose_copy.int": (("dim0", "dim"), ("dim1", "dim")),
    "diagonal diagonal_copy": (("dim1", "dim"), ("dim2", "dim")),
    "unsqueeze unsqueeze_copy": (("dim", "newdim"),),
    "flip": (("dims", "dimlist"),),
}
# the same for operators torch refuses on 0-dim tensors (the loop then raises its error)
DIM_ARGS_NO_SCALAR: dict[str, DimSpec] = {
    "select.int select_copy.int slice.Tensor slice_copy.Tensor narrow narrow_copy narrow.Tensor "
    "split.Tensor split.sizes split_with_sizes split_copy.Tensor split_with_sizes_copy chunk "
    "unbind.int unbind_copy.int": (("dim", "dim"),),
    "unfold unfold_copy": (("dimension", "dim"),),
}


def flatten_rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
    """flatten of a 0-dim tensor is 1-dim (the scalar trick would squeeze it back)."""
    x = stack[0]
    if len(x._shape) == 0:
        wrap_dim(stack[1], 0), wrap_dim(stack[2], 0)  # torch's errors for bad dims
        p = x._data
        return wrap(p.reshape([p._shape[0], 1]), level)
    return _FLATTEN_DIMS(op, plan, stack, level)


_FLATTEN_DIMS = dims_rule((("start_dim", "dim"), ("end_dim", "dim")))


def _register_dims() -> None:
    for group, scalar_ok in ((DIM_ARGS, True), (DIM_ARGS_NO_SCALAR, False)):
        for names, spec in group.items():
            for name in names.split():
                RULES[f"aten::{name}"] = dims_rule(spec, scalar_ok)
    RULES["aten::flatten.using_ints"] = flatten_rule
    RULES["aten::cumsum_"] = _inplace_dims(("dim", "dim"))


def _inplace_dims(spec: tuple[str, str]) -> Rule:
    inner = dims_rule((spec,), scalar_ok=True)

    def rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
        x = stack[plan.mutable[0]]
        if not (type(x) is BatchedTensor and x._level == level):
            raise inplace_error()
        inner(op, plan, stack, level)
        return x

    return rule


# -- views and shape ops with sizes -----------------------------------------------------------


def _size_rule(arg: str, expand: bool = False, copy: bool = False) -> Rule:
    """view / reshape / expand: prepend the batch size to the size list (``copy``: the
    ``_copy`` variant, which may make the inner tensor contiguous first)."""

    def rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
        x = stack[0]
        p = x._data
        k = plan.index(arg)
        size = list(stack[k])
        if expand and len(size) > len(x._shape):
            p = _unsqueeze_after_batch(p, len(size) - len(x._shape))
        if copy:
            p = p.contiguous()
        s = list(stack)
        s[0] = p
        s[k] = [p.shape[0], *size]
        return wrap(plan.call(op, s), level)

    return rule


def permute_rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
    x = stack[0]
    rank = len(x._shape)
    dims = [wrap_dim(d, rank, scalar_ok=False) + 1 for d in stack[1]]
    s = [x._data, [0, *dims]]
    return wrap(plan.call(op, s), level)


def t_rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
    x = stack[0]
    from tensordispatch import ops

    if len(x._shape) < 2:
        p = x._data
        return wrap(ops.aten.alias.default(p) if op.name() == "aten::t" else p.clone(), level)
    name = "transpose" if op.name() == "aten::t" else "transpose_copy"
    transpose = getattr(ops.aten, name).int
    return wrap(transpose(x._data, 1, 2), level)


def repeat_rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
    x = stack[0]
    reps = list(stack[1])
    p = x._data
    if len(reps) > len(x._shape):
        p = _unsqueeze_after_batch(p, len(reps) - len(x._shape))
    return wrap(plan.call(op, [p, [1, *reps]]), level)


def roll_rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
    x = stack[0]
    p = x._data
    dims = stack[2]
    dims = [dims] if isinstance(dims, int) else list(dims)
    if dims:
        return wrap(
            plan.call(op, [p, stack[1], [wrap_dim(d, len(x._shape)) + 1 for d in dims]]), level
        )
    size = p.shape[0]
    flat = p.reshape([size, -1])
    rolled = plan.call(op, [flat, stack[1], [1]])
    return wrap(rolled.reshape(list(p.shape)), level)


def squeeze_rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
    """squeeze() / squeeze(dims): the logical size-1 dims named (all of them by default)."""
    x = stack[0]
    rank = len(x._shape)
    if len(stack) > 1:
        given = stack[1]
        dims = [wrap_dim(d, rank) for d in ([given] if isinstance(given, int) else given)]
    else:
        dims = list(range(rank))
    dims = [d + 1 for d in dims if rank and x._shape[d] == 1]
    from tensordispatch import ops

    target = ops.aten.squeeze_copy.dims if "copy" in plan.name else ops.aten.squeeze.dims
    return wrap(target(x._data, dims), level)


def _register_views() -> None:
    for name in ("squeeze", "squeeze.dims", "squeeze_copy", "squeeze_copy.dims"):
        RULES[f"aten::{name}"] = squeeze_rule
    RULES["aten::view"] = _size_rule("size")
    RULES["aten::view_copy"] = _size_rule("size", copy=True)
    RULES["aten::reshape"] = _size_rule("shape")
    for name in ("expand", "expand_copy"):
        RULES[f"aten::{name}"] = _size_rule("size", expand=True)
    for name in ("permute", "permute_copy"):
        RULES[f"aten::{name}"] = permute_rule
    for name in ("t", "t_copy"):
        RULES[f"aten::{name}"] = t_rule
    RULES["aten::repeat"] = repeat_rule
    RULES["aten::roll"] = roll_rule


_DIRECT = (
    "clone",
    "contiguous",
    "alias",
    "alias_copy",
    "_conj",  # the result wraps the view: the BatchedTensor carries the bit, as torch's
    "_conj_copy",
    "_neg_view",
    "_neg_view_copy",
    "detach",
    "detach_copy",
    "_to_copy",
    "to.dtype",
    "to.dtype_layout",
    "to.device",
    "tril",
    "triu",
    "tril_",
    "triu_",
    "fill_.Scalar",
    "fill.Scalar",
    "zeros_like",
    "ones_like",
    "empty_like",
    "full_like",
    "view_as_real",
    "view_as_real_copy",
    "view_as_complex",
    "view_as_complex_copy",
    "zero",
    "zero_",
)


def install_part1() -> None:
    """Fill RULES with this module's rules."""
    from tensordispatch.dispatch import DISPATCHER

    for entry in DISPATCHER.live_entries():
        if not entry.qualified_name.startswith("aten::") or "pointwise" not in entry.tags:
            continue
        if entry.schema is not None and entry.schema.is_out_fn():
            continue  # out= variants loop (their outputs are resized per sample)
        RULES[entry.qualified_overload_name] = pointwise_rule
    pointwise = {e.qualified_name for e in DISPATCHER.live_entries() if "pointwise" in e.tags}
    for entry in DISPATCHER.live_entries():
        name = entry.qualified_name
        schema = entry.schema
        if schema is None or not name.endswith("_") or schema.is_out_fn():
            continue
        if name[:-1] in pointwise:  # add_ of pointwise add, eq_ of eq, ...
            RULES[entry.qualified_overload_name] = pointwise_rule
    for name in (
        "copy_",
        "copy",
        "masked_fill_.Scalar",
        "masked_fill.Scalar",
        "floor_divide",
        "floor_divide.Scalar",
        "floor_divide_.Tensor",
        "floor_divide_.Scalar",
        "rsub.Tensor",
    ):
        RULES[f"aten::{name}"] = pointwise_rule
    for name in _DIRECT:
        RULES[f"aten::{name}"] = direct_rule
    _register_dims()
    _register_views()
