"""Autograd kernels written by hand (torch's VariableTypeManual): ``copy_``, the
functional ``copy`` and the factories with a tensor argument (``zeros_like``, ...), which
have no formula.

Owns the operators whose backward is not a derivatives.yaml formula in torch either.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensordispatch.autograd.entries import autograd_entry
from tensordispatch.autograd.graph import Node, collect_next_edges, meta_of
from tensordispatch.autograd.kernels import _below_ad_inplace_or_view, fresh_version
from tensordispatch.dispatch.dispatcher import DISPATCHER
from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import AFTER_AUTOGRAD_RAW
from tensordispatch.dispatch.tls import _AutoDispatchBelowADInplaceOrView, local_state
from tensordispatch.tensor import Tensor

__all__ = ["CopyBackwards", "NotImplementedNode", "register_manual"]

_ST = local_state()


class CopyBackwards(Node):
    """``self.copy_(src)``: no gradient to the old ``self``, ``grad`` to ``src``."""

    __slots__ = ()

    def apply(self, grads: list[Tensor | None]) -> tuple[Tensor | None, ...]:
        from tensordispatch.autograd.formulas import zeros_like

        g = grads[0]
        if g is None:
            return (None, None)
        return (zeros_like(g), g)


def _copy_kernel(raw: int, op: Any, self: Tensor, src: Tensor, *args: Any, **kw: Any) -> Any:
    m = getattr(self, "_autograd_meta", None)
    m2 = getattr(src, "_autograd_meta", None)
    if not _ST.grad_enabled or not (
        (m is not None and m.requires_grad) or (m2 is not None and m2.requires_grad)
    ):
        return op.redispatch(raw & AFTER_AUTOGRAD_RAW, self, src, *args, **kw)
    return _record_copy(raw, op, (self, src, *args), kw)


def _record_copy(raw: int, op: Any, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    """The recording branch of ``copy_``: the leaf/view checks, a CopyBackwards node, the
    write below ADInplaceOrView, then ``self``'s history rebased on the node (CopySlices for
    a view)."""
    # imported here, past the no-grad return (an in-function import costs ~0.7 us a call)
    from tensordispatch.autograd.kernels import check_inplace
    from tensordispatch.autograd.views import rebase_history

    self, src = args[0], args[1]
    check_inplace(self)
    node = CopyBackwards()
    node.next_functions = collect_next_edges((self, src))
    node._input_meta = ((self._shape, self.dtype), (src._shape, src.dtype))
    with _AutoDispatchBelowADInplaceOrView():
        result = op.redispatch(raw & AFTER_AUTOGRAD_RAW, *args, **kw)
    rebase_history(self, node)
    return result


def _copy_specialize(op: Any, raw: int) -> Callable[..., Any] | None:
    """The dispatcher's cached entry of ``copy_`` for key set ``raw``: the generated
    no-grad path of kernels.py's fast-path kernels (entries.py, Note [The no-grad path]),
    which calls the backend entry below autograd directly and ``_record_copy`` otherwise."""
    return autograd_entry(op, raw, (0, 1), _record_copy, None)


_copy_kernel._td_specialize = _copy_specialize  # type: ignore[attr-defined]
_copy_kernel._td_plain_no_grad = True  # type: ignore[attr-defined]  # ops/indexing_fast.py


class NotImplementedNode(Node):
    """torch's NotImplemented node: the grad_fn of an operator without a derivative (the
    functional ``copy``); backward through it fails."""

    __slots__ = ("forward_fn",)

    def __init__(self, forward_fn: str) -> None:
        super().__init__()
        self.forward_fn = forward_fn

    def name(self) -> str:
        return "torch::autograd::NotImplemented"

    def apply(self, grads: list[Tensor | None]) -> tuple[Tensor | None, ...]:
        raise RuntimeError(f"derivative for {self.forward_fn} is not implemented")


def _functional_copy_kernel(
    raw: int, op: Any, self: Tensor, src: Tensor, *args: Any, **kw: Any
) -> Any:
    """``aten::copy``: torch's generated kernel runs it below ADInplaceOrView (the result
    leaves at version 0) and, with grad mode on and an input requiring grad, gives it a
    NotImplemented node with edges to the inputs that require grad."""
    r = _below_ad_inplace_or_view(op, raw & AFTER_AUTOGRAD_RAW, (self, src, *args), kw)
    fresh_version(r, (self, src))
    if _ST.grad_enabled:
        needing = tuple([t for t in (self, src) if _requires_grad(t)])
        if needing:
            node = NotImplementedNode("aten::copy")
            node.next_functions = collect_next_edges(needing)
            node._input_meta = tuple([(t._shape, t.dtype) for t in needing])
            m = meta_of(r)
            m.requires_grad = True
            m.grad_fn = node
            m.output_nr = 0
    return r


def _requires_grad(t: Tensor) -> bool:
    m = t._autograd_meta
    return m is not None and bool(m.requires_grad)


def register_manual(register: Callable[[str, DispatchKey, Callable[..., Any]], None]) -> None:
    """Register the hand-written kernels through ``register(name, key, fn)``."""
    register("copy_", DispatchKey.Autograd, _copy_kernel)
    register("copy", DispatchKey.Autograd, _functional_copy_kernel)
    for name in FRESH_FACTORIES:
        qualified, _, overload = name.partition(".")
        if DISPATCHER.find(f"aten::{qualified}", overload) is not None:
            register(name, DispatchKey.Autograd, _fresh_factory_kernel)


# Factories with a tensor argument (no derivative): torch's autograd kernel runs them below
# ADInplaceOrView, so the new tensor is at version 0 (Note [Fresh outputs at version 0]).
FRESH_FACTORIES = (
    "zeros_like",
    "ones_like",
    "full_like",
    "empty_like",
    "rand_like",
    "randn_like",
    "randint_like",
    "randint_like.low_dtype",
)


def _fresh_factory_kernel(raw: int, op: Any, *args: Any, **kwargs: Any) -> Any:
    # torch's kernel runs them under AutoDispatchBelowADInplaceOrView: the composite's own
    # fill_ then bumps no version (and backends may call their kernels directly)
    r = _below_ad_inplace_or_view(op, raw & AFTER_AUTOGRAD_RAW, args, kwargs)
    if getattr(r, "_vc", None) is not None:
        fresh_version(r, args)
    return r


# backends/composite_fast.py's like-hops may run the composite kernel in this kernel's place
# (Note [Plain kernel markers] in ops/indexing_fast.py: the kernel says so, not its name)
_fresh_factory_kernel._td_fresh_factory = True  # type: ignore[attr-defined]
