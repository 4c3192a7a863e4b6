"""The NumPy lowering rules: how common operators become NumPy calls in a generated graph
function (lowering.py).

Owns `Rule`, `NUMPY_RULES` (operator name -> Rule) and the names the generated code sees
(`NUMPY_NAMES`: NumPy functions as ``np_<name>`` globals, the helpers the rules call). Must
not generate whole functions, choose buffers or run graphs (lowering.py, first_run.py).

Note [NumPy lowering rules]
`NUMPY_RULES` maps an operator to a rule that returns a NumPy expression for the node, or
None to decline (then the node calls the operator's CPU kernel from inside the generated
function: every traced operator lowers, the rules only make common ones cheaper). A rule
sees operand expressions and, when its `Rule.writes_into` says so, the name of a dead buffer
to write into (``out=``). Elementwise rules only accept floating outputs whose tensor operands
all have the output's dtype (Python numbers are NumPy "weak" scalars, as torch's wrapped
numbers are), so NumPy's promotion never differs from torch's.

Note [Numbers as 0-d arrays]
A ufunc call with a Python number operand spends most of its time on the number for small
arrays (~3x the call with a 0-d array at 1024 elements). An elementwise rule's output dtype
is its tensor operands' (`_same_float`), and NumPy converts a weak Python number to exactly
that dtype, so the generated function converts each number operand once per run (hoisted:
``s1 = np_asarray(p2, np.float32)``) and the ufuncs get 0-d arrays of the output dtype: the
same loop on the same values, bit for bit (checked in tests against the CPU kernels).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from tensordispatch.lazy.first_run import Literal
from tensordispatch.lazy.ir import Node, Operand
from tensordispatch.lazy.kernel_call import run_cpu_kernel

__all__ = ["NUMPY_NAMES", "NUMPY_RULES", "Call", "Hoist", "Rule"]


#: A call as data (lowering.py Note [Statements as data]): (function name, arguments), each
#: argument a name or a nested Call.
Call = tuple[str, tuple[Any, ...]]
Hoist = Callable[[Any], str]


@dataclass(frozen=True, slots=True)
class Rule:
    """A NumPy lowering (Note [NumPy lowering rules]): ``emit(node, ins, out, hoist)`` ->
    a `Call`, source text, or None; ``hoist(expr)`` moves an expression (a Call or text)
    over parameters only to the top of the function and returns the name holding it.
    ``writes_into``: the rule can write into a given buffer; ``elementwise``: that buffer
    may be one of its operands; ``view``: the result aliases its first operand."""

    emit: Callable[[Node, list[str], str | None, Hoist], Any]
    writes_into: bool = True
    elementwise: bool = True
    view: bool = False


_FLOAT_OUT: dict[Any, bool] = {}


def _same_float(node: Node) -> bool:
    out = node.shapes[0].dtype
    ok = _FLOAT_OUT.get(out)
    if ok is None:
        ok = _FLOAT_OUT[out] = bool(out.is_floating_point and out.itemsize >= 4)
    if not ok:
        return False
    operands = node.operands
    for a in node.args:
        if type(a) is Operand:
            if a.kind == "tensor" and operands[a.index].shape.dtype is not out:
                return False
        elif type(a) is tuple:
            for x in a:
                if (
                    type(x) is Operand
                    and x.kind == "tensor"
                    and operands[x.index].shape.dtype is not out
                ):
                    return False
    return True


def _arg(node: Node, ins: list[str], position: int) -> Any:
    """Argument ``position`` of ``node`` in a Call: its operand's name, else a Literal."""
    a = node.args[position]
    return ins[a.index] if type(a) is Operand else Literal(a)


_NP_NAMES: dict[Any, str] = {}


def _np_name(dtype: Any) -> str:
    """``np_float32`` for float32: the generated code's name for a dtype's NumPy type, bound
    as a global of the generated code (cached: NumPy's ``dtype.name`` costs microseconds)."""
    name = _NP_NAMES.get(dtype)
    if name is None:
        np_dtype = np.dtype(dtype._numpy)
        name = _NP_NAMES[dtype] = f"np_{np_dtype.name}"
        NUMPY_NAMES[name] = np_dtype.type
    return name


