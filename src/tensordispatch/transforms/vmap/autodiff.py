"""``grad``, ``grad_and_value``, ``vjp`` and ``jacrev`` on the autograd engine, nesting with vmap.

Note [Gradients under vmap]
The autograd graph is recorded on the plain tensors under the BatchedTensors: batching
rules call operators on inner tensors, and those calls go through the Autograd keys like
any other. So a transform works on the *physical* tensors: each differentiated input is
replaced by a fresh differentiable tensor of its physical shape, re-wrapped at its levels;
after the function runs, the engine differentiates the physical output with a cotangent
of ones (per-sample outputs are independent of each other's inputs under vmap, so one
backward pass gives every sample's gradient). An input that is not batched at some
enclosing vmap level is first expanded to be (``vmap(grad(f), in_dims=(None, 0))`` must
give one weight gradient per sample, not their sum).

Note [Grad levels]
Each transform pushes a GradLevel. The fresh input is a view of the caller's tensor when
that one already takes part in a graph (an enclosing grad, or ordinary autograd outside),
so outer transforms see through the inner one; otherwise a detached leaf. The inner
backward pass builds a graph itself (``create_graph``) only when some outer transform or
the caller's autograd can use it, so top-level results carry no grad_fn, as in torch.
Inner and outer transforms differentiate with respect to different graph nodes, so an
inner ``grad`` never mistakes an outer input for its own (no perturbation confusion).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from tensordispatch.tensor.tensor import Tensor
from tensordispatch.transforms.vmap.batched import (
    BatchedTensor,
    GradLevel,
    VmapLevel,
    current_levels,
    pop_level,
    push_level,
    wrap,
)
from tensordispatch.transforms.vmap.pytree import LEAF, tree_flatten, tree_map, tree_unflatten

__all__ = ["grad", "grad_and_value", "jacrev", "vjp"]


# -- physical views of batched tensors (Note [Gradients under vmap]) --------------------------


def _layers(t: Tensor) -> tuple[Tensor, list[int]]:
    """The plain tensor under ``t`` and the levels wrapping it, lowest first."""
    levels = []
    while type(t) is BatchedTensor:
        levels.append(t._level)
        t = t._data
    return t, levels[::-1]


def _rewrap(p: Any, levels: list[int]) -> Any:
    for lvl in levels:
        p = wrap(p, lvl)
    return p


def _active_vmaps() -> list[tuple[int, int]]:
    """(level, batch size) of every active vmap, outermost first."""
    return [(lvl.level, lvl.batch_size) for lvl in current_levels() if type(lvl) is VmapLevel]


def _lift(t: Tensor, active: list[tuple[int, int]]) -> tuple[Tensor, list[int], bool]:
    """``t``'s plain tensor expanded so that it is batched at every ``active`` vmap level,
    its levels, and whether a fresh view outside any graph was made for it."""
    phys, levels = _layers(t)
    fresh = False
    for pos, (level, size) in enumerate(active):
        if level not in levels:
            if phys.requires_grad:
                phys = phys.unsqueeze(pos)
                shape = list(phys.shape)
                shape[pos] = size
                phys = phys.expand(shape)
            else:  # outside any graph: the stride-0 view directly, no dispatch
                shape = (*phys._shape[:pos], size, *phys._shape[pos:])
                strides = (*phys._strides[:pos], 0, *phys._strides[pos:])
                phys = phys._make_view(shape, strides, phys._offset)
                fresh = True
            levels.insert(pos, level)
    return phys, levels, fresh


def _outer_tracking() -> bool:
    return any(type(lvl) is GradLevel for lvl in current_levels()[:-1])


class _Prepared:
    """One differentiated input: the leaf the engine differentiates and its wrapped form."""

    __slots__ = ("leaf", "levels", "tracked", "wrapped")

    def __init__(self, t: Any, active: list[tuple[int, int]]) -> None:
        if not isinstance(t, Tensor):
            what = f"Thing passed to transform API must be Tensor, got {type(t)}"
            raise ValueError(what)  # noqa: TRY004 - torch raises ValueError here
        phys, self.levels, fresh = _lift(t, active)
        self.tracked = phys.requires_grad
        if self.tracked:
            self.leaf = phys.view(list(phys.shape))
        elif fresh:
            self.leaf = phys.requires_grad_()  # the expanded view _lift made for us
        else:
            self.leaf = phys.detach().requires_grad_()
        self.wrapped = _rewrap(self.leaf, self.levels)


def _prepare_args(
    args: tuple[Any, ...], argnums: Any, name: str
) -> tuple[list[Any], list[_Prepared], Any]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if isinstance(argnums, tuple) and not argnums:
        raise RuntimeError("argnums must be non-empty")
    for n in nums:
        if not isinstance(n, int):
            what = f"argnums must be int or Tuple[int, ...], got: {type(argnums)}"
            raise RuntimeError(what)  # noqa: TRY004 - torch raises RuntimeError here
        if not -len(args) <= n < len(args):
            raise RuntimeError(f"Got argnum={n}, but only {len(args)} positional inputs")
    new_args = list(args)
    prepared: list[_Prepared] = []
    specs = []
    active = _active_vmaps()
    for n in nums:
        if isinstance(args[n], Tensor):  # a tensor argument: no pytree work
            prep = _Prepared(args[n], active)
            prepared.append(prep)
            specs.append((n, LEAF, 1))
            new_args[n] = prep.wrapped
            continue
        leaves, spec = tree_flatten(args[n])
        preps = [_Prepared(x, active) for x in leaves]
        prepared.extend(preps)
        specs.append((n, spec, len(preps)))
        new_args[n] = tree_unflatten([p.wrapped for p in preps], spec)
    return new_args, prepared, specs


def _physical_cotangent(out: Tensor, ct: Any) -> tuple[Tensor, Any]:
    """The physical output and the cotangent the engine should start from."""
    phys, levels = _layers(out)
    if ct is None:
        if type(phys) is Tensor and phys.device.type == "cpu":  # a fresh array, no dispatch
            return phys, Tensor._wrap_numpy(
                np.ones(phys._shape, phys.dtype.numpy_dtype), phys.dtype
            )
        from tensordispatch import ones_like

        return phys, ones_like(phys)
    ct_phys, ct_levels = _layers(ct)
    if ct_levels == levels:
        return phys, ct_phys
    if not ct_levels and levels:
        return phys, ct.expand(list(phys.shape))
    return phys, ct  # a cotangent batched at a newer level: the engine runs on it batched


def _backward(
    outs: list[Tensor], cts: list[Any], prepared: list[_Prepared], retain: bool
) -> list[Any]:
    from tensordispatch import zeros_like
    from tensordispatch.autograd.engine import run_backward

    create = _outer_tracking() or any(p.tracked for p in prepared)
    roots, seeds = [], []
    for out, ct in zip(outs, cts, strict=True):
        phys, seed = _physical_cotangent(out, ct)
        if phys.requires_grad:
            roots.append(phys)
            seeds.append(seed)
    leaves = [p.leaf for p in prepared]
    if roots:
        # the engine directly: roots require grad, seeds have their shapes, unused inputs
        # are allowed (autograd.grad's checks would all pass)
        grads = run_backward(roots, seeds, retain or create, create, leaves, accumulate=False)
    else:
        grads = (None,) * len(leaves)
    result = []
    for p, g in zip(prepared, grads, strict=True):
        if g is None:
            g = zeros_like(p.leaf)
        elif not create and g.requires_grad:
            g = g.detach()
        result.append(_rewrap(g, p.levels))
    return result


def _regroup(grads: list[Any], specs: Any, argnums: Any) -> Any:
    out, k = [], 0
    for _, spec, count in specs:
        out.append(grads[k] if spec is LEAF else tree_unflatten(grads[k : k + count], spec))
        k += count
    return out[0] if isinstance(argnums, int) else tuple(out)


def _maybe_detach(tree: Any) -> Any:
    if _outer_tracking():
        return tree
    if type(tree) is Tensor:
        return tree.detach() if tree.requires_grad else tree
    return tree_map(lambda t: t.detach() if isinstance(t, Tensor) else t, tree)


def grad_and_value(
    func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """``func``'s gradient with respect to ``args[argnums]`` and its value (torch.func).

    >>> import tensordispatch as td
    >>> g, v = grad_and_value(lambda x: (x * x).sum())(td.tensor([1.0, 2.0]))
    >>> g, v
    (tensor([2., 4.]), tensor(5.))
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from tensordispatch.autograd import enable_grad

        lvl = push_level(GradLevel)
        try:
            with enable_grad():
                new_args, prepared, specs = _prepare_args(args, argnums, "grad")
                output = func(*new_args, **kwargs)
                aux = None
                if has_aux:
                    if not (isinstance(output, tuple) and len(output) == 2):
                        raise RuntimeError(
                            "grad_and_value(f)(*args): output of function f should be a tuple: "
                            "(output, aux) if has_aux is True"
                        )
                    output, aux = output
                    _check_aux(aux)
                if not isinstance(output, Tensor):
                    raise RuntimeError(  # noqa: TRY004 - torch raises RuntimeError here
                        "grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                        f"{type(output)}"
                    )
                if output.dim() != 0:
                    raise RuntimeError(
                        "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, "
                        f"got tensor with {output.dim()} dims. Maybe you wanted to use the vjp "
                        "or jacrev APIs instead?"
                    )
                grads = _backward([output], [None], prepared, retain=False)
                result = _regroup(grads, specs, argnums)
                value = _maybe_detach(output)
                if has_aux:
                    return result, (value, _maybe_detach(aux))
                return result, value
        finally:
            pop_level(lvl)

    return wrapper


