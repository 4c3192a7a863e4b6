"""What a boxed kernel needs to know about a schema, computed once per schema.

A boxed kernel sees the arguments as one flat stack in declaration order. The dispatcher
needs the positions of the tensor-bearing arguments (to compute the dispatch key set), and
fallbacks (functionalization, in-place write-back, lazy) need which inputs are written and
which return aliases which input. ``FunctionSchema.boxing_info`` caches this object.
"""

from __future__ import annotations

from dataclasses import dataclass

from tensordispatch.schema.model import FunctionSchema


@dataclass(frozen=True, slots=True)
class BoxingInfo:
    """Positions in the argument stack and the return tuple of one schema.

    >>> from tensordispatch.schema import parse_schema
    >>> info = boxing_info(parse_schema(
    ...     "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)"))
    >>> info.tensor_arg_indices, info.mutable_arg_indices, info.alias_pairs
    ((0, 1, 3), (3,), ((3, 0),))
    """

    num_arguments: int
    num_returns: int
    tensor_arg_indices: tuple[int, ...]  # Tensor, Tensor?, Tensor[], Tensor?[] arguments
    mutable_arg_indices: tuple[int, ...]  # write-annotated arguments
    out_arg_indices: tuple[int, ...]  # the out= arguments (a suffix of the stack)
    alias_pairs: tuple[tuple[int, int], ...]  # (written argument, return that aliases it)
    view_pairs: tuple[tuple[int, int], ...]  # (argument, return that is a view of it)


def compute_boxing_info(schema: FunctionSchema) -> BoxingInfo:
    """Compute the BoxingInfo of ``schema`` (use ``schema.boxing_info``, which caches it)."""
    args = schema.arguments
    alias_pairs: list[tuple[int, int]] = []
    view_pairs: list[tuple[int, int]] = []
    for j, r in enumerate(schema.returns):
        if r.alias_info is None:
            continue
        before = set(r.alias_info.before_set)
        for i, a in enumerate(args):
            if a.alias_info is not None and before.intersection(a.alias_info.before_set):
                (alias_pairs if r.alias_info.is_write else view_pairs).append((i, j))
    first_out = len(args) - len(schema.out)
    return BoxingInfo(
        num_arguments=len(args),
        num_returns=len(schema.returns),
        tensor_arg_indices=tuple(i for i, a in enumerate(args) if a.type.is_tensor_like()),
        mutable_arg_indices=tuple(
            i for i, a in enumerate(args) if a.alias_info is not None and a.alias_info.is_write
        ),
        out_arg_indices=tuple(range(first_out, len(args))),
        alias_pairs=tuple(alias_pairs),
        view_pairs=tuple(view_pairs),
    )


def boxing_info(schema: FunctionSchema) -> BoxingInfo:
    """The cached BoxingInfo of ``schema`` (computed on first use).

    >>> from tensordispatch.schema import parse_schema
    >>> s = parse_schema("transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)")
    >>> info = boxing_info(s)
    >>> info.tensor_arg_indices, info.view_pairs, info is s.boxing_info
    ((0,), ((0, 0),), True)
    """
    return schema.boxing_info
