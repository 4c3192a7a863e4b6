"""Graph hashes (vs torch._lazy.computation.get_graph_hash), dump_ir, generated source."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
import torch._lazy
import torch._lazy.computation

import tensordispatch as td
from tensordispatch import lazy
from tensordispatch.lazy.computation import get_graph_hash as graph_hash
from tensordispatch.lazy.debug import dump_ir


def _pair(
    lib: Any, fa: Callable[..., Any], fb: Callable[..., Any], make: Callable[..., Any]
) -> bool:
    a, b = make(lib, 0), make(lib, 1)
    (lazy.mark_step if lib is td else torch._lazy.mark_step)()
    if lib is td:
        return graph_hash(fa(a, b)) == graph_hash(fb(a, b))
    get = torch._lazy.computation.get_graph_hash
    return bool(get(fa(a, b)) == get(fb(a, b)))


def _fresh(lib: Any, seed: int) -> Any:
    return lib.tensor([1.0 + seed, 2.0, 3.0]).to("lazy")


CASES = {
    "same program, other data": (lambda a, b: [a * 2 + 3], lambda a, b: [b * 2 + 3], True),
    "other scalars, same dedup": (lambda a, b: [a * 2 + 3], lambda a, b: [a * 3 + 5], True),
    "scalar equal to alpha": (lambda a, b: [a * 2 + 1], lambda a, b: [a * 3 + 5], False),
    "int vs float scalar": (lambda a, b: [a * 2], lambda a, b: [a * 2.0], False),
    "a+a vs a+b": (lambda a, b: [a + a], lambda a, b: [a + b], False),
    "root order": (lambda a, b: [a + 1, a * 2], lambda a, b: [a * 2, a + 1], False),
    "other op": (lambda a, b: [a + b], lambda a, b: [a - b], False),
}


@pytest.mark.parametrize("case", list(CASES))
def test_graph_hash_relations_match_torch(case: str) -> None:
    fa, fb, expected = CASES[case]
    assert _pair(torch, fa, fb, _fresh) is expected
    assert _pair(td, fa, fb, _fresh) is expected


def test_graph_hash_depends_on_shape_and_dtype() -> None:
    a, b = td.ones(3).to("lazy"), td.ones(4).to("lazy")
    c = td.ones(3, dtype=td.float64).to("lazy")
    lazy.mark_step()
    assert graph_hash([a + 1]) != graph_hash([b + 1])
    assert graph_hash([a + 1]) != graph_hash([c + 1])


def test_dump_ir_text() -> None:
    x = td.ones(2, 3).to("lazy")
    lazy.mark_step()
    y = (x.t() * 2).sum()
    assert dump_ir([y]) == "\n".join([  # noqa: FLY002
        "IR {",
        "  %0 = Float[2,3] lazy_tensors::device_data()",
        "  %1 = Float[3,2] aten::t_copy(%0)",
        "  %2 = Long[] lazy_tensors::device_data()",
        "  %3 = Float[3,2] aten::mul.Tensor(%1, %2)",
        "  %4 = Float[] aten::sum(%3, None), ROOT=0",
        "}",
    ])  # fmt: skip


def test_dump_ir_dot() -> None:
    x = td.ones(2).to("lazy")
    lazy.mark_step()
    assert dump_ir([x.neg()], "dot") == "\n".join([  # noqa: FLY002
        "digraph G {",
        '  node0 [label="lazy_tensors::device_data\\nFloat[2]"]',
        '  node1 [label="aten::neg\\nFloat[2]\\nROOT=0"]',
        '  node0 -> node1 [label="i=0"]',
        "}",
    ])  # fmt: skip


def test_dump_ir_rejects_cpu_tensors() -> None:
    with pytest.raises(TypeError) as info:
        dump_ir([td.ones(2)])
    assert str(info.value) == "dump_ir: expected lazy tensors, got a Tensor on device 'cpu'"


def test_generated_source_reuses_one_buffer_for_a_chain() -> None:
    x = td.ones(8).to("lazy")
    lazy.mark_step()
    y = x
    for i in range(4):
        y = y + 0.5 if i % 2 == 0 else y * 0.999
    lazy.mark_step()
    assert lazy.get_backend().last_source == "\n".join([  # noqa: FLY002
        "def graph_fn(p0, p1, p2, p3):",
        "    s0 = _times_alpha(p1, p2, np_float32)",
        "    s1 = np_asarray(p3, np_float32)",
        "    v3 = np_add(p0, s0)",
        "    np_multiply(v3, s1, v3)",
        "    np_add(v3, s0, v3)",
        "    np_multiply(v3, s1, v3)",
        "    return (v3, )",
        "",
    ])  # fmt: skip
    assert y.to("cpu").tolist() == pytest.approx([((1.5 * 0.999) + 0.5) * 0.999] * 8)


def test_a_second_lowering_can_be_plugged_in() -> None:
    compiled = []

    class Recording(lazy.NumpyBackend):
        def compile(self, graph: lazy.Graph) -> Any:
            compiled.append(len(graph.nodes))
            return super().compile(graph)

    previous = lazy.set_backend(Recording())
    try:
        x = td.ones(2).to("lazy")
        (x + 1).to("cpu")
        assert compiled and lazy.metrics.counter_value("UncachedCompile") == 1
    finally:
        lazy.set_backend(previous)


def test_graphs_differing_only_in_sizes_share_compiled_code() -> None:
    backend = lazy.get_backend()
    backend.clear_code_cache()
    results = []
    for n in (3, 5):
        x = td.ones(n).to("lazy")
        lazy.mark_step()
        for _ in range(2):  # the second run compiles (Note [First run interpreted])
            results.append((x * 2 + 1).to("cpu").tolist())
    assert lazy.metrics.counter_value("UncachedCompile") == 2  # two graph hashes
    assert len(backend._codes) == 1  # one source, one code object
    assert results == [[3.0] * 3] * 2 + [[3.0] * 5] * 2


def test_long_periodic_chains_fold_into_a_repeated_block() -> None:
    x = td.ones(8).to("lazy")
    lazy.mark_step()
    y = x
    for i in range(40):
        y = y + 0.5 if i % 2 == 0 else y * 0.999
    lazy.mark_step()
    assert lazy.get_backend().last_source.splitlines()[3:] == [
        "    v3 = np_add(p0, s0)",
        "    for _ in range(19):",  # 39 in-place calls: 19 periods, then the remainder
        "        np_multiply(v3, s1, v3)",
        "        np_add(v3, s0, v3)",
        "    np_multiply(v3, s1, v3)",
        "    return (v3, )",
    ]
    expected = np.ones(8, np.float32)
    for i in range(40):
        expected = expected + np.float32(0.5) if i % 2 == 0 else expected * np.float32(0.999)
    assert np.array_equal(y.cpu().numpy(), expected)


def test_long_aperiodic_chains_fold_into_a_table_loop() -> None:
    x = td.ones(8).to("lazy")
    lazy.mark_step()
    y = x
    for i in range(40):
        y = y + (0.5 + i) if i % 3 else y * (1.0 + i / 64)
    lazy.mark_step()
    lines = lazy.get_backend().last_source.splitlines()
    assert lines[-3:] == [
        "    for f_, i_ in r0:",
        "        f_(v2, c_[i_], v2)",
        "    return (v2, )",
    ]
    assert len(lines) < 50 and any(line.startswith("    c_ = (") for line in lines)
    expected = np.ones(8, np.float32)
    for i in range(40):
        expected = expected + np.float32(0.5 + i) if i % 3 else expected * np.float32(1.0 + i / 64)
    assert np.array_equal(y.cpu().numpy(), expected)


def test_scalar_alpha_keeps_the_tensor_dtype() -> None:
    # other * alpha for two Python numbers must stay a weak scalar (float32 result)
    x = td.tensor([1.0, 2.0]).to("lazy")
    t = torch.tensor([1.0, 2.0])
    y = td.add(x, 0.1, alpha=3)
    lazy.mark_step()
    from tensordispatch.transforms.functionalize import from_functional

    assert from_functional(y)._data.materialize().dtype == np.float32
    assert y.cpu().tolist() == torch.add(t, 0.1, alpha=3).tolist()


_SCALARS = [0.5, 0.999, 0.1, 1 / 3, 1e-45, 3.5e38, 1e39, -1e300, -0.0, float("nan"), 7, 2**40 + 1]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_number_operands_give_the_cpu_kernels_bits(dtype: str) -> None:
    # Note [Numbers as 0-d arrays]: numbers become 0-d arrays of the output dtype
    rng = np.random.default_rng(0)
    data = rng.standard_normal(16) * 10.0 ** rng.integers(-30, 30, 16)
    data = np.concatenate([data, [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40]]).astype(dtype)
    ops: list[Callable[[Any, Any], Any]] = [
        lambda t, s: t + s, lambda t, s: t - s, lambda t, s: t * s, lambda t, s: t / s,
        lambda t, s: td.add(t, s, alpha=3), lambda t, s: s - t, lambda t, s: s / t,
        lambda t, s: td.maximum(t, td.tensor(s, dtype=t.dtype)),
    ]  # fmt: skip
    x = td.from_numpy(data.copy()).to("lazy")
    lazy.mark_step()
    lazy_results = [f(x, s) for s in _SCALARS for f in ops]
    lazy.mark_step()
    cpu = td.from_numpy(data.copy())
    for got, (s, f) in zip(lazy_results, [(s, f) for s in _SCALARS for f in ops], strict=True):
        expected = f(cpu, s).numpy()
        result = got.cpu().numpy()
        assert result.dtype == expected.dtype
        assert result.view(np.uint8).tobytes() == expected.view(np.uint8).tobytes(), s


def _reference_post_order(outputs: list[Any]) -> list[Any]:
    # the definition: recursive depth-first post-order, operands in order, each node once
    order: list[Any] = []
    seen: set[int] = set()

    def visit(node: Any) -> None:
        if id(node) in seen:
            return
        for value in node.operands:
            visit(value.node)
        seen.add(id(node))
        order.append(node)

    for root in outputs:
        visit(root.node)
    return order


def test_graph_of_is_the_depth_first_post_order() -> None:
    from tensordispatch.lazy.executor import graph_of
    from tensordispatch.transforms.functionalize import from_functional

    x = td.tensor([1.0, 2.0]).to("lazy")
    y = td.tensor([3.0, 4.0]).to("lazy")
    lazy.mark_step()
    a = x + y
    b = a * x
    c = (b - a) / y
    d = c * 2.0 + b
    outputs = [from_functional(t)._data.ir for t in (d, a, c)]
    graph = graph_of(outputs)
    expected = _reference_post_order(outputs)
    assert [id(n) for n in graph.nodes] == [id(n) for n in expected]
    leaves = [n for n in expected if n.data is not None]
    assert list(graph.parameters) == list(dict.fromkeys(n.data for n in leaves))
    assert [graph.param_index[id(n)] for n in leaves] == [
        graph.parameters.index(n.data) for n in leaves
    ]


@pytest.mark.parametrize(("ops", "folded"), [(4, False), (5, True)])
def test_runs_fold_from_run_min_in_place_calls(ops: int, folded: bool) -> None:
    from tensordispatch.lazy.lowering import RUN_MIN

    assert RUN_MIN == 4  # ops - 1 in-place calls follow the first (fresh) one
    x = td.ones(8).to("lazy")
    lazy.mark_step()
    y = x
    for i in range(ops):
        y = y + 0.5 if i % 2 == 0 else y * 0.999
    lazy.mark_step()
    lines = lazy.get_backend().last_source.splitlines()
    in_place = [line for line in lines if line.startswith("    np_") and line.endswith("v3)")]
    assert ("    for _ in range(2):" in lines) is folded
    assert len(in_place) == (0 if folded else ops - 1)
    expected = np.ones(8, np.float32)
    for i in range(ops):
        expected = expected + np.float32(0.5) if i % 2 == 0 else expected * np.float32(0.999)
    assert np.array_equal(y.cpu().numpy(), expected)


@pytest.mark.parametrize(
    ("pattern", "period"),
    [("aaaa", 1), ("abab", 2), ("ababa", 2), ("abcabcab", 3), ("abcd", None), ("abca", None),
     ("abcdefghabcdefgh", 8), ("abcdefghiabcdefghi", None)],
)  # fmt: skip
def test_period_of_a_run(pattern: str, period: int | None) -> None:
    from tensordispatch.lazy.lowering import _period

    steps = [None, *pattern, None]
    assert _period(steps, 1, 1 + len(pattern)) == period


def test_nodes_hash_and_compare_by_identity() -> None:
    # executor.graph_of keeps nodes in a set: structural __eq__/__hash__ would merge nodes
    from tensordispatch.lazy import lazy_ir
    from tensordispatch.lazy.ir import Node

    classes = [Node, *(cls for cls, _ in lazy_ir.NODES.values())]
    assert len(classes) > 100
    for cls in classes:
        assert cls.__eq__ is object.__eq__ and cls.__hash__ is object.__hash__, cls


@pytest.mark.parametrize("seed", range(20))
def test_graph_of_matches_the_recursive_post_order_on_random_dags(seed: int) -> None:
    # random DAGs of plain nodes: shared operands, repeated operands, leaves as roots,
    # roots inside other roots' graphs, shared and unshared device data
    from tensordispatch.lazy.executor import graph_of
    from tensordispatch.lazy.ir import BackendData, Node, Shape, device_data_node, operand

    rng = np.random.default_rng(seed)
    shape = Shape.of(td.float32, (2,))
    buffers = [BackendData(np.zeros(2, np.float32), shape) for _ in range(3)]
    nodes: list[Any] = [device_data_node(buffers[int(rng.integers(3))]) for _ in range(4)]
    for _ in range(int(rng.integers(1, 30))):
        count = int(rng.integers(0, 4))
        picks = [nodes[int(rng.integers(len(nodes)))] for _ in range(count)]
        operands = tuple(picks)  # a single-output node is its own Value
        args = tuple(operand(i) for i in range(count))
        nodes.append(Node("aten::add.Tensor", None, operands, args, (shape,)))
    outputs = [nodes[int(rng.integers(len(nodes)))] for _ in range(int(rng.integers(1, 4)))]
    graph = graph_of(outputs)
    expected = _reference_post_order(outputs)
    assert [id(n) for n in graph.nodes] == [id(n) for n in expected]
    leaves = [n for n in expected if n.data is not None]
    assert list(graph.parameters) == list(dict.fromkeys(n.data for n in leaves))
    assert graph.param_index == {id(n): graph.parameters.index(n.data) for n in leaves}
