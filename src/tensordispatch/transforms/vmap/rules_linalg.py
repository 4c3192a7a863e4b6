"""Batching rules, part 2: the matmul family, cat/stack, index_select/gather, masked_fill,
full reductions (no dim argument), embedding, the SVD.

Same rule convention as rules.py. Several rules are decompositions at the logical level:
they call other operators on the BatchedTensors themselves (``addmm = self*beta +
alpha*mm(...)``), which re-enter the batching kernel and use those operators' rules (torch's
FuncTorchBatchedDecomposition does the same for its composite operators).
"""

from __future__ import annotations

from typing import Any

from tensordispatch.transforms.vmap.batched import BatchedTensor, wrap
from tensordispatch.transforms.vmap.plan import OpPlan
from tensordispatch.transforms.vmap.rules import (
    DECLINE,
    RULES,
    inplace_error,
    wrap_dim,
    wrap_result,
)

__all__ = ["install_part2"]


def _unwrap(x: Any, level: int) -> tuple[Any, bool]:
    if type(x) is BatchedTensor and x._level == level:
        return x._data, True
    return x, False


def _matmul_physical(a: Any, ab: bool, b: Any, bb: bool) -> Any:
    """Batched matrix product of inner tensors; an unbatched side broadcasts over the batch."""
    return a.matmul(b)


def mm_rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
    a, b = stack[0], stack[1]
    if len(a._shape) != 2:
        raise RuntimeError("self must be a matrix")
    if len(b._shape) != 2:
        raise RuntimeError("mat2 must be a matrix")
    pa, ab = _unwrap(a, level)
    pb, bb = _unwrap(b, level)
    return wrap(_matmul_physical(pa, ab, pb, bb), level)


def bmm_rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
    a, b = stack[0], stack[1]
    if len(a._shape) != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if len(b._shape) != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    pa, ab = _unwrap(a, level)
    pb, bb = _unwrap(b, level)
    return wrap(_matmul_physical(pa, ab, pb, bb), level)


def mv_rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
    a, v = stack[0], stack[1]
    if len(a._shape) != 2 or len(v._shape) != 1:
        return DECLINE  # the loop raises torch's own message
    pa, _ = _unwrap(a, level)
    pv, vb = _unwrap(v, level)
    if vb:
        out = pa.matmul(pv.unsqueeze(-1)).squeeze(-1)  # [B,n,m]@[B,m,1] or [n,m]@[B,m,1]
    else:
        out = pa.matmul(pv)
    return wrap(out, level)


def dot_rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
    a, b = stack[0], stack[1]
    if len(a._shape) != 1 or len(b._shape) != 1 or a.dtype != b.dtype:
        return DECLINE
    pa, _ = _unwrap(a, level)
    pb, _ = _unwrap(b, level)
    if pa.dim() == 1:
        pa, pb = pb, pa
    out = pa.unsqueeze(-2).matmul(pb.unsqueeze(-1)).squeeze(-1).squeeze(-1)
    return wrap(out, level)


def _addmm_like(mul_name: str) -> Any:
    def rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
        import tensordispatch as td

        self, m1, m2, beta, alpha = stack
        if plan.mutable and not (type(self) is BatchedTensor and self._level == level):
            raise inplace_error()
        prod = getattr(td, mul_name)(m1, m2)
        if mul_name == "bmm" and op.name().startswith("aten::addbmm"):
            prod = prod.sum(0)
        if alpha != 1:
            prod = prod * alpha
        if beta == 0:
            out = td.add(prod, td.zeros_like(self))  # beta=0 ignores self's values
        elif beta == 1:
            out = td.add(self, prod)
        else:
            out = td.add(self * beta, prod)
        if plan.mutable:
            self.copy_(out)
            return self
        return out

    return rule


