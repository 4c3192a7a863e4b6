"""The view rules of functionalization: for each view operator, how to replay it (forward)
and how to undo it (reverse, "scatter" a mutated view back into its base).

Rules as data (reference spec 1.4): ``VIEW_RULES`` maps an aten view overload name
(``"slice.Tensor"``) to a ``ViewRule``; kernels.py registers a Functionalize kernel for every
view operator that has one. Forward replays call the view operator itself when the meta was
taken under ``remove='mutations'`` (reapply_views) and its ``*_copy`` twin otherwise; reverse
functions never return views when reapply_views is off (``*_scatter``, ``*_copy``,
``clone``), exactly as torch's FunctionalInverses.

Must not touch wrappers: every function here takes and returns tensors one layer below
(callers run them with Functionalize excluded).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tensordispatch.backends.aten import op
from tensordispatch.tensor.tensor import Tensor
from tensordispatch.transforms.functionalize.shadow import dense_copy
from tensordispatch.transforms.functionalize.wrapper import ViewMeta, below, unobserved

__all__ = ["VIEW_RULES", "ViewRule", "sum_to"]

Reverse = Callable[..., Tensor]


@dataclass(frozen=True, slots=True)
class ViewRule:
    """How one view operator is replayed and undone.

    ``reverse(base, mutated, reapply, out_index, *args, **kwargs)`` receives the view call's
    non-self arguments as given (defaults left out) and returns the new base.

    >>> VIEW_RULES["select.int"].copy_op, VIEW_RULES["split.Tensor"].multi_output
    ('select_copy.int', True)
    """

    name: str
    view_op: str
    copy_op: str | None
    reverse_fn: Reverse
    is_as_strided: bool = False
    multi_output: bool = False
    exact: bool = True  # its *_copy replay of a scattered value gives the value back

    def forward(self, base: Tensor, meta: ViewMeta) -> Tensor:
        """Replay the view on ``base``, a call below functionalization."""
        return below(self.replay, base, meta)  # type: ignore[no-any-return]

    def replay(self, base: Tensor, meta: ViewMeta) -> Tensor:
        """``forward`` for callers that already excluded Functionalize (regeneration)."""
        if meta.reapply_views or self.copy_op is None:
            out = op(self.view_op)(base, *meta.args, **meta.kwargs)
        elif base._autograd_meta is not None or not unobserved(base):
            out = op(self.copy_op)(base, *meta.args, **meta.kwargs)
        else:
            out = self.run(base, meta.args, meta.kwargs, False)
        if self.multi_output:
            result: Tensor = out[meta.out_index]
            return result
        return out  # type: ignore[no-any-return]

    def run(self, base: Tensor, args: Any, kwargs: Any, reapply: bool) -> Any:
        """The view (``reapply``) or its ``*_copy`` of ``base``, all outputs; Functionalize
        already excluded. Unobserved, a ``*_copy`` is the view plus a NumPy copy (Note
        [Skipping unobserved replays]: the same tensor without the clone's dispatch)."""
        if reapply or self.copy_op is None:
            return op(self.view_op)(base, *args, **kwargs)
        if not unobserved(base) or base._autograd_meta is not None:
            return op(self.copy_op)(base, *args, **kwargs)
        out = op(self.view_op)(base, *args, **kwargs)
        if self.multi_output:
            return [dense_copy(t) for t in out]
        return dense_copy(out)

    def reverse(self, base: Tensor, mutated: Tensor, meta: ViewMeta) -> Tensor:
        return self.reverse_fn(
            base, mutated, meta.reapply_views, meta.out_index, *meta.args, **meta.kwargs
        )


def _inverse(reapply: bool, view: str, copy: str, m: Tensor, *args: Any) -> Tensor:
    """The view operator ``view`` (``reapply``) or its ``*_copy`` ``copy`` applied to ``m``
    (unobserved: the view plus a NumPy copy, as ``ViewRule.run``)."""
    if reapply:
        return op(view)(m, *args)  # type: ignore[no-any-return]
    if m._autograd_meta is None and unobserved(m):
        return dense_copy(op(view)(m, *args))
    return op(copy)(m, *args)  # type: ignore[no-any-return]


# -- reverse functions (torch's FunctionalInverses, one per view) -------------------------------


def _view_rev(base: Tensor, m: Tensor, reapply: bool, i: int, size: Any) -> Tensor:
    return _inverse(reapply, "view", "view_copy", m, list(base._shape))


def _unsafe_view_rev(base: Tensor, m: Tensor, reapply: bool, i: int, size: Any) -> Tensor:
    # no *_copy twin: _unsafe_view does not alias, so torch replays and undoes it as itself
    return op("_unsafe_view")(m, list(base._shape))  # type: ignore[no-any-return]


def _transpose_rev(base: Tensor, m: Tensor, reapply: bool, i: int, dim0: int, dim1: int) -> Tensor:
    return _inverse(reapply, "transpose.int", "transpose_copy.int", m, dim0, dim1)


def _t_rev(base: Tensor, m: Tensor, reapply: bool, i: int) -> Tensor:
    return _inverse(reapply, "t", "t_copy", m)


def _permute_rev(base: Tensor, m: Tensor, reapply: bool, i: int, dims: Any) -> Tensor:
    n = len(base._shape)
    inverse = [0] * n
    for pos, d in enumerate(dims):
        inverse[d % n if n else 0] = pos
    return _inverse(reapply, "permute", "permute_copy", m, inverse)


def _unsqueeze_rev(base: Tensor, m: Tensor, reapply: bool, i: int, dim: int) -> Tensor:
    return _inverse(reapply, "squeeze.dim", "squeeze_copy.dim", m, dim)


def _unsqueeze_to(base: Tensor, m: Tensor, reapply: bool, dims: list[int]) -> Tensor:
    n = len(base._shape)
    wrapped = sorted({d % n for d in dims} if n else set())
    for d in wrapped:
        if base._shape[d] == 1:
            m = _inverse(reapply, "unsqueeze", "unsqueeze_copy", m, d)
    return m


def _squeeze_dim_rev(base: Tensor, m: Tensor, reapply: bool, i: int, dim: int) -> Tensor:
    return _unsqueeze_to(base, m, reapply, [dim])


def _squeeze_rev(base: Tensor, m: Tensor, reapply: bool, i: int) -> Tensor:
    return _unsqueeze_to(base, m, reapply, list(range(len(base._shape))))


def _squeeze_dims_rev(base: Tensor, m: Tensor, reapply: bool, i: int, dim: Any) -> Tensor:
    return _unsqueeze_to(base, m, reapply, list(dim))


def _select_rev(base: Tensor, m: Tensor, reapply: bool, i: int, dim: int, index: int) -> Tensor:
    return op("select_scatter")(base, m, dim, index)  # type: ignore[no-any-return]


def _slice_rev(
    base: Tensor,
    m: Tensor,
    reapply: bool,
    i: int,
    dim: int = 0,
    start: int | None = None,
    end: int | None = None,
    step: int = 1,
) -> Tensor:
    return op("slice_scatter")(base, m, dim, start, end, step)  # type: ignore[no-any-return]


def _diagonal_rev(
    base: Tensor, m: Tensor, reapply: bool, i: int, offset: int = 0, dim1: int = 0, dim2: int = 1
) -> Tensor:
    return op("diagonal_scatter")(base, m, offset, dim1, dim2)  # type: ignore[no-any-return]


def _as_strided_rev(
    base: Tensor,
    m: Tensor,
    reapply: bool,
    i: int,
    size: Any,
    stride: Any,
    storage_offset: int | None = None,
) -> Tensor:
    return op("as_strided_scatter")(base, m, size, stride, storage_offset)  # type: ignore[no-any-return]


def sum_to(t: Tensor, shape: tuple[int, ...], always_return_non_view: bool) -> Tensor:
    """Sum ``t`` down to ``shape`` (the inverse of ``expand``), as torch's ``at::sum_to``:
    one keepdim ``sum`` over the broadcast dims, then a view (or view_copy) dropping the
    leading ones; never a view of ``t`` when ``always_return_non_view``."""
    sizes = t._shape
    leading = len(sizes) - len(shape)
    reduce = list(range(leading))
    for d in range(leading, len(sizes)):
        if shape[d - leading] == 1 and sizes[d] != 1:
            reduce.append(d)
    if reduce:
        t = op("sum.dim_IntList")(t, reduce, True)
    result: Tensor
    if always_return_non_view:
        result = op("view_copy")(t, list(shape)) if leading > 0 else op("clone")(t)
    else:
        result = op("view")(t, list(shape)) if leading > 0 else t
    return result


def _expand_rev(
    base: Tensor, m: Tensor, reapply: bool, i: int, size: Any, *, implicit: bool = False
) -> Tensor:
    return sum_to(m, base._shape, not reapply)


def _split_rev(
    base: Tensor, m: Tensor, reapply: bool, i: int, split_size: int, dim: int = 0
) -> Tensor:
    n = len(base._shape)
    d = dim % n
    start = i * split_size
    end = min(start + split_size, base._shape[d])
    return op("slice_scatter")(base, m, d, start, end, 1)  # type: ignore[no-any-return]


def _split_sizes_rev(
    base: Tensor, m: Tensor, reapply: bool, i: int, split_sizes: Any, dim: int = 0
) -> Tensor:
    d = dim % len(base._shape)
    start = sum(split_sizes[:i])
    return op("slice_scatter")(base, m, d, start, start + split_sizes[i], 1)  # type: ignore[no-any-return]


def _unbind_rev(base: Tensor, m: Tensor, reapply: bool, i: int, dim: int = 0) -> Tensor:
    return op("select_scatter")(base, m, dim, i)  # type: ignore[no-any-return]


def _alias_rev(base: Tensor, m: Tensor, reapply: bool, i: int) -> Tensor:
    return _inverse(reapply, "alias", "alias_copy", m)


def _conj_rev(base: Tensor, m: Tensor, reapply: bool, i: int) -> Tensor:
    return _inverse(reapply, "_conj", "_conj_copy", m)  # the conjugate is its own inverse


def _neg_view_rev(base: Tensor, m: Tensor, reapply: bool, i: int) -> Tensor:
    return _inverse(reapply, "_neg_view", "_neg_view_copy", m)


def _identity_rev(base: Tensor, m: Tensor, reapply: bool, i: int) -> Tensor:
    return m


def _view_as_real_rev(base: Tensor, m: Tensor, reapply: bool, i: int) -> Tensor:
    return _inverse(reapply, "view_as_complex", "view_as_complex_copy", m)


def _view_as_complex_rev(base: Tensor, m: Tensor, reapply: bool, i: int) -> Tensor:
    return _inverse(reapply, "view_as_real", "view_as_real_copy", m)


def _unfold_rev(
    base: Tensor, m: Tensor, reapply: bool, i: int, dimension: int, size: int, step: int
) -> Tensor:
    # torch refuses overlapping windows when views are kept (remove='mutations'); without
    # views, overlapping windows sum and positions no window covers become zero (as torch)
    if reapply and size > step:
        raise RuntimeError(
            "While executing unfold, functionalization encountered a tensor being mutated "
            "that has internal overlap. When using torch.compile (or running "
            "functionalization directly), this is banned as the behavior is not well "
            "defined. Consider cloning the tensor before mutating it, or removing the "
            "mutation from your model."
        )
    return op("unfold_backward")(m, list(base._shape), dimension, size, step)  # type: ignore[no-any-return]


def _rule(
    name: str,
    copy: str | None,
    rev: Reverse,
    *,
    as_strided: bool = False,
    multi: bool = False,
) -> ViewRule:
    exact = copy is not None and not as_strided and name not in ("expand", "unfold")
    return ViewRule(name, name, copy, rev, as_strided, multi, exact)


VIEW_RULES: dict[str, ViewRule] = {
    r.name: r
    for r in (
        _rule("view", "view_copy", _view_rev),
        _rule("_unsafe_view", None, _unsafe_view_rev),
        _rule("transpose.int", "transpose_copy.int", _transpose_rev),
        _rule("t", "t_copy", _t_rev),
        _rule("permute", "permute_copy", _permute_rev),
        _rule("unsqueeze", "unsqueeze_copy", _unsqueeze_rev),
        _rule("squeeze", "squeeze_copy", _squeeze_rev),
        _rule("squeeze.dim", "squeeze_copy.dim", _squeeze_dim_rev),
        _rule("squeeze.dims", "squeeze_copy.dims", _squeeze_dims_rev),
        _rule("select.int", "select_copy.int", _select_rev),
        _rule("slice.Tensor", "slice_copy.Tensor", _slice_rev),
        _rule("diagonal", "diagonal_copy", _diagonal_rev),
        _rule("as_strided", "as_strided_copy", _as_strided_rev, as_strided=True),
        _rule("expand", "expand_copy", _expand_rev),
        _rule("split.Tensor", "split_copy.Tensor", _split_rev, multi=True),
        _rule("split_with_sizes", "split_with_sizes_copy", _split_sizes_rev, multi=True),
        _rule("unbind.int", "unbind_copy.int", _unbind_rev, multi=True),
        _rule("alias", "alias_copy", _alias_rev),
        _rule("_conj", "_conj_copy", _conj_rev),
        _rule("_neg_view", "_neg_view_copy", _neg_view_rev),
        _rule("detach", "detach_copy", _identity_rev),
        _rule("view_as_real", "view_as_real_copy", _view_as_real_rev),
        _rule("view_as_complex", "view_as_complex_copy", _view_as_complex_rev),
        _rule("unfold", "unfold_copy", _unfold_rev),
    )
}

# In-place view operators -> the out-of-place view whose meta they append (spec 1.3).
INPLACE_VIEWS: dict[str, str] = {
    "transpose_": "transpose.int",
    "t_": "t",
    "unsqueeze_": "unsqueeze",
    "squeeze_": "squeeze",
    "squeeze_.dim": "squeeze.dim",
    "squeeze_.dims": "squeeze.dims",
    "as_strided_": "as_strided",
    "swapdims_": "transpose.int",
    "swapaxes_": "transpose.int",
}
