"""The generated tracing kernels of the lazy backend, by operator (the hot path of tracing).

Owns looking up the kernel gen-backend-stubs generated for an operator (lazy/lazy_ir.py,
written by codegen/backend_stubs/gen_lazy.py from backend.yaml; the templates and
Note [Generated tracers], Note [Attributes by value] are in
codegen/backend_stubs/lazy_kernels.py) and binding it to the operator's `OpPlan`. Every
generated kernel builds exactly the node the generic `kernels.trace` builds (same arguments,
markers, shape-cache key and hash), recorded as the operator's generated node class.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

__all__ = ["generated", "make_tracer"]


def generated(plan: Any) -> tuple[type, Callable[..., Any] | None] | None:
    """(node class, kernel factory) of ``plan``'s operator in lazy/lazy_ir.py, or None if the
    operator is not generated (the factory is None for ``ir_gen`` operators).

    >>> import tensordispatch as td
    >>> from tensordispatch.lazy.kernels import op_plan
    >>> generated(op_plan(td.ops.aten.add.Tensor))[0].__name__
    'AddTensor'
    """
    from tensordispatch.lazy import lazy_ir

    found: tuple[type, Callable[..., Any] | None] | None
    found = lazy_ir.NODES.get(plan.name.removeprefix("aten::"))
    return found


def _static_source(plan: Any) -> str | None:
    """The source of ``plan``'s generated kernel factory if it is a static tracer (every
    operand a required Tensor or Scalar: slots known when generating), else None."""
    found = generated(plan)
    if found is None:
        return None
    node_class, factory = found
    if factory is None or getattr(node_class, "TRACER", None) != "static":
        return None
    return inspect.getsource(factory)


def make_tracer(plan: Any) -> Callable[..., Any] | None:
    """The generated boxed Lazy kernel of ``plan.op`` bound to ``plan`` (None: the operator
    has no generated kernel; the generic `kernels.trace` serves it).

    The generated kernel builds the same node as the generic one:

    >>> import tensordispatch as td, tensordispatch.lazy as lazy
    >>> from tensordispatch.lazy.kernels import op_plan, trace
    >>> from tensordispatch.lazy.tensor import from_array
    >>> import numpy as np
    >>> x = from_array(np.ones(3, np.float32), td.float32)
    >>> op = td.ops.aten.mul.Tensor
    >>> fast = make_tracer(op_plan(op))(op, None, [x, x])
    >>> slow = trace(op, None, [x, x])
    >>> fast.ir.hash == slow.ir.hash, type(fast.ir).__name__
    (True, 'MulTensor')
    """
    found = generated(plan)
    if found is None:
        return None
    node_class, factory = found
    if factory is None:
        return None
    kernel: Callable[..., Any] = factory(plan, node_class)
    return kernel
