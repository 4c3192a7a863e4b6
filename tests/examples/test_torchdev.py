"""The torchdev example backend (examples/torchdev): storage in torch tensors, 14 native
kernels from its backend yaml, the CPU fallback for everything else.

The oracle is the same program on tensordispatch's CPU backend (itself conformance-tested
against torch), plus torch directly for the storage facts."""

from __future__ import annotations

import importlib
import pathlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch.codegen.backend_stubs import generate_backend_stubs
from tensordispatch.library import Library

ROOT = pathlib.Path(__file__).resolve().parents[2] / "examples" / "torchdev" / "torchdev"
torchdev: Any = None  # imported by the fixture below, not at collection


@pytest.fixture(scope="module", autouse=True)
def _torchdev_installed() -> Iterator[None]:
    """Install torchdev for this module only: its kernels and PrivateUse1 fallback must not
    leak into other tests' operator tables (importing it installs; uninstall undoes that)."""
    global torchdev
    torchdev = importlib.import_module("torchdev")
    torchdev.install()
    yield
    torchdev.uninstall()


# The module by path: tensordispatch.backends may re-export the function under its name.
cf = importlib.import_module("tensordispatch.backends.boxed_fallback")


@pytest.fixture(autouse=True)
def _fresh_counters() -> Iterator[None]:
    cf.reset_fallback_counts()
    torchdev.reset_stats()
    torchdev.FALLBACK_LOG.clear()
    yield
    cf.reset_fallback_counts()


@pytest.fixture(scope="module")
def extra_ops() -> Iterator[Library]:
    """Operators taking Tensor[] and Tensor? (aten's yaml here has none yet), CPU only."""
    lib = Library("tdexample", "DEF")
    lib.define("weighted_sum(Tensor[] xs, Tensor? weight=None, Tensor? bias=None) -> Tensor")
    lib.define("scale_all(Tensor(a!)[] xs, Scalar s) -> ()")

    def weighted_sum(xs: list[Any], weight: Any = None, bias: Any = None) -> Any:
        out = xs[0]
        for x in xs[1:]:
            out = out + x
        if weight is not None:
            out = out * weight
        if bias is not None:
            out = out + bias
        return out

    def scale_all(xs: list[Any], s: Any) -> None:
        for x in xs:
            x.mul_(td.tensor(s))

    lib.impl("weighted_sum", weighted_sum, "CPU")
    lib.impl("scale_all", scale_all, "CPU")
    yield lib
    lib._destroy()


def program(to: Callable[[Any], Any]) -> list[Any]:
    """A mixed program: native ops, fallback ops, in-place ops on views, Tensor[] and
    Tensor? operators. ``to`` puts a CPU tensor on the device under test."""
    a = to(td.tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]]))
    b = to(td.tensor([[0.5, 0.25, 2.0], [1.0, -1.0, 0.5]]))
    out = []
    c = a + b  # native add.Tensor
    d = (c * b - a) / b  # native mul (functional-only), sub, div
    out += [c, d, d.neg().exp(), a.sum()]
    out += [a.mm(b.t()), td.matmul(a, b.transpose(0, 1))]  # native mm through view kernels
    out += [a.sin(), td.sqrt(a.abs()), a.mean(1), *td.aminmax(a), a.eq(c)]  # fallback
    row = a.select(0, 1)  # in-place on views of backend tensors:
    row.add_(b.select(0, 0))  # native in-place
    a.transpose(0, 1).select(0, 2).mul_(to(td.tensor([10.0, 100.0])))  # synthesized mul_
    td.ops.aten.slice.Tensor(a, 1, 0, 2).sin_()  # fallback sin_ on a slice
    flat = a.view(6)  # native view
    flat.select(0, 5).fill_(7.0)  # fallback fill_ on a view of a view
    out += [a.clone(), flat.clone()]
    o = to(td.zeros(2, 3))
    out += [td.add(a, b, out=o) is o, o.clone()]  # synthesized add.out
    ws = td.ops.tdexample.weighted_sum([a, b, c], weight=b)
    ws2 = td.ops.tdexample.weighted_sum([a, b], None, bias=c)
    td.ops.tdexample.scale_all([a.select(0, 0), b], 2.0)
    out += [ws, ws2, a.clone(), b.clone()]
    return out


def _values(x: Any) -> Any:
    if isinstance(x, torchdev.TorchDevTensor):
        return (str(x.dtype), tuple(x.shape), torchdev.to_cpu_tensor(x).tolist())
    if isinstance(x, td.Tensor):
        return (str(x.dtype), tuple(x.shape), x.tolist())
    return x


