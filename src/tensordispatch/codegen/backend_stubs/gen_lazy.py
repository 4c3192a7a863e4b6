"""Lazy IR codegen: a lazy backend yaml -> one Python module of node classes and kernels.

Owns torchgen's gen_lazy_tensor for Python (codegen-spec section 5; the lazy sections of
functionalization-lazy-spec): for every ``full_codegen`` operator of a backend yaml, a
generated IR node class (a ``tensordispatch.lazy.ir.IrNode`` subclass named like LTC's,
``add.Tensor`` -> ``AddTensor``: operator, argument names and kinds, one property per
argument) and a generated lazy kernel (lazy_kernels.py: operands, attributes by value, shapes
from the meta functions); for every ``ir_gen`` operator the node class only (its kernel is
hand-written, listed under ``supported``, and records its node with
``tensordispatch.lazy.irgen_runtime.make_node``). Before generating, `check_ir_ops` makes the
checks torchgen makes, each reporting every offending operator at once: functional operators
only, views listed as their ``_copy`` variants (functionalization runs above the lazy key),
a shape function for every ``full_codegen`` operator (a Meta kernel, a structured meta
function or a composite kernel: what a call redispatched to Meta reaches), distinct class
names. Pure: schemas in, text out.

Note [Checked-in IR]
tensordispatch's own lazy backend: lazy/lazy_ir.py is generated from lazy/backend.yaml by
``tensordispatch gen-backend-stubs --ir-only -s src/tensordispatch/lazy/backend.yaml -o
src/tensordispatch/lazy`` and checked in like the other generated modules (a test runs the
``--check`` mode). ``lazy.init()`` imports it and refuses, naming the operators and the
command, when it no longer matches the yaml. Adding an operator to lazy is one yaml line and
that command (plus, if wanted, a NumPy lowering rule: without one the compiled graph calls
the operator's CPU kernel).
"""

from __future__ import annotations

import keyword
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tensordispatch.codegen.backend_stubs.lazy_kernels import (
    T_LIST,
    T_SCALAR,
    T_TENSOR,
    kernel_source,
    layout_of,
)
from tensordispatch.codegen.backend_stubs.model import LazyIrError, MissingShapeFunctionsError
from tensordispatch.schema.model import FunctionSchema, SchemaKind

__all__ = [
    "IrOp",
    "LazyIrError",
    "MissingShapeFunctionsError",
    "check_ir_ops",
    "generate_ir_module",
    "ir_module_file_name",
    "ir_ops_from_native",
    "kernel_name",
    "node_class_name",
    "non_native_ir_ops",
]


@dataclass(frozen=True, slots=True)
class IrOp:
    """One operator to generate: ``name`` as the yaml lists it (``add.Tensor``), its schema,
    whether it gets a generated kernel (``full_codegen``) or only a node class (``ir_gen``),
    and whether it has a shape function (see `check_ir_ops`). ``opkind`` is set for a
    ``non_native`` entry (an IR-only operator, not in native_functions.yaml): the node's
    ``OP_NAME`` (the entry's ``opkind``, else ``lazy::<name>``); it gets a node class only."""

    name: str
    schema: FunctionSchema
    kernel: bool = True
    has_shape_function: bool = True
    opkind: str | None = None


def node_class_name(name: str) -> str:
    """LTC's node class name: CamelCase of the name and overload.

    >>> node_class_name("add.Tensor"), node_class_name("_log_softmax"), node_class_name("abs")
    ('AddTensor', 'LogSoftmax', 'Abs')
    """
    words = name.replace(".", "_").split("_")
    return "".join(w[:1].upper() + w[1:] for w in words if w)


def kernel_name(name: str) -> str:
    """The generated kernel's function name.

    >>> kernel_name("add.Tensor"), kernel_name("abs")
    ('lazy_add_Tensor', 'lazy_abs')
    """
    return "lazy_" + name.replace(".", "_")


def ir_module_file_name(backend_key: str) -> str:
    """The generated IR module's file name.

    >>> ir_module_file_name("Lazy")
    'lazy_ir.py'
    """
    return f"{backend_key.lower()}_ir.py"


def _is_view(schema: FunctionSchema) -> bool:
    return any(r.alias_info is not None and not r.alias_info.is_write for r in schema.returns)


def _copy_name(name: str) -> str:
    base, dot, overload = name.partition(".")
    return f"{base}_copy{dot}{overload}"


