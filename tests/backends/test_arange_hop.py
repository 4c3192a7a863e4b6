"""arange's one hop (Note [One-hop factory bindings] in backends/composite_fast.py, the arange
paragraph): results equal to torch's, bit for bit equal to the binding's full dispatch (values,
errors, warnings), the overloads torch picks, and every registration, mode, trace, transform
or word change that must send the binding back to the full dispatch."""

from __future__ import annotations

import itertools
import math
import warnings
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch.backends import composite_fast_arange as fast
from tensordispatch.backends.aten import below_ad_inplace_or_view, op
from tensordispatch.backends.cpu.kernels import empty_cpu
from tensordispatch.backends.cpu.layout import arange_start_out
from tensordispatch.dispatch import dispatch_trace
from tensordispatch.library import Library
from tensordispatch.ops import bindings

from .overrides import impl_quietly
from .recording_modes import recording_modes


def _name(dtype: Any) -> str:
    return str(dtype).split(".")[-1]


TORCH_CASES: list[tuple[tuple[Any, ...], str | None]] = [
    ((10,), None), ((10.0,), None), ((0,), None), ((-3, 0), None), ((1, 5), None),
    ((1.0, 5), None), ((5, 1, -1), None), ((0, 1, 0.25), None), ((0, 10, 3), None),
    ((1, 2.5, 0.5), None), ((-0.0, 3), None), ((0, -8.000001, -4.0), "int64"),
    ((0, -8.000001, -4.0), "int32"), ((3.0, -1.0, -0.7), "float32"), ((7,), "float64"),
    ((7,), "float32"), ((7,), "float16"), ((2, 9, 2), "float64"), ((0.5, 4), "int64"),
    ((1e16, 1e16 + 8, 2.0), "float64"), ((1e16, 1e16 + 8, 2.0), None), ((4,), "int32"),
    ((0, 1, 0.1), None), ((2**40, 2**40 + 3), None), ((-(2**63), -(2**63) + 2), "int64"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "dtype"), TORCH_CASES, ids=str)
def test_arange_matches_torch(args: tuple[Any, ...], dtype: str | None) -> None:
    got = td.arange(*args, **({} if dtype is None else {"dtype": getattr(td, dtype)}))
    expected = torch.arange(*args, **({} if dtype is None else {"dtype": getattr(torch, dtype)}))
    assert fast.arange(args, None if dtype is None else getattr(td, dtype)) is not None or (
        dtype == "int32"
    )
    assert _name(got.dtype) == _name(expected.dtype)
    assert tuple(got.shape) == tuple(expected.shape) and got.stride() == expected.stride()
    assert got.requires_grad is expected.requires_grad is False
    assert got.is_leaf and got.grad_fn is None and got._version == expected._version
    assert torch.equal(torch.from_numpy(got.numpy().copy()), expected)


ERRORS: list[tuple[Any, ...]] = [
    (-3,), (0, 1, 0), (0, 1, 0.0), (5, 1), (0, 1, -1), (math.inf,), (math.nan,),
    (0, math.inf, 1.0),
]  # fmt: skip


@pytest.mark.parametrize("args", ERRORS, ids=str)
def test_errors_are_torchs(args: tuple[Any, ...]) -> None:
    with pytest.raises(RuntimeError) as ours:
        td.arange(*args)
    with pytest.raises(RuntimeError) as theirs:
        torch.arange(*args)
    assert str(ours.value) == str(theirs.value)


def test_an_error_message() -> None:
    with pytest.raises(RuntimeError) as info:
        td.arange(5, 1)
    assert str(info.value) == "upper bound and lower bound inconsistent with step sign"


def test_default_dtype_is_read_at_the_call() -> None:
    saved = td.get_default_dtype()
    td.set_default_dtype(td.float64)
    try:
        got = td.arange(3.0)
    finally:
        td.set_default_dtype(saved)
    assert got.dtype is td.float64 and td.arange(3.0).dtype is saved


