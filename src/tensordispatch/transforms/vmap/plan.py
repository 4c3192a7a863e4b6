"""Per-operator facts the batching kernel needs, derived from the schema once (never per call).

Which stack positions hold tensors and tensor lists, which are written, what each return is
(tensor, tensor list, an alias of a written argument, or something else), and the name the
messages use. Cached by operator entry and recomputed only if the entry's schema changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tensordispatch.dispatch.calling import NO_DEFAULT
from tensordispatch.schema.types import ListType

__all__ = ["OpPlan", "plan_of"]


@dataclass(frozen=True, slots=True)
class OpPlan:
    """Everything the batching kernel derives from one schema.

    >>> import tensordispatch as td
    >>> p = plan_of(td.ops.aten.add_.Tensor)
    >>> p.name, p.tensors, p.mutable, p.returns, p.base_name
    ('aten::add_.Tensor', (0, 1), (0,), (('tensor', 0),), 'aten::add_')
    """

    name: str
    schema: Any = field(repr=False)  # identity of the schema this was computed from
    tensors: tuple[int, ...]  # Tensor / Tensor? positions
    lists: tuple[int, ...]  # Tensor[] / Tensor?[] positions
    mutable: tuple[int, ...]  # written argument positions
    returns: tuple[tuple[str, int], ...]  # (kind, aliased written argument or -1)
    names: tuple[str, ...]  # argument names in stack order
    tags: tuple[str, ...]
    # pointwise, out-of-place, no tensor list and no tensor keyword: the unboxed fast path
    fast: bool = False
    # arguments without a default come first: a positional call with at least ``required``
    # arguments is boxed as ``[*args, *defaults[len(args):]]``
    required: int = 0
    defaults: tuple[Any, ...] = field(default=(), repr=False)
    num_positional: int = 0
    keyword_only: tuple[tuple[int, str], ...] = ()

    def call(self, op: Any, stack: list[Any]) -> Any:
        """Call ``op`` (through the dispatcher) with a full stack: positional arguments by
        position, keyword-only ones by name (defaults passed explicitly)."""
        if not self.keyword_only:
            return op(*stack)
        defaults = self.defaults
        # keyword-only arguments still at their default are left to the entry to fill in
        extra = {n: stack[i] for i, n in self.keyword_only if stack[i] is not defaults[i]}
        if extra:
            return op(*stack[: self.num_positional], **extra)
        return op(*stack[: self.num_positional])

    @property
    def num_returns(self) -> int:
        return len(self.returns)

    @property
    def base_name(self) -> str:
        """``ns::name`` without the overload (torch's in-place error uses it)."""
        return self.name.split(".")[0]

    def index(self, name: str) -> int:
        """Stack position of the argument called ``name`` (-1 if none)."""
        try:
            return self.names.index(name)
        except ValueError:
            return -1


def _compute(op: Any) -> OpPlan:
    schema = op._schema
    info = schema.boxing_info
    tensors, lists = [], []
    for i, a in enumerate(schema.arguments):
        if a.type.is_tensor_like():
            (lists if isinstance(a.type, ListType) else tensors).append(i)
    aliased = {j: i for i, j in info.alias_pairs}
    returns = []
    for j, r in enumerate(schema.returns):
        if j in aliased and aliased[j] in info.mutable_arg_indices:
            returns.append(("tensor", aliased[j]))
        elif r.type.is_tensor_like():
            returns.append(("list" if isinstance(r.type, ListType) else "tensor", -1))
        else:
            returns.append(("other", -1))
    kwarg_tensors = any(a.kwarg_only and a.type.is_tensor_like() for a in schema.arguments)
    tags = tuple(str(t) for t in op._entry.tags)
    fast = (
        "pointwise" in tags
        and not info.mutable_arg_indices
        and not lists
        and not kwarg_tensors
        and op._entry.qualified_name.startswith("aten::")
    )
    facts = op._entry.facts
    required = max((i + 1 for i, d in enumerate(facts.defaults) if d is NO_DEFAULT), default=0)
    return OpPlan(
        name=op.name(),
        schema=schema,
        tensors=tuple(tensors),
        lists=tuple(lists),
        mutable=tuple(info.mutable_arg_indices),
        returns=tuple(returns),
        names=tuple(a.name for a in schema.arguments),
        tags=tags,
        fast=fast,
        required=required,
        defaults=facts.defaults,
        num_positional=facts.num_positional,
        keyword_only=tuple((i, a.name) for i, a in enumerate(schema.arguments) if a.kwarg_only),
    )


_PLANS: dict[Any, OpPlan] = {}


def plan_of(op: Any) -> OpPlan:
    """The cached plan of ``op`` (recomputed if the operator was re-defined)."""
    entry = op._entry
    plan = _PLANS.get(entry)
    if plan is None or plan.schema is not entry.schema:
        plan = _PLANS[entry] = _compute(op)
    return plan