def _alpha_product(number: Any, alpha: Any, dtype: Any) -> Any:
    """``number * alpha`` for two Python numbers, multiplied in the output dtype as the CPU
    kernel does (``number`` itself when alpha is 1)."""
    if alpha == 1:
        return number
    return np.multiply(
        np.asarray(number), np.asarray(alpha).astype(dtype), dtype=dtype, casting="unsafe"
    )


def _scaled(tensor: Any, alpha: Any) -> Any:
    """``other * alpha`` for a tensor ``other`` (``other`` itself when alpha is 1)."""
    return tensor if alpha == 1 else np.multiply(tensor, alpha)


def _times_alpha(number: Any, alpha: Any, dtype: Any) -> Any:
    """`_alpha_product` as a 0-d array of ``dtype`` (Note [Numbers as 0-d arrays])."""
    return np.asarray(_alpha_product(number, alpha, dtype), dtype)


_FLOAT_NAMES: dict[Any, str | None] = {}


def _float_name(dtype: Any) -> str | None:
    """`_np_name` of a floating dtype of 4 bytes or more, else None (the dtypes an
    elementwise rule accepts, Note [NumPy lowering rules])."""
    try:
        return _FLOAT_NAMES[dtype]
    except KeyError:
        ok = dtype.is_floating_point and dtype.itemsize >= 4
        name = _FLOAT_NAMES[dtype] = _np_name(dtype) if ok else None
        return name


def _binary(ufunc: str, with_alpha: bool, *, swap: bool = False) -> Rule:
    """An elementwise binary ufunc over arguments 0 and 1 (1 and 0 with ``swap``: rsub
    is ``sub(other, self, alpha)``), with ``alpha`` (argument 2) scaling the second."""
    name = f"np_{ufunc}"
    first, second = (1, 0) if swap else (0, 1)

    def emit(node: Node, ins: list[str], out: str | None, hoist: Hoist) -> Call | None:
        # _same_float and _arg, unrolled for two operands (the commonest nodes)
        out_dtype = node.shapes[0].dtype
        dtype = _FLOAT_NAMES.get(out_dtype, "")
        if dtype == "":
            dtype = _float_name(out_dtype)
        args = node.args
        a0, a1 = args[first], args[second]
        if dtype is None or type(a0) is not Operand or type(a1) is not Operand:
            return None  # (operands are always markers; anything else: the CPU kernel)
        k0, k1 = a0.kind, a1.kind
        if k0 == "tensor" or k1 == "tensor":
            operands = node.operands
            if k0 == "tensor" and operands[a0.index].shape.dtype is not out_dtype:
                return None
            if k1 == "tensor" and operands[a1.index].shape.dtype is not out_dtype:
                return None
        a: str = ins[a0.index]
        b: Any = ins[a1.index]
        scaled = None
        if with_alpha:
            a2 = args[2]
            if type(a2) is not Operand:
                return None
            alpha = ins[a2.index]
            if k1 == "tensor":
                b = ("_scaled", (b, alpha))
            else:  # two numbers: multiplied in the output dtype, as the CPU kernel does
                scaled = alpha
        if k0 == "tensor" or k1 == "tensor":  # Note [Numbers as 0-d arrays]
            if k0 != "tensor":
                a = hoist(("np_asarray", (a, dtype)))
            if scaled is not None:
                b = hoist(("_times_alpha", (b, scaled, dtype)))
            elif k1 != "tensor":
                b = hoist(("np_asarray", (b, dtype)))
        elif scaled is not None:
            b = hoist(("_alpha_product", (b, scaled, dtype)))
        # ufuncs take the output positionally after their inputs
        return (name, (a, b, out)) if out else (name, (a, b))

    return Rule(emit)


def _unary(ufunc: str) -> Rule:
    name = f"np_{ufunc}"

    def emit(node: Node, ins: list[str], out: str | None, hoist: Hoist) -> Call | None:
        a = node.args[0]
        if type(a) is not Operand or not _same_float(node):
            return None
        return (name, (ins[a.index], out)) if out else (name, (ins[a.index],))

    return Rule(emit)


