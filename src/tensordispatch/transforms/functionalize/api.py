"""``functionalize(f, remove=...)`` and ``functionalize_aten_op`` (reference spec 1.6-1.7).

Owns the entry and exit of a functionalized region: the thread-local switches (Functionalize
TLS-included so factories inside ``f`` are wrapped too; the reapply-views flag), wrapping the
inputs, unwrapping the outputs, and writing input mutations back into the caller's tensors.
Must not know any operator's rule (kernels.py, view_metas.py).

Note [Input mutations are written back at the end]
Inputs are wrapped, so ``f`` never touches the caller's tensors. After ``f`` returns, the
outputs are synced and unwrapped first, then every wrapped input is synced, and an input
whose inner value is no longer the caller's own tensor object was mutated: the caller's
tensor is resized when its byte size changed, re-strided with ``as_strided_`` only when
its sizes differ, and receives the new values through ``copy_``. This is why a traced
graph ends with ``copy_`` into the mutated inputs, after the last compute node, as torch's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from tensordispatch.backends.aten import op
from tensordispatch.tensor.tensor import Tensor
from tensordispatch.transforms.functionalize.wrapper import (
    _ST,
    FUNCTIONALIZE_BIT,
    FunctionalTensor,
    apply_updates,
    regenerate,
    sync,
    to_functional,
)

__all__ = ["functionalize", "functionalize_aten_op"]


def _map(fn: Callable[[Any], Any], tree: Any) -> Any:
    """Apply ``fn`` to every leaf of nested lists / tuples / dicts."""
    cls = tree.__class__
    if cls is list or cls is tuple:
        return cls(_map(fn, x) for x in tree)
    if cls is dict:
        return {k: _map(fn, v) for k, v in tree.items()}
    return fn(tree)


def _leaves(tree: Any, out: list[Any]) -> list[Any]:
    cls = tree.__class__
    if cls is list or cls is tuple:
        for x in tree:
            _leaves(x, out)
    elif cls is dict:
        for v in tree.values():
            _leaves(v, out)
    else:
        out.append(tree)
    return out


def _wrap_input(x: Any) -> Any:
    if isinstance(x, Tensor) and not isinstance(x, FunctionalTensor):
        return to_functional(x)
    return x


def _unwrap_output(t: Any) -> Any:
    if t.__class__ is not FunctionalTensor:
        return t
    sync(t)
    if t._fstorage.updates and apply_updates(t._fstorage):
        regenerate(t)
    return t._data


def _propagate_input_mutation(original: Tensor, wrapped: FunctionalTensor) -> None:
    """Note [Input mutations are written back at the end]."""
    inner = wrapped._data
    if inner is original:
        return
    if inner.numel() != original.numel():  # the byte size changed (same dtype)
        op("resize_")(original, list(inner._shape))
    if inner._shape != original._shape:
        op("as_strided_")(original, list(inner._shape), list(inner._strides))
    op("copy_")(original, inner)


# torch's message, one line per entry (joined with newlines, trailing newline included)
_REMOVE_ERROR_LINES = (
    (
        "functionalize(f, remove='mutations'): received invalid argument for "
        "remove={}. Valid options are:"
    ),
    (
        "     remove='mutations': all inplace and out= operators will be removed from "
        "the program, and replaced with their out-of-place equivalents."
    ),
    (
        "     remove='mutations_and_views': In addition to the above, all aliasing "
        "operators {{view}} will be replaced with their non-aliasing counterparts, "
        "{{view}}_copy."
    ),
    "",
)
_REMOVE_ERROR = "\n".join(_REMOVE_ERROR_LINES)


def functionalize(func: Callable[..., Any], *, remove: str = "mutations") -> Callable[..., Any]:
    """``func`` with its mutations (and, with ``remove='mutations_and_views'``, its views)
    removed below the Functionalize key, keeping eager results (torch.func.functionalize).

    Inputs are wrapped in FunctionalTensors; mutations of inputs are written back into the
    caller's tensors when ``func`` returns (Note [Input mutations are written back at the
    end]).

    >>> import tensordispatch as td
    >>> def f(x):
    ...     y = x.view(2, 2)
    ...     y.add_(1)
    ...     return x * 2
    >>> x = td.zeros(4)
    >>> functionalize(f)(x).tolist(), x.tolist()
    ([2.0, 2.0, 2.0, 2.0], [1.0, 1.0, 1.0, 1.0])
    >>> functionalize(f, remove="views")
    Traceback (most recent call last):
    ...
    RuntimeError: functionalize(f, remove='mutations'): received invalid argument for remove=views...
    """
    if remove == "mutations":
        reapply_views = True
    elif remove == "mutations_and_views":
        reapply_views = False
    else:
        raise RuntimeError(_REMOVE_ERROR.format(remove))

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        st = _ST
        saved_included = st.included
        saved_reapply = st.functionalize_reapply_views
        st.included = saved_included | FUNCTIONALIZE_BIT
        st.functionalize_reapply_views = reapply_views
        try:
            if not kwargs and len(args) == 1 and args[0].__class__ is Tensor:  # the common call
                x = args[0]
                w = to_functional(x)
                out = func(w)
                outputs = (
                    _unwrap_output(out)
                    if out.__class__ is FunctionalTensor
                    else _map(_unwrap_output, out)
                )
                if w._fs is not None and w._generation != w._fs.generation:
                    sync(w)
                if w._data is not x:
                    _propagate_input_mutation(x, w)
                return outputs
            if not kwargs and all(a.__class__ is Tensor for a in args):
                func_args = tuple([to_functional(a) for a in args])
                out = func(*func_args)
                outputs = (
                    _unwrap_output(out)
                    if out.__class__ is FunctionalTensor
                    else _map(_unwrap_output, out)
                )
                originals: list[Any] = list(args)
                wrappers: list[Any] = list(func_args)
            else:
                func_args = _map(_wrap_input, args)
                func_kwargs = _map(_wrap_input, kwargs)
                outputs = _map(_unwrap_output, func(*func_args, **func_kwargs))
                originals = _leaves(args, []) + _leaves(kwargs, [])
                wrappers = _leaves(func_args, []) + _leaves(func_kwargs, [])
            for w in wrappers:
                sync(w)
            for original, w in zip(originals, wrappers, strict=True):
                if w.__class__ is FunctionalTensor and original is not w:
                    _propagate_input_mutation(original, w)
            return outputs
        finally:
            st.included = saved_included
            st.functionalize_reapply_views = saved_reapply

    return wrapped


def functionalize_aten_op(o: Any, *args: Any, **kwargs: Any) -> Any:
    """Run operator ``o``'s composite kernel through functionalization, so that the views
    and mutations it makes internally never reach the backend (torch's
    ``functionalize_aten_op``, used by backends such as lazy for
    CompositeExplicitAutogradNonFunctional operators). Tensor inputs are wrapped in fresh
    wrappers, the operator runs with Functionalize TLS-included (mutations and views
    removed), and tensor outputs are synced and unwrapped. out= operators are refused.

    >>> import tensordispatch as td
    >>> x = td.arange(6.0).view(2, 3)
    >>> functionalize_aten_op(td.ops.aten.t_copy.default, x).tolist()
    [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    """
    if o._schema.is_out_fn():
        raise RuntimeError(
            f"functionalize_aten_op: {o} is an out= operator, which cannot be run through "
            "functionalization this way; call its functional variant and copy the result "
            "into the out tensor"
        )
    kernel = _composite_kernel(o)
    return functionalize(kernel, remove="mutations_and_views")(*args, **kwargs)


def _composite_kernel(o: Any) -> Callable[..., Any]:
    from tensordispatch.dispatch.kernel import KernelKind
    from tensordispatch.dispatch.keys import DispatchKey

    kernels = o._entry.kernels
    for key in (
        DispatchKey.CompositeExplicitAutogradNonFunctional,
        DispatchKey.CompositeExplicitAutograd,
    ):
        found = kernels.get(key)
        if found and found[-1].kind is KernelKind.UNBOXED:
            fn: Callable[..., Any] = found[-1].fn
            return fn
    raise RuntimeError(
        f"functionalize_aten_op: {o} has no CompositeExplicitAutograd(NonFunctional) "
        "kernel to run through functionalization; only composite kernels can be "
        "functionalized this way"
    )
