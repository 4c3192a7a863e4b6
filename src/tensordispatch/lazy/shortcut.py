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

import math
from collections.abc import Callable
from functools import partial
from typing import Any

from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import AFTER_AUTOGRAD_RAW
from tensordispatch.dispatch.tls import DEFAULT_EXCLUDED_RAW, DEFAULT_INCLUDED_RAW, local_state
from tensordispatch.tensor.tensor import Tensor
from tensordispatch.transforms.functionalize.kernels import functionalize_fallback
from tensordispatch.transforms.functionalize.wrapper import (
    FunctionalTensor,
    _make_wrapper,
    sync,
)

__all__ = ["MethodsHandle", "eligible", "install_methods", "shortcut_kernel"]

_ST = local_state()


def wrap_result(t: Tensor) -> FunctionalTensor:
    """A new functional wrapper (own storage, made on first use) over the traced result
    ``t``: what ``to_functional`` makes, without its argument checks (``t`` is a fresh
    LazyTensor that nothing else can see).

    >>> import tensordispatch as td
    >>> w = wrap_result(td.ones(2)); type(w).__name__, w._data.tolist()
    ('FunctionalTensor', [1.0, 1.0])
    """
    return _make_wrapper(t, None, (), 0)  # its storage is made on first use


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
            if a.__class__ is FunctionalTensor:
                sync(a)
                inner = a._data
                m = inner._autograd_meta
                if inner.__class__ is not LazyTensor or (m is not None and m.requires_grad):
                    return functionalize_fallback(op, *args, **kwargs)
                stack[pos] = inner
                found = True
            elif not (a.__class__ is Tensor and a._wrapped_number):
                return functionalize_fallback(op, *args, **kwargs)
        if not found:
            return functionalize_fallback(op, *args, **kwargs)
        return wrap_result(tracer(op, None, stack))

    kernel = _unrolled(plan, tracer, required, defaults, tensors, kernel)
    kernel.__name__ = f"lazy_functionalize_{plan.name.replace('::', '_').replace('.', '_')}"
    _BUILT[plan.name] = (plan, tracer, kernel, tuple(defaults))
    return kernel


def _unrolled(
    plan: Any,
    tracer: Callable[..., Any],
    required: int,
    defaults: list[Any],
    tensors: tuple[int, ...],
    generic: Callable[..., Any],
) -> Callable[..., Any]:
    """The shortcut kernel unrolled for a call with exactly the ``required`` positional
    arguments (how the operator's entry forwards a call without optional arguments): the
    same checks and stack as ``generic``, without its loop and list building. Other calls,
    and wrappers needing a sync, go to ``generic``. Module globals are read through ``M``
    at call time (tests replace the fallback and the wrapping)."""
    import sys

    from tensordispatch.lazy.tensor import LazyTensor

    names = [f"a{i}" for i in range(required)]
    lines = [
        "def kernel(*args, **kwargs):",
        f"    if kwargs or len(args) != {required}:",
        "        return generic(*args, **kwargs)",
        "    d = ST.__dict__",
        '    if (d["included"] != DI or d["excluded"] != DX or d["modes"]',
        '            or d["transform_stack"] or d.get("autograd_inference_mode", False)',
        '            or d.get("lazy_force_fallback")):',
        "        return M.functionalize_fallback(OP, *args)",
        f"    {', '.join(names)}, = args",
        "    found = False",
    ]
    for pos in tensors:
        if pos >= required:
            return generic
        a = names[pos]
        lines += [
            f"    if {a}.__class__ is FT:",
            f"        if {a}._fs is not None and {a}._generation != {a}._fs.generation:",
            "            return generic(*args)",
            f"        {a} = {a}._data",
            f"        if {a}.__class__ is not LT or ({a}._autograd_meta is not None",
            f"                and {a}._autograd_meta.requires_grad):",
            "            return M.functionalize_fallback(OP, *args)",
            "        found = True",
            f"    elif not ({a}.__class__ is T and {a}._wrapped_number):",
            "        return M.functionalize_fallback(OP, *args)",
        ]
    stack = names + [f"TAIL[{i}]" for i in range(len(defaults) - required)]
    lines += [
        "    if not found:",
        "        return M.functionalize_fallback(OP, *args)",
        f"    return M.wrap_result(tracer(OP, None, [{', '.join(stack)}]))",
    ]
    namespace: dict[str, Any] = {
        "generic": generic, "ST": _ST, "DI": DEFAULT_INCLUDED_RAW, "DX": DEFAULT_EXCLUDED_RAW,
        "M": sys.modules[__name__], "OP": plan.op, "FT": FunctionalTensor, "LT": LazyTensor,
        "T": Tensor, "TAIL": tuple(defaults[required:]), "tracer": tracer,
    }  # fmt: skip
    return _function("\n".join(lines) + "\n", namespace)