def test_options_match_torch() -> None:
    got = td.arange(1.0, 4.0, requires_grad=True)
    expected = torch.arange(1.0, 4.0, requires_grad=True)
    assert got.requires_grad is expected.requires_grad is True
    assert got.is_leaf and got.grad_fn is None
    (got * got).sum().backward()
    assert got.grad is not None and got.grad.tolist() == [2.0, 4.0, 6.0]
    cpu = td.arange(4, device="cpu", dtype=td.float64)
    assert cpu.dtype is td.float64 and cpu.tolist() == torch.arange(4.0).tolist()
    meta = td.arange(0, 10, 3, device="meta")
    assert meta.device.type == "meta" and tuple(meta.shape) == (4,)
    out, tout = td.empty(4, dtype=td.float64), torch.empty(4, dtype=torch.float64)
    assert td.arange(4, out=out) is out and out.tolist() == torch.arange(4, out=tout).tolist()
    assert out._version == tout._version


def test_the_overloads_are_torchs() -> None:
    ours, theirs, Ours, Theirs = recording_modes()

    def calls(m: Any) -> None:
        m.arange(10), m.arange(2.5), m.arange(1, 5.0), m.arange(0, 10, 2)
        m.arange(end=4), m.arange(start=1, end=4), m.arange(3, dtype=m.float64)
        m.arange(3, out=m.empty(3, dtype=m.int64))
        m.arange(1, 4, out=m.empty(3, dtype=m.int64))

    with Ours():
        calls(td)
    with Theirs():
        calls(torch)
    assert ours == theirs
    assert "aten.arange.default" in ours and "aten.arange.out" in ours


def _full(args: tuple[Any, ...], kwargs: dict[str, Any], monkeypatch: Any) -> Any:
    with monkeypatch.context() as m:
        m.setattr(bindings, "_arange_hop", lambda args, dtype: None)
        return _outcome(args, kwargs)