def check_ir_ops(ops: Sequence[IrOp], path: str = "<backend yaml>") -> None:
    """Raise LazyIrError unless every operator can be generated; each message lists every
    offending operator of its kind at once (views / non-functional first, then the missing
    shape functions, then clashing class names).

    >>> from tensordispatch.schema.parse import parse_schema
    >>> check_ir_ops([IrOp("nonzero", parse_schema("nonzero(Tensor self) -> Tensor"),
    ...                    has_shape_function=False)], "x.yaml")
    Traceback (most recent call last):
    ...
    tensordispatch.codegen.backend_stubs.model.MissingShapeFunctionsError: x.yaml: 1 operator listed for lazy codegen has no shape function, so its output shapes cannot be inferred:
      nonzero(Tensor self) -> Tensor
      Give each a Meta kernel (dispatch: Meta in native_functions.yaml, a structured meta function, or a composite kernel), or list it under "supported" with a hand-written kernel.
    """
    problems = []
    for op in ops:
        if op.opkind is not None:  # non_native: IR-internal, any schema
            continue
        kind = op.schema.kind()
        if _is_view(op.schema):
            problems.append(
                f"{op.name} is a view operator; lazy backends see views as their _copy "
                f"variants (functionalization runs above): list {_copy_name(op.name)} instead"
            )
        elif kind != SchemaKind.functional:
            problems.append(
                f"{op.name} is an {kind.name} operator; list its functional variant only "
                "(the in-place and out= kernels are derived from it)"
            )
    if problems:
        raise LazyIrError(
            "\n  ".join([f"{path}: lazy codegen generates functional operators only:", *problems])
        )
    missing = [op for op in ops if op.kernel and not op.has_shape_function]
    if missing:
        n = len(missing)
        many = n != 1
        head = (
            f"{path}: {n} operator{'s' if many else ''} listed for lazy codegen "
            f"{'have' if many else 'has'} no shape function, so {'their' if many else 'its'} "
            "output shapes cannot be inferred:"
        )
        advice = (
            "Give each a Meta kernel (dispatch: Meta in native_functions.yaml, a structured "
            'meta function, or a composite kernel), or list it under "supported" with a '
            "hand-written kernel."
        )
        lines = [head, *(str(op.schema) for op in missing), advice]
        raise MissingShapeFunctionsError("\n  ".join(lines))
    _check_class_names(ops, path)


def _check_class_names(ops: Sequence[IrOp], path: str) -> None:
    seen: dict[str, str] = {}
    for op in ops:
        other = seen.setdefault(node_class_name(op.name), op.name)
        if other != op.name:
            raise LazyIrError(
                f"{path}: {other} and {op.name} would both get the node class "
                f"{node_class_name(op.name)}; list only one of them"
            )


_RESERVED = {"args", "data", "hash", "op", "operands", "overload", "returns", "shapes",
             "argument", "attributes", "is_device_data", "node", "index", "shape", "output",
             "make"}  # fmt: skip
_KINDS = {T_TENSOR: "tensor", T_LIST: "tensor_list", T_SCALAR: "scalar"}


def _property_name(name: str) -> str:
    if name in _RESERVED or keyword.iskeyword(name) or name.startswith("__"):
        return name + "_"
    return name


def _node_class(op: IrOp) -> list[str]:
    layout = layout_of(op.schema)
    kinds = dict(layout.inputs)
    names = [a.name for a in op.schema.arguments][: layout.num_args]
    arguments = "".join(
        f"({n!r}, {_KINDS.get(kinds.get(i, -1), 'attribute')!r}), " for i, n in enumerate(names)
    )
    what = "generated kernel" if op.kernel else "hand-written kernel (ir_gen)"
    if op.opkind is not None:
        what = "non_native: IR only, built by the backend's own code"
    op_name = op.opkind if op.opkind is not None else f"aten::{op.name}"
    tracer = None if not op.kernel else ("static" if layout.static else "dynamic")
    lines = [
        f"class {node_class_name(op.name)}(IrNode):",
        f'    """``{op_name}``: ``{op.schema}`` ({what})."""',
        "",
        "    __slots__ = ()",
        f"    OP_NAME = {op_name!r}",
        f"    SCHEMA = {str(op.schema)!r}",
        f"    ARGUMENTS = ({arguments.rstrip()})",
        f"    TRACER = {tracer!r}",
        # ir.py Note [Constant node fields]: shadow Node's slots, never stored per call
        "    op = OP_NAME",
        f"    returns = {layout.returns!r}",
        "    data = None",
    ]
    lines += [
        f"    {_property_name(n)} = argument_property({i}, {n!r})" for i, n in enumerate(names)
    ]
    return lines


