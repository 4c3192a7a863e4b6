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
    one_input = not inplace and diff_if is None and len(binds) == 1 and not binds[0][2]
    if one_input and len(info.formulas) == 1:
        node_cls = _one_input_node_class(info, node_cls)
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
        after = k._AFTER if inplace else k._AFTER_FN  # Note [Versions of results made from ...]
        result = k._below_ad_inplace_or_view(op, raw & after, args, kwargs)
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

    if one_input:
        record = _one_input_record(info, node_cls, plan, fixed, saved_outputs, record)

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
        r = op.redispatch(raw & (k._AFTER if inplace else k._AFTER_FN), *args, **kwargs)
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


# Note [One differentiable input]
# Most operators recorded here (nll_loss_forward, max.dim, sort, ...) have one
# differentiable Tensor input and no list argument: the edge layout is fixed and what the
# formula reads is a fixed set of arguments (or values derived from one, self_sym_sizes).
# Their record reads those by position from a call that gives every argument positionally (as the generated entries and composite
# kernels do) instead of through getters and the memoized save plan; the node, its saved
# values, the call below ADInplaceOrView and the linking are the same as the general record,
# which runs for any other call (keywords, left-out defaults). Their node class is a
# subclass of the operator's (same name) whose apply calls the one formula without walking
# the edge layout; it returns what GeneralFormulaNode.apply returns, in the same order of
# checks (all gradients None, a freed graph, the input not needed).


def _one_input_record(
    info: DifferentiabilityInfo,
    node_cls: type[Any],
    plan: Any,
    fixed: tuple[_Slots, ...],
    saved_outputs: list[tuple[str, int]],
    general: Callable[..., Any],
) -> Callable[..., Any]:
    """``general`` (the record of make_general_kernel) with a shorter path for positional
    calls (Note [One differentiable input])."""
    from tensordispatch.autograd import kernels as k
    from tensordispatch.autograd.entries import _save_any
    from tensordispatch.autograd.graph import gradient_edge

    names = [a.name for a in info.schema.arguments]
    if len(info.formulas) != 1:
        return general
    # per saved value: its argument's position, or -1 and the getter of a derived value
    where = tuple(
        (n, names.index(n) if n in names else -1, get) for n, get in k._flat_plan(plan, (True,))
    )
    (position,) = (names.index(n) for n in info.inputs)
    n_args, plain_values = len(names), k._PLAIN_VALUES
    below, after, several = k._below_ad_inplace_or_view, k._AFTER_FN, info.returns_list
    several = several or len(info.outputs) > 1

    def record(raw: int, op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if kwargs or len(args) != n_args:
            return general(raw, op, args, kwargs)
        t = args[position]
        needed = t is not None and k._requires_grad(t)
        node = node_cls()
        node.next_functions = ((None, 0) if t is None else gradient_edge(t),)
        node._input_meta = (None if t is None else (t._shape, t.dtype),)
        node._needed = (needed,)
        node._layout = fixed
        saved: dict[str, Any] = {}
        if needed:
            for name, i, get in where:
                v = args[i] if i >= 0 else get(args, kwargs)
                saved[name] = v if v is None or type(v) in plain_values else _save_any(v)
        node._saved = saved
        result = below(op, raw & after, args, kwargs)
        outs = list(result) if several else [result]
        _link(info, node, outs)
        node._n_outputs = len(outs)
        for name, i in saved_outputs:
            saved[name] = SavedTensor(outs[i], True)
        return result

    return record


def _one_input_node_class(info: DifferentiabilityInfo, node_cls: type[Any]) -> type[Any]:
    """A subclass of ``node_cls`` (same name) whose apply runs the one formula directly:
    GeneralFormulaNode.apply for one Tensor input, without the per-slot layout walk (Note
    [One differentiable input])."""
    (formula,) = info.formulas
    fn, names = formula.fn, tuple(formula.names)
    grad_names = tuple(f"grad_{name}" for name in info.outputs)

    def apply(self: Any, grads: list[Tensor | None]) -> tuple[Tensor | None, ...]:
        if all(g is None for g in grads):
            return (None,)
        padded = list(grads) + [None] * (self._n_outputs - len(grads))
        env = self._env()  # raises for a freed graph, as the general apply
        if not self._needed[0]:
            return (None,)
        env["grad"] = padded[0]
        env["grads"] = padded
        for name, g in zip(grad_names, padded, strict=False):
            env[name] = g
        env["grad_input_mask"] = [True]
        return (fn(*[env[n] for n in names]),)

    body = {"__slots__": (), "apply": apply, "__module__": node_cls.__module__}
    cls = type(node_cls.__name__, (node_cls,), body)
    cls.__qualname__ = node_cls.__qualname__
    return cls


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