_UNROLLED_CODE: dict[str, Any] = {}


def _function(source: str, namespace: dict[str, Any]) -> Callable[..., Any]:
    """``kernel`` of ``source`` over ``namespace``; operators with one argument layout share
    one source, compiled once."""
    code = _UNROLLED_CODE.get(source)
    if code is None:
        code = _UNROLLED_CODE[source] = compile(source, "<lazy shortcut>", "exec")
    exec(code, namespace)  # noqa: S102 - our own generated source
    kernel: Callable[..., Any] = namespace["kernel"]
    return kernel


_BUILT: dict[str, tuple[Any, Callable[..., Any], Callable[..., Any], tuple[Any, ...]]] = {}


# -- fast operator methods on the wrapper --------------------------------------------------------

#: Note [Fast operator methods]
#: ``y + 0.5`` on a wrapper over a lazy tensor runs Tensor.__add__ (wrap the number), the
#: operator's entry (key set, cache lookup), the Autograd kernel (nothing requires grad:
#: redispatch below autograd) and the shortcut kernel above. While the backend is installed,
#: FunctionalTensor gets its own ``__add__``/``__sub__``/``__mul__``/``__truediv__`` that do
#: the shortcut's work directly when every skipped step is known to be a pass-through:
#: default dispatch state (as the shortcut), no keyword argument, the other operand a Python
#: int/float or a wrapper over a lazy tensor, neither requiring grad nor stale, and, checked
#: once per published dispatch state of the operator and operand key sets (`_validated`),
#: the dispatcher would call exactly the operator's Autograd kernel, whose redispatch reaches
#: exactly our shortcut kernel. ("Not stale": the wrapper's generation equals its storage's,
#: when ``wrapper.sync`` has nothing to do.) Numbers are passed as wrapped-number tensors
#: cached per value (the tracer only reads them). Anything else calls the Tensor method,
#: unchanged. Reflected
#: methods (``__radd__``) are not overridden: a subclass's reflected method would be tried
#: before a Tensor's own forward method and change the argument order.

FAST_METHODS = {
    "__add__": "aten::add.Tensor",
    "__sub__": "aten::sub.Tensor",
    "__mul__": "aten::mul.Tensor",
    "__truediv__": "aten::div.Tensor",
}
_NUMBERS: dict[type, dict[Any, Tensor]] = {float: {}, int: {}}


def _wrapped(kind: type, value: Any) -> Tensor | None:
    """A shared wrapped-number tensor for ``value`` (the tracer only reads it), cached per
    type; None for zeros and NaN, whose cache keys would be ambiguous (-0.0 == 0.0,
    nan != nan)."""
    from tensordispatch.backends.aten import wrap_number

    if not value or (kind is float and math.isnan(value)):
        return None
    cache = _NUMBERS[kind]
    if len(cache) >= 256:
        cache.clear()
    t = cache[value] = wrap_number(value)
    return t


def _validated(entry: Any, raw: int, kernel: Callable[..., Any]) -> bool:
    """Whether a call of ``entry``'s operator with arguments' key set ``raw`` under the
    default dispatch state runs the standard Autograd kernel (generic, or the entry its
    specializer generates) and then, below autograd, ``kernel`` (Note [Fast operator
    methods]). Anything unexpected in the dispatcher's published state (its layout is the
    dispatcher's business) means no: the caller takes the normal path."""
    try:
        return _runs_autograd_then(entry, raw, kernel)
    except Exception:  # noqa: BLE001 - the normal path raises any real error, in order
        return False


def _runs_autograd_then(entry: Any, raw: int, kernel: Callable[..., Any]) -> bool:
    state = entry.state
    pre = raw | DEFAULT_INCLUDED_RAW
    call = state.default_cache.get(pre) or state.call_miss(DEFAULT_EXCLUDED_RAW, pre)
    autograd = entry.kernels.get(DispatchKey.Autograd)
    if not autograd or getattr(autograd[0].fn, "__module__", "") != _AUTOGRAD_MODULE:
        return False
    if isinstance(call, partial):  # the generic RAW_KEYSET convention: (raw, op, *args)
        if call.func is not autograd[0].fn:
            return False
        below = call.args[0] & AFTER_AUTOGRAD_RAW
        target = state.redispatch_cache.get(below) or state.redispatch_miss(below)
        return target is kernel
    scope = getattr(call, "__globals__", None)  # an entry made by the kernel's specializer
    specializer = autograd[0].specializer
    if scope is None or specializer is None or scope.get("_td_below") is not kernel:
        return False
    twin = specializer(entry.overload_object, scope.get("_td_raw"))
    return twin is not None and twin.__code__ is call.__code__