def test_mixed_program_matches_cpu(extra_ops: Library) -> None:
    on_device = program(torchdev.to_device)
    on_cpu = program(lambda t: t)
    assert len(on_device) == len(on_cpu) == 20
    for i, (got, want) in enumerate(zip(on_device, on_cpu, strict=True)):
        g, w = _values(got), _values(want)
        if isinstance(w, tuple):
            assert g[:2] == w[:2], i  # dtype and shape
            assert np.allclose(g[2], w[2], rtol=1e-6, equal_nan=True), (i, g, w)
        else:
            assert g == w, i
    assert all(x.device == torchdev.DEVICE for x in on_device if isinstance(x, td.Tensor))


def test_fallback_counters_move_for_non_native_ops_only(extra_ops: Library) -> None:
    program(torchdev.to_device)
    assert cf.fallback_counts("torchdev") == {
        "aten::sin": 1,
        "aten::abs.out": 1,  # abs's composite kernel calls abs.out: seed 001's extra hop
        "aten::sqrt": 1,
        "aten::mean.dim": 1,
        "aten::aminmax": 1,
        "aten::eq.Tensor": 1,
        "aten::sin_": 1,
        "aten::fill_.Scalar": 1,
        "tdexample::weighted_sum": 2,
        "tdexample::scale_all": 1,
    }
    assert torchdev.FALLBACK_LOG[0] == "aten::sin"  # the backend's logging hook ran


def test_one_to_cpu_call_per_fallback(extra_ops: Library) -> None:
    a, b, c = (torchdev.to_device(td.tensor([float(i)])) for i in (1, 2, 3))
    td.ops.tdexample.weighted_sum([a, b], weight=c, bias=None)
    assert torchdev.STATS == {"to_cpu_calls": 1, "to_cpu_tensors": 3, "from_cpu_calls": 1}


def test_written_list_arguments_are_copied_back_in_place(extra_ops: Library) -> None:
    a = torchdev.to_device(td.tensor([[1.0, 2.0], [3.0, 4.0]]))
    row = a.select(0, 1)
    payload = a._data
    td.ops.tdexample.scale_all([row], 3.0)
    assert a._data is payload  # same torch storage, written through the view
    assert payload.tolist() == [[1.0, 2.0], [9.0, 12.0]]


def test_inplace_fallback_returns_the_callers_tensor() -> None:
    x = torchdev.to_device(td.tensor([0.5, 1.0]))
    v = x.view(2)
    r = v.sin_()
    assert r is v
    assert x._data.tolist() == td.tensor([0.5, 1.0]).sin().tolist()  # ran on our CPU


def test_storage_lives_in_torch_and_views_share_it() -> None:
    x = torchdev.to_device(td.tensor([[1.0, 2.0], [3.0, 4.0]]))
    t = x.transpose(0, 1)
    assert isinstance(x._data, torch.Tensor) and isinstance(t._data, torch.Tensor)
    assert t._data.untyped_storage().data_ptr() == x._data.untyped_storage().data_ptr()
    t.select(0, 0).add_(torchdev.to_device(td.tensor([10.0, 10.0])))
    assert x._data.tolist() == [[11.0, 2.0], [13.0, 4.0]]


def test_strict_mode_lists_the_missing_operator() -> None:
    x = torchdev.to_device(td.tensor([1.0]))
    with cf.strict_fallback(), pytest.raises(cf.FallbackStrictError, match="aten::cos"):
        td.cos(x)
    assert td.add(x, x)._data.tolist() == [2.0]  # native kernels are unaffected


def test_view_operator_without_kernel_is_refused() -> None:
    lib = Library("tdexample_view", "DEF")
    lib.define("flat(Tensor(a) x) -> Tensor(a)")
    lib.impl("flat", lambda x: x.view(-1), "CPU")
    try:
        with pytest.raises(cf.FallbackViewError, match='backend "torchdev:0"'):
            td.ops.tdexample_view.flat(torchdev.to_device(td.tensor([1.0])))
    finally:
        lib._destroy()


def test_native_and_synthesized_kernels_are_registered() -> None:
    table = td.ops.aten.mul_.Tensor._entry.kernels
    assert any(k.name == "PrivateUse1" for k in table)  # synthesized from mul.Tensor
    assert len(torchdev.kernels.TorchDevNativeFunctions.__dict__) >= 14


def test_generated_module_is_current() -> None:
    generated = generate_backend_stubs(
        (ROOT / "backend.yaml").read_text(), source_name="backend.yaml"
    )
    assert generated == {
        "privateuse1_native_functions.py": (
            ROOT / "generated" / "privateuse1_native_functions.py"
        ).read_text()
    }
