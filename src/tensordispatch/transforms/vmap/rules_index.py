"""Batching rules for as_strided, index_put, nll_loss2d and the in-place view ops (torch's
semantics, our physical layout).

Note [as_strided under vmap]
Per sample, ``x.as_strided(size, stride, offset)`` reads the sample's own memory: torch
takes ``offset`` as the storage offset of sample 0 and moves it by the batch stride for
each further sample, so the physical call is ``p.as_strided([B, *size], [batch_stride,
*stride], offset)``. A result that would reach memory outside sample 0's own tensor is
refused with torch's error (the samples would read each other's values).

Note [index_put as one advanced index]
``x.index_put(indices, values)`` per sample becomes one physical index_put in which every
indexed dim gets an index tensor: an ``arange(B)`` for the batch dim, an ``arange(S_j)``
for a ``None`` (full slice) among the indices, the given index tensors (batched ones keep
their batch dim in front). All index tensors are shaped so that they broadcast to
``[B, *layout]``, where ``layout`` is the per-sample indexed shape by torch's rule (the
broadcast index shape in place of the indexed dims when the given indices are adjacent,
in front otherwise), so ``values`` lines up after its batch dim. Boolean masks decline
(the loop runs them) when they are
not batched; a batched mask is refused with torch's error (data-dependent shapes).
"""

from __future__ import annotations

from typing import Any

from tensordispatch.transforms.vmap.batched import BatchedTensor, wrap
from tensordispatch.transforms.vmap.plan import OpPlan
from tensordispatch.transforms.vmap.rules import DECLINE, RULES, inplace_error, wrap_dim

__all__ = ["install_part3"]


def _extent(shape: Any, strides: Any, offset: int) -> tuple[int, int]:
    """[first, last + 1) storage range an element of the geometry can reach."""
    return offset, offset + sum((s - 1) * st for s, st in zip(shape, strides, strict=True)) + 1


def as_strided_rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
    """Note [as_strided under vmap]."""
    x, size, stride, offset = stack[0], list(stack[1]), list(stack[2]), stack[3]
    if not (type(x) is BatchedTensor and x._level == level) or len(size) != len(stride):
        return DECLINE  # the loop raises as_strided's own error
    p = x._data
    off = p._offset if offset is None else offset
    if 0 not in size and 0 not in x._shape:
        lo, hi = _extent(size, stride, off)
        own_lo, own_hi = _extent(x._shape, x._strides, p._offset)
        if lo < own_lo or hi > own_hi:
            raise RuntimeError(
                f"result = tensor.as_strided({size}, {stride}, {off}) can access memory "
                "outside of `tensor`. `result` can access some memory in range "
                f"[{lo}, {hi}], but `tensor` can only access some memory in range "
                f"[{own_lo}, {own_hi}]. This is not supported inside of vmap, please try to "
                "rewrite the `as_strided` call as a sequence of PyTorch view operations"
            )
    physical = [p, [p._shape[0], *size], [p._strides[0], *stride], off]
    return wrap(plan.call(op, physical), level)


def _layout(x: Any, indices: list[Any]) -> tuple[list[int], dict[int, int], int, int] | None:
    """Note [index_put as one advanced index]: the per-sample indexed sizes, the layout
    position of each ``None``, where the broadcast index block starts and its rank; None
    for boolean or floating index tensors, or no index tensor at all."""
    given = [j for j, t in enumerate(indices) if t is not None]
    if not given:
        return None
    for j in given:
        dt = indices[j].dtype
        if dt.is_floating_point or dt.name in ("bool", "uint8"):
            return None
    rank = max(len(indices[j]._shape) for j in given)
    bshape = [1] * rank
    for j in given:
        shape = indices[j]._shape
        for k, size in enumerate(shape):
            if size != 1:
                bshape[rank - len(shape) + k] = size
    adjacent = given == list(range(given[0], given[-1] + 1))
    sizes: list[int] = [] if adjacent else list(bshape)
    block, nones = 0, {}
    for j, t in enumerate(indices):
        if t is None:
            nones[j] = len(sizes)
            sizes.append(x._shape[j])
        elif adjacent and j == given[0]:
            block = len(sizes)
            sizes.extend(bshape)
    return sizes, nones, block, rank


