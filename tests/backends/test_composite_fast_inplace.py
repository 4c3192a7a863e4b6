"""The one-hop in-place methods (Note [One-hop in-place methods] in backends/composite_fast_inplace.py):
results and versions equal to torch's, and every registration, mode, trace, word or
argument that must send the method back to the full dispatch."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch.backends import composite_fast_inplace as hop
from tensordispatch.backends.aten import op
from tensordispatch.dispatch import dispatch_trace
from tensordispatch.library import Library

from .recording_modes import recording_modes


def _pair(m: Any, shape: tuple[int, ...] = (4, 4), dtype: str = "float32") -> tuple[Any, Any]:
    dt = getattr(m, dtype)
    a = m.arange(int(np.prod(shape)), dtype=dt).reshape(shape).clone()
    b = m.full(shape, 3, dtype=dt)
    a.add_(b)  # a version counter made by the full path, as in every later call
    return a, b


def _same(got: Any, expected: Any) -> None:
    assert got.tolist() == expected.tolist()
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    assert got._version == expected._version


# name -> (the call on (module, a, b) from _pair, shape, dtype)
Case = tuple[Callable[[Any, Any, Any], Any], tuple[int, ...], str]
F32 = ((4, 4), "float32")
CASES: dict[str, Case] = {
    "add_ float32": (lambda m, a, b: (a.add_(b), a.add_(b))[1], *F32),
    "add_ int64": (lambda m, a, b: a.add_(b), (3,), "int64"),
    "add_ float64 0-d": (lambda m, a, b: a.add_(b), (), "float64"),
    "add_ int8 wraps": (lambda m, a, b: [a.add_(b) for _ in range(50)][-1], (3,), "int8"),
    "add_ inf": (lambda m, a, b: a.add_(m.full(a.shape, float("inf"))), *F32),
    "add_ broadcast": (lambda m, a, b: a.add_(b[0]), *F32),
    "add_ number": (lambda m, a, b: a.add_(2), *F32),
    "add_ alpha": (lambda m, a, b: a.add_(b, alpha=2), *F32),
    "add_ other dtype": (lambda m, a, b: a.add_(b.to(m.int32)), *F32),
    "add_ bool": (lambda m, a, b: a.add_(b), (3,), "bool"),
    "add_ complex": (lambda m, a, b: a.add_(b), (3,), "complex64"),
    "add_ transposed": (lambda m, a, b: a.t().add_(b), *F32),
    "add_ to itself": (lambda m, a, b: a.add_(a), *F32),
    "copy_": (lambda m, a, b: a.copy_(b), *F32),
    "copy_ twice": (lambda m, a, b: (a.copy_(b), a.copy_(b * 2))[1], *F32),
    "copy_ into a view": (lambda m, a, b: (a[1].copy_(b[0]), a)[1], *F32),
    "copy_ from a view": (lambda m, a, b: a[0].copy_(a[1]), *F32),
    "copy_ broadcast": (lambda m, a, b: a.copy_(b[0]), *F32),
    "copy_ other dtype": (lambda m, a, b: a.copy_(b.to(m.int64)), *F32),
    "copy_ to itself": (lambda m, a, b: a.copy_(a), *F32),
    "copy_ expanded self": (lambda m, a, b: m.ones(4, 1).expand(4, 4).copy_(b), *F32),
}


def _run(name: str, m: Any) -> Any:
    call, shape, dtype = CASES[name]
    return call(m, *_pair(m, shape, dtype))


@pytest.mark.parametrize("name", list(CASES))
def test_results_and_versions_match_torch(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            expected = _run(name, torch)
        except RuntimeError as e:
            with pytest.raises(RuntimeError) as ours:
                _run(name, td)
            assert str(ours.value) == str(e)
            return
    _same(_run(name, td), expected)


def test_a_view_sees_the_bump_of_its_base() -> None:
    def run(m: Any) -> tuple[int, int]:
        a, b = _pair(m)
        v = a[0]
        a.copy_(b)
        a.add_(b)
        return v._version, a._version

    assert run(td) == run(torch) == (3, 3)


def test_the_hops_answer_for_the_plain_case_only() -> None:
    a, b = _pair(td)
    assert hop.add_(a, b) is a and hop.copy_(a, b) is a
    assert hop.add_(a, b[0]) is None and hop.copy_(a, b[0]) is None  # broadcast
    assert hop.add_(a, b.to(td.float64)) is None
    assert hop.add_(a[0], b[0]) is None  # a view: the kernel's checked path
    assert hop.add_(a, 2) is None and hop.copy_(a, 2) is None
    fresh = td.ones(4, 4)
    assert hop.add_(fresh, b) is None and hop.copy_(fresh, b) is None  # no counter yet
    assert hop.add_(a, b.requires_grad_(True)) is None
    with td.inference_mode():
        assert hop.add_(a, td.ones(4, 4)) is None


def test_gradients_are_recorded_by_the_full_path() -> None:
    def run(m: Any) -> tuple[str, list[list[float]]]:
        a, _ = _pair(m)
        w = m.ones(4, 4, requires_grad=True)
        c = a * 1.0
        c.add_(w)
        c.sum().backward()
        return type(c.grad_fn).__name__, w.grad.tolist()

    assert run(td) == run(torch)


def test_inplace_on_an_inference_tensor_keeps_torchs_error() -> None:
    def run(m: Any) -> str:
        with m.inference_mode():
            a = m.ones(2)
        with pytest.raises(RuntimeError) as info:
            a.add_(m.ones(2))
        return str(info.value)

    assert run(td) == run(torch)


@pytest.mark.parametrize("key", ["CPU", "AutogradCPU", "ADInplaceOrView"])
def test_a_kernel_registered_later_is_called(lib: Library, key: str) -> None:
    seen: list[str] = []

    def my_add_(self: Any, other: Any, **kwargs: Any) -> Any:
        seen.append(key)
        self._data[...] = 9
        return self

    a, b = _pair(td)
    assert hop.add_(a, b) is a
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lib.impl("add_.Tensor", my_add_, key)
    assert hop.add_(a, b) is None
    assert a.add_(b) is a and seen == [key] and a.tolist() == [[9.0] * 4] * 4
    lib._destroy()
    assert hop.add_(a, b) is a


def test_a_dispatch_mode_sees_the_methods_as_torch_does() -> None:
    ours, theirs, Ours, Theirs = recording_modes()

    a, b = _pair(td)
    ta, tb = _pair(torch)
    with Ours():
        a.add_(b), a.copy_(b)
    with Theirs():
        ta.add_(tb), ta.copy_(tb)
    assert ours == theirs == ["aten.add_.Tensor", "aten.copy_.default"]
    assert a.tolist() == ta.tolist() and a._version == ta._version


def test_a_trace_shows_every_hop() -> None:
    a, b = _pair(td)
    a.add_(b)
    with dispatch_trace() as method:
        a.add_(b)
        a.copy_(b)
    with dispatch_trace() as full:
        op("add_.Tensor")(a, b)
        op("copy_")(a, b)
    hops = [(h.op, h.key.name, h.depth) for h in method.hops]
    assert hops == [(h.op, h.key.name, h.depth) for h in full.hops]
    assert [h[1] for h in hops] == ["AutogradCPU", "ADInplaceOrView", "CPU"] * 2
    assert hop.add_(a, b) is a  # plain states again


@pytest.mark.parametrize("transform", ["functionalize", "vmap"])
def test_no_hop_inside_a_transform(transform: str) -> None:
    from tensordispatch.backends import composite_fast as fast
    from tensordispatch.dispatch.calling import NOT_GIVEN

    seen: list[Any] = []

    def f(m: Any, x: Any) -> Any:
        if m is td:
            seen.append((fast.zeros([2], NOT_GIVEN), fast.ones_like(x), hop.add_(x, x)))
        y = x.clone()
        y.add_(m.ones_like(x))
        y.copy_(y * 2)
        return y + m.zeros(2)

    def run(m: Any) -> Any:
        wrap = getattr(m.func, transform)
        return wrap(lambda x: f(m, x))(m.ones(3, 2) if transform == "vmap" else m.ones(2))

    assert run(td).tolist() == run(torch).tolist()
    assert seen == [(None, None, None)]
