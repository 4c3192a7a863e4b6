"""Autograd kernels of the operators the fast path of kernels.py does not cover: several
outputs (max.dim, sort, native_layer_norm), Tensor[] outputs (split, unbind), Tensor[] or
Tensor? inputs (cat, stack, clamp.Tensor), formulas for several inputs at once.

Owns recording such a call: one edge per differentiable tensor (a list input contributes
one edge per element, a missing optional one ``(None, 0)``), the layout that maps each
formula's gradients back to its edges, linking every differentiable output with its
output number. Must not run graphs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tensordispatch.autograd.derivatives import DifferentiabilityInfo
from tensordispatch.autograd.entries import autograd_entry
from tensordispatch.autograd.graph import SavedTensor, collect_next_edges, meta_of
from tensordispatch.tensor import Tensor

__all__ = ["make_general_kernel"]

_Slots = tuple[tuple[int, int], ...]


def _binds(info: DifferentiabilityInfo) -> list[tuple[str, Callable[..., Any], bool]]:
    from tensordispatch.autograd.kernels import _arg_getter

    out = []
    for a in info.schema.arguments:
        if a.name in info.inputs:
            is_list = a.type.is_list_like() is not None
            out.append((a.name, _arg_getter(info.schema, a.name), is_list))
    return out


def _flatten(
    binds: list[tuple[str, Callable[..., Any], bool]],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> tuple[list[Tensor | None], dict[str, tuple[int, int]]]:
    flat: list[Tensor | None] = []
    slots: dict[str, tuple[int, int]] = {}
    for name, get, is_list in binds:
        v = get(args, kwargs)
        if is_list:
            slots[name] = (len(flat), len(v))
            flat.extend(v)
        else:
            slots[name] = (len(flat), -1)
            flat.append(v)
    return flat, slots


def _differentiable_if(info: DifferentiabilityInfo) -> Callable[..., bool] | None:
    from tensordispatch.autograd.kernels import _arg_getter

    cond = info.differentiable_if
    if cond is None:
        return None
    names = cond.__code__.co_varnames[: cond.__code__.co_argcount]
    getters = [_arg_getter(info.schema, n) for n in names]
    return lambda args, kw: bool(cond(*[g(args, kw) for g in getters]))


def make_general_kernel(
    info: DifferentiabilityInfo, node_cls: type[Any], inplace: bool
) -> Callable[..., Any]:
    """The RAW_KEYSET autograd kernel of ``info``'s operator (or its in-place variant)."""
    from tensordispatch.autograd import kernels as k
    from tensordispatch.autograd.views import mark_view, rebase_history

    plan = k._save_plan(info)
    binds = _binds(info)
    diff_if = _differentiable_if(info)
    reads_self = inplace and any("self" in f.names for f in info.formulas)
    saved_outputs = [(n, info.outputs.index(n)) for n in info.saved if n in info.outputs]

    # Without list inputs the edge layout is the same for every call: computed once.
    static = not any(is_list for _, _, is_list in binds)
    getters = [get for _, get, _ in binds]
    fixed: tuple[_Slots, ...] = ()
    edges_of: list[list[int]] = []
    if static:
        where = {name: i for i, (name, _, _) in enumerate(binds)}
        fixed = tuple(tuple((where[n], -1) for n in f.input_names) for f in info.formulas)
        edges_of = [[where[n] for n in f.input_names] for f in info.formulas]

    def record(raw: int, op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if inplace:
            k.check_inplace(args[0])
        if static:
            flat = [get(args, kwargs) for get in getters]
            needed = tuple([t is not None and k._requires_grad(t) for t in flat])
            layout = fixed
            per_formula = tuple([any(map(needed.__getitem__, idx)) for idx in edges_of])
        else:
            flat, slots = _flatten(binds, args, kwargs)
            needed = tuple([t is not None and k._requires_grad(t) for t in flat])
            layout = tuple(tuple(slots[n] for n in f.input_names) for f in info.formulas)
            per_formula = tuple(
                any(any(needed[a : a + max(n, 1)]) if n != 0 else False for a, n in fs)
                for fs in layout
            )
        node = node_cls()
        node.next_functions = collect_next_edges(tuple(flat))
        node._input_meta = tuple([None if t is None else (t._shape, t.dtype) for t in flat])
        node._needed = needed
        node._layout = layout
        save_args = args
        if reads_self and any(per_formula):
            save_args = (k._clone_below(args[0]), *args[1:])
        node._saved = k._save(plan, save_args, kwargs, per_formula)
        result = k._below_ad_inplace_or_view(op, raw & k._AFTER, args, kwargs)
        if inplace:
            rebase_history(args[0], node)
            outs: list[Any] = [args[0]]
        else:
            outs = list(result) if (info.returns_list or len(info.outputs) > 1) else [result]
            if diff_if is None or diff_if(args, kwargs):
                _link(info, node, outs)
        node._n_outputs = len(outs)
        for name, i in saved_outputs:
            node._saved[name] = SavedTensor(outs[i], True)
        return result

    fresh = not inplace and not k._aliases(info.schema)
    positions = tuple(i for i, a in enumerate(info.schema.arguments) if a.name in info.inputs)
    reset = _fresh_all if fresh else None
    view = None
    if not inplace and not fresh:  # a view op: creation meta (views.py)
        several = info.returns_list or len(info.outputs) > 1
        view = lambda r, src: mark_view(r, src, several)

    def kernel(raw: int, op: Any, *args: Any, **kwargs: Any) -> Any:
        if k._ST.grad_enabled:
            for _, get, is_list in binds:
                v = get(args, kwargs)
                if any(k._requires_grad(t) for t in v) if is_list else k._requires_grad(v):
                    return record(raw, op, args, kwargs)
        r = op.redispatch(raw & k._AFTER, *args, **kwargs)
        if view is not None:
            view(r, args[positions[0]] if positions else None)
        if fresh:
            for t in r if type(r) in (tuple, list) else (r,):
                if isinstance(t, Tensor) and t._vc is not None:
                    k.fresh_version(t, args)
        return r

    if not any(is_list for _, _, is_list in binds):  # generated entry (entries.py)
        kernel._td_specialize = lambda op, raw: autograd_entry(  # type: ignore[attr-defined]
            op, raw, positions, record, reset, None, True, view
        )
    return kernel


def _fresh_all(result: Any, args: tuple[Any, ...]) -> None:
    """Version 0 for each fresh tensor an operator returns (Note [Fresh outputs at version
    0] in kernels.py), for the generated entries of several-output operators."""
    from tensordispatch.autograd.kernels import fresh_version

    for t in result if type(result) in (tuple, list) else (result,):
        if isinstance(t, Tensor) and t._vc is not None:
            fresh_version(t, args)


def _link(info: DifferentiabilityInfo, node: Any, outs: list[Any]) -> None:
    """Make each differentiable output an output of ``node`` (torch's set_history)."""
    flags = info.output_differentiability
    for i, out in enumerate(outs):
        flag = flags[0] if info.returns_list else flags[i]
        if not flag or not isinstance(out, Tensor) or not _differentiable_dtype(out.dtype):
            continue
        m = meta_of(out)
        m.requires_grad = True
        m.grad_fn = node
        m.output_nr = i
        if out._base is not None:
            m.view_version = out._version
            if info.returns_list:
                m.multi_output_of = re.sub(r"Backward\d+$", "", info.node_name)


def _differentiable_dtype(dtype: Any) -> bool:
    """Floating and complex outputs carry gradients (torch's isDifferentiableType)."""
    return bool(dtype.is_floating_point or dtype.is_complex)
