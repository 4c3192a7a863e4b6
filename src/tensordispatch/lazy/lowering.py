"""Lowering a lazy graph: the backend interface and the default NumPy source generator.

Owns `LoweringBackend` (anything with ``compile(graph) -> callable``; the callable takes the
graph's parameter values and returns one array per output) and `NumpyBackend`, which writes
ONE Python function per graph over NumPy and compiles it once (LTC's TorchScript backend
analogue), from the per-operator rules of numpy_rules.py (Note [NumPy lowering rules]). Must
not cut, hash or cache graphs (executor.py).

Note [Buffer reuse]
While emitting the post-order, the generator knows each value's last use. A buffer that a
rule allocated ("fresh"), that no view aliases, that is not a graph output or parameter, is
returned to a pool after its last use; a later rule that can write into a buffer of the same
shape and dtype takes it from the pool (``out=``), and an elementwise rule may also take an
operand that dies at that very node. Operands of views and of nodes lowered to a CPU kernel
call are never reused (their results may alias them). A chain ``y = y + 0.5; y = y * 0.999;
...`` thus runs in one buffer, without an allocation per operator.

Note [Statements as data]
A rule returns its expression as a `Call`, ``(function name, arguments)`` with names,
nested Calls or `first_run.Literal`s as arguments (``("np_add", ("v3", "s0", "v3"))``), and
hoists Calls too; a node without a rule is a Call of its CPU kernel whose outputs are
unpacked. The emitter keeps these as data, renders the ones a folded body keeps (Note
[Folded runs]) as source text and makes them first_run steps at the same time, so a new
graph's interpreted first run (Note [First run interpreted]) needs no parse of the text it
just wrote, and the in-place calls that fold are recognised on the data. A rule may still return source text (a literal, an attribute, a rule of
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
from typing import Any, Protocol

from tensordispatch.backends.cpu.fpstate import FP_QUIET as _QUIET
from tensordispatch.backends.cpu.fpstate import FP_STATE
from tensordispatch.lazy import first_run
from tensordispatch.lazy.config import get_compile_on_first_run
from tensordispatch.lazy.executor import Graph
from tensordispatch.lazy.ir import Node, Shape, Value
from tensordispatch.lazy.kernel_call import detached, run_cpu_kernel
from tensordispatch.lazy.numpy_rules import NUMPY_NAMES as _NUMPY_NAMES
from tensordispatch.lazy.numpy_rules import NUMPY_RULES, Rule

__all__ = ["NUMPY_RULES", "LoweringBackend", "NumpyBackend", "Rule", "run_cpu_kernel"]


class LoweringBackend(Protocol):
    """A lowering: turns a Graph into a callable over its parameter values."""

    def compile(self, graph: Graph) -> Callable[..., Sequence[Any]]: ...


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
    """The source text of a name, a `Call` or a `first_run.Literal`."""
    if type(expr) is str:
        return expr
    if type(expr) is first_run.Literal:
        return repr(expr.value)
    fn, args = expr
    try:
        return f"{fn}({', '.join(args)})"
    except TypeError:  # a nested call or a literal among the arguments
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
        # per statement: (target or None or a kernel call's output names, expression: a Call
        # or text, the buffer written or None); rendered as source and made Program steps
        # only where _fold_runs keeps them
        self.statements: list[tuple[Any, Any, str | None]] = []
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
        statements: list[tuple[Any, Any, str | None]],
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
                except TypeError:  # a nested call or a literal among the arguments
                    text = _render(expr)
                if type(target) is tuple:  # a kernel call's outputs, unpacked
                    steps.append((first_run.UNPACK_STEP, target, fn, args))
                    lines.append(f"{indent}{''.join([f'{t}, ' for t in target])}= {text}")
                    continue
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
        outs = tuple([f"v{position}_{i}" for i in range(len(node.shapes))])
        self.statements.append((outs, ("_run", (name, *ins)), None))  # unpacks a list
        for i, out in enumerate(outs):
            self.names[node.output(i)] = out
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
                names[node] = f"p{param_index[id(node)]}"  # device data: its own Value
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
                        if (s := value.shape) is shape or s == shape:
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
            value = node.output(0)  # the node itself unless it returns a tuple of one
            names[value] = buffer
            if rule.view:
                for value in operands:
                    fresh.discard(value)
                    keep.add(value)
                continue
            for d in dying:
                if d is not consumed:
                    fresh.discard(d)
                    pool.setdefault(d.shape, []).append(names[d])
            if writes:
                fresh.add(value)

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