def generate_ir_module(ops: Sequence[IrOp], *, backend: str, source: str) -> str:
    """The text of a backend's IR module (deterministic, sorted by operator name).

    >>> from tensordispatch.schema.parse import parse_schema
    >>> text = generate_ir_module([IrOp("neg", parse_schema("neg(Tensor self) -> Tensor"))],
    ...                           backend="Lazy", source="backend.yaml")
    >>> "class Neg(IrNode):" in text and "def make_lazy_neg(PLAN, NODE):" in text
    True
    """
    ops = sorted(ops, key=lambda op: op.name)
    full = [op.name for op in ops if op.kernel]
    ir_only = [op.name for op in ops if not op.kernel and op.opkind is None]
    non_native = [op.name for op in ops if op.opkind is not None]
    lines = [
        f'"""Lazy IR of the {backend} backend: node classes and lazy kernels.',
        "",
        "@generated by `tensordispatch gen-backend-stubs` (codegen/backend_stubs/gen_lazy.py)",
        f"from {source}. Do not edit: change the backend yaml and regenerate (docs/LAZY.md,",
        "Codegen).",
        "",
        f"{len(full)} operators with a generated node class and kernel (full_codegen),",
        f"{len(ir_only)} with a generated node class only (ir_gen),",
        f"{len(non_native)} IR-only (non_native).",
        '"""',
        "",
        "# ruff: noqa",
        "# mypy: ignore-errors",
        "from __future__ import annotations",
        "",
        "from tensordispatch.lazy.irgen_runtime import *",
        "from tensordispatch.lazy.irgen_runtime import IrNode, argument_property",
        "",
        f"BACKEND = {backend!r}",
        "FULL_CODEGEN = (",
        *(f"    {n!r}," for n in full),
        ")",
        "IR_GEN = (",
        *(f"    {n!r}," for n in ir_only),
        ")",
        "NON_NATIVE = (",
        *(f"    {n!r}," for n in non_native),
        ")",
    ]
    for op in ops:
        lines += ["", ""] + _node_class(op)
        if op.kernel:
            lines += ["", ""] + kernel_source(layout_of(op.schema), kernel_name(op.name)).split(
                "\n"
            )[:-1]
    lines += [
        "",
        "",
        "# operator -> (node class, kernel factory; None for ir_gen operators)",
        "NODES = {",
        *(
            f"    {op.name!r}: ({node_class_name(op.name)}, "
            f"{'make_' + kernel_name(op.name) if op.kernel else None}),"
            for op in ops
        ),
        "}",
    ]
    return "\n".join(lines) + "\n"


def ir_ops_from_native(
    full_codegen: Sequence[str], ir_gen: Sequence[str], native: Any, path: str
) -> list[IrOp]:
    """IrOp of every listed operator, from a ParsedNativeFunctions (codegen time: a shape
    function is a Meta kernel, a structured meta function, the composite kernel of a view
    copy or any composite kernel, as torchgen decides). Unknown names raise LazyIrError.

    >>> from tensordispatch.schema.native import load_native_functions
    >>> ops = ir_ops_from_native(["abs", "nonzero"], ["neg"], load_native_functions(), "x")
    >>> [(op.name, op.kernel, op.has_shape_function) for op in ops]
    [('abs', True, True), ('nonzero', True, False), ('neg', False, True)]
    """
    from tensordispatch.schema.model import OperatorName

    by_name = {f.func.name: f for f in native.native_functions}
    meta = native.backend_indices.get("Meta")
    ops = []
    for names, kernel in ((full_codegen, True), (ir_gen, False)):
        for name in names:
            f = by_name.get(OperatorName.parse(name))
            if f is None:
                raise LazyIrError(f"{path}: {name} is not an operator of {native.path}")
            shape = bool(
                f.structured
                or f.structured_delegate is not None
                or (meta is not None and f.func.name in meta.index)
                or f.has_composite_explicit_autograd_kernel
                or f.has_composite_explicit_autograd_non_functional_kernel
                or f.has_composite_implicit_autograd_kernel
            )
            ops.append(IrOp(name, f.func, kernel, shape))
    return ops


def non_native_ir_ops(entries: Sequence[Any]) -> list[IrOp]:
    """IrOp of each ``non_native`` entry (parse.NonNativeOp: func, opkind, properties): a
    node class only, named after the schema's name and overload, ``OP_NAME`` its opkind.

    >>> from tensordispatch.codegen.backend_stubs.model import NonNativeOp
    >>> (op,) = non_native_ir_ops([NonNativeOp("scalar(Scalar value, ScalarType type) -> Tensor",
    ...                                        "at::prim::Constant", ())])
    >>> op.name, op.opkind, op.kernel
    ('scalar', 'at::prim::Constant', False)
    """
    ops = []
    for entry in entries:
        schema = FunctionSchema.parse(entry.func)
        name = str(schema.name)
        ops.append(IrOp(name, schema, False, True, entry.opkind or f"lazy::{name}"))
    return ops