def _check_aux(aux: Any) -> None:
    for leaf in tree_flatten(aux)[0]:
        if not isinstance(leaf, Tensor):
            what = f"Expected tensors, got unsupported type {type(leaf)}"
            raise RuntimeError(what)  # noqa: TRY004 - torch raises RuntimeError here


def grad(
    func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """The gradient of a scalar-valued ``func`` with respect to ``args[argnums]``.

    Composes with vmap: ``vmap(grad(loss), in_dims=(None, 0))(w, xs)`` gives one gradient
    per sample (Note [Gradients under vmap]).

    >>> import tensordispatch as td
    >>> grad(lambda x: (x ** 3).sum())(td.tensor([1.0, 2.0]))
    tensor([ 3., 12.])
    >>> grad(grad(lambda x: x ** 3))(td.tensor(2.0))
    tensor(12.)
    """
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, rest = inner(*args, **kwargs)
        return (g, rest[1]) if has_aux else g

    return wrapper


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``(func(*primals), vjp_fn)``: ``vjp_fn(cotangents)`` is the tuple of vector-Jacobian
    products, one per primal (torch.func.vjp). With ``has_aux``, also the aux output.

    >>> import tensordispatch as td
    >>> out, fn = vjp(lambda x: x * 3, td.tensor([1.0, 2.0]))
    >>> out, fn(td.tensor([1.0, 10.0]))
    (tensor([3., 6.]), (tensor([ 3., 30.]),))
    """
    from tensordispatch.autograd import enable_grad

    lvl = push_level(GradLevel)
    try:
        with enable_grad():
            new_args, prepared, specs = _prepare_args(primals, tuple(range(len(primals))), "vjp")
            output = func(*new_args)
            aux = None
            if has_aux:
                output, aux = output
            flat_out, out_spec = tree_flatten(output)
            for o in flat_out:
                if not isinstance(o, Tensor):
                    what = f"Expected tensors, got unsupported type {type(o)}"
                    raise RuntimeError(what)  # noqa: TRY004 - torch raises RuntimeError here
        outer = _outer_tracking()
    finally:
        pop_level(lvl)

    def vjp_fn(cotangents: Any) -> tuple[Any, ...]:
        flat_ct, ct_spec = tree_flatten(cotangents)
        if len(flat_ct) != len(flat_out):
            raise RuntimeError(
                f"Expected pytree structure of cotangents to be the same as pytree structure of "
                f"outputs to the function. cotangents: {ct_spec}, primal output: {out_spec}"
            )
        grads = _backward(flat_out, flat_ct, prepared, retain=True)
        return tuple(_regroup(grads, specs, tuple(range(len(primals)))))

    shown = output if outer else tree_map(lambda t: t.detach(), output)
    if has_aux:
        return shown, vjp_fn, aux
    return shown, vjp_fn


def jacrev(
    func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, *, has_aux: bool = False
) -> Callable[..., Any]:
    """The Jacobian of ``func`` with respect to ``args[argnums]`` by reverse mode: one vjp per
    output element, batched with vmap over the rows of the identity (torch.func.jacrev).

    >>> import tensordispatch as td
    >>> jacrev(lambda x: x.sin())(td.tensor([0.0, 1.0]))
    tensor([[1.0000, 0.0000],
            [0.0000, 0.5403]])
    """

    @functools.wraps(func)
    def wrapper(*args: Any) -> Any:
        import tensordispatch as td
        from tensordispatch.transforms.vmap.api import vmap

        nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)

        def partial(*diff: Any) -> Any:
            full = list(args)
            for n, d in zip(nums, diff, strict=True):
                full[n] = d
            return func(*full)

        res = vjp(partial, *[args[n] for n in nums], has_aux=has_aux)
        output, fn = res[0], res[1]
        flat_out, out_spec = tree_flatten(output)
        jacs = []
        for j, o in enumerate(flat_out):
            n = o.numel()
            basis = td.eye(n, dtype=o.dtype).reshape([n, *o.shape])

            def row(ct: Any, j: int = j) -> Any:
                cts = [td.zeros_like(x) for x in flat_out]
                cts[j] = ct
                return fn(tree_unflatten(cts, out_spec))

            rows = vmap(row)(basis)
            out_shape = list(o.shape)
            per_arg = [
                tree_map(lambda g, s=out_shape: g.reshape([*s, *g.shape[1:]]), r) for r in rows
            ]
            jacs.append(per_arg[0] if isinstance(argnums, int) else tuple(per_arg))
        result = tree_unflatten(jacs, out_spec)
        return (result, res[2]) if has_aux else result

    return wrapper