def matmul_rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
    """torch.matmul on inner tensors: 1-D batched operands become matrices, the batched
    operands are padded so their batch dim stays in front of the broadcast batch dims."""
    a, b = stack[0], stack[1]
    ra, rb = len(a._shape), len(b._shape)
    if ra == 0 or rb == 0:
        return DECLINE  # the loop raises matmul's own error
    pa, ab = _unwrap(a, level)
    pb, bb = _unwrap(b, level)
    if ab and not bb and rb <= 2:
        # an unbatched matrix or vector on the right: the batch dim is one more leading dim
        # of the left operand (a batched vector is a matrix), so one mm / matmul does it
        if len(pa._shape) == 2:
            return wrap(pa.mm(pb) if rb == 2 else pa.mv(pb), level)
        return wrap(pa.matmul(pb), level)
    squeeze = []
    if ra == 1 and ab:
        pa, ra = pa.unsqueeze(-2), 2
        squeeze.append(-2 if rb > 1 else -1)
    if rb == 1 and bb:
        pb, rb = pb.unsqueeze(-1), 2
        squeeze.append(-1)
    if ra >= 2 and rb >= 2:
        rank = max(ra, rb)
        if ab and ra < rank:
            pa = _pad(pa, rank - ra)
        if bb and rb < rank:
            pb = _pad(pb, rank - rb)
    if pa.dim() == 3 and pb.dim() == 3 and pa.shape[0] == pb.shape[0]:
        out = pa.bmm(pb)  # matmul's own decomposition would reshape to exactly this
    else:
        out = pa.matmul(pb)
    for d in squeeze:
        out = out.squeeze(d)
    return wrap(out, level)


def _pad(p: Any, count: int) -> Any:
    for _ in range(count):
        p = p.unsqueeze(1)
    return p


def cat_rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
    tensors, dim = stack[0], stack[1]
    size = next(
        t._data._shape[0] for t in tensors if type(t) is BatchedTensor and t._level == level
    )
    # torch skips legacy empty 1-D tensors ([0]) when the others have another rank
    ranks = {len(t._shape) for t in tensors if t._shape != (0,)}
    rank = ranks.pop() if len(ranks) == 1 else (len(tensors[0]._shape))
    phys = []
    for t in tensors:
        if t._shape == (0,) and rank != 1:
            continue
        p, b = _unwrap(t, level)
        phys.append(p if b else p.expand([size, *t._shape]))
    if not phys:
        return DECLINE
    return wrap(plan.call(op, [phys, wrap_dim(dim, rank) + 1]), level)


def stack_rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
    tensors, dim = stack[0], stack[1]
    size = next(
        t._data._shape[0] for t in tensors if type(t) is BatchedTensor and t._level == level
    )
    rank = len(tensors[0]._shape)
    phys = []
    for t in tensors:
        p, b = _unwrap(t, level)
        phys.append(p if b else p.expand([size, *t._shape]))
    return wrap(plan.call(op, [phys, wrap_dim(dim, rank + 1, scalar_ok=False) + 1]), level)


def index_select_rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
    x, dim, index = stack
    rank = len(x._shape)
    if rank == 0 or len(index._shape) > 1:
        return DECLINE
    d = wrap_dim(dim, rank) + 1
    px, xb = _unwrap(x, level)
    pi, ib = _unwrap(index, level)
    if not ib:
        return wrap(plan.call(op, [px, d, pi]), level)
    size = pi._shape[0]
    if not xb:
        px = px.expand([size, *x._shape])
    # result[b] = x[b].index_select(d, index[b]): a gather along d with the index spread
    k = pi._shape[1] if len(pi._shape) > 1 else 1
    shape = [size] + [1] * rank
    shape[d] = k
    idx = pi.reshape(shape)
    target = list(px.shape)
    target[d] = k
    return wrap(px.gather(d, idx.expand(target)), level)


def gather_rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
    x, dim, index, sparse_grad = stack
    rank = len(x._shape)
    if rank != len(index._shape):
        return DECLINE
    px, xb = _unwrap(x, level)
    pi, ib = _unwrap(index, level)
    size = (px if xb else pi)._shape[0]
    if not xb:
        px = px.expand([size, *x._shape])
    if not ib:
        pi = pi.expand([size, *index._shape])
    if rank == 0:
        wrap_dim(dim, 0)
        out = plan.call(op, [px.unsqueeze(1), 1, pi.unsqueeze(1), sparse_grad]).squeeze(1)
        return wrap(out, level)
    return wrap(plan.call(op, [px, wrap_dim(dim, rank) + 1, pi, sparse_grad]), level)


