"""Every autograd error: same exception type as torch, torch's message (golden)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import tensordispatch as td
from tensordispatch.autograd import grad


def _raise(fn: Callable[[], Any]) -> BaseException:
    with pytest.raises(Exception) as info:
        fn()
    return info.value


def _program_error(m: Any, program: Callable[[Any], Any]) -> BaseException:
    return _raise(lambda: program(m))


def _same_error(program: Callable[[Any], Any]) -> str:
    theirs = _program_error(torch, program)
    ours = _program_error(td, program)
    assert type(ours) is type(theirs)
    assert str(ours) == str(theirs).replace("torch.", "tensordispatch.")
    return str(ours)


def _leaf(m: Any) -> Any:
    return m.tensor([1.0, 2.0, 3.0]).requires_grad_()


def _ag(m: Any) -> Any:
    return torch.autograd if m is torch else td.autograd


def test_backward_through_freed_graph() -> None:
    def program(m: Any) -> None:
        y = (_leaf(m) * 2).sum()
        y.backward()
        y.backward()

    assert _same_error(program).startswith("Trying to backward through the graph a second time")


def test_saved_result_modified_in_place() -> None:
    def program(m: Any) -> None:
        y = (_leaf(m) * 1).exp()
        y.add_(1)
        y.sum().backward()

    assert _same_error(program) == (
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [tensordispatch.FloatTensor [3]], which is output 0 of Exp, is at version "
        "1; expected version 0 instead. Hint: enable anomaly detection to find the operation "
        "that failed to compute its gradient, with "
        "tensordispatch.autograd.set_detect_anomaly(True, check_nan=False)."
    )


def test_saved_input_modified_in_place_names_its_new_history() -> None:
    def program(m: Any) -> None:
        a = _leaf(m)
        z = a.sin()
        w = a * z
        z.mul_(2)
        w.sum().backward()

    assert "which is output 0 of Mul, is at version 1" in _same_error(program)


def test_in_place_on_leaf_requiring_grad() -> None:
    message = _same_error(lambda m: _leaf(m).add_(1))
    assert message == "a leaf Variable that requires grad is being used in an in-place operation."


def test_in_place_on_view_of_leaf_requiring_grad() -> None:
    message = _same_error(lambda m: _leaf(m).select(0, 1).mul_(2))
    assert message == (
        "a view of a leaf Variable that requires grad is being used in an in-place operation."
    )


def test_in_place_on_leaf_is_allowed_under_no_grad() -> None:
    x = _leaf(td)
    with td.autograd.no_grad():
        x.add_(1)
    assert x._version == 1 and x.is_leaf and x.requires_grad


def test_non_scalar_backward_without_gradient() -> None:
    message = _same_error(lambda m: (_leaf(m) * 2).backward())
    assert message == "grad can be implicitly created only for scalar outputs"


def test_backward_of_tensor_without_grad() -> None:
    message = _same_error(lambda m: m.tensor([1.0]).sum().backward())
    assert message == "element 0 of tensors does not require grad and does not have a grad_fn"


def test_gradient_shape_mismatch() -> None:
    message = _same_error(lambda m: (_leaf(m) * 2).backward(m.ones(2)))
    assert message == (
        "Mismatch in shape: grad_output[0] has a shape of tensordispatch.Size([2]) and "
        "output[0] has a shape of tensordispatch.Size([3])."
    )


def test_grad_of_unused_input() -> None:
    message = _same_error(
        lambda m: _ag(m).grad((_leaf(m) * 2).sum(), [m.tensor([1.0]).requires_grad_()])
    )
    assert message == (
        "The differentiated Tensor at index 0 appears to not have been used in the graph. "
        "Set allow_unused=True if this is the desired behavior."
    )


def test_grad_of_input_not_requiring_grad() -> None:
    message = _same_error(lambda m: _ag(m).grad((_leaf(m) * 2).sum(), [m.tensor([1.0])]))
    assert message == "One of the differentiated Tensors does not require grad"


def test_requires_grad_false_on_non_leaf() -> None:
    message = _same_error(lambda m: (_leaf(m) * 2).requires_grad_(False))
    assert message.startswith("you can only change requires_grad flags of leaf variables.")


def test_detach_in_place_on_view() -> None:
    message = _same_error(lambda m: (_leaf(m) * 1).view([3]).detach_())
    assert message.startswith("Can't detach views in-place. Use detach() instead.")


def test_out_variant_with_input_requiring_grad() -> None:
    message = _same_error(lambda m: m.add(_leaf(m), 1.0, out=m.empty(3)))
    assert message == (
        "add(): functions with out=... arguments don't support automatic differentiation, "
        "but one of the arguments requires grad."
    )


def test_allow_unused_returns_none() -> None:
    x = _leaf(td)
    unused = td.tensor([1.0]).requires_grad_()
    assert grad((x * 2).sum(), [x, unused], allow_unused=True)[1] is None


def test_register_hook_on_tensor_not_requiring_grad() -> None:
    message = _same_error(lambda m: m.ones(2).register_hook(lambda g: g))
    assert message == "cannot register a hook on a tensor that doesn't require gradient"


def test_retain_grad_on_tensor_not_requiring_grad() -> None:
    message = _same_error(lambda m: m.ones(2).retain_grad())
    assert message == "can't retain_grad on Tensor that has requires_grad=False"


def test_inplace_on_an_output_of_split_is_refused_like_torch() -> None:
    x = td.ones([4]).requires_grad_()
    a, _ = (x * 1).split(2)
    with pytest.raises(RuntimeError) as info:
        a.mul_(2)
    assert str(info.value) == (
        "Output 0 of Split is a view and is being modified inplace. This view is the output "
        "of a function that returns multiple views. Such functions do not allow the output "
        "views to be modified inplace. You should replace the inplace operation by an "
        "out-of-place one."
    )
    u = (x * 1).unbind(0)
    with pytest.raises(RuntimeError, match="^Output 1 of Unbind is a view"):
        u[1].add_(1)


def test_inplace_on_a_split_output_without_grad_is_allowed() -> None:
    a, _ = td.ones([4]).split(2)
    a.mul_(2)
    assert a.tolist() == [2.0, 2.0]
