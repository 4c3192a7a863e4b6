"""The one-hop factory bindings (Note [One-hop factory bindings] in
backends/composite_fast.py): results equal to torch's, and every registration, mode, trace
or word change that must send the binding back to the full dispatch."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch.backends import composite_fast as fast
from tensordispatch.backends.aten import below_ad_inplace_or_view, op
from tensordispatch.dispatch import dispatch_trace
from tensordispatch.dispatch.calling import NOT_GIVEN
from tensordispatch.library import Library

from .overrides import impl_quietly
from .recording_modes import recording_modes


@pytest.fixture(autouse=True)
def _seen_shapes() -> None:
    """The hops take shapes empty has seen: see the ones used here."""
    for size in ([2, 3], [3], [4, 4], [], [0, 3]):
        td.empty(size)
    td.empty_strided([2, 3], [3, 1])
    td.empty_strided([4, 4], [4, 1])


FACTORIES = {
    "zeros": lambda m: m.zeros(2, 3),
    "zeros tuple": lambda m: m.zeros((2, 3)),
    "zeros size=": lambda m: m.zeros(size=[2, 3]),
    "zeros Size": lambda m: m.zeros(m.ones(2, 3).shape),
    "zeros 0-d": lambda m: m.zeros(()),
    "zeros empty": lambda m: m.zeros(0, 3),
    "zeros int64": lambda m: m.zeros(2, 3, dtype=m.int64),
    "zeros bool": lambda m: m.zeros(3, dtype=m.bool),
    "zeros complex": lambda m: m.zeros(3, dtype=m.complex64),
    "ones": lambda m: m.ones(4, 4),
    "ones int8": lambda m: m.ones(3, dtype=m.int8),
    "ones float64": lambda m: m.ones([2, 3], dtype=m.float64),
    "empty filled": lambda m: m.empty(2, 3).fill_(2.5),
    "empty int32": lambda m: m.empty(3, dtype=m.int32).fill_(4),
    "empty_strided": lambda m: m.empty_strided((2, 3), (3, 1)).fill_(1),
    "empty_strided lists": lambda m: m.empty_strided([4, 4], [4, 1]).fill_(1),
    "empty_strided f64": lambda m: m.empty_strided((2, 3), (3, 1), dtype=m.float64).fill_(1),
}


@pytest.mark.parametrize("name", list(FACTORIES))
def test_one_hop_results_match_torch(name: str) -> None:
    got, expected = FACTORIES[name](td), FACTORIES[name](torch)
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(expected.shape)
    assert got.stride() == expected.stride()
    assert got.storage_offset() == expected.storage_offset() == 0
    assert got.requires_grad is expected.requires_grad is False
    assert got.is_leaf and got.grad_fn is None
    assert torch.equal(torch.from_numpy(got.numpy().copy()), expected)


@pytest.mark.parametrize("name", ["zeros", "ones"])
def test_fresh_factories_keep_version_zero_as_torch(name: str) -> None:
    got, expected = getattr(td, name)(2, 3), getattr(torch, name)(2, 3)
    assert got._version == expected._version == 0


def test_requires_grad_is_applied_after_the_hop() -> None:
    got = td.zeros(2, 3, requires_grad=True)
    expected = torch.zeros(2, 3, requires_grad=True)
    assert got.requires_grad is expected.requires_grad is True
    assert got.is_leaf and got.grad_fn is None
    (got * 2).sum().backward()
    assert got.grad is not None and got.grad.tolist() == [[2.0] * 3] * 2


def test_the_hops_answer_for_plain_arguments_only() -> None:
    assert fast.zeros([2, 3], NOT_GIVEN).tolist() == [[0.0] * 3] * 2
    assert fast.zeros((2, 3), td.int64).dtype is td.int64
    assert fast.zeros([2.0, 3], NOT_GIVEN) is None  # the entry converts or rejects
    assert fast.zeros([True, 3], NOT_GIVEN) is None
    assert fast.zeros([np.int64(2), 3], NOT_GIVEN) is None
    assert fast.zeros(iter([2, 3]), NOT_GIVEN) is None  # not consumed here
    assert fast.zeros([2, 3], "float32") is None
    assert fast.zeros([2, -3], NOT_GIVEN) is None  # never a kept shape: the error is dispatch's
    assert fast.empty_strided([2, 3], [3, 1.0], NOT_GIVEN) is None
    assert fast.empty_strided([2, 3], [1, 2], NOT_GIVEN) is None  # not a kept plan


def test_no_hop_under_other_words() -> None:
    assert below_ad_inplace_or_view(fast.zeros, [2, 3], NOT_GIVEN) is None
    with td.inference_mode():
        assert fast.ones([2, 3], NOT_GIVEN) is None
        got = td.ones(2, 3)
    with torch.inference_mode():
        expected = torch.ones(2, 3)
    assert got.is_inference() is expected.is_inference() is True


def test_a_user_cpu_kernel_registered_later_is_called(lib: Library) -> None:
    assert fast.zeros([2, 3], NOT_GIVEN) is not None
    seen: list[Any] = []

    def my_zeros(size: Any, **kwargs: Any) -> Any:
        seen.append((list(size), kwargs))
        return td.from_numpy(np.full(list(size), 5.0, np.float32))

    impl_quietly(lib, "zeros", my_zeros, "CPU")
    assert fast.zeros([2, 3], NOT_GIVEN) is None
    z = td.zeros(2, 3)
    assert seen == [([2, 3], {})] and z.tolist() == [[5.0] * 3] * 2
    lib._destroy()
    assert td.zeros(2, 3).tolist() == [[0.0] * 3] * 2
    assert fast.zeros([2, 3], NOT_GIVEN) is not None


def test_a_user_backend_select_kernel_is_called(lib: Library) -> None:
    seen: list[Any] = []

    def my_select(size: Any, stride: Any, **kwargs: Any) -> Any:
        seen.append((list(size), list(stride)))
        return td.from_numpy(np.zeros(list(size), np.float32))

    impl_quietly(lib, "empty_strided", my_select, "BackendSelect")
    t = td.empty_strided((2, 3), (3, 1))
    assert seen == [([2, 3], [3, 1])] and t.tolist() == [[0.0] * 3] * 2


def test_a_user_fill_kernel_is_called_by_ones(lib: Library) -> None:
    seen: list[Any] = []

    def my_fill(self: Any, value: Any) -> Any:
        seen.append(value)
        self._data[...] = 7
        return self

    impl_quietly(lib, "fill_.Scalar", my_fill, "CPU")
    assert fast.ones([3], NOT_GIVEN) is None
    assert td.ones(3).tolist() == [7.0] * 3 and seen == [1]


def test_a_user_composite_kernel_registered_later_is_called(lib: Library) -> None:
    seen: list[Any] = []

    def my_ones(size: Any, **kwargs: Any) -> Any:
        seen.append(list(size))
        return td.from_numpy(np.full(list(size), 3.0, np.float32))

    impl_quietly(lib, "ones", my_ones, "CompositeExplicitAutograd")
    assert fast.ones([2, 3], NOT_GIVEN) is None
    got = td.ones(2, 3)
    assert seen == [[2, 3]] and got.tolist() == [[3.0] * 3] * 2
    lib._destroy()
    assert fast.ones([2, 3], NOT_GIVEN) is not None


def test_a_dispatch_mode_sees_the_factories_as_torch_does() -> None:
    ours, theirs, Ours, Theirs = recording_modes()

    def calls(m: Any) -> None:
        m.zeros(2, 3), m.ones(3), m.empty(2, 3), m.empty_strided((2, 3), (3, 1))

    with Ours():
        calls(td)
    with Theirs():
        calls(torch)
    assert ours == theirs


def test_a_trace_shows_every_hop_of_a_one_hop_factory() -> None:
    td.empty_strided((2, 3), (3, 1))  # the hop has answered yes for these states
    with dispatch_trace() as binding:
        td.empty_strided((2, 3), (3, 1))
        td.ones(3)
    with dispatch_trace() as full:  # the operators called as the binding's full path does
        below_ad_inplace_or_view(op("empty_strided"), [2, 3], [3, 1])
        below_ad_inplace_or_view(op("ones"), [3])
    hops = [(h.op, h.key.name, h.depth) for h in binding.hops]
    assert hops == [(h.op, h.key.name, h.depth) for h in full.hops]
    assert [h[0] for h in hops] == [
        "aten::empty_strided", "aten::empty_strided",
        "aten::ones", "aten::ones",
        "aten::empty.memory_format", "aten::empty.memory_format",
        "aten::fill_.Scalar",
    ]  # fmt: skip
    assert fast.ones([3], NOT_GIVEN) is not None  # plain states again


def test_errors_keep_torchs_messages() -> None:
    for call in (lambda m: m.zeros(2, -1), lambda m: m.ones(2, dtype="x")):
        with pytest.raises((RuntimeError, TypeError)) as ours:
            call(td)
        with pytest.raises((RuntimeError, TypeError)) as theirs:
            call(torch)
        assert type(ours.value) is type(theirs.value)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(RuntimeError) as info:
        td.zeros(2, -1)
    assert str(info.value) == "zeros: Dimension size must be non-negative."


def test_out_and_options_take_the_full_dispatch() -> None:
    out = td.ones(2, 3)
    assert td.zeros(2, 3, out=out) is out and out._version == 1
    t = td.zeros(2, 3, device="meta")
    assert t.device.type == "meta" and tuple(t.shape) == (2, 3)


LIKE = {
    "zeros_like": lambda m: m.zeros_like(m.ones(2, 3)),
    "ones_like transposed": lambda m: m.ones_like(m.ones(2, 3).t()),
    "ones_like sliced": lambda m: m.ones_like(m.ones(4, 4)[:, ::2]),
    "zeros_like int64": lambda m: m.zeros_like(m.ones(3, dtype=m.int64)),
    "ones_like expanded": lambda m: m.ones_like(m.ones(3, 1).expand(3, 4)),
    "zeros_like of a grad leaf": lambda m: m.zeros_like(m.ones(2, requires_grad=True)),
    "ones_like requires_grad": lambda m: m.ones_like(m.ones(2), requires_grad=True),
    "empty_like filled": lambda m: m.empty_like(m.ones(2, 3).t()).fill_(2),
    "zeros_like 0-d": lambda m: m.zeros_like(m.ones(())),
}


@pytest.mark.parametrize("name", list(LIKE))
def test_like_hops_match_torch(name: str) -> None:
    got, expected = LIKE[name](td), LIKE[name](torch)
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(expected.shape)
    assert got.stride() == expected.stride()
    assert got._version == expected._version
    assert got.requires_grad is expected.requires_grad
    assert got.is_leaf and got.grad_fn is None
    assert torch.equal(torch.from_numpy(got.detach().numpy().copy()), expected.detach())


def test_like_hops_answer_for_plain_cpu_tensors_only() -> None:
    t = td.ones(2, 3)
    assert fast.ones_like(t).tolist() == [[1.0] * 3] * 2
    assert fast.ones_like(td.ones(2, device="meta")) is None
    assert fast.ones_like(3) is None
    with td.inference_mode():
        assert fast.zeros_like(t) is None
    assert below_ad_inplace_or_view(fast.empty_like, t) is None


def test_a_user_kernel_registered_later_is_called_by_ones_like(lib: Library) -> None:
    seen: list[Any] = []

    def my_ones_like(self: Any, **kwargs: Any) -> Any:
        seen.append(tuple(self.shape))
        return td.from_numpy(np.full(tuple(self.shape), 4.0, np.float32))

    t = td.ones(2, 3)
    assert fast.ones_like(t) is not None
    impl_quietly(lib, "ones_like", my_ones_like, "CPU")
    assert fast.ones_like(t) is None
    assert td.ones_like(t).tolist() == [[4.0] * 3] * 2 and seen == [(2, 3)]
    lib._destroy()
    assert fast.ones_like(t) is not None


def test_a_user_fill_kernel_is_called_by_zeros_like(lib: Library) -> None:
    seen: list[Any] = []

    def my_fill(self: Any, value: Any) -> Any:
        seen.append(value)
        self._data[...] = 7
        return self

    t = td.ones(2, 3)
    impl_quietly(lib, "fill_.Scalar", my_fill, "CPU")
    assert fast.zeros_like(t) is None
    assert td.zeros_like(t).tolist() == [[7.0] * 3] * 2 and seen == [0]


def test_a_trace_shows_every_hop_of_ones_like(monkeypatch: Any) -> None:
    from tensordispatch.generated import functions

    t = td.ones(2, 3)
    td.ones_like(t)
    with dispatch_trace() as binding:
        td.ones_like(t)
    monkeypatch.setattr(functions, "_H_ones_like", lambda t: None)
    with dispatch_trace() as full:  # the binding's full path, its one hop off
        td.ones_like(t)
    monkeypatch.undo()
    hops = [(h.op, h.key.name, h.depth) for h in binding.hops]
    assert hops == [(h.op, h.key.name, h.depth) for h in full.hops]
    assert hops[0][0] == "aten::ones_like" and "aten::fill_.Scalar" in [h[0] for h in hops]
    assert fast.ones_like(t) is not None


def test_a_dispatch_mode_sees_the_like_factories_as_torch_does() -> None:
    ours, theirs, Ours, Theirs = recording_modes()

    t, tt = td.ones(2, 3), torch.ones(2, 3)
    with Ours():
        td.zeros_like(t), td.ones_like(t), td.empty_like(t)
    with Theirs():
        torch.zeros_like(tt), torch.ones_like(tt), torch.empty_like(tt)
    assert ours == theirs


def test_the_like_hops_recognise_the_default_autograd_kernel() -> None:
    from tensordispatch.autograd.manual import _fresh_factory_kernel

    assert fast._is_fresh_factory_kernel(_fresh_factory_kernel)
    assert not fast._is_fresh_factory_kernel(lambda: None)
    for name in ("zeros_like", "ones_like", "empty_like"):
        assert fast.LikeHop(name).ready()


LIKE_DTYPES = ["float32", "float64", "float16", "int64", "int8", "uint8", "bool", "complex64"]
LIKE_SHAPES = [(), (0, 3), (2, 1, 3), (4, 4), (5,)]


@pytest.mark.parametrize("dtype", LIKE_DTYPES)
def test_like_hops_of_contiguous_tensors_match_torch(dtype: str) -> None:
    for shape in LIKE_SHAPES:
        t = td.ones(shape, dtype=getattr(td, dtype))
        tt = torch.ones(shape, dtype=getattr(torch, dtype))
        for name in ("zeros_like", "ones_like", "empty_like"):
            got = getattr(fast, name)(t)
            expected = getattr(torch, name)(tt)
            assert got is not None, (name, shape)
            assert _name_of(got.dtype) == _name_of(expected.dtype)
            assert tuple(got.shape) == tuple(expected.shape), (name, shape)
            assert got.stride() == expected.stride(), (name, shape)
            assert got._version == expected._version == 0
            if name != "empty_like":
                assert torch.equal(torch.from_numpy(got.numpy().copy()), expected)
                assert got.numpy().tobytes() == expected.numpy().tobytes()  # +0.0, not -0.0


def _name_of(dtype: Any) -> str:
    return str(dtype).split(".")[-1]


def test_like_hops_of_strided_tensors_match_the_composite_kernels() -> None:
    from tensordispatch.backends.composite import COMPOSITE_KERNELS

    base = td.arange(24.0).reshape(2, 3, 4)
    for t in (base.permute(2, 0, 1), base[:, ::2], base.expand(2, 2, 3, 4), base.transpose(0, 2)):
        for name in ("zeros_like", "ones_like"):
            got = getattr(fast, name)(t)
            expected = below_ad_inplace_or_view(COMPOSITE_KERNELS[name], t)
            assert got is not None
            assert got.stride() == expected.stride() and got.tolist() == expected.tolist()


def test_empty_strided_hop_takes_plain_int_sequences_only() -> None:
    assert fast.empty_strided((2, 3), (3, 1), NOT_GIVEN) is not None
    got = fast.empty_strided([2, 3], (3, 1), td.float64)
    assert got is not None and got.dtype is td.float64
    for size, stride in [
        ([2.0, 3], [3, 1]), ([2, 3], [3, True]), ([[2], 3], [3, 1]), (iter([2, 3]), [3, 1]),
        ([2, 3], iter([3, 1])), ([np.int64(2), 3], [3, 1]),
    ]:  # fmt: skip
        assert fast.empty_strided(size, stride, NOT_GIVEN) is None, (size, stride)
    with pytest.raises(TypeError) as info:  # the entry's error for an unhashable item
        td.empty_strided([[2], 3], [3, 1])
    with pytest.raises(TypeError) as expected:
        torch.empty_strided([[2], 3], [3, 1])
    assert type(info.value) is type(expected.value)


def test_filled_hops_take_plain_int_sizes_only() -> None:
    assert fast.ones((2, 3), NOT_GIVEN).tolist() == [[1.0] * 3] * 2  # type: ignore[union-attr]
    for size in ([[2], 3], [2, 3.0], (True, 3), [np.int64(2), 3]):
        for hop in (fast.zeros, fast.ones, fast.empty_memory_format):
            assert hop(size, NOT_GIVEN) is None, (hop, size)


@pytest.mark.parametrize("dtype", LIKE_DTYPES)
def test_filled_hops_match_torch_bytes(dtype: str) -> None:
    for size in ([2, 3], [4, 4], [], [0, 3]):
        for name in ("zeros", "ones"):
            got = getattr(fast, name)(size, getattr(td, dtype))
            expected = getattr(torch, name)(size, dtype=getattr(torch, dtype))
            assert got is not None and got.stride() == expected.stride()
            assert got.numpy().tobytes() == expected.numpy().tobytes(), (name, size)


@pytest.mark.parametrize("device", ["cpu", "cpu device"])
def test_the_cpu_device_takes_the_factory_hops(device: str) -> None:
    from tensordispatch.generated import functions

    given = td.device("cpu") if device == "cpu device" else "cpu"
    calls = {
        "zeros": lambda m, d: m.zeros(2, 3, device=d),
        "ones": lambda m, d: m.ones(2, 3, device=d, dtype=m.float64),
        "empty": lambda m, d: m.empty(2, 3, device=d).fill_(2),
        "empty_strided": lambda m, d: m.empty_strided((2, 3), (3, 1), device=d).fill_(3),
    }
    for name, call in calls.items():
        got, expected = call(td, given), call(torch, "cpu")
        assert got.device.type == "cpu" and got.tolist() == expected.tolist(), name
        assert got.stride() == expected.stride() and got._version == expected._version
    hop = {"zeros": functions._H_zeros, "empty_strided": functions._H_empty_strided}
    assert hop["zeros"]([2, 3], NOT_GIVEN, given) is not None
    assert hop["empty_strided"]((2, 3), (3, 1), NOT_GIVEN, given) is not None
    assert fast.zeros([2, 3], NOT_GIVEN, "meta") is None
    assert fast.zeros([2, 3], NOT_GIVEN, "cpu:0") is None
    assert fast.zeros([2, 3], NOT_GIVEN, np.array(["cpu"])) is None
    with pytest.raises(TypeError):  # the entry refuses it, as torch's parser
        td.zeros(2, device=np.array(["cpu"]))


FULL_VALUES = [7, 0, -3, 2.5, -0.0, True, False, float("inf"), float("nan"), 300, 1e300, 2**62]
FULL_VALUES += [0.1, 1e-46, 3.4028234663852886e38, 3.4028235677973366e38, -1e39]  # float32's edges
FULL_DTYPES = [None, "float32", "float64", "float16", "int64", "int32", "int8", "uint8", "bool"]


def _full_outcome(value: Any, dtype: str | None) -> Any:
    kw = {} if dtype is None else {"dtype": getattr(td, dtype)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            r = td.full((2, 3), value, **kw)
            got: Any = (r.dtype, r.stride(), r._version, r.numpy().tobytes())
        except Exception as e:  # noqa: BLE001 - compared below
            got = (type(e), str(e))
    return got, [str(w.message) for w in caught]


@pytest.mark.parametrize("dtype", FULL_DTYPES)
def test_full_hop_is_the_full_dispatch_and_torch(dtype: str | None, monkeypatch: Any) -> None:
    from tensordispatch.generated import functions

    hopped = [_full_outcome(v, dtype) for v in FULL_VALUES]
    monkeypatch.setattr(functions, "_H_full", lambda *args: None)
    assert hopped == [_full_outcome(v, dtype) for v in FULL_VALUES]
    monkeypatch.undo()
    for v in FULL_VALUES:
        kw = {} if dtype is None else {"dtype": getattr(torch, dtype)}
        try:
            expected = torch.full((2, 3), v, **kw)
        except Exception:  # noqa: BLE001 - torch refuses: so do we
            with pytest.raises(Exception):  # noqa: B017
                td.full((2, 3), v, **({} if dtype is None else {"dtype": getattr(td, dtype)}))
            continue
        got = td.full((2, 3), v, **({} if dtype is None else {"dtype": getattr(td, dtype)}))
        assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
        assert got.numpy().tobytes() == expected.numpy().tobytes(), (v, dtype)


def test_full_hop_takes_plain_values_and_honours_a_later_fill(lib: Library) -> None:
    assert fast.full([2, 3], 1.5, NOT_GIVEN) is not None
    for value in (np.float32(1), td.tensor(1.0), 2**63, 1j, "1"):
        assert fast.full([2, 3], value, NOT_GIVEN) is None
    seen: list[Any] = []

    def my_fill(self: Any, value: Any) -> Any:
        seen.append(value)
        self._data[...] = 9
        return self

    impl_quietly(lib, "fill_.Scalar", my_fill, "CPU")
    assert fast.full([2, 3], 1.5, NOT_GIVEN) is None
    assert td.full((2, 3), 1.5).tolist() == [[9.0] * 3] * 2 and seen == [1.5]


def test_full_under_a_mode_and_a_trace(monkeypatch: Any) -> None:
    from tensordispatch.generated import functions

    ours, theirs, Ours, Theirs = recording_modes()
    with Ours():
        td.full((2, 3), 1.5), td.full((2, 3), 7, dtype=td.int32)
    with Theirs():
        torch.full((2, 3), 1.5), torch.full((2, 3), 7, dtype=torch.int32)
    assert ours == theirs
    td.full((2, 3), 1.5)
    with dispatch_trace() as binding:
        td.full((2, 3), 1.5)
    monkeypatch.setattr(functions, "_H_full", lambda *args: None)
    with dispatch_trace() as full:
        td.full((2, 3), 1.5)
    monkeypatch.undo()
    hops = [(h.op, h.key.name, h.depth) for h in binding.hops]
    assert hops == [(h.op, h.key.name, h.depth) for h in full.hops]
    assert hops[0][0] == "aten::full"
    assert fast.full([2, 3], 1.5, NOT_GIVEN) is not None