def scatter_rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
    """scatter / scatter_add (and in-place): every tensor made batched, dim shifted by one."""
    x = stack[0]
    rank = len(x._shape)
    if rank == 0:
        return DECLINE
    if plan.mutable and not (type(x) is BatchedTensor and x._level == level):
        from tensordispatch.transforms.vmap.rules import inplace_error

        raise inplace_error()
    size = next(
        stack[i]._data._shape[0]
        for i in plan.tensors
        if type(stack[i]) is BatchedTensor and stack[i]._level == level
    )
    s = list(stack)
    for i in plan.tensors:
        p, b = _unwrap(stack[i], level)
        s[i] = p if b else p.expand([size, *stack[i]._shape])
    s[1] = wrap_dim(stack[1], rank) + 1
    out = plan.call(op, s)
    return x if plan.mutable else wrap(out, level)


def index_rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
    """x[indices] with unbatched, adjacent index tensors: a leading full slice for the batch."""
    x, indices = stack[0], stack[1]
    if not (type(x) is BatchedTensor and x._level == level):
        return DECLINE
    given = [i for i, t in enumerate(indices) if t is not None]
    if any(type(indices[i]) is BatchedTensor and indices[i]._level == level for i in given):
        return DECLINE
    if given and given[-1] - given[0] + 1 != len(given):
        return DECLINE  # separated advanced indices move their dims to the front
    return wrap(plan.call(op, [x._data, [None, *indices]]), level)


def masked_fill_tensor_rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
    import tensordispatch as td

    x, mask, value = stack
    if not (type(value) is BatchedTensor and value._level == level):
        from tensordispatch.transforms.vmap.rules import pointwise_rule

        return pointwise_rule(op, plan, stack, level)
    if value.dim() != 0:
        return DECLINE
    out = td.where(mask, value.to(x.dtype), x)
    if plan.mutable:
        if not (type(x) is BatchedTensor and x._level == level):
            raise inplace_error()
        x.copy_(out)
        return x
    return out


def _full_reduction(dim_op: str, build: Any) -> Any:
    """Ops that reduce every dim: reduce the flattened sample with the dim overload."""

    targets: list[Any] = []  # the dim overload, resolved on first use

    def rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
        if not targets:
            from tensordispatch import ops

            name, overload = dim_op.split(".")
            targets.append(getattr(getattr(ops.aten, name), overload))
        target = targets[0]
        p = stack[0]._data
        # already [batch, n]: no reshape, so no extra node in an autograd graph
        flat = p if len(p._shape) == 2 else p.reshape([p._shape[0], -1])
        args, kwargs = build(flat, stack)
        return wrap(target(*args, **kwargs), level)

    return rule


def embedding_rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
    weight, indices = stack[0], stack[1]
    if type(weight) is BatchedTensor and weight._level == level:
        return DECLINE
    s = list(stack)
    s[1] = indices._data
    return wrap(plan.call(op, s), level)


def native_layer_norm_rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
    """Normalizes trailing dims, so the batch dim rides along; batched weight/bias are
    applied afterwards at the logical level."""
    x, shape, weight, bias, eps = stack
    if not (type(x) is BatchedTensor and x._level == level):
        return DECLINE
    affine_batched = any(type(t) is BatchedTensor and t._level == level for t in (weight, bias))
    if not affine_batched:
        return wrap_result(op(x._data, shape, weight, bias, eps), level)
    out, mean, rstd = wrap_result(op(x._data, shape, None, None, eps), level)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out, mean, rstd


_NONE, _MEAN, _SUM = 0, 1, 2  # at::Reduction


def nll_loss_forward_rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
    """nll_loss over a batch of (N, C) or (C,) inputs: one unreduced call on the flattened
    batch, then each sample's own reduction and total weight."""
    x, target, weight, reduction, ignore_index = stack
    if len(x._shape) not in (1, 2) or type(weight) is BatchedTensor:
        return DECLINE
    px, xb = _unwrap(x, level)
    pt, tb = _unwrap(target, level)
    size = (px if xb else pt)._shape[0]
    if not xb:
        px = px.expand([size, *x._shape])
    if not tb:
        pt = pt.expand([size, *target._shape])
    classes = x._shape[-1]
    n = 1 if len(x._shape) == 1 else x._shape[0]
    flat_t = pt.reshape([size * n])
    losses = op(px.reshape([size * n, classes]), flat_t, weight, _NONE, ignore_index)[0]
    losses = losses.reshape([size, n])
    valid = (flat_t != ignore_index).to(x.dtype)
    if weight is not None:
        valid = valid * weight.index_select(0, flat_t.clamp(0, classes - 1))
    total = valid.reshape([size, n]).sum(1)
    if reduction == _NONE:
        out = losses.reshape([size, *target._shape])
    elif reduction == _SUM:
        out = losses.sum(1)
    else:
        out = losses.sum(1) / total
    return wrap(out, level), wrap(total, level)


