"""Inference tensors against torch 2.13 (tensor/inference.py, Note [Inference tensors]):
what is one, their key sets, versions, in-place writes, saving for backward, requires_grad."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import DispatchKeySet

SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `tensordispatch.no_grad()` "
    "instead of `tensordispatch.inference_mode()`."
)
INPLACE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details."
)


def _outcome(fn: Callable[[], Any]) -> tuple[str, str]:
    """The exception raised, its message naming ``tensordispatch.`` where torch's names
    ``torch.`` (docs/AUTOGRAD.md), or ok."""
    try:
        fn()
    except RuntimeError as e:
        return ("RuntimeError", str(e).replace("`torch.", "`tensordispatch."))
    return ("ok", "")


# -- which tensors are inference tensors ---------------------------------------------------

_MADE_INSIDE: dict[str, Callable[[Any, Any], Any]] = {
    "factory": lambda m, x: m.ones(3),
    "tensor": lambda m, x: m.tensor([1.0, 2.0]),
    "from_numpy": lambda m, x: m.from_numpy(np.ones(3)),
    "binary": lambda m, x: x + x,
    "binary_scalar": lambda m, x: x * 2,
    "unary": lambda m, x: x.exp(),
    "neg": lambda m, x: -x,
    "broadcast": lambda m, x: x + m.ones(2, 3),
    "reduction": lambda m, x: x.sum(),
    "relu": lambda m, x: m.relu(x),
    "matmul": lambda m, x: x @ x,
    "clone": lambda m, x: x.clone(),
    "to_dtype": lambda m, x: x.to(m.float64),
    "view_of_normal": lambda m, x: x.view(3),
    "slice_of_normal": lambda m, x: x[1:],
    "transpose_of_normal": lambda m, x: x.view(1, 3).t(),
    "detach_of_normal": lambda m, x: x.detach(),
}


@pytest.mark.parametrize("name", list(_MADE_INSIDE))
def test_made_inside_inference_mode_is_inference_as_torch(name: str) -> None:
    def made(m: Any) -> bool:
        x = m.ones(3)
        with m.inference_mode():
            r = _MADE_INSIDE[name](m, x)
        return bool(r.is_inference())

    assert made(td) == made(torch)


@pytest.mark.parametrize("name", ["view", "slice", "detach", "transpose"])
def test_views_of_inference_tensors_are_inference_outside_too(name: str) -> None:
    make = {
        "view": lambda t: t.view(3),
        "slice": lambda t: t[1:],
        "detach": lambda t: t.detach(),
        "transpose": lambda t: t.view(1, 3).t(),
    }[name]

    def made(m: Any) -> bool:
        with m.inference_mode():
            a = m.ones(3)
        return bool(make(a).is_inference())

    assert made(td) == made(torch) is True


# clone is left out: torch's clone of an inference tensor is at version 1 (its copy_ runs
# through ADInplaceOrView, not excluded as under an autograd kernel); ours is at 0.
def _view_fields(m: Any) -> tuple[Any, ...]:
    with m.inference_mode():
        a = m.arange(6.0)
        v = a.view(2, 3)[1]
        w = v[1:]
        w.mul_(10)  # writes reach the root's storage
    return (
        v._base is None,
        v._is_view(),
        w._base is None,
        w.storage_offset(),
        a.tolist(),
        w.detach()._base is None,
    )


def test_views_of_inference_tensors_are_no_views_as_torch() -> None:
    assert _view_fields(td) == _view_fields(torch)
    assert _view_fields(td)[:2] == (True, False)


@pytest.mark.parametrize("op", ["mul_scalar", "add_normal", "exp"])
def test_functional_ops_outside_make_normal_tensors(op: str) -> None:
    fn = {
        "mul_scalar": lambda m, a: a * 2,
        "add_normal": lambda m, a: a + m.ones(3),
        "exp": lambda m, a: a.exp(),
    }[op]

    def made(m: Any) -> tuple[bool, int]:
        with m.inference_mode():
            a = m.ones(3)
        r = fn(m, a)
        return (bool(r.is_inference()), r._version)

    assert made(td) == made(torch) == (False, 0)


def test_normal_modes_do_not_make_inference_tensors() -> None:
    def made(m: Any) -> list[bool]:
        with m.no_grad():
            a = m.ones(1)
        with m.inference_mode(), m.inference_mode(False):
            b = m.ones(1)
        with m.inference_mode(False):
            c = m.ones(1)
        return [a.is_inference(), b.is_inference(), c.is_inference(), m.ones(1).is_inference()]

    assert made(td) == made(torch) == [False] * 4


def test_inference_tensor_key_set_has_no_autograd_keys_as_torch() -> None:
    with td.inference_mode():
        a = td.ones(3)
    with torch.inference_mode():
        ta = torch.ones(3)
    theirs = str(torch._C._dispatch_keys(ta))
    ours = DispatchKeySet.from_raw(a._key_set)
    assert theirs == "DispatchKeySet(CPU, AutocastCPU)"
    assert not ours.has(DispatchKey.ADInplaceOrView)
    assert not ours.has(DispatchKey.AutogradCPU)
    assert ours.has(DispatchKey.CPU)


def test_another_thread_is_not_in_inference_mode() -> None:
    seen: list[bool] = []
    inside, done = threading.Event(), threading.Event()

    def other() -> None:
        inside.wait()
        seen.append(td.ones(1).is_inference())
        done.set()

    thread = threading.Thread(target=other)
    thread.start()
    with td.inference_mode():
        inside.set()
        done.wait()
        seen.append(td.ones(1).is_inference())
    thread.join()
    assert seen == [False, True]


# -- versions and in-place writes -------------------------------------------------------------


def _version_outcome(m: Any, inside: bool, view: bool) -> tuple[str, str]:
    with m.inference_mode():
        a = m.ones(3)
    t = a[1:] if view else a
    if inside:
        with m.inference_mode():
            return _outcome(lambda: t._version)
    return _outcome(lambda: t._version)


@pytest.mark.parametrize("inside", [False, True])
@pytest.mark.parametrize("view", [False, True])
def test_version_of_an_inference_tensor_raises_as_torch(inside: bool, view: bool) -> None:
    ours, theirs = _version_outcome(td, inside, view), _version_outcome(torch, inside, view)
    assert ours == theirs == ("RuntimeError", "Inference tensors do not track version counter.")


_INPLACE: dict[str, Callable[[Any, Any], Any]] = {
    "add_": lambda m, a: a.add_(1),
    "mul_tensor": lambda m, a: a.mul_(m.ones(3)),
    "zero_": lambda m, a: a.zero_(),
    "copy_": lambda m, a: a.copy_(m.ones(3)),
    "setitem": lambda m, a: a.__setitem__(0, 5.0),
    "view_add_": lambda m, a: a[1:].add_(1),
    "out=": lambda m, a: m.add(m.ones(3), m.ones(3), out=a),
}


_INPLACE_OUTSIDE_ONLY: dict[str, Callable[[Any, Any], Any]] = {
    "resize_": lambda m, a: a.resize_(4),
    "t_": lambda m, a: a.t_(),
    "unsqueeze_": lambda m, a: a.unsqueeze_(0),
    "fill_": lambda m, a: a.fill_(2),
    "index_put_": lambda m, a: a.index_put_((m.tensor([0]),), m.tensor(5.0)),
}


@pytest.mark.parametrize("name", list(_INPLACE) + list(_INPLACE_OUTSIDE_ONLY))
def test_inplace_on_an_inference_tensor_outside_raises_as_torch(name: str) -> None:
    write = _INPLACE.get(name) or _INPLACE_OUTSIDE_ONLY[name]

    def outcome(m: Any) -> tuple[str, str]:
        with m.inference_mode():
            a = m.ones(3)
        return _outcome(lambda: write(m, a))

    assert outcome(td) == outcome(torch) == ("RuntimeError", INPLACE)


@pytest.mark.parametrize("name", list(_INPLACE))
def test_inplace_on_an_inference_tensor_inside_works_as_torch(name: str) -> None:
    def values(m: Any) -> list[float]:
        with m.inference_mode():
            a = m.arange(3.0)
        with m.inference_mode():
            _INPLACE[name](m, a)
        return [float(v) for v in a.tolist()]

    assert values(td) == values(torch)


def test_inplace_on_a_normal_tensor_with_an_inference_operand_is_fine() -> None:
    def run(m: Any) -> tuple[list[float], int]:
        with m.inference_mode():
            a = m.ones(3)
        x = m.zeros(3)
        x.add_(a)
        return (x.tolist(), x._version)

    assert run(td) == run(torch) == ([1.0, 1.0, 1.0], 1)


# -- autograd ---------------------------------------------------------------------------------

_SAVING: dict[str, Callable[[Any, Any, Any], Any]] = {
    "mul": lambda m, w, a: w * a,
    "mul_swapped": lambda m, w, a: a * w,
    "pow": lambda m, w, a: m.pow(w, a),
    "mm": lambda m, w, a: m.mm(a.view(1, 3), w.view(3, 1)),
    "inplace_mul": lambda m, w, a: (w * 1).mul_(a),
}


@pytest.mark.parametrize("name", list(_SAVING))
def test_saving_an_inference_tensor_for_backward_raises_as_torch(name: str) -> None:
    def outcome(m: Any) -> tuple[str, str]:
        w = m.ones(3, requires_grad=True)
        with m.inference_mode():
            a = m.ones(3)
        return _outcome(lambda: _SAVING[name](m, w, a))

    assert outcome(td) == outcome(torch) == ("RuntimeError", SAVED)


def test_an_inference_operand_not_saved_is_fine_and_backward_runs() -> None:
    def run(m: Any) -> tuple[str, list[float], bool]:
        w = m.ones(3, requires_grad=True)
        with m.inference_mode():
            a = m.ones(3)
        y = w + a
        y.sum().backward()
        return (type(y.grad_fn).__name__, w.grad.tolist(), y.is_inference())

    assert run(td) == run(torch) == ("AddBackward0", [1.0, 1.0, 1.0], False)


def _requires_grad(m: Any, value: bool, inside: bool, how: str) -> tuple[str, str]:
    with m.inference_mode():
        a = m.ones(3)

    def set_it() -> None:
        if how == "method":
            a.requires_grad_(value)
        else:
            a.requires_grad = value

    if inside:
        with m.inference_mode():
            return _outcome(set_it)
    return _outcome(set_it)


@pytest.mark.parametrize("how", ["method", "attribute"])
@pytest.mark.parametrize("inside", [False, True])
@pytest.mark.parametrize("value", [False, True])
def test_requires_grad_on_inference_tensors_as_torch(how: str, inside: bool, value: bool) -> None:
    ours = _requires_grad(td, value, inside, how)
    assert ours == _requires_grad(torch, value, inside, how)
    if value and not inside:
        assert ours == (
            "RuntimeError",
            "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.",
        )


def test_an_inference_leaf_requiring_grad_records_only_with_a_normal_operand() -> None:
    def run(m: Any) -> tuple[Any, ...]:
        with m.inference_mode():
            a = m.ones(3).requires_grad_()
        alone = a.exp()  # only inference operands: autograd is not reached (torch's)
        mixed = a + 1  # the wrapped number is a normal tensor: autograd records
        mixed.sum().backward()
        return (alone.grad_fn, type(mixed.grad_fn).__name__, a.grad.tolist(), a.is_leaf)

    assert run(td) == run(torch) == (None, "AddBackward0", [1.0, 1.0, 1.0], True)


def test_the_open_block_count_returns_to_zero_after_nesting_errors_and_decorators() -> None:
    import importlib

    inference = importlib.import_module("tensordispatch.tensor.inference")
    tensor = importlib.import_module(
        "tensordispatch.tensor.tensor"
    )  # the package's tensor() shadows it

    @td.inference_mode()
    def made() -> Any:
        return td.ones(1)

    with pytest.raises(ValueError), td.inference_mode(), td.inference_mode():
        assert inference._INFERENCE_ACTIVE == tensor._INFERENCE_ACTIVE == 2
        raise ValueError("leave the blocks")
    assert made().is_inference()
    with td.inference_mode(False):  # counts only inference_mode(True) blocks
        assert inference._INFERENCE_ACTIVE == 0
    assert inference._INFERENCE_ACTIVE == tensor._INFERENCE_ACTIVE == 0