def _index_tensors(x: Any, indices: list[Any], level: int, size: int) -> Any:
    from tensordispatch import arange, int64

    layout = _layout(x, indices)
    if layout is None:
        return None, 0
    sizes, nones, block, rank = layout
    n = len(sizes)
    out = [arange(size, dtype=int64, device=x.device).reshape([size, *[1] * n])]
    for j, t in enumerate(indices):
        if t is None:
            pos = nones[j]
            shape = [1, *[1] * pos, x._shape[j], *[1] * (n - pos - 1)]
            out.append(arange(x._shape[j], dtype=int64, device=x.device).reshape(shape))
            continue
        batched = type(t) is BatchedTensor and t._level == level
        inner = t._data if batched else t
        own = list(t._shape)
        lead = block + rank - len(own)
        out.append(
            inner.reshape([size if batched else 1, *[1] * lead, *own, *[1] * (n - lead - len(own))])
        )
    return out, n + len(x._shape) - len(indices)


def index_put_rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
    """Note [index_put as one advanced index] (index_put and index_put_)."""
    x, indices, values, accumulate = stack[0], list(stack[1]), stack[2], stack[3]
    x_batched = type(x) is BatchedTensor and x._level == level
    size = next(
        t._data._shape[0]
        for t in (x, values, *indices)
        if type(t) is BatchedTensor and t._level == level
    )
    for t in indices:
        if type(t) is BatchedTensor and t._level == level and t.dtype.name in ("bool", "uint8"):
            raise RuntimeError(
                "vmap: We do not support batching operators that can support dynamic shape. "
                "Attempting to batch over indexing with a boolean mask."
            )
    idx, total = _index_tensors(x, indices, level, size)
    if idx is None:
        return DECLINE
    if type(values) is BatchedTensor and values._level == level:
        own = list(values._shape)
        if len(own) > total:
            return DECLINE  # the loop raises index_put's own error
        values = values._data.reshape([size, *[1] * (total - len(own)), *own])
    if plan.mutable:
        if not x_batched:
            raise inplace_error()
        plan.call(op, [x._data, idx, values, accumulate])
        return x
    p = x._data if x_batched else x.expand([size, *x._shape]).contiguous()
    return wrap(plan.call(op, [p, idx, values, accumulate]), level)


def nll_loss2d_forward_rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
    """nll_loss2d over a batch of (N, C, H, W) inputs: the batch folds into N for one
    unreduced call, then each sample's own reduction and total weight (as nll_loss)."""
    x, target, weight, reduction, ignore_index = stack
    if len(x._shape) != 4 or len(target._shape) != 3 or type(weight) is BatchedTensor:
        return DECLINE  # the loop raises the operator's own error
    xb = type(x) is BatchedTensor and x._level == level
    tb = type(target) is BatchedTensor and target._level == level
    px, pt = (x._data if xb else x), (target._data if tb else target)
    size = (px if xb else pt)._shape[0]
    if not xb:
        px = px.expand([size, *x._shape])
    if not tb:
        pt = pt.expand([size, *target._shape])
    n, classes, h, w = x._shape
    flat_t = pt.reshape([size * n, h, w])
    losses = op(px.reshape([size * n, classes, h, w]), flat_t, weight, 0, ignore_index)[0]
    losses = losses.reshape([size, n * h * w])
    flat = flat_t.reshape([size * n * h * w])
    valid = (flat != ignore_index).to(x.dtype)
    if weight is not None:
        valid = valid * weight.index_select(0, flat.clamp(0, classes - 1))
    total = valid.reshape([size, n * h * w]).sum(1)
    if reduction == 0:  # none: torch reports a total weight of 0
        out, total = losses.reshape([size, *target._shape]), total * 0
    elif reduction == 2:  # sum
        out = losses.sum(1)
    else:
        out = losses.sum(1) / total
    return wrap(out, level), wrap(total, level)


