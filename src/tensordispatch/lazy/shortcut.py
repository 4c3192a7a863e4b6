"""Functionalize kernels for traced pointwise operators over lazy tensors (a shortcut).

Owns `shortcut_kernel(plan, tracer)`: the kernel lazy registers at the Functionalize key of a
traced operator whose arguments are all Tensors and Scalars (add.Tensor, mul.Tensor, ...).
It must behave exactly as Functionalize's fallback followed by the Lazy tracing kernel.

Note [Functionalize shortcut]
A traced call on functional wrappers over lazy tensors normally goes: Functionalize's fallback
(sync and unwrap every argument), ``below`` (swap the exclude word), a second dispatch (entry,
boxer) to the Lazy key, the tracer, then wrapping the result. When nothing can observe the
steps in between, the shortcut syncs and unwraps the arguments, calls the operator's tracer
directly and wraps its result. "Nothing can observe" means: the thread's dispatch state is
the default one (no dispatch mode, no transform, no included key, not inference mode, no
forced fallback), every tensor argument is a wrapper over a LazyTensor that does not require
grad (or a wrapped number), and the call passes no keyword arguments. Anything else calls the
fallback unchanged, so behaviour is the fallback's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensordispatch.dispatch.tls import DEFAULT_EXCLUDED_RAW, DEFAULT_INCLUDED_RAW, local_state
from tensordispatch.tensor.tensor import Tensor
from tensordispatch.transforms.functionalize.kernels import functionalize_fallback
from tensordispatch.transforms.functionalize.wrapper import (
    FunctionalTensor,
    sync,
    to_functional,
)

__all__ = ["eligible", "shortcut_kernel"]

_ST = local_state()


def eligible(plan: Any) -> bool:
    """Whether ``plan``'s operator may take the shortcut: only Tensor and Scalar arguments,
    one Tensor result, no alias annotations (a functional operator).

    >>> import tensordispatch as td
    >>> from tensordispatch.lazy.kernels import op_plan
    >>> eligible(op_plan(td.ops.aten.mul.Tensor)), eligible(op_plan(td.ops.aten.mul_.Tensor))
    (True, False)
    """
    from tensordispatch.lazy.kernels import T_SCALAR, T_TENSOR

    schema = plan.op._schema
    if plan.returns != "one" or plan.lists or plan.num_args != len(schema.arguments):
        return False
    if any(a.alias_info is not None for a in schema.arguments):
        return False
    if any(r.alias_info is not None for r in schema.returns):
        return False
    if any(str(a.type).endswith("?") for a in schema.arguments):
        return False
    return len(plan.inputs) == plan.num_args and all(
        kind in (T_TENSOR, T_SCALAR) for _, kind in plan.inputs
    )


def shortcut_kernel(plan: Any, tracer: Callable[..., Any]) -> Callable[..., Any]:
    """The Functionalize kernel of an `eligible` operator (Note [Functionalize shortcut]).

    >>> import tensordispatch as td
    >>> from tensordispatch.lazy.kernels import op_plan
    >>> from tensordispatch.lazy.tracegen import make_tracer
    >>> from tensordispatch.transforms.functionalize.wrapper import to_functional
    >>> plan = op_plan(td.ops.aten.mul.Tensor)
    >>> k = shortcut_kernel(plan, make_tracer(plan))
    >>> k(to_functional(td.ones(2)), to_functional(td.ones(2))).tolist()  # CPU: the fallback
    [1.0, 1.0]
    """
    from tensordispatch.lazy.kernels import T_TENSOR
    from tensordispatch.lazy.tensor import LazyTensor

    op = plan.op
    arguments = op._schema.arguments
    positional = [a for a in arguments if not a.kwarg_only]
    required = sum(1 for a in positional if a.default is None)
    defaults = [a.default_value if a.default is not None else None for a in arguments]
    tensors = tuple(pos for pos, kind in plan.inputs if kind == T_TENSOR)
    most = len(positional)
    ft = FunctionalTensor

    def kernel(*args: Any, **kwargs: Any) -> Any:
        d = _ST.__dict__
        if (
            kwargs
            or not required <= len(args) <= most
            or d["included"] != DEFAULT_INCLUDED_RAW
            or d["excluded"] != DEFAULT_EXCLUDED_RAW
            or d["modes"]
            or d["transform_stack"]
            or d.get("autograd_inference_mode", False)
            or d.get("lazy_force_fallback")
        ):
            return functionalize_fallback(op, *args, **kwargs)
        stack = list(args)
        if len(stack) < len(defaults):
            stack.extend(defaults[len(stack) :])
        found = False
        for pos in tensors:
            a = stack[pos]
            if a.__class__ is ft:
                sync(a)
                inner = a._data
                if inner.__class__ is not LazyTensor:
                    return functionalize_fallback(op, *args, **kwargs)
                m = inner._autograd_meta
                if m is not None and m.requires_grad:
                    return functionalize_fallback(op, *args, **kwargs)
                stack[pos] = inner
                found = True
            elif not (a.__class__ is Tensor and a._wrapped_number):
                return functionalize_fallback(op, *args, **kwargs)
        if not found:
            return functionalize_fallback(op, *args, **kwargs)
        return to_functional(tracer(op, None, stack))

    kernel.__name__ = f"lazy_functionalize_{plan.name.replace('::', '_').replace('.', '_')}"
    return kernel
