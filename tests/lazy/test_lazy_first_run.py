"""Note [First run interpreted]: a new graph's first run interprets the generated statements
(lazy/first_run.py), the second compiles them; both give the CPU kernels' bits."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch import lazy
from tensordispatch.lazy.first_run import parse
from tensordispatch.lazy.lowering import NumpyBackend


@pytest.fixture
def backend() -> Iterator[NumpyBackend]:
    fresh = NumpyBackend()
    previous = lazy.set_backend(fresh)
    yield fresh
    lazy.set_backend(previous)


def _bits(a: np.ndarray[Any, Any]) -> bytes:
    return a.view(np.uint8).tobytes()


_GLOBALS = {"_times_alpha", "_scaled", "np_add", "np_multiply", "np_maximum", "np_reshape",
            "np_float32", "_run", "k1", "r0"}  # fmt: skip


def test_parse_reads_calls_tuples_and_folded_runs() -> None:
    body = [
        "s0 = _times_alpha(p1, p2, np_float32)",
        "c_ = (p0, p1, p2, s0,)",
        "v3 = np_add(p0, s0)",
        "for f_, i_ in r0:",
        "    f_(v3, c_[i_], v3)",
        "np_multiply(v3, s0, v3)",
        "v4 = np_add(v3, _scaled(p0, p1))",
    ]
    program = parse(body, ["p0", "p1", "p2"], ["v3"], _GLOBALS)
    assert program is not None
    assert program.steps == (
        (0, "s0", "_times_alpha", ("p1", "p2", "np_float32")),
        (1, "c_", ("p0", "p1", "p2", "s0")),
        (0, "v3", "np_add", ("p0", "s0")),
        (2, "r0", "v3"),
        (0, None, "np_multiply", ("v3", "s0", "v3")),
        (0, "v4", "np_add", ("v3", ("_scaled", ("p0", "p1")))),
    )


@pytest.mark.parametrize(
    "line",
    [
        "v1_0, = _run(k1, p0)",  # a kernel call: several targets
        "v1 = np_maximum(p0, 0.0)",  # a literal
        "v1 = np_reshape(p0, (2, 3))",
        "v1 = np_add(p0, (p1 if p2 == 1 else np_multiply(p1, p2)))",
        "v1 = np_add(p0, p9)",  # an unknown name
        "v1 = np_add(p0, 1)",
        "v1 = np_add(p0, None)",
    ],
)
def test_parse_declines_other_statements(line: str) -> None:
    assert parse([line], ["p0", "p1", "p2"], ["v1"], _GLOBALS) is None


def test_parse_reads_a_repeated_block() -> None:
    body = [
        "v3 = np_add(p0, p1)",
        "for _ in range(3):",
        "    np_multiply(v3, p1, v3)",
        "    np_add(v3, p0, v3)",
        "np_multiply(v3, p1, v3)",
    ]
    program = parse(body, ["p0", "p1"], ["v3"], _GLOBALS)
    assert program is not None
    assert program.steps[1:] == (
        (
            3,
            3,
            ((0, None, "np_multiply", ("v3", "p1", "v3")), (0, None, "np_add", ("v3", "p0", "v3"))),
        ),
        (0, None, "np_multiply", ("v3", "p1", "v3")),
    )
    result = program.run(
        {"np_add": np.add, "np_multiply": np.multiply}, [np.ones(1), np.full(1, 2.0)]
    )
    assert result[0].tolist() == [(((3 * 2 + 1) * 2 + 1) * 2 + 1) * 2]


@pytest.mark.parametrize("body", [["for _ in range(2):"], ["for _ in range(2):", "    c_ = (p0,)"]])
def test_a_repeated_block_needs_calls(body: list[str]) -> None:
    assert parse(body, ["p0"], ["p0"], _GLOBALS) is None


def test_a_folded_loop_needs_its_body() -> None:
    assert parse(["for f_, i_ in r0:", "v1 = np_add(p0, p0)"], ["p0"], ["v1"], _GLOBALS) is None


def test_first_run_interprets_and_second_run_compiles(backend: NumpyBackend) -> None:
    x = td.ones(8).to("lazy")
    lazy.mark_step()
    results = []
    for _ in range(3):
        y = x
        for i in range(10):
            y = y + 0.5 if i % 2 == 0 else y * 0.999
        lazy.mark_step()
        results.append(_bits(y.cpu().numpy()))
        if len(results) == 1:
            assert backend._codes == {}  # nothing compiled for the first run
    assert len(backend._codes) == 1
    counters = ("UncachedCompile", "CachedCompile", "MarkStep")
    assert [lazy.metrics.counter_value(n) for n in counters] == [1, 2, 4]
    expected = np.ones(8, np.float32)
    for i in range(10):
        expected = expected + np.float32(0.5) if i % 2 == 0 else expected * np.float32(0.999)
    assert results == [_bits(expected)] * 3


def test_a_graph_with_a_kernel_call_is_interpreted_first(backend: NumpyBackend) -> None:
    x = td.tensor([[1.0, 2.0], [3.0, 4.0]]).to("lazy")
    lazy.mark_step()
    expected = torch.sum(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), 1).add(1).tolist()
    for run in range(2):
        y = td.sum(x, 1) + 1.0  # sum has no NumPy rule: a kernel call in the source
        lazy.mark_step()
        assert "    v1_0, = _run(k1, p0)" in backend.last_source.splitlines()
        assert len(backend._codes) == run  # interpreted, then compiled
        assert y.cpu().tolist() == expected


def test_a_kernel_call_unpacks_several_outputs(backend: NumpyBackend) -> None:
    data = [[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]]
    x = td.tensor(data).to("lazy")
    lazy.mark_step()
    expected = torch.sort(torch.tensor(data), 1)
    for run in range(2):  # interpreted, then compiled
        values, indices = td.sort(x, 1)
        lazy.mark_step()
        assert "    v1_0, v1_1, = _run(k1, p0)" in backend.last_source.splitlines()
        assert len(backend._codes) == run
        assert values.cpu().tolist() == expected.values.tolist()
        assert indices.cpu().tolist() == expected.indices.tolist()


_OPS: list[Callable[[Any, Any], Any]] = [
    lambda t, s: t + s, lambda t, s: t - s, lambda t, s: t * s, lambda t, s: t / s,
    lambda t, s: td.add(t, s, alpha=3), lambda t, s: td.sub(t, s, alpha=0.5),
    lambda t, s: s / t, lambda t, s: (t * s).exp() - t, lambda t, s: t - (t * s),
    lambda t, s: s - t, lambda t, s: td.rsub(t, s, alpha=3),
    lambda t, s: td.rsub(t, t * s, alpha=2),
]  # fmt: skip


def _program_results(x: Any, scalars: list[Any]) -> list[bytes]:
    results = [f(f(x, s), s) for s in scalars for f in _OPS]
    lazy.mark_step()
    return [_bits(r.cpu().numpy()) for r in results]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_interpreted_and_compiled_runs_give_the_cpu_kernels_bits(
    backend: NumpyBackend, dtype: str
) -> None:
    rng = np.random.default_rng(0)
    data = (rng.standard_normal(32) * 10.0 ** rng.integers(-20, 20, 32)).astype(dtype)
    scalars = [0.5, 0.999, 1 / 3, 7, -0.0, 1e39]
    cpu = td.from_numpy(data.copy())
    expected = [_bits(f(f(cpu, s), s).numpy()) for s in scalars for f in _OPS]
    x = td.from_numpy(data.copy()).to("lazy")
    lazy.mark_step()
    for run in range(2):  # interpreted, then compiled
        results = _program_results(x, scalars)
        assert len(backend._codes) == run  # the first run was interpreted
        assert results == expected, run
    backend.clear_code_cache()
    lazy.clear_compile_cache()
    with lazy.config.compile_on_first_run():  # the other tier: compiled before the first run
        assert _program_results(x, scalars) == expected
        assert len(backend._codes) == 1
    assert not lazy.config.get_compile_on_first_run()


def test_compile_on_first_run_compiles_a_new_graph_at_once(backend: NumpyBackend) -> None:
    x = td.ones(8).to("lazy")
    lazy.mark_step()
    lazy.config.set_compile_on_first_run(True)
    try:
        y = x * 2.0 + 1.0
        lazy.mark_step()
        assert len(backend._codes) == 1
    finally:
        lazy.config.set_compile_on_first_run(False)
    z = x * 3.0 - 1.0  # a new structure: interpreted again
    lazy.mark_step()
    assert len(backend._codes) == 1
    assert y.cpu().tolist() == [3.0] * 8 and z.cpu().tolist() == [2.0] * 8


@pytest.mark.parametrize("program", ["interpreted", "kernel call"])
def test_a_cached_graph_does_not_keep_its_buffers(backend: NumpyBackend, program: str) -> None:
    import gc
    import weakref

    data = td.from_numpy(np.ones(16, np.float32)).to("lazy")
    lazy.mark_step()
    # the compiled-graph cache keeps the callable: an interpreted first run's pending
    # compile, or compiled source whose kernel call keeps what run_cpu_kernel needs
    y = data * 2.0 + 1.0 if program == "interpreted" else td.sum(data * 2.0, 0)
    lazy.mark_step()
    assert ("_run(" in backend.last_source) is (program == "kernel call")
    from tensordispatch.transforms.functionalize import from_functional

    inner = from_functional(data)._data
    buffer = weakref.ref(inner.handle)
    del data, inner, y
    gc.collect()
    assert buffer() is None


def _graph_after(program: Callable[[Any], Any]) -> Any:
    """The Graph of the pending values ``program`` leaves on a fresh lazy vector."""
    from tensordispatch.lazy import executor
    from tensordispatch.lazy.tensor import live_data

    x = td.from_numpy(np.linspace(0.5, 2.0, 8, dtype=np.float32)).to("lazy")
    lazy.mark_step()
    keep = program(x)
    pending = [d.ir for d in live_data() if d.handle is None and d.ir is not None]
    return executor.graph_of(pending), keep


@pytest.mark.parametrize(
    "program",
    [
        lambda x: [x * 2.0 + 1.0 for _ in range(1)],
        lambda x: [td.add(x, x * 3.0, alpha=2).exp(), x - 0.5],
        lambda x: [td.rsub(x, 4.0, alpha=3) / x],
        lambda x: [_chain(x, 12)],  # a repeated block
        lambda x: [_chain(x, 12, period=False)],  # a table loop
    ],
)
def test_statements_as_data_are_what_parse_reads_from_the_source(
    program: Callable[[Any], Any],
) -> None:
    from tensordispatch.lazy.lowering import _NUMPY_NAMES, _Emitter

    graph, _ = _graph_after(program)
    emitter = _Emitter(graph)
    emitter.emit()
    names = {**_NUMPY_NAMES, **emitter.constants}
    assert emitter.program is not None
    assert emitter.program == parse(emitter.body, emitter.params, emitter.outputs, names)


def _chain(y: Any, n: int, *, period: bool = True) -> Any:
    for i in range(n):
        if period:
            y = y + 0.5 if i % 2 == 0 else y * 0.999
        else:
            y = y + (0.5 + i) if i % 3 else y * (1.0 + i / 64)
    return y


def test_a_rule_written_as_text_is_read_back_by_parse(
    backend: NumpyBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tensordispatch.lazy.lowering import NUMPY_RULES, Rule

    def text_rule(node: Any, ins: list[str], out: str | None, hoist: Any) -> str:
        return f"np_negative({ins[0]}, {out})" if out else f"np_negative({ins[0]})"

    monkeypatch.setitem(NUMPY_RULES, "aten::neg", Rule(text_rule))
    x = td.tensor([1.0, -2.0]).to("lazy")
    lazy.mark_step()
    y = -(x * 3.0)
    lazy.mark_step()
    assert "np_negative(v2, v2)" in backend.last_source
    assert backend._codes == {}  # interpreted: parse read the text statement
    assert y.cpu().tolist() == (-(torch.tensor([1.0, -2.0]) * 3.0)).tolist()


def test_a_repeated_block_that_assigns_runs_step_by_step() -> None:
    # names rebound inside the block: looked up on every pass, not once
    body = ["v1 = np_add(p0, p0)", "for _ in range(3):", "    v1 = np_add(v1, p0)"]
    program = parse(body, ["p0"], ["v1"], _GLOBALS)
    assert program is not None
    result = program.run({"np_add": np.add}, [np.ones(1)])
    assert result[0].tolist() == [5.0]


def test_a_nested_call_argument_is_evaluated_where_it_is_used() -> None:
    body = ["v1 = np_add(p0, _scaled(p0, p1))"]
    program = parse(body, ["p0", "p1"], ["v1"], _GLOBALS)
    assert program is not None
    scaled = lambda t, a: t * a
    result = program.run({"np_add": np.add, "_scaled": scaled}, [np.ones(2), 3.0])
    assert result[0].tolist() == [4.0, 4.0]


def td_or_torch_maximum(lib: Any, a: Any, b: Any) -> Any:
    return lib.maximum(a, b) + 0.0  # an operator after it: maximum's buffer is reusable


def _literal_ops(lib: Any, x: Any) -> list[Any]:
    m = x.view(2, 4)
    return [
        m.relu() * 2.0,
        m.t() + 1.0,
        m.permute(1, 0) * 3.0,
        x.view(1, 8).expand(3, 8) - 1.0,
        td_or_torch_maximum(lib, m, m * -1.0),
        x.to(lib.float64) * 0.1,
        (m.t() @ m).relu(),
    ]


def test_views_relu_and_casts_are_interpreted_on_the_first_run(backend: NumpyBackend) -> None:
    # their rules pass literals (sizes, dims, 0.0): Literal arguments, no compile at first
    data = np.linspace(-2.0, 2.0, 8, dtype=np.float32)
    x = td.from_numpy(data.copy()).to("lazy")
    lazy.mark_step()
    runs = []
    for _ in range(2):  # interpreted, then compiled
        results = _literal_ops(td, x)
        lazy.mark_step()
        runs.append([_bits(np.ascontiguousarray(r.cpu().numpy())) for r in results])
        assert len(backend._codes) == len(runs) - 1
    assert "np_reshape(p0, (2, 4))" in backend.last_source
    assert "_astype(p0, np_float64)" in backend.last_source
    torch_results = _literal_ops(torch, torch.from_numpy(data.copy()))
    expected = [_bits(np.ascontiguousarray(r.numpy())) for r in torch_results]
    assert runs == [expected, expected]
