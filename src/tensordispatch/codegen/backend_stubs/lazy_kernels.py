"""The lazy kernels gen-backend-stubs writes for ``full_codegen`` operators (text only).

Owns the source templates of the lazy kernels that torchgen's LTC codegen writes in C++ per
``full_codegen`` operator: `kernel_source(layout, name)` is the text of one kernel factory
(``make_<name>(PLAN, NODE)`` returning the boxed Lazy kernel), unrolled over the operator's
tensor, tensor-list, Scalar and list arguments as laid out by `layout_of(schema)`. gen_lazy.py
puts these factories and the node classes into a backend's IR module (for tensordispatch's own
lazy backend: lazy/lazy_ir.py), which runs on tensordispatch.lazy.irgen_runtime. Every kernel
builds exactly the node the generic ``lazy.kernels.trace`` builds (same arguments, markers,
shape-cache key and hash), with the common case inline: an operand that is a LazyTensor.
Anything else (wrapped numbers, 0-dim CPU tensors, errors) goes through the generic operand
conversion. Nothing here imports the runtime: codegen reads schema/ only.

Note [Generated tracers]
The generic kernel walks the plan's argument list per call; at 10-20 operators per
microsecond of Python that walk costs as much as the rest of the trace. Generating the walk
once per operator (what torchgen's LTC codegen does in C++ for each IR node class) leaves one
attribute read and one dict lookup per operand on the hot path. Per-operator constants (the
OpOverload, the plan's counter, the node class) are closure cells of the factory; the shared
runtime (counters, markers, shape cache) is module globals (irgen_runtime.py).

Note [Flat shape-cache keys]
A static kernel's shape-cache key is one flat tuple: the operator entry, the items of the
argument tuple (markers and attributes) and each operand's dtype and sizes. The kinds the
generic key ``(entry, args, ((shape, kind), ...))`` spells out are implied by the markers
(tensor, wrapped and scalar markers are distinct shared objects), and the number of items is
fixed per operator, so the key is unambiguous; no nested tuples are built, and dtype (an
identity hash) and sizes (ints) hash in C where a Shape's hash is a Python call (~0.1 us
each). The node hash likewise takes the outputs' precomputed ``Shape._hash`` ints
(ir.Node.__init__ does the same). The generic kernels keep their nested keys (separate
entries of the same cache).

Note [Inline scalar cache]
Static kernels look a Python number up in the scalar device-data cache themselves
(``SCALARS.get((dtype, type, value))``, the key ir.scalar_node uses) and call scalar_node only
on a miss. The keys scalar_node stores for 0.0, -0.0 and nan differ (their repr), so those
always miss here and take scalar_node's path: the same node, the same DeviceDataCacheMiss
counts, one Python call less per number operand.

Note [Attributes by value]
A node keeps its non-tensor arguments by value: list arguments (``int[]``, ``float[]?``, ...)
are copied into tuples when the node is built, so a caller mutating its list afterwards
cannot change a traced node, its hash or a cached graph (LTC's nodes copy their arguments for
the same reason: storing a ``c10::string_view`` of a caller's string was a use-after-free).
Every other non-tensor argument type of the schema language is immutable in Python.
"""

from __future__ import annotations

from dataclasses import dataclass

from tensordispatch.schema.model import FunctionSchema, SchemaKind

__all__ = ["T_LIST", "T_SCALAR", "T_TENSOR", "TraceLayout", "kernel_source", "layout_of"]

# argument kinds of a traced call (same values as kernels.T_TENSOR / T_LIST / T_SCALAR)
T_TENSOR, T_LIST, T_SCALAR = 0, 1, 2


@dataclass(frozen=True, slots=True)
class TraceLayout:
    """Where a traced operator's arguments go, from its schema (kernels.OpPlan's rules).

    ``inputs``: (stack position, T_TENSOR / T_LIST / T_SCALAR) of the operands;
    ``optional``: those positions whose type is optional; ``lists``: positions of non-tensor
    list arguments (copied into tuples, Note [Attributes by value]); ``returns``: ``"one"``,
    ``"tuple"`` or ``"list"``; ``num_args``: arguments of the functional form.
    """

    inputs: tuple[tuple[int, int], ...]
    optional: frozenset[int]
    lists: tuple[int, ...]
    returns: str
    num_args: int

    @property
    def static(self) -> bool:
        """Note [Static tracers]: every operand is a required Tensor or Scalar, so each
        operand's index, marker and signature slot is known when generating."""
        return (
            all(kind != T_LIST for _, kind in self.inputs)
            and not any(pos in self.optional for pos, _ in self.inputs)
            and len(self.inputs) <= 64
        )


