"""Custom autograd functions: ``Function`` with ``forward(ctx, ...)`` / ``backward(ctx, ...)``.

Owns torch.autograd.Function's contract: forward runs without recording, its tensor outputs
get a node named ``<Class>Backward`` whose apply calls ``backward`` (or ``vjp``, torch's
other name for it); the context saves tensors (with version checks), reports
``needs_input_grad``, and takes ``mark_dirty`` / ``mark_non_differentiable`` /
``set_materialize_grads``; ``once_differentiable``. Must not know operators.

Note [Custom Function node and ctx]
In torch the ctx is the node. Ours are two objects, so the node reads what it lacks from
its ctx (``grad_fn.saved_tensors``, ``grad_fn.needs_input_grad``, attributes the forward
set on ctx). The gradients ``backward`` returns are checked as torch's engine checks a
node's outputs: one per input, a shape the input broadcasts to (summed back to the input's
shape, cast to its dtype), else torch's "returned an invalid gradient" error; gradients of
inputs that do not require grad are dropped unchecked.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ClassVar

from tensordispatch.autograd.grad_mode import is_grad_enabled, no_grad
from tensordispatch.autograd.graph import Node, SavedTensor, collect_next_edges, meta_of
from tensordispatch.autograd.views import IN_CUSTOM_FUNCTION
from tensordispatch.tensor import Tensor

__all__ = ["BackwardCFunction", "Error", "Function", "FunctionCtx", "once_differentiable"]


class FunctionCtx:
    """The ``ctx`` of a custom Function (torch's FunctionCtx)."""

    def __init__(self) -> None:
        self.needs_input_grad: tuple[bool, ...] = ()
        self._saved: list[SavedTensor | None] = []
        self._dirty: list[Tensor] = []
        self._non_differentiable: list[Tensor] = []
        self._node: Node | None = None
        self.materialize_grads = True

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Save tensors for backward (read back with ``saved_tensors``)."""
        self._to_save = tensors

    @property
    def saved_tensors(self) -> tuple[Tensor | None, ...]:
        node = self._node
        if node is None:
            return tuple(getattr(self, "_to_save", ()))
        return tuple(None if s is None else s.unpack(node) for s in self._saved)

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Declare inputs that forward modified in place."""
        self._dirty = list(tensors)

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Declare outputs that have no gradient."""
        self._non_differentiable = list(tensors)

    def set_materialize_grads(self, value: bool) -> None:
        """Whether undefined output gradients reach backward as zeros (default) or None."""
        self.materialize_grads = value


class BackwardCFunction(Node):
    """The node of one custom Function call; its class is named ``<Function>Backward``."""

    __slots__ = ("_outputs_meta", "_positions", "ctx")
    function: ClassVar[type[Function]]
    ctx: FunctionCtx
    _positions: tuple[int, ...]
    _outputs_meta: tuple[Any, ...]

    def apply(self, grads: list[Tensor | None]) -> tuple[Tensor | None, ...]:
        from tensordispatch.autograd.formulas import zeros_like

        ctx = self.ctx
        grads = list(grads) + [None] * (len(self._outputs_meta) - len(grads))
        if ctx.materialize_grads:
            grads = [
                zeros_like(proto) if g is None else g
                for g, proto in zip(grads, self._outputs_meta, strict=True)
            ]
        if self._released:
            from tensordispatch.autograd.graph import FREED_MESSAGE

            raise RuntimeError(FREED_MESSAGE)
        result = _user_backward(self.function)(ctx, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n_in = getattr(ctx, "_num_inputs", len(result))
        if len(result) != n_in:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients "
                f"(expected {n_in}, got {len(result)})"
            )
        return tuple(
            self._checked(k, result[i]) for k, i in enumerate(self._positions)
        )  # fmt: skip

    def _checked(self, k: int, g: Any) -> Any:
        """The gradient for input ``k`` as torch's engine takes it (Note [Custom Function
        node and ctx])."""
        if self.next_functions[k][0] is None:
            return None
        if not isinstance(g, Tensor):
            return g
        shape, dtype = self._input_meta[k]
        if g._shape != tuple(shape):
            if not _broadcasts_to(tuple(shape), g._shape):
                raise RuntimeError(
                    f"Function {self.name()} returned an invalid gradient at index {k} - got "
                    f"{list(g._shape)} but expected shape compatible with {list(shape)}"
                )
            from tensordispatch.autograd.formulas import sum_to

            g = sum_to(g, shape)
        if g.dtype != dtype:
            g = g.to(dtype)  # type: ignore[attr-defined]
        return g

    def release(self) -> None:
        self._released = True

    @property
    def saved_tensors(self) -> tuple[Tensor | None, ...]:
        """The ctx's saved tensors (torch's node is its ctx)."""
        return self.ctx.saved_tensors

    def __getattr__(self, name: str) -> Any:
        if name == "ctx":  # not set yet: no ctx to read from
            raise AttributeError(name)
        return getattr(self.ctx, name)


def _broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Whether ``shape`` broadcasts to ``target`` (torch's is_expandable_to)."""
    if len(shape) > len(target):
        return False
    return all(s in (t, 1) for s, t in zip(reversed(shape), reversed(target), strict=False))