def _relu(node: Node, ins: list[str], out: str | None, hoist: Hoist) -> Call | None:
    if not _same_float(node):
        return None
    return ("np_maximum", (_arg(node, ins, 0), _ZERO))


_ZERO = Literal(0.0)


def _mm(node: Node, ins: list[str], out: str | None, hoist: Hoist) -> Call | None:
    a, b = node.args[0], node.args[1]
    if type(a) is not Operand or type(b) is not Operand or not _same_float(node):
        return None
    operands = (ins[a.index], ins[b.index], out) if out else (ins[a.index], ins[b.index])
    return ("np_matmul", operands)


def _view(node: Node, ins: list[str], out: str | None, hoist: Hoist) -> Call | None:
    return ("np_reshape", (_arg(node, ins, 0), Literal(node.shapes[0].sizes)))


def _permute(node: Node, ins: list[str], out: str | None, hoist: Hoist) -> Call | None:
    return ("np_transpose", (_arg(node, ins, 0), Literal(tuple(node.args[1]))))


def _t(node: Node, ins: list[str], out: str | None, hoist: Hoist) -> Call | None:
    return ("np_transpose", (_arg(node, ins, 0),))


def _expand(node: Node, ins: list[str], out: str | None, hoist: Hoist) -> Call | None:
    return ("np_broadcast_to", (_arg(node, ins, 0), Literal(node.shapes[0].sizes)))


def _astype(value: Any, dtype: Any) -> Any:
    """``value`` as a new array of ``dtype`` (``np.asarray(value).astype(dtype)``)."""
    return np.asarray(value).astype(dtype)


def _cast(node: Node, ins: list[str], out: str | None, hoist: Hoist) -> Call | None:
    if node.args[1] is None:
        return None
    return ("_astype", (_arg(node, ins, 0), _np_name(node.shapes[0].dtype)))


NUMPY_RULES: dict[str, Rule] = {
    "aten::add.Tensor": _binary("add", True),
    "aten::sub.Tensor": _binary("subtract", True),
    "aten::rsub.Tensor": _binary("subtract", True, swap=True),
    "aten::rsub.Scalar": _binary("subtract", True, swap=True),
    "aten::mul.Tensor": _binary("multiply", False),
    "aten::div.Tensor": _binary("true_divide", False),
    # NumPy deprecates a positional output for maximum/minimum: these allocate
    "aten::maximum": replace(_binary("maximum", False), writes_into=False),
    "aten::minimum": replace(_binary("minimum", False), writes_into=False),
    "aten::neg": _unary("negative"),
    "aten::exp": _unary("exp"),
    "aten::log": _unary("log"),
    "aten::sin": _unary("sin"),
    "aten::cos": _unary("cos"),
    "aten::tanh": _unary("tanh"),
    "aten::sqrt": _unary("sqrt"),
    "aten::abs": _unary("abs"),
    "aten::relu": Rule(_relu, writes_into=False),
    "aten::mm": Rule(_mm, elementwise=False),
    "aten::view_copy": Rule(_view, writes_into=False, view=True),
    "aten::permute_copy": Rule(_permute, writes_into=False, view=True),
    "aten::t_copy": Rule(_t, writes_into=False, view=True),
    "aten::expand_copy": Rule(_expand, writes_into=False, view=True),
    "aten::_to_copy": Rule(_cast, writes_into=False),
}

#: NumPy functions the rules call, bound as globals of the generated code (`np_add`): a name
#: is cheaper than an attribute, to compile and to run; and the helpers the rules call
NUMPY_NAMES = {
    f"np_{name}": getattr(np, name)
    for name in (
        "add", "subtract", "multiply", "true_divide", "maximum", "minimum", "negative", "exp",
        "log", "sin", "cos", "tanh", "sqrt", "abs", "matmul", "reshape", "transpose",
        "broadcast_to", "asarray",
    )
}  # fmt: skip
NUMPY_NAMES.update(
    np=np,
    _times_alpha=_times_alpha,
    _alpha_product=_alpha_product,
    _scaled=_scaled,
    _astype=_astype,
)

NUMPY_NAMES["_run"] = run_cpu_kernel
