"""Running a generated graph function's statements without compiling them (lowering.py).

Owns the Program format (its step kinds and `Literal`), `parse` (the body of a generated
function -> a `Program`, or None when a statement is not of the simple forms below) and
`Program.run`. Must not generate source: lowering.py's `_Emitter` writes it (and the same
statements as Program steps), and `NumpyBackend` decides when a program is interpreted.

Note [First run interpreted]
Python's ``compile`` is most of the cost of a small graph's first step (~65 us for a
ten-operator chain, ~7 us per generated line), while most generated statements are plain
calls of bound functions on names (``v3 = np_add(p0, s0)``, ``np_multiply(v3, s1, v3)``,
``s0 = _times_alpha(p1, p2, np_float32)``), a tuple of names (``c_ = (p0, s0,)``) or a
folded run (Note [Folded runs]). A `Program` runs exactly those statements, in order, with
the same functions and arguments, looking names up in a dict: the same calls on the same
values, so the same bits. A folded run is either a table loop (two lines) or a repeated
block (``for _ in range(k):`` and its indented calls). `NumpyBackend` runs a new graph's
program on its first run and compiles the source when the graph runs again (as
TorchScript's profiling executor optimises a graph on a later run), so a graph run once
never pays for ``compile``. The emitter's statements (NumPy rules' calls, with literal
arguments, and kernel calls unpacking their outputs) reach the Program as data, without a
parse (lowering.py Note [Statements as data]); `parse` reads statements a rule wrote as
text, and a statement of another form (a conditional, a literal, an attribute) makes it
return None: the source is compiled at once. A repeated block of in-place calls reads the
same objects on every pass, so its functions and arguments are looked up once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CALL_STEP",
    "FOLD_STEP",
    "REPEAT_STEP",
    "TUPLE_STEP",
    "UNPACK_STEP",
    "Literal",
    "Program",
    "parse",
]

# `name = fn(a, b)` or `fn(a, b, c)` with names only: most statements (no nested parse)
_FLAT = re.compile(r"^(?:([A-Za-z_]\w*) = )?([A-Za-z_]\w*)\(((?:[A-Za-z_]\w*, )*[A-Za-z_]\w*)?\)$")
# `name = <call>` or `<call>`
_TARGET = re.compile(r"([A-Za-z_]\w*) = ")
_NAME = re.compile(r"[A-Za-z_]\w*")
# `c_ = (p0, s0,)`
_TUPLE = re.compile(r"^(\w+) = \(((?:\w+, )*\w+),\)$")
# a folded run: a table loop's two lines, or a repeated block's header
_LOOP = re.compile(r"^for f_, i_ in (\w+):$")
_REPEAT = re.compile(r"^for _ in range\((\d+)\):$")
_LOOP_BODY = re.compile(r"^    f_\((\w+), c_\[i_\], \1\)$")

#: Program step kinds: a call ``(CALL_STEP, target or None, function name, arguments)``
#: (an argument: a name, a nested ``(function name, arguments)`` or a `Literal`), a tuple of names
#: ``(TUPLE_STEP, target, names)``, a table loop ``(FOLD_STEP, table, buffer)`` and a
#: repeated block ``(REPEAT_STEP, times, call steps)`` (Note [Folded runs]).
CALL_STEP, TUPLE_STEP, FOLD_STEP, REPEAT_STEP = 0, 1, 2, 3
#: ``(UNPACK_STEP, targets, function name, arguments)``: a call whose result (a sequence) is
#: unpacked into the names ``targets`` (a kernel call's outputs: ``v1_0, = _run(k1, p0)``).
UNPACK_STEP = 4
_CALL_STEP, _TUPLE_STEP, _FOLD_STEP, _REPEAT_STEP = CALL_STEP, TUPLE_STEP, FOLD_STEP, REPEAT_STEP

#: An argument: a name, or a nested call (function name, arguments).
Expr = Any


@dataclass(frozen=True, slots=True)
class Literal:
    """A constant argument of a call step, written in the source as ``repr(value)``
    (``0.0``, ``(2, 3)``): ``value`` is hashable and its repr evaluates back to it.

    >>> Literal((2, 3)).value
    (2, 3)
    """

    value: Any


class _Env(dict[Any, Any]):
    """The names a Program runs with; a nested call used as a key is evaluated instead, and
    a Literal gives its value (so every argument is one C-level lookup:
    ``map(env.__getitem__, args)``)."""

    __slots__ = ()

    def __missing__(self, key: Any) -> Any:
        kind = type(key)
        if kind is tuple:
            fn, args = key
            return self[fn](*map(self.__getitem__, args))
        if kind is Literal:
            return key.value
        raise KeyError(key)


@dataclass(frozen=True, slots=True)
class Program:
    """A generated function's statements as data: ``params`` its parameter names,
    ``steps`` one tuple per statement (kind, ...), ``outputs`` the names it returns."""

    params: tuple[str, ...]
    steps: tuple[tuple[Any, ...], ...]
    outputs: tuple[str, ...]

    def run(self, namespace: dict[str, Any], values: Sequence[Any]) -> tuple[Any, ...]:
        """Run the statements with ``namespace`` as globals and ``values`` as parameters.

        >>> import numpy as np
        >>> known = {"np_add": np.add}
        >>> program = parse(["v1 = np_add(p0, p0)", "np_add(v1, p0, v1)"], ["p0"], ["v1"], known)
        >>> program.run(known, [np.ones(2)])[0].tolist()
        [3.0, 3.0]
        """
        env = _Env(namespace)
        env.update(zip(self.params, values, strict=True))
        _run_steps(self.steps, env)
        return tuple([env[name] for name in self.outputs])


def _run_steps(steps: Sequence[tuple[Any, ...]], env: _Env) -> None:
    get = env.__getitem__
    for step in steps:
        kind = step[0]
        if kind == CALL_STEP:
            _, target, fn, args = step
            result = get(fn)(*map(get, args))
            if target is not None:
                env[target] = result
        elif kind == _TUPLE_STEP:
            env[step[1]] = tuple([env[a] for a in step[2]])
        elif kind == UNPACK_STEP:
            _, targets, fn, args = step
            env.update(zip(targets, get(fn)(*map(get, args)), strict=True))
        elif kind == _FOLD_STEP:  # the table loop of Note [Folded runs]
            buffer, constants = env[step[2]], env["c_"]
            for f, i in env[step[1]]:
                f(buffer, constants[i], buffer)
        else:  # a repeated block
            _repeat(step[1], step[2], env)


def _repeat(times: int, block: tuple[tuple[Any, ...], ...], env: _Env) -> None:
    """Run ``block`` ``times`` times. A block of calls that assign nothing and take names
    only (what Note [Folded runs] makes) reads the same objects on every pass, so the
    functions and arguments are looked up once."""
    get = env.__getitem__
    calls = []
    for _, target, fn, args in block:
        if target is not None or not all(map(str.__instancecheck__, args)):
            for _ in range(times):
                _run_steps(block, env)
            return
        calls.append((get(fn), tuple(map(get, args))))
    for _ in range(times):
        for fn, args in calls:
            fn(*args)


class _Declined(Exception):
    """A statement of another form: the source is compiled instead."""


def _call(text: str, pos: int, known: Callable[[str], bool]) -> tuple[Expr, int]:
    """The name or call starting at ``pos`` of ``text`` (names must be ``known``)."""
    m = _NAME.match(text, pos)
    if m is None or not known(m.group()):
        raise _Declined
    name, pos = m.group(), m.end()
    if not text.startswith("(", pos):
        return name, pos
    args: list[Expr] = []
    pos += 1
    while not text.startswith(")", pos):
        arg, pos = _call(text, pos, known)
        args.append(arg)
        if text.startswith(", ", pos):
            pos += 2
        elif not text.startswith(")", pos):
            raise _Declined
    return (name, tuple(args)), pos + 1


def parse(
    body: Sequence[str], params: Sequence[str], outputs: Sequence[str], names: Container[str]
) -> Program | None:
    """The statements ``body`` (a generated function's lines, unindented) as a Program, or
    None if one of them is not a call (arguments: names and calls), a tuple of names or a
    folded run, or reads a name that is neither assigned before nor in ``names`` (the
    globals it will run with).

    >>> parse(["v1 = np_add(p0, 1.0)"], ["p0"], ["v1"], {"np_add"}) is None  # a literal
    True
    """
    defined = set(params)

    def known(name: str) -> bool:
        return name in defined or name in names

    steps: list[tuple[Any, ...]] = []
    i = 0
    try:
        while i < len(body):
            line = body[i]
            if not line.startswith("for "):
                steps.append(_statement(line, known, defined))
                i += 1
            elif (m := _REPEAT.match(line)) is not None:  # a repeated block of calls
                j = i + 1
                while j < len(body) and body[j].startswith("    "):
                    j += 1
                block = tuple(_statement(b[4:], known, defined) for b in body[i + 1 : j])
                if not block or any(step[0] != _CALL_STEP for step in block):
                    return None
                steps.append((_REPEAT_STEP, int(m.group(1)), block))
                i = j
            elif (m := _LOOP.match(line)) is not None:  # a table loop: two lines
                inner = _LOOP_BODY.match(body[i + 1]) if i + 1 < len(body) else None
                if inner is None or not (known(m.group(1)) and known(inner.group(1))):
                    return None
                if not known("c_"):
                    return None
                steps.append((_FOLD_STEP, m.group(1), inner.group(1)))
                i += 2
            else:
                return None
    except _Declined:
        return None
    if not all(map(known, outputs)):
        return None
    return Program(tuple(params), tuple(steps), tuple(outputs))


def _statement(line: str, known: Callable[[str], bool], defined: set[str]) -> tuple[Any, ...]:
    """One statement: a call (most often flat: names only) or a tuple of names."""
    if (m := _FLAT.match(line)) is not None:
        target, fn, text = m.groups()
        args = tuple(text.split(", ")) if text else ()
        if not known(fn):
            raise _Declined
        for a in args:
            if not known(a):
                raise _Declined
        if target is not None:
            defined.add(target)
        return (_CALL_STEP, target, fn, args)
    if " = (" in line and (m := _TUPLE.match(line)) is not None:
        items = tuple(m.group(2).split(", "))
        if not all(map(known, items)):
            raise _Declined
        defined.add(m.group(1))
        return (_TUPLE_STEP, m.group(1), items)
    target = None
    pos = 0
    if (m := _TARGET.match(line)) is not None:
        target, pos = m.group(1), m.end()
    expr, pos = _call(line, pos, known)
    if pos != len(line) or type(expr) is str:
        raise _Declined
    if target is not None:
        defined.add(target)
    return (_CALL_STEP, target, expr[0], expr[1])
