"""Conformance programs for functionalization: views mixed with mutations.

Each program is written once against a module ``T`` (``torch`` or ``tensordispatch``) and run
on both. ``inputs`` gives each argument's shape and dtype; values are ``arange`` so results
are exact. ``torch_fix`` maps torch's traced operator names to the ones we must produce
where we differ on purpose; ``why`` says why (see INTENTIONAL_DIFFERENCES).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Program:
    name: str
    fn: Callable[..., Any]  # fn(T, *inputs)
    inputs: tuple[tuple[tuple[int, ...], str], ...]
    torch_fix: Callable[[list[str]], list[str]] | None = None
    why: str = ""
    # remove= modes under which torch's functionalize itself differs from eager (spec 1.8)
    eager_differs: tuple[str, ...] = ()


F = "float32"


def _scalar_setitem_is_fill(ops: list[str]) -> list[str]:
    return ["fill" if o == "copy" else o for o in ops if o != "lift_fresh_copy"]


# Intentional differences from torch.func.functionalize + make_fx on torch 2.13, by program:
INTENTIONAL_DIFFERENCES = {
    "setitem_scalar": (
        "torch's x[i] = number makes a tensor from the number (lift_fresh_copy) and copy_s it "
        "into the selected view; our indexing (ops/indexing.py) calls fill_ with the number, "
        "so the graph holds fill where torch holds lift_fresh_copy + copy. Same values."
    ),
}


def p_view_mul(T: Any, x: Any) -> Any:
    y = x.view(4)
    y.mul_(2)
    return x + 1


def p_transpose_select(T: Any, x: Any) -> Any:
    y = x.transpose(0, 1)
    y.add_(1)
    z = x[0]
    z.mul_(3)
    return x.sum()


def p_diagonal_zero(T: Any, x: Any) -> Any:
    x.diagonal().zero_()
    return x


def p_unbind_add(T: Any, x: Any) -> Any:
    a, b = x.unbind(0)
    a.add_(b)
    return x


def p_clone_t_inplace_view(T: Any, x: Any) -> Any:
    y = x.clone()
    y.t_()
    y.add_(1)
    return y


def p_expand_read(T: Any, x: Any) -> Any:
    e = x[0].unsqueeze(0).expand(3, 3)
    return e + 1


def p_slice_add(T: Any, x: Any) -> Any:
    x[1:3].add_(1)
    return x * 2


def p_slice_step(T: Any, x: Any) -> Any:
    x[::2].mul_(-1)
    return x


def p_view_of_view_of_view(T: Any, x: Any) -> Any:
    b = x.clone()
    v = b.view(4, 16).transpose(0, 1)[3]
    v.mul_(2)
    b[1:5].add_(1)
    w = b.view(8, 8)
    w.diagonal().zero_()
    return b.sum() + w[0, 0]


def p_base_mutated_with_live_view(T: Any, x: Any) -> Any:
    v = x.view(6, 2)
    x.add_(1)
    return v * 2


def p_copy_into_input(T: Any, x: Any, y: Any) -> Any:
    x.copy_(y)
    return x + y


def p_out_into_input(T: Any, x: Any, y: Any) -> Any:
    T.add(x, 1, out=y)
    return y * 2


def p_out_resizes_fresh_empty(T: Any, x: Any) -> Any:
    out = T.empty(0)
    T.mul(x, 2, out=out)
    return out


def p_index_put(T: Any, x: Any, idx: Any) -> Any:
    x.index_put_((idx,), x[0] * 0 + 7)
    return x


def p_dtype_changing_inplace(T: Any, x: Any, y: Any) -> Any:
    x.add_(y)
    return x


def p_split_mutate_chunk(T: Any, x: Any) -> Any:
    _, b, _ = x.split(2)
    b.mul_(10)
    return x


def p_split_with_sizes(T: Any, x: Any) -> Any:
    a, b = x.split_with_sizes([1, 3])
    a.add_(100)
    b.sub_(1)
    return x


def p_as_strided_mutate(T: Any, x: Any) -> Any:
    x.as_strided((2, 2), (1, 2)).add_(1)
    return x


def p_unsqueeze_mutate(T: Any, x: Any) -> Any:
    x.unsqueeze(0).mul_(2)
    return x


def p_permute_mutate(T: Any, x: Any) -> Any:
    p = x.permute(2, 0, 1)
    p[0].add_(1)
    return x


def p_three_views_deep(T: Any, x: Any) -> Any:
    v = x.view(3, 4).t().unsqueeze(0)
    v.mul_(2)
    return x


def p_overlapping_views(T: Any, x: Any) -> Any:
    a = x[0:3]
    b = x[2:5]
    a.add_(1)
    return b.clone()


def p_two_mutations_no_read(T: Any, x: Any) -> Any:
    v = x[0]
    v.add_(1)
    v.add_(2)
    return x


def p_fill_select(T: Any, x: Any) -> Any:
    x[1].fill_(5)
    return x


def p_zero_whole(T: Any, x: Any) -> Any:
    y = x * 2
    y.zero_()
    return y + x


def p_detach_mutation_aliases(T: Any, x: Any) -> Any:
    d = x.detach()
    d.add_(1)
    return x


def p_setitem_scalar(T: Any, x: Any) -> Any:
    x[0] = 3
    return x


def p_setitem_tensor(T: Any, x: Any, y: Any) -> Any:
    x[1] = y
    return x


def p_copy_broadcast(T: Any, x: Any, y: Any) -> Any:
    x.copy_(y)
    return x


def p_reshape_contiguous_mutate(T: Any, x: Any) -> Any:
    r = x.reshape(6)
    r.add_(1)
    return x


def p_reshape_noncontiguous_then_mutate(T: Any, x: Any) -> Any:
    r = x.t().reshape(6)
    r.add_(100)
    return r, x


def p_inplace_on_intermediate(T: Any, x: Any) -> Any:
    y = x * 2
    y.add_(1)
    return y


def p_input_mutation_only(T: Any, x: Any) -> Any:
    x.mul_(2)
    return None


def p_select_of_select(T: Any, x: Any) -> Any:
    x[1][2].add_(1)
    return x


def p_diagonal_offset(T: Any, x: Any) -> Any:
    x.diagonal(1).mul_(0)
    return x


def p_transpose_inplace_then_base(T: Any, x: Any) -> Any:
    y = x.clone()
    y.transpose_(0, 1)
    y[0].add_(1)
    return y


def p_unsqueeze_squeeze_inplace(T: Any, x: Any) -> Any:
    y = x.clone()
    y.unsqueeze_(0)
    y.mul_(2)
    y.squeeze_(0)
    return y + 1


def p_masked_fill_view(T: Any, x: Any) -> Any:
    v = x[1]
    v.masked_fill_(v > 4, 0)
    return x


def p_clamp_slice(T: Any, x: Any) -> Any:
    x[1:].clamp_(2, 6)
    return x


def p_out_is_view_of_input(T: Any, x: Any, y: Any) -> Any:
    T.mul(y, 2, out=x[0])
    return x


def p_chunk_mutate(T: Any, x: Any) -> Any:
    _, b = x.chunk(2)
    b.add_(1)
    return x


def p_view_after_mutation_is_replayed(T: Any, x: Any) -> Any:
    x.add_(1)
    v = x.view(6)
    return v * 1


def p_narrow_mutate(T: Any, x: Any) -> Any:
    x.narrow(1, 1, 2).mul_(3)
    return x


def p_read_alias_after_mutation(T: Any, x: Any) -> Any:
    a = x[0]
    b = x.t()
    a.mul_(2)
    return b.sum(0)


def p_cumsum_inplace_view(T: Any, x: Any) -> Any:
    x[1].cumsum_(0)
    return x


def p_return_views(T: Any, x: Any) -> Any:
    y = x.view(6)
    y.add_(1)
    return x.t(), y[2:]


def p_squeeze_dims(T: Any, x: Any) -> Any:
    s = x.squeeze(1)
    s.add_(1)
    return x


def p_view_dtype_stays_float64(T: Any, x: Any) -> Any:
    v = x.view(2, 2)
    v.div_(2)
    return x


def p_sub_out_of_place_then_inplace_views(T: Any, x: Any, y: Any) -> Any:
    z = x - y
    z[0].add_(x[1])
    return z


def p_out_into_empty_input(T: Any, x: Any, y: Any) -> Any:
    T.add(x, 1, out=y)
    return y * 2


def p_resize_shrinks_input(T: Any, x: Any) -> Any:
    x.resize_(2)
    x.add_(1)
    return x


def p_resize_grows_fresh_tensor(T: Any, x: Any) -> Any:
    y = x.clone()
    y.resize_(6)
    return y[:4] * 1


def p_multi_output_out(T: Any, x: Any, v: Any, i: Any) -> Any:
    T.max(x, 1, out=(v, i))
    return v + 1


def p_input_transposed_in_place(T: Any, x: Any) -> Any:
    x.t_()
    x.mul_(2)
    return x


def p_unsafe_view_mutate(T: Any, x: Any) -> Any:
    y = T.ops.aten._unsafe_view.default(x, [3, 2])
    y.add_(1)
    return x


def p_unfold_mutate(T: Any, x: Any) -> Any:
    x.unfold(1, 2, 2).mul_(10)
    return x.sum(0)


def p_unfold_uncovered(T: Any, x: Any) -> Any:
    w = x.unfold(0, 2, 2)  # the last element is in no window
    w.add_(1)
    return x * 2


PROGRAMS: list[Program] = [
    Program("view_mul", p_view_mul, (((2, 2), F),)),
    Program("transpose_select", p_transpose_select, (((2, 3), F),)),
    Program("diagonal_zero", p_diagonal_zero, (((3, 3), F),)),
    Program("unbind_add", p_unbind_add, (((2, 3), F),)),
    Program("clone_t_inplace_view", p_clone_t_inplace_view, (((2, 3), F),)),
    Program("expand_read", p_expand_read, (((3, 3), F),)),
    Program("slice_add", p_slice_add, (((4, 2), F),)),
    Program("slice_step", p_slice_step, (((5,), F),)),
    Program("view_of_view_of_view", p_view_of_view_of_view, (((64,), F),)),
    Program("base_mutated_with_live_view", p_base_mutated_with_live_view, (((12,), F),)),
    Program("copy_into_input", p_copy_into_input, (((2, 3), F), ((2, 3), F))),
    Program("out_into_input", p_out_into_input, (((2, 3), F), ((2, 3), F))),
    Program("out_resizes_fresh_empty", p_out_resizes_fresh_empty, (((3,), F),)),
    Program("index_put", p_index_put, (((4, 2), F), ((2,), "int64"))),
    Program("dtype_changing_inplace", p_dtype_changing_inplace, (((3,), F), ((3,), "float64"))),
    Program("split_mutate_chunk", p_split_mutate_chunk, (((6,), F),)),
    Program("split_with_sizes", p_split_with_sizes, (((4, 2), F),)),
    Program("as_strided_mutate", p_as_strided_mutate, (((4,), F),)),
    Program("unsqueeze_mutate", p_unsqueeze_mutate, (((3,), F),)),
    Program("permute_mutate", p_permute_mutate, (((2, 3, 2), F),)),
    Program("three_views_deep", p_three_views_deep, (((12,), F),)),
    Program("overlapping_views", p_overlapping_views, (((6,), F),)),
    Program("two_mutations_no_read", p_two_mutations_no_read, (((2, 2), F),)),
    Program("fill_select", p_fill_select, (((3, 2), F),)),
    Program("zero_whole", p_zero_whole, (((3,), F),)),
    Program("detach_mutation_aliases", p_detach_mutation_aliases, (((3,), F),)),
    Program(
        "setitem_scalar",
        p_setitem_scalar,
        (((2, 2), F),),
        torch_fix=_scalar_setitem_is_fill,
        why=INTENTIONAL_DIFFERENCES["setitem_scalar"],
    ),
    Program("setitem_tensor", p_setitem_tensor, (((2, 3), F), ((3,), F))),
    Program("copy_broadcast", p_copy_broadcast, (((2, 3), F), ((3,), F))),
    Program("reshape_contiguous_mutate", p_reshape_contiguous_mutate, (((2, 3), F),)),
    Program(
        "reshape_noncontiguous_then_mutate",
        p_reshape_noncontiguous_then_mutate,
        (((2, 3), F),),
        eager_differs=("mutations_and_views",),  # spec 1.8.2: the mutation leaks into x
    ),
    Program("inplace_on_intermediate", p_inplace_on_intermediate, (((3,), F),)),
    Program("input_mutation_only", p_input_mutation_only, (((3,), F),)),
    Program("select_of_select", p_select_of_select, (((3, 4), F),)),
    Program("diagonal_offset", p_diagonal_offset, (((3, 4), F),)),
    Program("transpose_inplace_then_base", p_transpose_inplace_then_base, (((2, 3), F),)),
    Program("unsqueeze_squeeze_inplace", p_unsqueeze_squeeze_inplace, (((3,), F),)),
    Program("masked_fill_view", p_masked_fill_view, (((2, 4), F),)),
    Program("clamp_slice", p_clamp_slice, (((3, 3), F),)),
    Program("out_is_view_of_input", p_out_is_view_of_input, (((2, 3), F), ((3,), F))),
    Program("chunk_mutate", p_chunk_mutate, (((4,), F),)),
    Program("view_after_mutation_is_replayed", p_view_after_mutation_is_replayed, (((2, 3), F),)),
    Program("narrow_mutate", p_narrow_mutate, (((2, 4), F),)),
    Program("read_alias_after_mutation", p_read_alias_after_mutation, (((2, 3), F),)),
    Program("cumsum_inplace_view", p_cumsum_inplace_view, (((2, 3), F),)),
    Program("return_views", p_return_views, (((2, 3), F),)),
    Program("squeeze_dims", p_squeeze_dims, (((2, 1, 3), F),)),
    Program("out_into_empty_input", p_out_into_empty_input, (((3,), F), ((0,), F))),
    Program("resize_shrinks_input", p_resize_shrinks_input, (((4,), F),)),
    Program("resize_grows_fresh_tensor", p_resize_grows_fresh_tensor, (((4,), F),)),
    Program("unfold_mutate", p_unfold_mutate, (((2, 4), F),)),
    Program(
        "unfold_uncovered",
        p_unfold_uncovered,
        (((5,), F),),
        # unfold's inverse (unfold_backward) zeroes what no window covers, in torch too
        eager_differs=("mutations", "mutations_and_views"),
    ),
    Program("multi_output_out", p_multi_output_out, (((2, 3), F), ((2,), F), ((2,), "int64"))),
    Program("input_transposed_in_place", p_input_transposed_in_place, (((2, 3), F),)),
    Program("unsafe_view_mutate", p_unsafe_view_mutate, (((2, 3), F),)),
    Program("view_dtype_stays_float64", p_view_dtype_stays_float64, (((4,), "float64"),)),
    Program(
        "sub_out_of_place_then_inplace_views",
        p_sub_out_of_place_then_inplace_views,
        (((2, 3), F), ((2, 3), F)),
    ),
]