def _outcome(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """What ``td.arange(*args, **kwargs)`` gives: dtype, shape and raw bytes, or the error,
    with the warnings raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            r = td.arange(*args, **kwargs)
            got: Any = (r.dtype, tuple(r.shape), r.stride(), r.numpy().tobytes())
        except Exception as e:  # noqa: BLE001 - compared below
            got = (type(e), str(e))
    return got, [(w.category, str(w.message)) for w in caught]


INTS = [0, 3, -2, 2**62, -(2**63), 2**63 - 1]
FLOATS = [0.0, -0.0, 2.5, -1.5, 0.25, 1e19, math.inf, math.nan]
DTYPES = [None, "int64", "float32", "float64", "float16", "int32", "bool"]


def _grid() -> list[tuple[Any, ...]]:
    """Argument tuples over plain and edge values, without ranges of 10**6 to 10**17
    elements (those would allocate; larger ones fail at once in both paths)."""
    values = INTS + FLOATS
    cases: list[tuple[Any, ...]] = [(v,) for v in values]
    cases += list(itertools.product(values[::2], values[1::2]))
    cases += list(itertools.product([0, -1.5, 2**62], [3, 0.25, math.nan], [1, -0.5, 0, 2]))

    def fine(c: tuple[Any, ...]) -> bool:
        start, end, step = (0, c[0], 1) if len(c) == 1 else (*c, 1)[:3]
        try:
            n = abs((float(end) - float(start)) / float(step))
        except (ZeroDivisionError, OverflowError):
            return True
        return not (1e6 < n < 1e17)

    return [c for c in cases if fine(c)]


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_hop_is_the_full_dispatch_bit_for_bit(dtype: str | None, monkeypatch: Any) -> None:
    kwargs = {} if dtype is None else {"dtype": getattr(td, dtype)}
    hopped = 0
    for args in _grid():
        if fast.arange(args, kwargs.get("dtype")) is not None:
            hopped += 1
        assert _outcome(args, kwargs) == _full(args, kwargs, monkeypatch), args
    assert hopped > (10 if dtype in (None, "int64", "float32", "float64", "float16") else -1)


def test_the_hop_answers_for_plain_numbers_only() -> None:
    assert fast.arange((5,), None).tolist() == [0, 1, 2, 3, 4]  # type: ignore[union-attr]
    assert fast.arange((1, 2.0, 0.5), td.float64).dtype is td.float64  # type: ignore[union-attr]
    for args, dtype in [
        ((True,), None), ((np.int64(3),), None), ((np.float32(3),), None),
        ((td.tensor(3),), None), ((2**63,), None), ((1, -(2**63) - 1), None), ((), None),
        ((1, 2, 3, 4), None), ((3,), td.int32), ((3,), td.bool), ((3,), td.complex64),
        ((3,), "float32"), ((math.nan,), None),
    ]:  # fmt: skip
        assert fast.arange(args, dtype) is None, (args, dtype)


def test_no_hop_under_other_words() -> None:
    assert below_ad_inplace_or_view(fast.arange, (3,), None) is None
    with td.inference_mode():
        assert fast.arange((3,), None) is None
        got = td.arange(3)
    with torch.inference_mode():
        expected = torch.arange(3)
    assert got.is_inference() is expected.is_inference() is True
    assert fast.arange((3,), None) is not None


@pytest.mark.parametrize("transform", ["functionalize", "vmap"])
def test_no_hop_inside_a_transform(transform: str) -> None:
    seen: list[Any] = []

    def f(m: Any, x: Any) -> Any:
        if m is td:
            seen.append(fast.arange((2,), None))
        return x * m.arange(2.0) + m.arange(1, 3)

    def run(m: Any) -> Any:
        wrap = getattr(m.func, transform)
        return wrap(lambda x: f(m, x))(m.ones(3, 2) if transform == "vmap" else m.ones(2))

    assert run(td).tolist() == run(torch).tolist()
    assert seen == [None]


@pytest.mark.parametrize(
    ("name", "key", "args"),
    [
        ("arange", "CPU", (4,)),
        ("arange", "CompositeExplicitAutograd", (4.0,)),
        ("arange.start", "CompositeExplicitAutograd", (1, 5)),
        ("arange.start_step", "BackendSelect", (1, 9, 2)),
    ],
)
def test_a_user_kernel_registered_later_is_called(
    lib: Library, name: str, key: str, args: tuple[Any, ...]
) -> None:
    assert fast.arange(args, None) is not None
    seen: list[Any] = []

    def mine(*given: Any, **kwargs: Any) -> Any:
        seen.append(given)
        return td.from_numpy(np.full(3, 7, np.int64))

    impl_quietly(lib, name, mine, key)
    assert fast.arange(args, None) is None
    assert td.arange(*args).tolist() == [7, 7, 7] and seen == [args]
    lib._destroy()
    assert td.arange(*args).tolist() == torch.arange(*args).tolist()
    assert fast.arange(args, None) is not None


@pytest.mark.parametrize("name", ["arange.start_out", "empty.memory_format"])
def test_a_user_kernel_of_an_inner_operator_is_called(lib: Library, name: str) -> None:
    seen: list[Any] = []
    inner = {"arange.start_out": arange_start_out, "empty.memory_format": empty_cpu}[name]

    def mine(*given: Any, **kwargs: Any) -> Any:
        seen.append(name)
        return inner(*given, **kwargs)

    impl_quietly(lib, name, mine, "CPU")
    assert fast.arange((4,), None) is None
    assert td.arange(4).tolist() == [0, 1, 2, 3] and seen == [name]


def test_a_trace_shows_every_hop_of_arange() -> None:
    td.arange(3.0)
    td.arange(0, 6, 2)
    with dispatch_trace() as binding:
        td.arange(3.0)
        td.arange(0, 6, 2)
    with dispatch_trace() as full:  # the operators called as the binding's full path does
        below_ad_inplace_or_view(op("arange"), 3.0)
        below_ad_inplace_or_view(op("arange.start_step"), 0, 6, 2)
    hops = [(h.op, h.key.name, h.depth) for h in binding.hops]
    assert hops == [(h.op, h.key.name, h.depth) for h in full.hops]
    assert [h[0] for h in hops][:2] == ["aten::arange", "aten::arange"]
    assert fast.arange((3.0,), None) is not None  # plain states again


def test_a_dispatch_mode_sees_arange_as_torch_does() -> None:
    ours, theirs, Ours, Theirs = recording_modes()
    with Ours():
        td.arange(5), td.arange(2.0, 3.0), td.arange(0, 1, 0.5, dtype=td.float64)
    with Theirs():
        torch.arange(5), torch.arange(2.0, 3.0), torch.arange(0, 1, 0.5, dtype=torch.float64)
    assert ours == theirs


ARGUMENT_ERRORS = [
    "()", "(1, 2, 3, 4)", "(start=4)", "(step=2)", "(dtype=M.float32)",
    "(start=4, dtype=M.float64)",
    "(step=2, end=5)", "(5, step=2)", "(1, 2, end=3)", "(1, 2, 3, step=1)", "(1, 2, start=0)",
    "(3, dtype='x')", "('a')", "(None)", "(1, 'b')", "(1, end='b')", "(end='b')",
    "(1, 2, dtype=5)", "(4, out=5)",
]  # fmt: skip


@pytest.mark.parametrize("call", ARGUMENT_ERRORS)
def test_argument_errors_are_torchs(call: str) -> None:
    texts = []
    for M in (td, torch):
        with pytest.raises(TypeError) as info:
            eval(f"M.arange{call}")
        texts.append(str(info.value))
    assert texts[0] == texts[1]


def test_an_argument_error_message() -> None:
    with pytest.raises(TypeError) as info:
        td.arange(start=4)
    assert str(info.value) == 'arange() missing 1 required positional arguments: "end"'


KEYWORD_CALLS = [
    "(1, end=5)", "(1, end=5, step=2)", "(start=1, end=7, step=2)", "(end=4)",
    "(1, 2, step=0.5)", "(end=5, dtype=M.float64)",
]  # fmt: skip


@pytest.mark.parametrize("call", KEYWORD_CALLS)
def test_keyword_numbers_match_torch(call: str) -> None:
    got = eval(f"td.arange{call}".replace("M.", "td."))
    expected = eval(f"torch.arange{call}".replace("M.", "torch."))
    assert _name(got.dtype) == _name(expected.dtype) and got.tolist() == expected.tolist()


@pytest.mark.parametrize(
    "call",
    [lambda m: m.arange(3, requires_grad=True), lambda m: m.randint(3, (2,), requires_grad=True)],
)
def test_requires_grad_of_an_integral_result_is_refused_in_torchs_words(call: Any) -> None:
    with pytest.raises(RuntimeError) as ours:
        call(td)
    with pytest.raises(RuntimeError) as theirs:
        call(torch)
    assert str(ours.value) == str(theirs.value)
    assert (
        str(ours.value) == "Only Tensors of floating point and complex dtype can require gradients"
    )


def test_the_cpu_device_takes_the_hop_with_the_full_paths_result(monkeypatch: Any) -> None:
    calls: list[Any] = []
    real = bindings._arange_hop

    def spy(args: Any, dtype: Any) -> Any:
        calls.append(args)
        return real(args, dtype)

    monkeypatch.setattr(bindings, "_arange_hop", spy)
    for device in ("cpu", td.device("cpu")):
        got, expected = td.arange(1.0, 4.0, device=device), torch.arange(1.0, 4.0, device="cpu")
        assert got.device.type == "cpu" and got.tolist() == expected.tolist()
    td.arange(3, device="meta")
    with pytest.raises(TypeError):  # not compared with "cpu" elementwise: the entry refuses it
        td.arange(3, device=np.array(["cpu"]))
    assert calls == [(1.0, 4.0), (1.0, 4.0)]