def layout_of(schema: FunctionSchema) -> TraceLayout:
    """The TraceLayout of an operator schema.

    >>> from tensordispatch.schema.parse import parse_schema
    >>> layout_of(parse_schema("flip(Tensor self, int[] dims) -> Tensor"))
    TraceLayout(inputs=((0, 0),), optional=frozenset(), lists=(1,), returns='one', num_args=2)
    """
    inputs: list[tuple[int, int]] = []
    optional: set[int] = set()
    lists: list[int] = []
    args = [a for a in schema.arguments if not (a.alias_info and a.alias_info.is_write)]
    if schema.kind() == SchemaKind.out:
        args = list(schema.arguments[: len(schema.arguments) - len(schema.out)])
    for i, a in enumerate(args):
        text = str(a.type)
        if text in ("Tensor", "Tensor?"):
            inputs.append((i, T_TENSOR))
        elif text in ("Tensor[]", "Tensor?[]"):
            inputs.append((i, T_LIST))
        elif text in ("Scalar", "Scalar?"):
            inputs.append((i, T_SCALAR))
        elif text.endswith(("]", "]?")):
            lists.append(i)
        if text.endswith("?"):
            optional.add(i)
    rets = [str(r.type) for r in schema.returns]
    returns = "list" if rets == ["Tensor[]"] else ("one" if len(rets) == 1 else "tuple")
    return TraceLayout(tuple(inputs), frozenset(optional), tuple(lists), returns, len(args))


def _frozen_list(pos: int, optional: bool, source: str) -> list[str]:
    """Lines copying list argument ``pos`` into a tuple (Note [Attributes by value])."""
    if optional:
        return [f"    l{pos} = {source}", f"    if l{pos} is not None:",
                f"        l{pos} = tuple(l{pos})"]  # fmt: skip
    return [f"    l{pos} = tuple({source})"]


def _static_operand(k: int, kind: int) -> list[str]:
    """Lines reading operand ``k`` (already in local ``a``) into ``v<k>`` (its Value),
    ``s<k>`` (its Shape) and ``m<k>`` (its marker); a Scalar's value also stays in ``a<k>``."""
    if kind == T_SCALAR:
        return [
            f"    a{k} = a",
            "    n = SCALARS.get((NUMBER_DTYPES.get(a.__class__), a.__class__, a))",
            f"    v{k} = n or scalar_node(a)",
            f"    s{k} = v{k}.shapes[0]",
            f"    m{k} = SCALAR_MARKERS[{k}]",
        ]
    return [
        "    if a.__class__ is LazyTensor:",
        f"        v{k} = a.ir or a.ir_value()",
        f"        s{k} = v{k}.shapes[0] if v{k}.__class__ is not Output else v{k}.shape",
        f"        m{k} = MARKERS[{k}]",
        "    elif a.__class__ is Tensor and a._wrapped_number:",
        "        n = a._data.item()",
        f"        v{k} = SCALARS.get((a.dtype, n.__class__, n)) or scalar_node(n, a.dtype)",
        f"        s{k} = v{k}.shapes[0]",
        f"        m{k} = WRAPPED[{k}]",
        "    else:",
        "        one, sig1 = [], []",
        f"        m{k} = operand({k}, slow_operand(a, one, sig1).kind)",
        f"        v{k}, s{k} = one[0], sig1[0][0]",
    ]


def _static_body(layout: TraceLayout, name: str) -> list[str]:
    kinds = dict(layout.inputs)
    lines = [
        f"def {name}(op, keyset, stack):",
        "    if ST.lazy_force_fallback and forced(PLAN):",
        "        return fallback(op, keyset, stack)",
        "    C[COUNTER] += 1",
    ]
    marks: list[str] = []
    scalars: list[str] = []
    for pos in range(layout.num_args):
        kind = kinds.get(pos)
        if kind is None:
            if pos in layout.lists:
                lines += _frozen_list(pos, pos in layout.optional, f"stack[{pos}]")
                marks.append(f"l{pos}")
            else:
                marks.append(f"stack[{pos}]")
            continue
        k = sum(1 for p in kinds if p < pos)  # this operand's index
        marks.append(f"m{k}")
        lines.append(f"    a = stack[{pos}]")
        lines += _static_operand(k, kind)
        if kind == T_SCALAR:
            scalars.append(f"{k}: a{k}")
    n = len(kinds)
    hashes = "".join(f"v{k}.hash, " for k in range(n))
    sig = ", ".join(f"(s{k}, m{k}.kind)" for k in range(n))
    shape_items = "".join(f"s{k}.dtype, s{k}.sizes, " for k in range(n))
    one = layout.returns == "one"
    out_hashes = "shapes[0]._hash" if one else "*[s._hash for s in shapes]"
    lines += [
        f"    frozen = ({''.join(m + ', ' for m in marks)})",
        f"    key = (KEY, {''.join(m + ', ' for m in marks)}{shape_items})",
        "    shapes = CACHE.get(key)",
        "    if shapes is None:",
        f"        shapes = infer_shapes(OP, frozen, [{sig}], {{{', '.join(scalars)}}}, key)",
        "    node = NODE()",  # ir.IrNode: no constructor arguments, every slot set
        "    node.overload = OP",  # op, returns, data: class constants (ir.py)
        f"    node.operands = ({''.join(f'v{k}, ' for k in range(n))})",
        "    node.args = frozen",
        "    node.shapes = shapes",
        f"    node.hash = hash((hash((NAME, frozen)), {hashes}{out_hashes}))",
        "    return from_value(node)" if layout.returns == "one" else "    return wrap(node)",
    ]
    return lines


