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

Note [Folded runs]
Python's ``compile`` costs about as much per generated line as the line's first run, so a
first step of a 1000-operator chain was mostly compile time. A run of RUN_MIN or more
consecutive in-place binary calls on one buffer whose other operand is a parameter or a
hoisted constant (what such chains lower to) is emitted as one loop over a constant table of
(ufunc, index into ``c_``), ``c_`` holding the parameters and hoisted names: the same calls
in the same order, compiled in constant time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from tensordispatch.backends.cpu.fpstate import quiet_fp
from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import DispatchKeySet
from tensordispatch.lazy.executor import Graph
from tensordispatch.lazy.ir import Node, Operand
from tensordispatch.lazy.shape import fill_arguments, flatten_result
from tensordispatch.tensor.tensor import Tensor

__all__ = ["NUMPY_RULES", "LoweringBackend", "NumpyBackend", "Rule", "run_cpu_kernel"]


class LoweringBackend(Protocol):
    """A lowering: turns a Graph into a callable over its parameter values."""

    def compile(self, graph: Graph) -> Callable[..., Sequence[Any]]: ...


Hoist = Callable[[str], str]


@dataclass(frozen=True, slots=True)
class Rule:
    """A NumPy lowering (Note [NumPy lowering rules]): ``emit(node, ins, out, hoist)`` ->
    expression or None; ``hoist(expr)`` moves an expression over parameters only to the top
    of the function and returns the name holding it. ``writes_into``: the rule can write
    into a given buffer; ``elementwise``: that buffer may be one of its operands; ``view``:
    the result aliases its first operand."""

    emit: Callable[[Node, list[str], str | None, Hoist], str | None]
    writes_into: bool = True
    elementwise: bool = True
    view: bool = False


def _same_float(node: Node) -> bool:
    out = node.shapes[0].dtype
    if not out.is_floating_point or out.itemsize < 4:
        return False
    for marker in _markers(node):
        if marker.kind == "tensor":
            n, i = node.operands[marker.index]
            if n.shapes[i].dtype is not out:
                return False
    return True


def _markers(node: Node) -> list[Operand]:
    found: list[Operand] = []
    for a in node.args:
        if type(a) is Operand:
            found.append(a)
        elif type(a) is tuple:
            found.extend(x for x in a if type(x) is Operand)
    return found


def _arg(node: Node, ins: list[str], position: int) -> str:
    a = node.args[position]
    return ins[a.index] if type(a) is Operand else repr(a)


_NP_NAMES: dict[Any, str] = {}


def _np_name(dtype: Any) -> str:
    """``np.float32`` for float32: the generated code's spelling of a dtype (cached: NumPy's
    ``dtype.name`` is a Python property costing microseconds)."""
    name = _NP_NAMES.get(dtype)
    if name is None:
        name = _NP_NAMES[dtype] = f"np.{np.dtype(dtype._numpy).name}"
    return name


def _out(out: str | None) -> str:
    # ufuncs take the output positionally after their inputs (a shorter line to compile)
    return f", {out}" if out else ""


def _binary(ufunc: str, with_alpha: bool) -> Rule:
    def emit(node: Node, ins: list[str], out: str | None, hoist: Hoist) -> str | None:
        if not _same_float(node):
            return None
        a, b = _arg(node, ins, 0), _arg(node, ins, 1)
        dtype = _np_name(node.shapes[0].dtype)
        if with_alpha:
            alpha = _arg(node, ins, 2)
            if node.args[1].kind == "tensor":
                b = f"({b} if {alpha} == 1 else np_multiply({b}, {alpha}))"
            else:  # two numbers: multiplied in the output dtype, as the CPU kernel does
                b = hoist(
                    f"({b} if {alpha} == 1 else np_multiply(np_asarray({b}), "
                    f"np_asarray({alpha}).astype({dtype}), dtype={dtype}, casting='unsafe'))"
                )
        kinds = (node.args[0].kind, node.args[1].kind)
        if "tensor" in kinds:  # Note [Numbers as 0-d arrays]
            if kinds[0] != "tensor":
                a = hoist(f"np_asarray({a}, {dtype})")
            if kinds[1] != "tensor":
                b = hoist(f"np_asarray({b}, {dtype})")
        return f"np_{ufunc}({a}, {b}{_out(out)})"

    return Rule(emit)


def _unary(ufunc: str) -> Rule:
    def emit(node: Node, ins: list[str], out: str | None, hoist: Hoist) -> str | None:
        if not _same_float(node):
            return None
        return f"np_{ufunc}({_arg(node, ins, 0)}{_out(out)})"

    return Rule(emit)


