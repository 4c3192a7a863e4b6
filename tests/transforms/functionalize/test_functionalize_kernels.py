"""The Functionalize kernels (which operators have one, as torch), the tracer's printout,
functionalize_aten_op, and the operators added for functionalization (vs torch)."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest
import torch

import tensordispatch as td
from tensordispatch.dispatch import DISPATCHER, has_kernel_for_dispatch_key
from tensordispatch.transforms.functionalize import (
    FunctionalTensor,
    from_functional,
    functionalize,
    functionalize_aten_op,
    install,
)
from tensordispatch.transforms.functionalize.trace import make_fx


def test_operators_with_a_functionalize_kernel_are_torchs() -> None:
    install()
    ours, theirs = set(), set()
    for entry in DISPATCHER.live_entries():
        if entry.schema is None or not entry.qualified_name.startswith("aten::"):
            continue
        name = entry.qualified_overload_name
        if has_kernel_for_dispatch_key(name, "Functionalize"):
            ours.add(name)
        if torch._C._dispatch_has_kernel_for_dispatch_key(name, "Functionalize"):
            theirs.add(name)
    assert ours == theirs
    assert {"aten::add_.Tensor", "aten::view", "aten::reshape", "aten::transpose_"} <= ours


def test_functionalize_fallback_is_torchs_slot() -> None:
    install()
    rows = td.dispatch.dump_table("aten::mm").splitlines()
    row = next(r for r in rows if r.startswith("Functionalize:"))
    assert "transforms/functionalize/kernels.py" in row and row.endswith("[backend fallback]")


def test_traced_program_prints_as_python() -> None:
    def f(x: td.Tensor) -> td.Tensor:
        y = x.transpose(0, 1)
        y[0].mul_(2)
        return x.sum()

    graph = make_fx(functionalize(f, remove="mutations_and_views"))(td.ones(2, 2))
    assert graph.code.splitlines() == (
        [
            "def forward(self, x_1):",
            "    transpose_copy = tensordispatch.ops.aten.transpose_copy.int(x_1, 0, 1)",
            "    select_copy = tensordispatch.ops.aten.select_copy.int(transpose_copy, 0, 0)",
            "    mul = tensordispatch.ops.aten.mul.Tensor(select_copy, 2)",
            "    transpose_copy_1 = tensordispatch.ops.aten.transpose_copy.int(x_1, 0, 1)",
            "    select_scatter = tensordispatch.ops.aten.select_scatter.default(transpose_copy_1, mul, 0, 0)",
            "    transpose_copy_2 = tensordispatch.ops.aten.transpose_copy.int(select_scatter, 0, 1)",
            "    transpose_copy_3 = tensordispatch.ops.aten.transpose_copy.int(transpose_copy_2, 0, 1)",
            "    select_copy_1 = tensordispatch.ops.aten.select_copy.int(transpose_copy_3, 0, 0)",
            "    sum_1 = tensordispatch.ops.aten.sum.default(transpose_copy_2)",
            "    copy_ = tensordispatch.ops.aten.copy_.default(x_1, transpose_copy_2)",
            "    return sum_1",
        ]
    )


def test_functionalize_aten_op_sends_only_functional_pieces() -> None:
    x, src = td.zeros(3, 3), td.ones(3)
    graph = make_fx(lambda a, b: functionalize_aten_op(td.ops.aten.diagonal_scatter.default, a, b))(
        x, src
    )
    assert graph.op_names == ["clone", "diagonal_copy", "copy", "diagonal_scatter", "diagonal_copy"]
    out = functionalize_aten_op(td.ops.aten.diagonal_scatter.default, x, src)
    assert type(out) is td.Tensor
    assert out.tolist() == torch.diagonal_scatter(torch.zeros(3, 3), torch.ones(3)).tolist()


def test_wrapped_outputs_of_multi_output_views() -> None:
    seen = []

    def f(x: td.Tensor) -> td.Tensor:
        parts = x.unbind(0)
        seen.extend(type(p) for p in parts)
        return parts[1]

    out = functionalize(f)(td.arange(4.0).view(2, 2))
    assert seen == [FunctionalTensor, FunctionalTensor] and out.tolist() == [2.0, 3.0]


SCATTERS = [
    ("select_scatter", ((3, 4), (4,)), (0, 1)),
    ("select_scatter", ((3, 4), (3,)), (1, -1)),
    ("slice_scatter", ((5, 2), (2, 2)), (0, 1, 5, 2)),
    ("slice_scatter", ((2, 6), (2, 3)), (1, None, None, 2)),
    ("diagonal_scatter", ((3, 4), (3,)), (1, 0, 1)),
    ("diagonal_scatter", ((2, 3, 3), (3, 2)), (0, 0, 2)),
    ("as_strided_scatter", ((6,), (2, 2)), ((2, 2), (1, 2), 1)),
]


@pytest.mark.parametrize(("name", "shapes", "args"), SCATTERS, ids=[s[0] for s in SCATTERS])
@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_scatter_ops_match_torch(name: str, shapes: tuple, args: tuple, device: str) -> None:
    ta = torch.arange(float(torch.Size(shapes[0]).numel())).reshape(shapes[0])
    tb = -torch.arange(float(torch.Size(shapes[1]).numel())).reshape(shapes[1]) - 1
    theirs = getattr(torch, name)(ta.to(device), tb.to(device), *args)
    ours = getattr(td, name)(
        td.tensor(ta.tolist()).to(device), td.tensor(tb.tolist()).to(device), *args
    )
    assert list(ours.shape) == list(theirs.shape) and ours.stride() == theirs.stride()
    if device == "cpu":
        assert ours.tolist() == theirs.tolist()


def test_scatter_of_a_transposed_self_keeps_its_strides() -> None:
    theirs = torch.select_scatter(torch.zeros(2, 3).t(), torch.ones(2), 0, 1)
    ours = td.select_scatter(td.zeros(2, 3).t(), td.ones(2), 0, 1)
    assert ours.stride() == theirs.stride() and ours.tolist() == theirs.tolist()


INPLACE_VIEWS = [
    ("t_", ()),
    ("transpose_", (0, 2)),
    ("unsqueeze_", (1,)),
    ("squeeze_", ()),
    ("squeeze_", (1,)),
    ("as_strided_", ((2, 2), (2, 1), 1)),
]


@pytest.mark.parametrize(("name", "args"), INPLACE_VIEWS, ids=[f"{n}{a}" for n, a in INPLACE_VIEWS])
def test_inplace_views_match_torch(name: str, args: tuple) -> None:
    shape = (2, 3) if name == "t_" else (2, 1, 3)
    t = torch.arange(6.0).reshape(shape)
    d = td.arange(6.0).reshape(shape)
    r1, r2 = getattr(t, name)(*args), getattr(d, name)(*args)
    assert r2 is d and r1 is t
    assert (list(d.shape), d.stride(), d.storage_offset()) == (
        list(t.shape),
        t.stride(),
        t.storage_offset(),
    )
    assert d.tolist() == t.tolist()


@pytest.mark.parametrize("dim", [None, 1, (1, 2), [0, 1]])
def test_squeeze_overloads_match_torch(dim: object) -> None:
    t, d = torch.zeros(1, 1, 3, 1), td.zeros(1, 1, 3, 1)
    theirs = t.squeeze() if dim is None else t.squeeze(dim)
    ours = d.squeeze() if dim is None else d.squeeze(dim)
    assert list(ours.shape) == list(theirs.shape) and ours.stride() == theirs.stride()
    copy = td.squeeze_copy(d) if dim is None else td.squeeze_copy(d, dim)
    assert list(copy.shape) == list(theirs.shape)


def test_zero_lift_and_unsafe_view() -> None:
    x = td.ones(2, 2)
    assert td.zero_(x) is x and x.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert td.ops.aten.zero.default(td.ones(2)).tolist() == [0.0, 0.0]
    y = td.ones(3)
    assert td.ops.aten.lift.default(y) is y and td.ops.aten.lift_fresh.default(y) is y
    c = td.ops.aten.lift_fresh_copy.default(y)
    assert c is not y and c.tolist() == y.tolist()
    assert td.ops.aten._unsafe_view.default(td.arange(6.0), [2, 3]).shape == (2, 3)


def test_composite_explicit_nonfunctional_skips_functional_backends() -> None:
    """CEANF kernels (view copies, scatters) serve CPU and Meta but not Lazy/XLA (spec 1.7):
    those backends must lower them or get them through functionalize_aten_op."""
    from tensordispatch.dispatch import DispatchKey, alias_runtime_keys

    keys = alias_runtime_keys(DispatchKey.CompositeExplicitAutogradNonFunctional)
    assert DispatchKey.CPU in keys and DispatchKey.Meta in keys
    assert DispatchKey.Lazy not in keys and DispatchKey.XLA not in keys
    cea = alias_runtime_keys(DispatchKey.CompositeExplicitAutograd)
    assert DispatchKey.Lazy in cea


@pytest.mark.parametrize("mode", ["mutations", "mutations_and_views"])
def test_random_inplace_on_a_view_uses_the_functional_variant(mode: str) -> None:
    def program(x: object) -> object:
        x[0].uniform_()  # type: ignore[index]
        x.normal_()  # type: ignore[attr-defined]
        return x

    def names(graph: object) -> list[str]:
        return [
            str(n.target).split(".")[1]
            for n in graph.graph.nodes  # type: ignore[attr-defined]
            if n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload)
        ]

    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    theirs = names(torch_make_fx(torch.func.functionalize(program, remove=mode))(torch.ones(2, 3)))
    ours = make_fx(functionalize(program, remove=mode))(td.ones(2, 3)).op_names
    assert ours == theirs
    assert "uniform" in ours and "normal_functional" in ours


def test_factory_out_variant_keeps_the_out_tensors_dtype_and_device() -> None:
    """arange.start_out's functional takes TensorOptions: the out's dtype/device are passed
    (torch passes out.options()), so the value is not recomputed as the default dtype."""
    seen = []

    def f(x: td.Tensor) -> td.Tensor:
        o = td.empty(0, dtype=td.float64)
        td.arange(3.0, out=o)
        seen.append((o.dtype, from_functional(o).dtype, from_functional(o).device.type))
        return o + x

    out = functionalize(f)(td.ones(3))
    assert seen == [(td.float64, td.float64, "cpu")]
    assert out.dtype == td.float64 and out.tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize(
    ("shape", "dim", "size", "step"),
    [((5,), 0, 2, 2), ((5,), 0, 3, 1), ((3, 7), 1, 2, 3), ((4, 3), -2, 3, 1), ((), 0, 1, 1)],
)
def test_unfold_backward_matches_torch(shape: Any, dim: int, size: int, step: int) -> None:
    grad = torch.randn(torch.zeros(shape).unfold(dim, size, step).shape, dtype=torch.float64)
    theirs = torch.ops.aten.unfold_backward(grad, list(shape), dim, size, step)
    ours = td.ops.aten.unfold_backward.default(
        td.tensor(grad.tolist()), list(shape), dim, size, step
    )
    assert list(ours.shape) == list(theirs.shape)
    assert torch.allclose(torch.tensor(ours.tolist(), dtype=torch.float64), theirs)


def test_overlapping_unfold_mutation_without_views_sums_as_torch() -> None:
    def f(lib: Any, x: Any) -> Any:
        x.unfold(0, 3, 1).mul_(10)
        return x + 0

    theirs_in = torch.arange(5.0)
    theirs = torch.func.functionalize(partial(f, torch), remove="mutations_and_views")(theirs_in)
    ours_in = td.arange(5.0)
    ours = functionalize(partial(f, td), remove="mutations_and_views")(ours_in)
    assert ours.tolist() == theirs.tolist() == [0.0, 20.0, 60.0, 60.0, 40.0]
    assert ours_in.tolist() == theirs_in.tolist()