_AUTOGRAD_MODULE = "tensordispatch.autograd.kernels"


def _fast_method(
    name: str, slow: Callable[..., Any], checked: list[Any]
) -> Callable[..., Any] | None:
    """The fast FunctionalTensor method of operator ``name`` standing in for ``slow``;
    ``checked`` holds the dispatch state and key sets it last validated."""
    from tensordispatch.lazy.tensor import LazyTensor

    if name not in _BUILT:  # no shortcut kernel for it
        return None
    plan, tracer, kernel, defaults = _BUILT[name]
    op, entry = plan.op, plan.op._entry
    tail = list(defaults[2:])
    floats, ints = _NUMBERS[float], _NUMBERS[int]
    ft = FunctionalTensor

    def method(self: Any, other: Any, **kwargs: Any) -> Any:
        inner = self._data
        if kwargs or inner.__class__ is not LazyTensor or self.__class__ is not ft:
            return slow(self, other, **kwargs)
        d = _ST.__dict__
        if (
            d["included"] != DEFAULT_INCLUDED_RAW
            or d["excluded"] != DEFAULT_EXCLUDED_RAW
            or d["modes"]
            or d["transform_stack"]
            or d.get("autograd_inference_mode", False)
            or d.get("lazy_force_fallback")
            or (self._fs is not None and self._generation != self._fs.generation)
            or (self._autograd_meta is not None and self._autograd_meta.requires_grad)
            or inner._autograd_meta is not None
        ):
            return slow(self, other)
        kind = other.__class__
        if kind is float:
            b = floats.get(other)
        elif kind is int:
            b = ints.get(other)
        elif kind is ft:
            b = other._data
            if (
                b.__class__ is not LazyTensor
                or (other._fs is not None and other._generation != other._fs.generation)
                or (other._autograd_meta is not None and other._autograd_meta.requires_grad)
                or b._autograd_meta is not None
            ):
                return slow(self, other)
        else:
            return slow(self, other)
        if b is None:
            b = _wrapped(kind, other)
            if b is None:
                return slow(self, other)
        other_keys = other._key_set if kind is ft else b._key_set
        state = entry.state
        if state is not checked[0] or self._key_set != checked[1] or other_keys != checked[2]:
            if not _validated(entry, self._key_set | other_keys, kernel):
                return slow(self, other)
            checked[:] = [state, self._key_set, other_keys]
        return _fast_wrap(tracer(op, None, [inner, b, *tail]))

    method.__name__ = method.__qualname__ = f"lazy_fast_{name.split('::')[-1].split('.')[0]}"
    return method


def _fast_wrap(t: Tensor) -> FunctionalTensor:
    return _make_wrapper(t, None, (), 0)


class MethodsHandle:
    """What `install_methods` returns: ``remove()`` restores the methods it replaced."""

    __slots__ = ("saved",)

    def __init__(self, saved: dict[str, Any]) -> None:
        self.saved = saved

    def remove(self) -> None:
        from tensordispatch.lazy.inline_methods import forget

        for dunder, previous in self.saved.items():
            forget(FunctionalTensor.__dict__.get(dunder))
            if previous is None:
                delattr(FunctionalTensor, dunder)
            else:
                setattr(FunctionalTensor, dunder, previous)
        self.saved = {}


def install_methods() -> MethodsHandle:
    """Set FunctionalTensor's fast operator methods (Note [Fast operator methods]) for the
    shortcut kernels built so far; the handle's ``remove()`` undoes it.

    >>> import tensordispatch as td, tensordispatch.lazy as lazy
    >>> handle = lazy.init(); methods = install_methods()
    >>> x = td.ones(2).to("lazy")
    >>> type(x).__add__.__name__, (x + 2.0).tolist()
    ('lazy_fast_add', [3.0, 3.0])
    >>> methods.remove(); handle.remove(); type(x).__add__ is td.Tensor.__add__
    True
    """
    from tensordispatch.lazy.inline_methods import inline_method

    saved: dict[str, Any] = {}
    for dunder, name in FAST_METHODS.items():
        slow = getattr(Tensor, dunder)
        checked: list[Any] = [None, None, None]
        method = _fast_method(name, slow, checked)
        if method is not None:
            method = inline_method(_BUILT[name], method, slow, checked)
            saved[dunder] = FunctionalTensor.__dict__.get(dunder)
            setattr(FunctionalTensor, dunder, method)
    return MethodsHandle(saved)