def inplace_view_rule(op: Any, plan: OpPlan, stack: list[Any], level: int) -> Any:
    """``x.transpose_(...)`` and friends: the same in-place view on the caller's tensor (its
    batch dim where it was mapped), then ``x`` takes the new logical geometry."""
    x = stack[0]
    if not (type(x) is BatchedTensor and x._level == level):
        return DECLINE
    sources = _sources_of(level)
    source = sources.get(id(x))
    if source is None or source[0] is not x:
        source = None
        p, bd = x._data, 0
    else:
        p, bd = source[1], source[2]
    new_bd = _apply_inplace_view(plan.name, p, bd, x._shape, stack)
    if source is not None:
        from tensordispatch.transforms.vmap.batched import move_to_front

        x._data = move_to_front(p, new_bd)
        sources[id(x)] = (x, p, new_bd)
        p = x._data
    x._shape, x._strides, x._offset = p._shape[1:], p._strides[1:], p._offset
    return x


# Note [In-place views keep the caller's batch dim]
# torch applies x.unsqueeze_(d) / squeeze_ / transpose_ / t_ to the physical tensor, whose
# batch dim stays where the caller mapped it (a logical dim k is physical k below the batch
# dim, k + 1 from it on), so the caller's tensor changes shape even with in_dims != 0. Our
# inner tensor is a permuted view with the batch dim in front; vmap records the caller's
# tensor and in_dim on the level (VmapLevel.sources), and this rule acts on that tensor,
# then re-derives the inner view.


def _sources_of(level: int) -> dict[int, tuple[Any, Any, int]]:
    from tensordispatch.transforms.vmap.batched import VmapLevel, current_levels

    for lvl in current_levels():
        if type(lvl) is VmapLevel and lvl.level == level:
            return lvl.sources
    return {}


def _apply_inplace_view(name: str, p: Any, bd: int, shape: Any, stack: list[Any]) -> int:
    """Apply the in-place view op to ``p`` (batch dim ``bd``); the new batch dim."""
    rank = len(shape)

    def phys(d: int) -> int:
        return d if d < bd else d + 1

    if name == "aten::unsqueeze_":
        at = phys(wrap_dim(stack[1], rank + 1, scalar_ok=False))
        p.unsqueeze_(at)
        return bd + 1 if at <= bd else bd
    if name == "aten::transpose_":
        p.transpose_(phys(wrap_dim(stack[1], rank)), phys(wrap_dim(stack[2], rank)))
        return bd
    if name == "aten::t_":
        if rank == 2:
            p.transpose_(phys(0), phys(1))
        return bd
    # squeeze_, squeeze_.dim, squeeze_.dims
    given = stack[1] if len(stack) > 1 else list(range(rank))
    given = [given] if isinstance(given, int) else given
    dims = {wrap_dim(d, rank) for d in given}
    for d in sorted(dims, reverse=True):  # last first: earlier dims keep their index
        if shape[d] == 1:
            at = phys(d)
            p.squeeze_(at)
            if at < bd:
                bd -= 1
    return bd


def install_part3() -> None:
    """Fill RULES with this module's rules."""
    RULES["aten::nll_loss2d_forward"] = nll_loss2d_forward_rule
    for name in ("unsqueeze_", "squeeze_", "squeeze_.dim", "squeeze_.dims", "transpose_", "t_"):
        RULES[f"aten::{name}"] = inplace_view_rule
    RULES["aten::as_strided"] = as_strided_rule
    RULES["aten::index_put"] = index_put_rule
    RULES["aten::index_put_"] = index_put_rule