_TENSOR_OPERAND = [
    "        if a.__class__ is LazyTensor:",
    "            value = a.ir or a.ir_value()",
    "            operands.append(value)",
    "            sig.append((value.shape, 'tensor'))",
    "            args[{pos}] = MARKERS[len(operands) - 1]",
    "        elif a.__class__ is Tensor and a._wrapped_number:",
    "            value = scalar_node(a._data.item(), a.dtype)",
    "            operands.append(value)",
    "            sig.append((value.shapes[0], 'wrapped'))",
    "            args[{pos}] = WRAPPED[len(operands) - 1]",
    "        else:",
    "            args[{pos}] = slow_operand(a, operands, sig)",
]
_SCALAR_OPERAND = [
    "        n = scalar_node(a)",
    "        scalars[len(operands)] = a",
    "        operands.append(n)",
    "        sig.append((n.shapes[0], 'scalar'))",
    "        args[{pos}] = operand(len(operands) - 1, 'scalar')",
]
_LIST_OPERAND = [
    (
        "        args[{pos}] = tuple([None if t is None else slow_operand(t, operands, sig, True)"
        " for t in a])"
    ),
]


def _dynamic_body(layout: TraceLayout, name: str) -> list[str]:
    lines = [
        f"def {name}(op, keyset, stack):",
        "    if ST.lazy_force_fallback and forced(PLAN):",
        "        return fallback(op, keyset, stack)",
        "    C[COUNTER] += 1",
        f"    args = list(stack[:{layout.num_args}])",
        "    operands = []",
        "    sig = []",
        "    scalars = {}",
    ]
    templates = {T_TENSOR: _TENSOR_OPERAND, T_SCALAR: _SCALAR_OPERAND, T_LIST: _LIST_OPERAND}
    for pos, kind in layout.inputs:
        lines += [f"    a = args[{pos}]", "    if a is not None:"]
        lines += [line.format(pos=pos) for line in templates[kind]]
    for pos in layout.lists:
        lines += [f"    if args[{pos}] is not None:", f"        args[{pos}] = tuple(args[{pos}])"]
    lines += [
        "    frozen = tuple(args)",
        "    key = (KEY, frozen, tuple(sig))",
        "    try:",
        "        shapes = CACHE.get(key)",
        "    except TypeError:  # an unhashable argument: infer without caching",
        "        key = shapes = None",
        "    if shapes is None:",
        "        shapes = infer_shapes(OP, frozen, sig, scalars, key)",
        "    node = NODE.make(NAME, OP, tuple(operands), frozen, shapes, RETURNS)",
        "    return from_value(node)" if layout.returns == "one" else "    return wrap(node)",
    ]
    return lines


def kernel_source(layout: TraceLayout, name: str) -> str:
    """Source of ``make_<name>(PLAN, NODE)``: the factory of one operator's boxed Lazy kernel
    ``<name>(op, keyset, stack)``, which records a ``NODE`` (the operator's node class).
    ``PLAN`` is the operator's `kernels.OpPlan`; the module it runs in provides the names of
    ``tensordispatch.lazy.irgen_runtime``.

    >>> from tensordispatch.schema.parse import parse_schema
    >>> src = kernel_source(layout_of(parse_schema("neg(Tensor self) -> Tensor")), "lazy_neg")
    >>> src.splitlines()[0]
    'def make_lazy_neg(PLAN, NODE):'
    """
    body = _static_body(layout, name) if layout.static else _dynamic_body(layout, name)
    lines = [
        f"def make_{name}(PLAN, NODE):",
        "    OP = PLAN.op",
        "    KEY = PLAN.key",
        "    NAME = PLAN.name",
        "    COUNTER = PLAN.counter",
        "    RETURNS = PLAN.returns",
        "",
        *(f"    {line}" if line else "" for line in body),
        "",
        f"    return {name}",
    ]
    return "\n".join(lines) + "\n"
