"""td.linspace's one hop (backends/composite_fast_arange.py ``linspace``, named by
composite_fast.py for the generated binding; Note [One-hop factory bindings]).

Oracles: the binding's full path with the hop switched off (bytes, dtype, errors); torch 2.13
for results, modes and error texts; a kernel registered later must be called.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch.backends import composite_fast
from tensordispatch.backends import composite_fast_arange as fast
from tensordispatch.backends.aten import below_ad_inplace_or_view, op
from tensordispatch.backends.cpu.kernels import empty_cpu
from tensordispatch.backends.cpu.linspace import linspace_out
from tensordispatch.dispatch import dispatch_trace
from tensordispatch.dispatch.calling import NOT_GIVEN
from tensordispatch.library import Library

from .overrides import impl_quietly
from .recording_modes import recording_modes

BOUNDS = [0, 1, -3, 2**40, 0.5, -2.25, 1e30, math.inf, math.nan, True, 1 + 0j]
STEPS = [0, 1, 2, 5, 2049, 2050, -1]
DTYPES = [None, "float32", "float64", "float16", "int64", "int32", "complex64"]


def _outcome(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    try:
        r = td.linspace(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - compared as type and text
        return (type(e).__name__, str(e))
    return (str(r.dtype), tuple(r.shape), r.stride(), r.numpy().tobytes())


def _full(args: tuple[Any, ...], kwargs: dict[str, Any], monkeypatch: Any) -> Any:
    with monkeypatch.context() as m:
        m.setattr(composite_fast, "_linspace_hop", lambda *a: None)
        return _outcome(args, kwargs)


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # inf bounds, both paths
@pytest.mark.filterwarnings("ignore:Casting complex values")  # complex bounds, both paths
@pytest.mark.parametrize("dtype", DTYPES)
def test_the_hop_is_the_full_dispatch_bit_for_bit(dtype: str | None, monkeypatch: Any) -> None:
    kwargs = {} if dtype is None else {"dtype": getattr(td, dtype)}
    hopped = 0
    for start, end, steps in itertools.product(BOUNDS[::2], BOUNDS[1::2], STEPS):
        args = (start, end, steps)
        if fast.linspace(*args, kwargs.get("dtype", NOT_GIVEN)) is not None:
            hopped += 1
        assert _outcome(args, kwargs) == _full(args, kwargs, monkeypatch), args
    assert hopped > (10 if dtype in (None, "float32", "float64", "float16") else -1)


@pytest.mark.parametrize("dtype", [None, "float32", "float64"])
def test_hopped_results_match_torch(dtype: str | None) -> None:
    kwargs = {} if dtype is None else {"dtype": getattr(td, dtype)}
    theirs_kwargs = {} if dtype is None else {"dtype": getattr(torch, dtype)}
    for start, end, steps in [(0, 1, 5), (-2.5, 7, 2), (3, -3, 4), (0.1, 0.2, 3)]:
        assert fast.linspace(start, end, steps, kwargs.get("dtype", NOT_GIVEN)) is not None
        ours = td.linspace(start, end, steps, **kwargs)
        theirs = torch.linspace(start, end, steps, **theirs_kwargs)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        assert tuple(ours.shape) == tuple(theirs.shape) and ours.stride() == theirs.stride()
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_the_hop_answers_for_plain_numbers_only() -> None:
    assert fast.linspace(0, 1, 3, NOT_GIVEN).tolist() == [0.0, 0.5, 1.0]  # type: ignore[union-attr]
    for args, dtype in [
        ((True, 1, 3), NOT_GIVEN), ((0, np.float32(1), 3), NOT_GIVEN), ((0, 1, 3.0), NOT_GIVEN),
        ((0, 1, np.int64(3)), NOT_GIVEN), ((0, 1j, 3), NOT_GIVEN), ((0, 1, 3), td.int64),
        ((0, 1, 3), "float32"), ((0, 1, 3), None), ((0, 1, 1), NOT_GIVEN),
        ((0, math.nan, 3), NOT_GIVEN), ((td.tensor(0.0), 1, 3), NOT_GIVEN),
    ]:  # fmt: skip
        assert fast.linspace(*args, dtype) is None, (args, dtype)
    assert fast.linspace(0, 1, 3, NOT_GIVEN, "cpu") is not None
    assert fast.linspace(0, 1, 3, NOT_GIVEN, td.device("cpu")) is not None
    assert fast.linspace(0, 1, 3, NOT_GIVEN, "meta") is None


def test_options_and_requires_grad_match_torch() -> None:
    got = td.linspace(0, 1, 4, device="cpu", requires_grad=True)
    expected = torch.linspace(0, 1, 4, device="cpu", requires_grad=True)
    assert got.requires_grad and got.is_leaf and got.tolist() == expected.tolist()
    meta = td.linspace(0, 1, 4, device="meta")
    assert meta.device.type == "meta" and tuple(meta.shape) == (4,)


def test_no_hop_under_other_words() -> None:
    assert below_ad_inplace_or_view(fast.linspace, 0, 1, 3, NOT_GIVEN) is None
    with td.inference_mode():
        assert fast.linspace(0, 1, 3, NOT_GIVEN) is None
        got = td.linspace(0, 1, 3)
    with torch.inference_mode():
        expected = torch.linspace(0, 1, 3)
    assert got.is_inference() is expected.is_inference() is True
    assert fast.linspace(0, 1, 3, NOT_GIVEN) is not None


@pytest.mark.parametrize(
    ("name", "key"),
    [("linspace", "CPU"), ("linspace", "CompositeExplicitAutograd"), ("linspace", "BackendSelect")],
)
def test_a_user_kernel_registered_later_is_called(lib: Library, name: str, key: str) -> None:
    assert fast.linspace(0, 1, 3, NOT_GIVEN) is not None
    seen: list[Any] = []

    def mine(*given: Any, **kwargs: Any) -> Any:
        seen.append(given)
        return td.from_numpy(np.full(3, 7.0, np.float32))

    impl_quietly(lib, name, mine, key)
    assert fast.linspace(0, 1, 3, NOT_GIVEN) is None
    assert td.linspace(0, 1, 3).tolist() == [7.0, 7.0, 7.0] and seen == [(0, 1, 3)]
    lib._destroy()
    assert td.linspace(0, 1, 3).tolist() == torch.linspace(0, 1, 3).tolist()
    assert fast.linspace(0, 1, 3, NOT_GIVEN) is not None


@pytest.mark.parametrize("name", ["linspace.out", "empty.memory_format"])
def test_a_user_kernel_of_an_inner_operator_is_called(lib: Library, name: str) -> None:
    seen: list[Any] = []
    inner = {"linspace.out": linspace_out, "empty.memory_format": empty_cpu}[name]

    def mine(*given: Any, **kwargs: Any) -> Any:
        seen.append(name)
        return inner(*given, **kwargs)

    impl_quietly(lib, name, mine, "CPU")
    assert fast.linspace(0, 1, 3, NOT_GIVEN) is None
    assert td.linspace(0, 1, 3).tolist() == [0.0, 0.5, 1.0] and seen == [name]


def test_a_trace_shows_every_hop_of_linspace() -> None:
    td.linspace(0, 1, 3)
    with dispatch_trace() as binding:
        td.linspace(0, 1, 3)
    with dispatch_trace() as full:  # the operator called as the binding's full path does
        below_ad_inplace_or_view(op("linspace"), 0, 1, 3)
    hops = [(h.op, h.key.name, h.depth) for h in binding.hops]
    assert hops == [(h.op, h.key.name, h.depth) for h in full.hops]
    assert hops[0][0] == "aten::linspace"
    assert fast.linspace(0, 1, 3, NOT_GIVEN) is not None  # plain states again


def test_a_dispatch_mode_sees_linspace_as_torch_does() -> None:
    ours, theirs, Ours, Theirs = recording_modes()
    with Ours():
        td.linspace(0, 1, 5), td.linspace(2.0, 3.0, 3, dtype=td.float64)
    with Theirs():
        torch.linspace(0, 1, 5), torch.linspace(2.0, 3.0, 3, dtype=torch.float64)
    assert ours == theirs


@pytest.mark.parametrize("transform", ["functionalize", "vmap"])
def test_no_hop_inside_a_transform(transform: str) -> None:
    seen: list[Any] = []

    def f(m: Any, x: Any) -> Any:
        if m is td:
            seen.append(fast.linspace(0, 1, 2, NOT_GIVEN))
        return x * m.linspace(0, 1, 2)

    def run(m: Any) -> Any:
        wrap = getattr(m.func, transform)
        return wrap(lambda x: f(m, x))(m.ones(3, 2) if transform == "vmap" else m.ones(2))

    assert run(td).tolist() == run(torch).tolist()
    assert seen == [None]


def test_error_texts_are_torchs() -> None:
    for args in [(0, 1, -1), (0, 1e39, 5)]:
        with pytest.raises(RuntimeError) as theirs:
            torch.linspace(*args)
        with pytest.raises(RuntimeError) as ours:
            td.linspace(*args)
        assert str(ours.value) == str(theirs.value)
    assert str(ours.value) == "value cannot be converted to type float without overflow"