def _user_backward(function: type[Function]) -> Callable[..., Any]:
    """The class's ``backward``, or its ``vjp`` (torch's other name); not both."""
    backward, vjp = function.backward, function.vjp
    if vjp is Function.vjp:
        return backward
    if backward is not Function.backward:
        raise RuntimeError(
            "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You "
            "should only implement one of them."
        )
    return vjp


class Function:
    """Subclass with ``forward(ctx, *args)`` and ``backward(ctx, *grads)`` staticmethods and
    call ``apply``.

    >>> import tensordispatch as td
    >>> class Square(Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors
    ...         return 2 * x * g
    >>> x = td.tensor([3.0]).requires_grad_()
    >>> y = Square.apply(x)
    >>> y.grad_fn.name(), (y.backward(), x.grad)[1]
    ('SquareBackward', tensor([6.]))
    """

    _backward_cls: ClassVar[type[BackwardCFunction]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._backward_cls = type(
            f"{cls.__name__}Backward",
            (BackwardCFunction,),
            {"__slots__": (), "function": cls, "__module__": cls.__module__},
        )

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    @staticmethod
    def vjp(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    @classmethod
    def apply(cls, *args: Any) -> Any:
        ctx = FunctionCtx()
        positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        ctx._num_inputs = len(args)  # type: ignore[attr-defined]
        record = is_grad_enabled() and any(ctx.needs_input_grad)
        with no_grad():
            out = cls.forward(ctx, *args)
        if not record:
            return _mark_views(ctx, args, out)
        return _link(cls, ctx, args, positions, out)


def _as_view(o: Tensor) -> Tensor:
    """A new output object for an input returned as is: a view of it, as torch makes."""
    from tensordispatch.autograd.graph import _shallow_alias

    if type(o) is Tensor:
        return o._make_view(o._shape, o._strides, o._offset)
    return _shallow_alias(o)


def _custom_view(o: Tensor) -> None:
    """A view output of a custom Function may not be written in place (views.py, Note [View
    creation meta]); its grad_fn is checked again after a write through its base."""
    if o._base is not None:
        m = meta_of(o)
        m.creation_meta = IN_CUSTOM_FUNCTION
        if m.grad_fn is not None:
            m.view_version = o._version


def _mark_views(ctx: FunctionCtx, args: tuple[Any, ...], out: Any) -> Any:
    """The outputs of a call that records nothing: inputs returned as is become views, and
    views are marked as made in a custom Function (torch does both without recording)."""
    outs = out if isinstance(out, tuple) else (out,)
    dirty = {id(t) for t in ctx._dirty}
    inputs = {id(a) for a in args if isinstance(a, Tensor)}
    results = []
    for o in outs:
        if isinstance(o, Tensor) and id(o) not in dirty:
            if id(o) in inputs:
                o = _as_view(o)
            _custom_view(o)
        results.append(o)
    return tuple(results) if isinstance(out, tuple) else results[0]


def _link(
    cls: type[Function],
    ctx: FunctionCtx,
    args: tuple[Any, ...],
    positions: tuple[int, ...],
    out: Any,
) -> Any:
    from tensordispatch.autograd.kernels import check_inplace

    outs = out if isinstance(out, tuple) else (out,)
    node = cls._backward_cls()
    node.ctx = ctx
    node._positions = positions
    inputs = tuple(args[i] for i in positions)
    node.next_functions = collect_next_edges(inputs)
    node._input_meta = tuple((t._shape, t.dtype) for t in inputs)
    dirty = {id(t) for t in ctx._dirty}
    non_diff = {id(t) for t in ctx._non_differentiable}
    input_ids = {id(t) for t in inputs}
    results = []
    for nr, o in enumerate(outs):
        if not isinstance(o, Tensor):
            results.append(o)
            continue
        if id(o) in dirty:
            if o._base is None and o.requires_grad and o.grad_fn is None:
                raise RuntimeError(
                    "a leaf Variable that requires grad has been used in an in-place operation."
                )
            check_inplace(o)
        elif id(o) in input_ids:
            o = _as_view(o)  # an input returned as is: a new output object
        if id(o) not in non_diff:
            m = meta_of(o)
            m.requires_grad = True
            m.grad_fn = node
            m.output_nr = nr
        if id(o) not in dirty:
            _custom_view(o)
        results.append(o)
    node._outputs_meta = tuple(o for o in results)
    ctx._saved = [
        None if t is None else SavedTensor(t, any(t is r for r in results))
        for t in getattr(ctx, "_to_save", ())
    ]
    ctx._node = node
    return tuple(results) if isinstance(out, tuple) else results[0]


class Error(Node):
    """A node that raises when backward reaches it (made by torch's DelayedError, named
    ``Error`` as torch's): the gradients ``once_differentiable`` returns while the graph
    records get it as their grad_fn."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        super().__init__()
        self.message = message
        self.next_functions = ()
        self._input_meta = ()

    def apply(self, grads: list[Tensor | None]) -> tuple[Tensor | None, ...]:
        raise RuntimeError(self.message)


_ONCE = "trying to differentiate twice a function that was marked with @once_differentiable"


def once_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a custom Function's ``backward`` that cannot itself be differentiated: it
    runs without recording, and when the graph records (``create_graph``) and an incoming
    gradient requires grad, its results get an ``Error`` node that raises torch's
    message if differentiated.

    >>> import tensordispatch as td
    >>> class Cube(Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x ** 3
    ...     @staticmethod
    ...     @once_differentiable
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors
    ...         return 3 * x * x * g
    >>> x = td.tensor([2.0]).requires_grad_()
    >>> td.autograd.grad(Cube.apply(x), x)
    (tensor([12.]),)
    """

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with no_grad():
            outputs = fn(ctx, *args)
        if not is_grad_enabled() or not any(
            isinstance(a, Tensor) and a.requires_grad for a in args
        ):
            return outputs
        single = not isinstance(outputs, tuple)
        node = Error(_ONCE)
        wrapped = []
        for nr, o in enumerate((outputs,) if single else outputs):
            if isinstance(o, Tensor) and (o.dtype.is_floating_point or o.dtype.is_complex):
                o = o.detach()  # an alias whose grad_fn raises (torch's fake_requires_grad)
                m = meta_of(o)
                m.requires_grad = True
                m.grad_fn = node
                m.output_nr = nr
            wrapped.append(o)
        return wrapped[0] if single else tuple(wrapped)

    return wrapper