def linalg_svd_rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
    """_linalg_svd works on batches of matrices: the batch dim is one more batch dim. Without
    ``compute_uv`` U and Vh are empty [0] tensors, returned unbatched (as torch's rule)."""
    a = stack[0]
    if len(a._shape) < 2:  # the physical tensor has one more dim: check the logical rank
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    s = list(stack)
    s[0] = a._data
    u, sv, vh = plan.call(op, s)
    if not stack[2]:
        return u, wrap(sv, level), vh
    return wrap(u, level), wrap(sv, level), wrap(vh, level)


def install_part2() -> None:
    """Fill RULES with this module's rules."""
    RULES["aten::matmul"] = matmul_rule
    RULES["aten::mm"] = mm_rule
    RULES["aten::bmm"] = bmm_rule
    RULES["aten::mv"] = mv_rule
    RULES["aten::dot"] = dot_rule
    RULES["aten::addmm"] = _addmm_like("mm")
    RULES["aten::addmm_"] = _addmm_like("mm")
    RULES["aten::addmv"] = _addmm_like("mv")
    RULES["aten::addmv_"] = _addmm_like("mv")
    RULES["aten::baddbmm"] = _addmm_like("bmm")
    RULES["aten::baddbmm_"] = _addmm_like("bmm")
    RULES["aten::addbmm"] = _addmm_like("bmm")
    RULES["aten::addbmm_"] = _addmm_like("bmm")
    RULES["aten::cat"] = cat_rule
    RULES["aten::_linalg_svd"] = linalg_svd_rule
    RULES["aten::stack"] = stack_rule
    RULES["aten::index_select"] = index_select_rule
    RULES["aten::gather"] = gather_rule
    RULES["aten::masked_fill.Tensor"] = masked_fill_tensor_rule
    RULES["aten::masked_fill_.Tensor"] = masked_fill_tensor_rule
    RULES["aten::embedding"] = embedding_rule
    RULES["aten::index.Tensor"] = index_rule
    RULES["aten::native_layer_norm"] = native_layer_norm_rule
    RULES["aten::nll_loss_forward"] = nll_loss_forward_rule
    for name in (
        "scatter.src",
        "scatter.value",
        "scatter.reduce",
        "scatter.value_reduce",
        "scatter_add",
        "scatter_.src",
        "scatter_.value",
        "scatter_.reduce",
        "scatter_.value_reduce",
        "scatter_add_",
    ):
        RULES[f"aten::{name}"] = scatter_rule
    full = {
        "sum": ("sum.dim_IntList", lambda f, s: ((f, [1]), {"dtype": s[1]})),
        "mean": ("mean.dim", lambda f, s: ((f, [1]), {"dtype": s[1]})),
        "prod": ("prod.dim_int", lambda f, s: ((f, 1), {"dtype": s[1]})),
        "max": ("amax.default", lambda f, s: ((f, [1]), {})),
        "min": ("amin.default", lambda f, s: ((f, [1]), {})),
        "all": ("all.dim", lambda f, s: ((f, 1), {})),
        "any": ("any.dim", lambda f, s: ((f, 1), {})),
        "var": ("var.correction", lambda f, s: ((f, [1]), {"correction": 1 if s[1] else 0})),
        "std": ("std.correction", lambda f, s: ((f, [1]), {"correction": 1 if s[1] else 0})),
        "norm.Scalar": ("norm.ScalarOpt_dim", lambda f, s: ((f, s[1], [1]), {})),
    }
    for name, (dim_op, build) in full.items():
        RULES[f"aten::{name}"] = _full_reduction(dim_op, build)