def _relu(node: Node, ins: list[str], out: str | None, hoist: Hoist) -> str | None:
    if not _same_float(node):
        return None
    return f"np_maximum({_arg(node, ins, 0)}, 0.0{_out(out)})"


def _mm(node: Node, ins: list[str], out: str | None, hoist: Hoist) -> str | None:
    if not _same_float(node):
        return None
    return f"np_matmul({_arg(node, ins, 0)}, {_arg(node, ins, 1)}{_out(out)})"


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

# -- the generic lowering: the operator's CPU kernel, from inside the generated function --------

_CPU = DispatchKeySet(DispatchKey.CPU)


def _cpu_value(value: Any, kind: str, dtype: Any) -> Any:
    if kind == "scalar":
        return value
    array = value if isinstance(value, np.ndarray) else np.asarray(value, dtype._numpy)
    if array.dtype != dtype._numpy:
        array = array.astype(dtype._numpy)
    t = Tensor._wrap_numpy(array, dtype)
    if kind == "wrapped":
        t._wrapped_number = True
    return t


def run_cpu_kernel(node: Node, *values: Any) -> list[Any]:
    """Run ``node``'s operator on CPU for operand values ``values``; its output arrays."""
    inputs: list[Any] = [None] * len(node.operands)
    for marker in _markers(node):
        n, i = node.operands[marker.index]
        inputs[marker.index] = _cpu_value(values[marker.index], marker.kind, n.shapes[i].dtype)
    result = node.overload._redispatch_boxed(_CPU, fill_arguments(node.args, inputs))
    tensors, _ = flatten_result(result)
    arrays = []
    for t, shape in zip(tensors, node.shapes, strict=True):
        array = t._data
        if array.dtype != shape.dtype._numpy:
            array = array.astype(shape.dtype._numpy)
        arrays.append(array)
    return arrays


# -- the generator ------------------------------------------------------------------------------


# an in-place binary ufunc call on one buffer with a parameter or hoisted second operand
_INPLACE = re.compile(r"^np_(\w+)\((v\d+), ([ps]\d+), \2\)$")
RUN_MIN = 16


