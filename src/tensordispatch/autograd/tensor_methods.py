"""Autograd's Tensor methods: backward (the engine's, bound on first use), hooks,
retain_grad, is_leaf, detach, requires_grad_.

Owns the methods torch's Tensor gets from autograd, installed on the Tensor class by
``install`` (the way the generated operator methods are installed), keeping the tensor
layer free of autograd. Must not record graphs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tensordispatch.autograd.graph import Node, TensorMeta, meta_of
from tensordispatch.tensor import Tensor

__all__ = ["install"]

_RG_NON_LEAF = (
    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
    "variable in a subgraph that doesn't require differentiation use var_no_grad = "
    "var.detach()."
)
_DETACH_VIEW = (
    "Can't detach views in-place. Use detach() instead. If you are using "
    "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as True, "
    "gradients are views of DDP buckets, and hence detach_() cannot be called on these "
    "gradients. To fix this error, please refer to the Optimizer.zero_grad() function in "
    "torch/optim/optimizer.py as the solution."
)


def backward(
    self: Tensor,
    gradient: Tensor | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
) -> None:
    """Accumulate the gradient of this tensor into the graph's leaves.

    The engine is imported on first use (``import tensordispatch`` leaves it out): the first
    call puts the engine's ``tensor_backward`` (this signature) on Tensor in this function's
    place, so later calls reach the engine with no hop in between.
    """
    from tensordispatch.autograd.engine import tensor_backward

    if Tensor.__dict__.get("backward") is backward:
        Tensor.backward = tensor_backward  # type: ignore[attr-defined]
    tensor_backward(self, gradient, retain_graph, create_graph, inputs)


def is_leaf(self: Tensor) -> bool:
    """True for tensors that do not require grad and for those made by the user."""
    m = self._autograd_meta
    return m is None or m.grad_fn is None


def requires_grad_(self: Tensor, requires_grad: bool = True) -> Tensor:
    """Set requires_grad (leaves only, as torch) and return self."""
    m = self._autograd_meta
    if m is not None and m.grad_fn is not None:
        if requires_grad:
            return self
        raise RuntimeError(_RG_NON_LEAF)
    self.requires_grad = requires_grad
    return self


class _Handle:
    __slots__ = ("_fn", "_hooks")

    def __init__(self, hooks: list[Any], fn: Any) -> None:
        self._hooks, self._fn = hooks, fn

    def remove(self) -> None:
        if self._fn in self._hooks:
            self._hooks.remove(self._fn)


def _output_hook(output_nr: int, fn: Callable[[Tensor], Tensor | None]) -> Callable[..., Any]:
    def pre_hook(grads: list[Tensor | None]) -> list[Tensor | None] | None:
        if output_nr >= len(grads) or grads[output_nr] is None:
            return None
        out = fn(grads[output_nr])  # type: ignore[arg-type]
        if out is None:
            return None
        grads = list(grads)
        grads[output_nr] = out
        return grads

    return pre_hook


def register_hook(self: Tensor, hook: Callable[[Tensor], Tensor | None]) -> _Handle:
    """Call ``hook(grad)`` when the gradient of this tensor is computed; a returned tensor
    replaces the gradient."""
    m = self._autograd_meta
    if m is None or not m.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    meta = meta_of(self)
    fn: Node | None = meta.grad_fn
    if fn is None:
        hooks = meta.hooks_list()
        hooks.append(hook)
        return _Handle(hooks, hook)
    wrapped = _output_hook(meta.output_nr, hook)
    # torch runs retains_grad after the other hooks: insert before it when present.
    pre = fn.hook_list(True)
    pre.insert(len(pre) - (1 if meta.retains_grad else 0), wrapped)
    return _Handle(pre, wrapped)


def retain_grad(self: Tensor) -> None:
    """Keep the gradient of this non-leaf in ``.grad`` during backward."""
    m = self._autograd_meta
    if m is None or not m.requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    meta = meta_of(self)
    if meta.grad_fn is None or meta.retains_grad:
        return
    meta.retains_grad = True

    def store(g: Tensor) -> None:
        if meta.grad is None:
            meta.grad = g.detach().clone()
        else:
            meta.grad = meta.grad + g

    meta.grad_fn.hook_list(True).append(_output_hook(meta.output_nr, store))


def retains_grad(self: Tensor) -> bool:
    m = self._autograd_meta
    return isinstance(m, TensorMeta) and m.retains_grad


def detach(self: Tensor) -> Tensor:
    """A new tensor sharing storage and version counter, outside the graph. Like torch's, it
    is no view (``_base`` is None) even when ``self`` is one: a second root over the same
    storage bytes (CPU). Meta and wrapper views keep ``_base`` (they have no storage bytes
    to share) and are marked DETACHED: no view for autograd (views.py).

    >>> import tensordispatch as td
    >>> x = td.zeros(2, 3)
    >>> d = x.t().detach()
    >>> d._base is None, d._is_alias_of(x)
    (True, True)
    """
    from tensordispatch.autograd.graph import _shallow_alias

    alias = _shallow_alias(self)
    if alias._base is not None:
        if type(alias) is Tensor and isinstance(alias._data, np.ndarray):
            if alias._storage is None:
                alias._storage = self._storage_bytes()
            alias._base = None
        else:  # shares the root's storage, but no view for autograd
            from tensordispatch.autograd.views import DETACHED

            meta_of(alias).creation_meta = DETACHED
    return alias


def detach_(self: Tensor) -> Tensor:
    """Detach in place (not allowed on views, as torch)."""
    if self._base is not None:
        raise RuntimeError(_DETACH_VIEW)
    m = self._autograd_meta
    if m is not None:
        m.grad_fn = None
        was = m.requires_grad
        m.requires_grad = False
        if was and self._vc is not None:  # Note [Views follow their root's requires_grad]
            from tensordispatch.autograd.view_follow import follow_root

            follow_root(self, False)
    return self


def _grad_fn_get(self: Tensor) -> Any:
    from tensordispatch.autograd.graph import view_grad_fn

    return view_grad_fn(self)


def _grad_fn_set(self: Tensor, value: Any) -> None:
    meta_of(self).grad_fn = value


METHODS: dict[str, Any] = {
    "backward": backward,
    "requires_grad_": requires_grad_,
    "register_hook": register_hook,
    "retain_grad": retain_grad,
    "detach": detach,
    "detach_": detach_,
    "is_leaf": property(is_leaf),
    "grad_fn": property(_grad_fn_get, _grad_fn_set),
    "retains_grad": property(retains_grad),
}


def install(cls: type[Tensor] = Tensor) -> None:
    """Set the autograd methods on the Tensor class."""
    for name, fn in METHODS.items():
        setattr(cls, name, fn)
