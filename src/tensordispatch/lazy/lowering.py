"""Lowering a lazy graph: the backend interface and the default NumPy source generator.

Owns `LoweringBackend` (anything with ``compile(graph) -> callable``; the callable takes the
graph's parameter values and returns one array per output) and `NumpyBackend`, which writes
ONE Python function per graph over NumPy and compiles it once (LTC's TorchScript backend
analogue). Must not cut, hash or cache graphs (executor.py).

Note [NumPy lowering rules]
`NUMPY_RULES` maps an operator to a rule that returns a NumPy expression for the node, or
None to decline (then the node calls the operator's CPU kernel from inside the generated
function: every traced operator lowers, the rules only make common ones cheaper). A rule
sees operand expressions and, when its `Rule.writes_into` says so, the name of a dead buffer
to write into (``out=``). Elementwise rules only accept floating outputs whose tensor operands
all have the output's dtype (Python numbers are NumPy "weak" scalars, as torch's wrapped
numbers are), so NumPy's promotion never differs from torch's.

Note [Buffer reuse]
While emitting the post-order, the generator knows each value's last use. A buffer that a
rule allocated ("fresh"), that no view aliases, that is not a graph output or parameter, is
returned to a pool after its last use; a later rule that can write into a buffer of the same
shape and dtype takes it from the pool (``out=``), and an elementwise rule may also take an
operand that dies at that very node. Operands of views and of nodes lowered to a CPU kernel
call are never reused (their results may alias them). A chain ``y = y + 0.5; y = y * 0.999;
...`` thus runs in one buffer, without an allocation per operator.

Note [Numbers as 0-d arrays]
A ufunc call with a Python number operand spends most of its time on the number for small
arrays (~3x the call with a 0-d array at 1024 elements). An elementwise rule's output dtype
is its tensor operands' (`_same_float`), and NumPy converts a weak Python number to exactly
that dtype, so the generated function converts each number operand once per run (hoisted:
``s1 = np_asarray(p2, np.float32)``) and the ufuncs get 0-d arrays of the output dtype: the
same loop on the same values, bit for bit (checked in tests against the CPU kernels).

Note [Statements as data]
A rule returns its expression as a `Call`, ``(function name, arguments)`` with names or
nested Calls as arguments (``("np_add", ("v3", "s0", "v3"))``), and hoists Calls too; the
emitter renders each as source text and, at the same time, records it as a first_run step,
so a new graph's interpreted first run (Note [First run interpreted]) needs no parse of the
text it just wrote, and the in-place calls that fold (Note [Folded runs]) are recognised
on the data. A rule may still return source text (a literal, an attribute, a rule of
another module): the graph's statements are then read back by `first_run.parse`, which
declines what it cannot interpret, and the source is compiled at once.

Note [Folded runs]
Python's ``compile`` costs about as much per generated line as the line's first run, so a
first step of a 1000-operator chain was mostly compile time. A run of RUN_MIN or more
consecutive in-place binary calls on one buffer whose other operand is a parameter or a
hoisted constant (what such chains lower to) is emitted as one loop: when the run repeats a
block of at most PERIOD_MAX calls (``y = y + 0.5; y = y * 0.999`` in a loop), as
``for _ in range(k):`` over that block followed by the remainder; otherwise as a loop over a
constant table of (ufunc, index into ``c_``), ``c_`` holding the parameters and hoisted
names. Either way the same calls in the same order, compiled in constant time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from tensordispatch.backends.cpu.fpstate import FP_QUIET as _QUIET
from tensordispatch.backends.cpu.fpstate import FP_STATE
from tensordispatch.lazy import first_run
from tensordispatch.lazy.config import get_compile_on_first_run
from tensordispatch.lazy.executor import Graph
from tensordispatch.lazy.ir import Node, Operand, Shape, Value
from tensordispatch.lazy.kernel_call import detached, run_cpu_kernel

__all__ = ["NUMPY_RULES", "LoweringBackend", "NumpyBackend", "Rule", "run_cpu_kernel"]


class LoweringBackend(Protocol):
    """A lowering: turns a Graph into a callable over its parameter values."""

    def compile(self, graph: Graph) -> Callable[..., Sequence[Any]]: ...


#: A call as data (Note [Statements as data]): (function name, arguments), each argument
#: a name or a nested Call.
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
            if a.kind == "tensor":
                n, i = operands[a.index]
                if n.shapes[i].dtype is not out:
                    return False
        elif type(a) is tuple:
            for x in a:
                if type(x) is Operand and x.kind == "tensor":
                    n, i = operands[x.index]
                    if n.shapes[i].dtype is not out:
                        return False
    return True


def _arg(node: Node, ins: list[str], position: int) -> str:
    a = node.args[position]
    return ins[a.index] if type(a) is Operand else repr(a)


_NP_NAMES: dict[Any, str] = {}


def _np_name(dtype: Any) -> str:
    """``np_float32`` for float32: the generated code's name for a dtype's NumPy type, bound
    as a global of the generated code (cached: NumPy's ``dtype.name`` costs microseconds)."""
    name = _NP_NAMES.get(dtype)
    if name is None:
        np_dtype = np.dtype(dtype._numpy)
        name = _NP_NAMES[dtype] = f"np_{np_dtype.name}"
        _NUMPY_NAMES[name] = np_dtype.type
    return name


def _out(out: str | None) -> str:
    # ufuncs take the output positionally after their inputs (a shorter line to compile)
    return f", {out}" if out else ""


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
        if k0 == "tensor":
            n, i = node.operands[a0.index]
            if n.shapes[i].dtype is not out_dtype:
                return None
        if k1 == "tensor":
            n, i = node.operands[a1.index]
            if n.shapes[i].dtype is not out_dtype:
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


def _relu(node: Node, ins: list[str], out: str | None, hoist: Hoist) -> str | None:
    if not _same_float(node):
        return None
    return f"np_maximum({_arg(node, ins, 0)}, 0.0{_out(out)})"


def _mm(node: Node, ins: list[str], out: str | None, hoist: Hoist) -> Call | None:
    a, b = node.args[0], node.args[1]
    if type(a) is not Operand or type(b) is not Operand or not _same_float(node):
        return None
    operands = (ins[a.index], ins[b.index], out) if out else (ins[a.index], ins[b.index])
    return ("np_matmul", operands)


def _view(node: Node, ins: list[str], out: str | None, hoist: Hoist) -> str | None:
    return f"np_reshape({_arg(node, ins, 0)}, {node.shapes[0].sizes!r})"


def _permute(node: Node, ins: list[str], out: str | None, hoist: Hoist) -> str | None:
    dims = node.args[1]
    return f"np_transpose({_arg(node, ins, 0)}, {tuple(dims)!r})"


def _t(node: Node, ins: list[str], out: str | None, hoist: Hoist) -> str | None:
    return f"np_transpose({_arg(node, ins, 0)})"


def _expand(node: Node, ins: list[str], out: str | None, hoist: Hoist) -> str | None:
    return f"np_broadcast_to({_arg(node, ins, 0)}, {node.shapes[0].sizes!r})"


def _cast(node: Node, ins: list[str], out: str | None, hoist: Hoist) -> str | None:
    if node.args[1] is None:
        return None
    dtype = node.shapes[0].dtype
    return f"np_asarray({_arg(node, ins, 0)}).astype({_np_name(dtype)})"


NUMPY_RULES: dict[str, Rule] = {
    "aten::add.Tensor": _binary("add", True),
    "aten::sub.Tensor": _binary("subtract", True),
    "aten::rsub.Tensor": _binary("subtract", True, swap=True),
    "aten::rsub.Scalar": _binary("subtract", True, swap=True),
    "aten::mul.Tensor": _binary("multiply", False),
    "aten::div.Tensor": _binary("true_divide", False),
    "aten::maximum": _binary("maximum", False),
    "aten::minimum": _binary("minimum", False),
    "aten::neg": _unary("negative"),
    "aten::exp": _unary("exp"),
    "aten::log": _unary("log"),
    "aten::sin": _unary("sin"),
    "aten::cos": _unary("cos"),
    "aten::tanh": _unary("tanh"),
    "aten::sqrt": _unary("sqrt"),
    "aten::abs": _unary("abs"),
    "aten::relu": Rule(_relu),
    "aten::mm": Rule(_mm, elementwise=False),
    "aten::view_copy": Rule(_view, writes_into=False, view=True),
    "aten::permute_copy": Rule(_permute, writes_into=False, view=True),
    "aten::t_copy": Rule(_t, writes_into=False, view=True),
    "aten::expand_copy": Rule(_expand, writes_into=False, view=True),
    "aten::_to_copy": Rule(_cast, writes_into=False),
}

# NumPy functions the rules call, bound as globals of the generated code (`np_add`): a name
# is cheaper than an attribute, to compile and to run
_NUMPY_NAMES = {
    f"np_{name}": getattr(np, name)
    for name in (
        "add", "subtract", "multiply", "true_divide", "maximum", "minimum", "negative", "exp",
        "log", "sin", "cos", "tanh", "sqrt", "abs", "matmul", "reshape", "transpose",
        "broadcast_to", "asarray",
    )
}  # fmt: skip
_NUMPY_NAMES.update(
    np=np, _times_alpha=_times_alpha, _alpha_product=_alpha_product, _scaled=_scaled
)

_NUMPY_NAMES["_run"] = run_cpu_kernel
_set_fp, _reset_fp = FP_STATE.set, FP_STATE.reset

# -- the generator ------------------------------------------------------------------------------


# an in-place binary ufunc call on one buffer with a parameter or hoisted second operand
_INPLACE = re.compile(r"^np_(\w+)\((v\d+), ([ps]\d+), \2\)$")
RUN_MIN = 4
PERIOD_MAX = 8


def _period(steps: list[Any], start: int, end: int) -> int | None:
    """The smallest period p <= PERIOD_MAX of ``steps[start:end]`` (each step equal to the
    one p before it) that repeats at least twice, or None (Note [Folded runs]: such a run is
    emitted as a loop over one period: readable, and ~3% cheaper to run than the table
    loop at 1024 elements)."""
    length = end - start
    for p in range(1, min(PERIOD_MAX, length // 2) + 1):
        if all(steps[k] == steps[k - p] for k in range(start + p, end)):
            return p
    return None


def _render(expr: Any) -> str:
    """The source text of a name or a `Call`."""
    if type(expr) is str:
        return expr
    fn, args = expr
    try:
        return f"{fn}({', '.join(args)})"
    except TypeError:  # a nested call among the arguments
        return f"{fn}({', '.join([_render(a) for a in args])})"


_CONSTANT = ("p", "s")


def _in_place_text(expr: str) -> tuple[str, str, str] | None:
    """(ufunc, buffer, constant) if ``expr`` is ``np_<ufunc>(buffer, constant, buffer)``
    with a parameter or hoisted name as constant (what Note [Folded runs] folds)."""
    m = _INPLACE.match(expr)
    return None if m is None else (m.group(1), m.group(2), m.group(3))


class _Emitter:
    """Writes the source of one graph's function (Note [Buffer reuse]) and, when every
    statement is a `Call`, the same statements as a first_run.Program (Note [Statements as
    data]). Values are keyed by the `Value` tuples themselves (nodes hash by identity)."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        # per statement: (target or None, expression: a Call or text, the buffer written or
        # None); rendered as source and made Program steps only where _fold_runs keeps them
        self.statements: list[tuple[str | None, Any, str | None]] = []
        self.prelude: dict[Any, str] = {}  # hoisted expression (Call or text) -> name
        self.textual = False  # a statement is text only: first_run.parse reads the body
        self.folded = False
        self.tables = 0
        self.names: dict[Value, str] = {}
        self.constants: dict[str, Any] = {}  # this graph's own globals (kernel nodes, tables)
        last_use: dict[Value, int] = {}
        for position, node in enumerate(graph.nodes):
            for value in node.operands:
                last_use[value] = position
        self.last_use = last_use
        self.keep: set[Value] = set(graph.outputs)
        self.fresh: set[Value] = set()
        self.pool: dict[Shape, list[str]] = {}  # free buffers by shape (equal dtype and sizes)
        self.program: first_run.Program | None = None

    def emit(self) -> str:
        graph = self.graph
        names = self.names
        self._nodes()
        self.params = [f"p{i}" for i in range(len(graph.parameters))]
        self.outputs = [names[value] for value in graph.outputs]
        hoisted: list[str] = []
        first: list[tuple[Any, ...]] = []
        for expr, name in self.prelude.items():
            if type(expr) is str:
                self.textual = True
                hoisted.append(f"{name} = {expr}")
            else:
                hoisted.append(f"{name} = {_render(expr)}")
                first.append((first_run.CALL_STEP, name, expr[0], expr[1]))
        lines, steps = self._fold_runs()
        if self.folded:  # the constants the folded runs index into
            constants = (*self.params, *self.prelude.values())
            hoisted.append(f"c_ = ({', '.join(constants)},)")
            first.append((first_run.TUPLE_STEP, "c_", constants))
        self.body = hoisted + lines
        if not self.textual:
            first.extend(steps)  # type: ignore[arg-type]
            self.program = first_run.Program(tuple(self.params), tuple(first), tuple(self.outputs))
        body = "\n    ".join(self.body)
        outs = "".join([f"{name}, " for name in self.outputs])
        return f"def graph_fn({', '.join(self.params)}):\n    {body}\n    return ({outs})\n"

    def _table_entry(self, step: tuple[str, str, str]) -> tuple[Any, int]:
        """A folded step's (ufunc, index in ``c_``): ``c_`` holds the parameters p0.., then
        the hoisted names s0..."""
        ufunc, _, constant = step
        index = int(constant[1:])
        if constant[0] == "s":
            index += len(self.graph.parameters)
        return _NUMPY_NAMES[f"np_{ufunc}"], index

    def _fold_runs(self) -> tuple[list[str], list[tuple[Any, ...] | None]]:
        """Note [Folded runs]: RUN_MIN or more consecutive in-place binary calls on one
        buffer with a constant second operand (a parameter or a hoisted name) become one
        loop, so a long elementwise chain compiles in O(1): a repeated block of calls when
        the run is periodic, else a loop over a constant table. The lines and, in step,
        their Program steps."""
        statements, steps = self.statements, self._in_place_steps()
        folded: list[str] = []
        program: list[tuple[Any, ...] | None] = []
        i, end = 0, len(statements)
        while i < end:
            step = steps[i]
            j = i + 1
            if step is not None:
                buffer = step[1]
                while j < end and (later := steps[j]) is not None and later[1] == buffer:
                    j += 1
            if j - i < RUN_MIN:  # a short run, or not a run: keep the lines
                self._keep(statements[i:j], folded, program)
            elif (period := _period(steps, i, j)) is not None:
                repeats = (j - i) // period
                folded.append(f"for _ in range({repeats}):")
                block: list[tuple[Any, ...] | None] = []
                self._keep(statements[i : i + period], folded, block, "    ")
                program.append((first_run.REPEAT_STEP, repeats, tuple(block)))
                self._keep(statements[i + repeats * period : j], folded, program)
            else:
                table = f"r{self.tables}"
                folded.extend(self._table_loop(table, steps[i:j], buffer))  # type: ignore[arg-type]
                program.append((first_run.FOLD_STEP, table, buffer))
            i = j
        return folded, program

    @staticmethod
    def _keep(
        statements: list[tuple[str | None, Any, str | None]],
        lines: list[str],
        steps: list[tuple[Any, ...] | None],
        indent: str = "",
    ) -> None:
        """Append ``statements``' lines to ``lines`` and their Program steps (None for
        text) to ``steps``."""
        for target, expr, _ in statements:
            if type(expr) is str:
                text = expr
                steps.append(None)
            else:
                fn, args = expr
                try:
                    text = f"{fn}({', '.join(args)})"
                except TypeError:  # a nested call among the arguments
                    text = _render(expr)
                steps.append((first_run.CALL_STEP, target, fn, args))
            lines.append(f"{indent}{target} = {text}" if target else f"{indent}{text}")

    def _table_loop(self, table: str, run: list[tuple[str, str, str]], buffer: str) -> list[str]:
        self.tables += 1
        entries: dict[tuple[str, str, str], tuple[Any, int]] = {}
        for step in run:
            if step not in entries:
                entries[step] = self._table_entry(step)
        self.constants[table] = tuple([entries[step] for step in run])
        self.folded = True
        return [f"for f_, i_ in {table}:", f"    f_({buffer}, c_[i_], {buffer})"]

    def _kernel_call(self, position: int, node: Node, ins: list[str]) -> None:
        name = f"k{position}"
        self.constants[name] = detached(node)
        outs = [f"v{position}_{i}" for i in range(len(node.shapes))]
        self.statements.append((None, f"{', '.join(outs)}, = _run({name}, {', '.join(ins)})", None))
        for i, out in enumerate(outs):
            self.names[(node, i)] = out
        for value in node.operands:  # a kernel's result may alias its inputs: never reuse them
            self.fresh.discard(value)
            self.keep.add(value)

    def _nodes(self) -> None:
        """Lower the nodes in post-order, each with its rule (else a kernel call) into a
        buffer chosen by Note [Buffer reuse]: the hot loop, its state in locals."""
        names, last_use, fresh, keep = self.names, self.last_use, self.fresh, self.keep
        pool, param_index, rules = self.pool, self.graph.param_index, NUMPY_RULES
        hoist, statement = self._hoist, self.statements.append
        for position, node in enumerate(self.graph.nodes):
            if node.data is not None:
                names[(node, 0)] = f"p{param_index[id(node)]}"
                continue
            operands = node.operands
            ins = [names[value] for value in operands]
            rule = rules.get(node.op) if len(node.shapes) == 1 else None
            if rule is None:
                self._kernel_call(position, node, ins)
                continue
            shape = node.shapes[0]
            dying: list[Value] = []  # operands whose buffers are free after this node
            if fresh:
                for value in operands:
                    if (
                        value in fresh
                        and last_use[value] == position
                        and value not in keep
                        and value not in dying
                    ):
                        dying.append(value)
            buffer = consumed = None
            writes = rule.writes_into and shape.sizes
            if writes:
                if dying and rule.elementwise:  # an operand dying here first (LIFO pool)
                    for value in reversed(dying):
                        if (s := value[0].shapes[value[1]]) is shape or s == shape:
                            consumed = value
                            buffer = names[value]
                            break
                if buffer is None and (free := pool.get(shape)):
                    buffer = free[-1]
            expr = rule.emit(node, ins, buffer, hoist)
            if expr is None:
                self._kernel_call(position, node, ins)
                continue
            if buffer is None:
                buffer = f"v{position}"
                statement((buffer, expr, buffer))
            else:
                if consumed is None:
                    pool[shape].pop()
                statement((None, expr, buffer))
            names[(node, 0)] = buffer
            if rule.view:
                for value in operands:
                    fresh.discard(value)
                    keep.add(value)
                continue
            for value in dying:
                if value is not consumed:
                    fresh.discard(value)
                    pool.setdefault(value[0].shapes[value[1]], []).append(names[value])
            if writes:
                fresh.add((node, 0))

    def _in_place_steps(self) -> list[tuple[str, str, str] | None]:
        """Per statement: (ufunc, buffer, constant) if it is an in-place binary call
        ``np_<ufunc>(buffer, constant, buffer)`` with a parameter or hoisted name as
        constant (what Note [Folded runs] folds), else None. Notes text statements."""
        steps: list[tuple[str, str, str] | None] = []
        add = steps.append
        for target, expr, buffer in self.statements:
            step = None
            if type(expr) is str:
                self.textual = True
                if target is None and buffer is not None:
                    step = _in_place_text(expr)
            elif target is None and buffer is not None:
                fn, args = expr
                if len(args) == 3 and args[0] == buffer == args[2] and fn[:3] == "np_":
                    c = args[1]
                    if type(c) is str and c[:1] in _CONSTANT and c[1:].isdigit():
                        step = (fn[3:], buffer, c)
            add(step)
        return steps

    def _hoist(self, expr: Any) -> str:
        name = self.prelude.get(expr)
        if name is None:
            name = self.prelude[expr] = f"s{len(self.prelude)}"
        return name


class NumpyBackend:
    """The default lowering: one generated Python function over NumPy per graph.

    ``compile(graph)`` returns a callable over the parameter values; its source is kept in
    ``last_source`` (and on the callable as ``__lazy_source__``) for debugging. Python's
    ``compile`` is most of a first compile's cost, so code objects are cached by source text
    (``code_cache_size`` entries): graphs that differ only where the source does not show it
    (the sizes of elementwise operators) share one code object, with their own constants.
    A graph whose source is not compiled yet runs its statements through first_run.py on
    its first run and is compiled on its second (Note [First run interpreted]), unless
    ``lazy.config.set_compile_on_first_run(True)``.
    """

    def __init__(self, code_cache_size: int = 256) -> None:
        self.last_source = ""
        self.code_cache_size = code_cache_size
        self._codes: dict[str, Any] = {}

    def clear_code_cache(self) -> None:
        """Forget the compiled code objects (the next compile of every source is cold)."""
        self._codes.clear()

    def _function(self, source: str, namespace: dict[str, Any], label: int) -> Any:
        code = self._codes.get(source)
        if code is None:
            code = compile(source, f"<lazy graph {label & 0xFFFFFFFF:08x}>", "exec")
            if len(self._codes) >= self.code_cache_size:
                self._codes.clear()
            self._codes[source] = code
        exec(code, namespace)  # noqa: S102 - our own generated source
        return namespace["graph_fn"]

    def compile(self, graph: Graph) -> Callable[..., Sequence[Any]]:
        emitter = _Emitter(graph)
        source = emitter.emit()
        self.last_source = source
        namespace = {**_NUMPY_NAMES, **emitter.constants}
        program = None
        if source not in self._codes and not get_compile_on_first_run():
            program = emitter.program or first_run.parse(
                emitter.body, emitter.params, emitter.outputs, namespace
            )
        label = graph.hash  # the closures below must not keep the graph (and its buffers)
        if program is None:
            current = [self._function(source, namespace, label)]
        else:
            current = []

            def first(*params: Any) -> Sequence[Any]:
                current[0] = later
                return program.run(namespace, params)

            def later(*params: Any) -> Sequence[Any]:
                fn = current[0] = self._function(source, namespace, label)
                return fn(*params)  # type: ignore[no-any-return]

            current.append(first)

        def run(*params: Any) -> Sequence[Any]:
            token = _set_fp(_QUIET)  # quiet_fp() inline: ~0.3 us less per step
            try:
                return current[0](*params)  # type: ignore[no-any-return]
            finally:
                _reset_fp(token)

        run.__lazy_source__ = source  # type: ignore[attr-defined]
        return run