class _Emitter:
    """Writes the source of one graph's function (Note [Buffer reuse])."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.lines: list[str] = []
        self.prelude: dict[str, str] = {}  # hoisted expression -> name
        self.folded = False
        self.names: dict[tuple[int, int], str] = {}
        self.constants: dict[str, Any] = {"np": np, "_run": run_cpu_kernel, **_NUMPY_NAMES}
        self.last_use: dict[tuple[int, int], int] = {}
        self.keep: set[tuple[int, int]] = {(id(n), i) for n, i in graph.outputs}
        self.fresh: set[tuple[int, int]] = set()
        self.pool: dict[tuple[Any, tuple[int, ...]], list[str]] = {}
        for position, node in enumerate(graph.nodes):
            for n, i in node.operands:
                self.last_use[(id(n), i)] = position

    def emit(self) -> str:
        params = ", ".join(f"p{i}" for i in range(len(self.graph.parameters)))
        for position, node in enumerate(self.graph.nodes):
            self._node(position, node)
        outs = "".join(f"{self.names[(id(n), i)]}, " for n, i in self.graph.outputs)
        hoisted = [f"{name} = {expr}" for expr, name in self.prelude.items()]
        lines = self._fold_runs(self.lines)
        if self.folded:  # the constants the folded runs index into
            constants = [f"p{i}" for i in range(len(self.graph.parameters))]
            constants += list(self.prelude.values())
            hoisted.append(f"c_ = ({', '.join(constants)},)")
        body = "\n".join(f"    {line}" for line in hoisted + lines)
        return f"def graph_fn({params}):\n{body}\n    return ({outs})\n"

    def _constant_index(self, name: str) -> int:
        # index in `c_`: the parameters p0.., then the hoisted names s0..
        if name.startswith("p"):
            return int(name[1:])
        return len(self.graph.parameters) + int(name[1:])

    def _fold_runs(self, lines: list[str]) -> list[str]:
        """Note [Folded runs]: RUN_MIN or more consecutive in-place binary calls on one
        buffer with a constant second operand (a parameter or a hoisted name) become one
        loop over a constant table, so a long elementwise chain compiles in O(1)."""
        folded: list[str] = []
        i = 0
        while i < len(lines):
            match = _INPLACE.match(lines[i])
            j = i
            while match and j < len(lines):
                m = _INPLACE.match(lines[j])
                if not m or m.group(2) != match.group(2):
                    break
                j += 1
            if j - i < RUN_MIN:  # too short (and so is every run inside it): keep the lines
                folded.extend(lines[i : max(j, i + 1)])
                i = max(j, i + 1)
                continue
            steps = [m for m in (_INPLACE.match(line) for line in lines[i:j]) if m]
            table = f"r{len(self.constants)}"
            self.constants[table] = tuple(
                (self.constants[f"np_{m.group(1)}"], self._constant_index(m.group(3)))
                for m in steps
            )
            buffer = steps[0].group(2)
            folded.append(f"for f_, i_ in {table}:")
            folded.append(f"    f_({buffer}, c_[i_], {buffer})")
            self.folded = True
            i = j
        return folded

    def _node(self, position: int, node: Node) -> None:
        if node.data is not None:
            self.names[(id(node), 0)] = f"p{self.graph.param_index[id(node)]}"
            return
        ins = [self.names[(id(n), i)] for n, i in node.operands]
        rule = NUMPY_RULES.get(node.op) if len(node.shapes) == 1 else None
        if rule is not None and self._lower(position, node, rule, ins):
            return
        name = f"k{position}"
        self.constants[name] = node
        outs = [f"v{position}_{i}" for i in range(len(node.shapes))]
        self.lines.append(f"{', '.join(outs)}, = _run({name}, {', '.join(ins)})")
        for i, out in enumerate(outs):
            self.names[(id(node), i)] = out
        for n, i in node.operands:  # a kernel's result may alias its inputs: never reuse them
            self.fresh.discard((id(n), i))
            self.keep.add((id(n), i))

    def _lower(self, position: int, node: Node, rule: Rule, ins: list[str]) -> bool:
        shape = node.shapes[0]
        key = (shape.dtype, shape.sizes)
        if rule.writes_into and rule.elementwise:
            self._release(position, node)
        buffer = None
        if rule.writes_into and shape.sizes and self.pool.get(key):
            buffer = self.pool[key].pop()
        expr = rule.emit(node, ins, buffer, self._hoist)
        if expr is None:
            if buffer is not None:
                self.pool[key].append(buffer)
            return False
        name = buffer or f"v{position}"
        # writing into a buffer needs no assignment: the buffer keeps its name
        self.lines.append(expr if buffer else f"{name} = {expr}")
        self.names[(id(node), 0)] = name
        if rule.view:
            for n, i in node.operands:
                self.fresh.discard((id(n), i))
                self.keep.add((id(n), i))
        elif rule.writes_into and shape.sizes:
            self.fresh.add((id(node), 0))
        if not (rule.writes_into and rule.elementwise):
            self._release(position, node)
        return True

    def _hoist(self, expr: str) -> str:
        name = self.prelude.get(expr)
        if name is None:
            name = self.prelude[expr] = f"s{len(self.prelude)}"
        return name

    def _release(self, position: int, node: Node) -> None:
        for n, i in node.operands:
            value = (id(n), i)
            if self.last_use.get(value) != position or value in self.keep:
                continue
            if value in self.fresh:
                self.fresh.discard(value)
                shape = n.shapes[i]
                self.pool.setdefault((shape.dtype, shape.sizes), []).append(self.names[value])


class NumpyBackend:
    """The default lowering: one generated Python function over NumPy per graph.

    ``compile(graph)`` returns a callable over the parameter values; its source is kept in
    ``last_source`` (and on the callable as ``__lazy_source__``) for debugging. Python's
    ``compile`` is most of a first compile's cost, so code objects are cached by source text
    (``code_cache_size`` entries): graphs that differ only where the source does not show it
    (the sizes of elementwise operators) share one code object, with their own constants.
    """

    def __init__(self, code_cache_size: int = 256) -> None:
        self.last_source = ""
        self.code_cache_size = code_cache_size
        self._codes: dict[str, Any] = {}

    def clear_code_cache(self) -> None:
        """Forget the compiled code objects (the next compile of every source is cold)."""
        self._codes.clear()

    def compile(self, graph: Graph) -> Callable[..., Sequence[Any]]:
        emitter = _Emitter(graph)
        source = emitter.emit()
        namespace = dict(emitter.constants)
        code = self._codes.get(source)
        if code is None:
            code = compile(source, f"<lazy graph {graph.hash & 0xFFFFFFFF:08x}>", "exec")
            if len(self._codes) >= self.code_cache_size:
                self._codes.clear()
            self._codes[source] = code
        exec(code, namespace)  # noqa: S102 - our own generated source
        fn = namespace["graph_fn"]
        self.last_source = source

        def run(*params: Any) -> Sequence[Any]:
            with quiet_fp():
                return fn(*params)  # type: ignore[no-any-return]

        run.__lazy_source__ = source  # type: ignore[attr-defined]
        return run
