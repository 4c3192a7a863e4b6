"""Schema-level invariants (spec 1.9), the argument partitions and the SchemaKind rules.

Run once per FunctionSchema, from its ``__post_init__`` (Note [Precomputed schema facts] in
model.py). The messages are torchgen's, verbatim, so that users of both recognise them.
One deliberate difference: torchgen only notices an inplace-named schema with out arguments
when kind() is called; we classify every schema when it is built, so it is rejected there.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, NamedTuple

from tensordispatch.schema.errors import SchemaError
from tensordispatch.schema.types import TENSOR, BaseType, OptionalType

if TYPE_CHECKING:
    from tensordispatch.schema.model import Argument, FunctionSchema, Return


class SchemaKind(Enum):
    """What a schema does with its inputs, decided in this order (torchgen's rules)."""

    functional = 1
    inplace = 2
    out = 3
    mutable = 4
    scratch = 5


def is_written(x: Argument | Return) -> bool:
    info = x.alias_info
    return info is not None and info.is_write


_TENSOR_OPTION_TYPES = ("ScalarType", "Layout", "Device", "bool")
_TENSOR_OPTION_NAMES = ("dtype", "layout", "device", "pin_memory")


def _is_tensor_options_at(args: tuple[Argument, ...], i: int, end: int) -> bool:
    if i + 4 > end:
        return False
    for k in range(4):
        a = args[i + k]
        if a.name != _TENSOR_OPTION_NAMES[k]:
            return False
        t = a.type.elem if isinstance(a.type, OptionalType) else a.type
        if not isinstance(t, BaseType) or t.name.value != _TENSOR_OPTION_TYPES[k]:
            return False
    return True


class Layout(NamedTuple):
    """Where the partitions of a flat argument list start (see Note [Precomputed schema facts])."""

    first_kwarg: int  # index of the first keyword-only argument (len if none)
    first_out: int  # index of the first out argument (len if none)
    self_index: int  # index of the first positional argument named self, or -1
    tensor_options: int  # index of `dtype` of the TensorOptions quadruple, or -1
    kind: SchemaKind


def analyse(schema: FunctionSchema) -> Layout:
    """Partition the arguments, check every invariant of spec 1.9, and classify."""
    args = schema.arguments
    n = len(args)
    first_kw = first_out = n
    self_index = -1
    annotated = False
    for i, a in enumerate(args):
        info = a.alias_info
        if info is not None:
            annotated = True
        if a.kwarg_only:
            if first_kw == n:
                first_kw = i
            if info is not None and info.is_write:
                if first_out == n:
                    first_out = i
            elif first_out != n:
                raise SchemaError(
                    f"non-mutable argument '{a.name}' cannot follow mutable out arguments",
                    str(schema),
                )
        elif first_kw != n:
            raise SchemaError(
                f"positional argument '{a.name}' cannot follow keyword-only arguments",
                str(schema),
            )
        elif self_index < 0 and a.name == "self":
            self_index = i
    if self_index > 0 and annotated:
        bad = [str(a) for a in args[:self_index] if is_written(a)]
        if bad:
            raise SchemaError(
                f"mutable pre_self_positional arguments are not currently supported in the schema: [{', '.join(bad)}]",
                str(schema),
            )
    options = -1
    for i in range(first_kw, first_out):
        if args[i].name == "dtype" and _is_tensor_options_at(args, i, first_out):
            if options >= 0:
                raise SchemaError("tensor options arguments can only appear once", str(schema))
            options = i
    # Without any annotation there is nothing to check and the schema is functional.
    kind = SchemaKind.functional
    if (
        annotated
        or schema.name.name.inplace
        or any(r.alias_info is not None for r in schema.returns)
    ):
        check_returns(schema, first_kw, first_out, self_index)
        kind = classify(schema, first_kw, first_out, self_index)
    check_kind(schema, kind, options)
    return Layout(first_kw, first_out, self_index, options, kind)


def classify(schema: FunctionSchema, first_kw: int, first_out: int, self_index: int) -> SchemaKind:
    args = schema.arguments
    has_out = first_out < len(args)
    if schema.name.name.inplace:
        if has_out:
            raise SchemaError("A schema cannot be both out= and inplace", str(schema))
        return SchemaKind.inplace
    if has_out:
        if any(a.name.startswith("_scratch_") for a in args[first_out:]):
            return SchemaKind.scratch
        return SchemaKind.out
    if any(is_written(a) for a in args[self_index + 1 : first_kw]):
        return SchemaKind.mutable
    return SchemaKind.functional


def check_returns(schema: FunctionSchema, first_kw: int, first_out: int, self_index: int) -> None:
    """Spec 1.9 invariants 1-6 (the ones about returns and mutation), in torchgen's order."""
    args, returns = schema.arguments, schema.returns
    out = args[first_out:]
    for arg, ret in zip(out, returns):
        if arg.alias_info != ret.alias_info:
            raise SchemaError(
                f"Out arguments must have matching return Tensor; furthermore, the ith-argument needs to correspond to the ith return. arg.annotation={arg.alias_info}, ret.annotation={ret.alias_info}",
                str(schema),
            )
    ret_infos = [r.alias_info for r in returns]
    for a in args[self_index + 1 : first_kw]:
        if is_written(a) and a.alias_info in ret_infos:
            raise SchemaError(
                f"If you have a schema with mutable positional args, we expect them to not be returned. schema: {schema}",
                str(schema),
            )
    mutable = [r for r in returns if is_written(r)]
    if mutable and len(mutable) != len(returns):
        raise SchemaError(
            f"NativeFunctions must have either only mutable returns, or only immutable returns. Found: {schema}",
            str(schema),
        )
    if mutable:
        sources = [a.alias_info for a in out]
        sources += [a.alias_info for a in args[:first_kw] if a.name == "self"]
        if any(r.alias_info not in sources for r in mutable):
            raise SchemaError(
                'All mutable returns must be aliased either to a keyword argument, or to "self". Did you forget to mark an out argument as keyword-only?',
                str(schema),
            )
    if out:
        if any(a.type != TENSOR for a in out):
            if returns:
                raise SchemaError(
                    "out= ops that accept tensor lists as out arguments are expected to have no return type (since you can't do method chaining on them)",
                    str(schema),
                )
        else:
            n_out = sum(1 for a in out if not a.name.startswith("_scratch_"))
            if n_out != len(returns):
                raise SchemaError(
                    f"Must return as many arguments as there are out arguments, or no return at all. Got {n_out} non-scratch out args and {len(returns)} returns",
                    str(schema),
                )
    if schema.name.name.inplace:
        _check_inplace(schema, self_index)


def _check_inplace(schema: FunctionSchema, self_index: int) -> None:
    self_arg = schema.arguments[self_index] if self_index >= 0 else None
    if self_arg is None or not is_written(self_arg):
        raise SchemaError(
            f"Inplace op {schema.name} must have a self argument with a mutable annotation",
            str(schema),
        )
    if self_arg.type == TENSOR:
        if len(schema.returns) != 1 or schema.returns[0].alias_info != self_arg.alias_info:
            raise SchemaError(
                f"Inplace op {schema.name} with Tensor self must return self", str(schema)
            )
    elif schema.returns:
        raise SchemaError(
            f"Inplace op {schema.name} with non-Tensor self must have no returns", str(schema)
        )


def check_kind(schema: FunctionSchema, kind: SchemaKind, options: int) -> None:
    """Spec 1.9 invariants 7-8 (they depend on the SchemaKind)."""
    if options >= 0 and kind is not SchemaKind.functional:
        raise SchemaError(
            f"Found an operator that is not functional or out variant, but has tensor options arguments.This is not allowed- tensor options arguments are only allowed for factory functions.schema: {schema}",
            str(schema),
        )
    if "functional" in schema.name.overload_name and kind is not SchemaKind.functional:
        raise SchemaError(
            f"Found an operator that is not functional, but its overload contains the string 'functional'.This is a special keyword in the codegen, please use a different overload name.schema: {schema}",
            str(schema),
        )
