"""Golden tests for every user-facing error of functionalization (and torch's type for each)."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest
import torch

import tensordispatch as td
from tensordispatch.library import Library
from tensordispatch.transforms.functionalize import (
    from_functional,
    functionalize,
    functionalize_aten_op,
    to_functional,
)


def _message(fn: object, *args: object) -> tuple[type, str]:
    try:
        fn(*args)  # type: ignore[operator]
    except Exception as e:  # noqa: BLE001 - the test inspects it
        return type(e), str(e)
    raise AssertionError("no error")


def test_invalid_remove() -> None:
    kind, text = _message(lambda: functionalize(lambda x: x, remove="views"))
    with pytest.raises(RuntimeError):
        torch.func.functionalize(lambda x: x, remove="views")
    assert kind is RuntimeError
    assert text == (
        "functionalize(f, remove='mutations'): received invalid argument for remove=views. "
        "Valid options are:\n"
        "     remove='mutations': all inplace and out= operators will be removed from the "
        "program, and replaced with their out-of-place equivalents.\n"
        "     remove='mutations_and_views': In addition to the above, all aliasing operators "
        "{view} will be replaced with their non-aliasing counterparts, {view}_copy.\n"
    )


def test_mutating_a_global_with_a_functional_tensor() -> None:
    g = td.zeros(2)

    def f(a: td.Tensor) -> td.Tensor:
        g.add_(a)
        return a

    tg = torch.zeros(2)
    with pytest.raises(RuntimeError, match="mutating a non-functional tensor"):
        torch.func.functionalize(lambda a: tg.add_(a))(torch.ones(2))
    kind, text = _message(functionalize(f), td.ones(2))
    assert kind is RuntimeError
    assert text == (
        "aten.add_.Tensor: mutating a non-functional tensor with a functional tensor is not "
        "allowed. Please ensure that all of your inputs are wrapped inside of a "
        "functionalize() call."
    )


def test_as_strided_not_first_in_a_mutated_chain() -> None:
    def f(a: td.Tensor) -> td.Tensor:
        a.view(3).as_strided((2,), (1,)).add_(1)
        return a

    with pytest.raises(RuntimeError, match="as_strided"):
        torch.func.functionalize(f)(torch.ones(3))
    kind, text = _message(functionalize(f), td.ones(3))
    assert kind is RuntimeError
    assert text == (
        "functionalize: encountered a mutation on a view chain of length 2, where view 1 was "
        "an as_strided() call. as_strided() is non-compositional, so the mutation cannot be "
        "replayed on an updated base. Call as_strided() on the base tensor (first in the "
        "chain), or clone the view before mutating it"
    )


def test_inplace_broadcast_error_still_fires() -> None:
    def f(a: td.Tensor) -> td.Tensor:
        return a.add_(td.ones(2, 3))

    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        torch.func.functionalize(lambda a: a.add_(torch.ones(2, 3)))(torch.ones(3))
    kind, eager = _message(lambda: td.ones(3).add_(td.ones(2, 3)))
    kind2, text = _message(functionalize(f), td.ones(3))
    assert kind is kind2 is RuntimeError and text == eager


def test_inplace_dtype_error_still_fires() -> None:
    def f(a: td.Tensor) -> td.Tensor:
        return a.add_(td.ones(2))

    with pytest.raises(RuntimeError):  # torch's meta check words it differently from eager
        torch.func.functionalize(lambda a: a.add_(torch.ones(2)))(torch.ones(2, dtype=torch.int64))
    kind, eager = _message(lambda: td.ones(2, dtype=td.int64).add_(td.ones(2)))
    kind2, text = _message(functionalize(f), td.ones(2, dtype=td.int64))
    assert kind is kind2 is RuntimeError and text == eager


def test_custom_op_with_alias_annotation() -> None:
    lib = Library("td_functest", "DEF")
    try:
        lib.define("alias_like(Tensor(a) x) -> Tensor(a)")
        lib.impl("alias_like", lambda x: x, "CompositeExplicitAutograd")
        o = td.ops.td_functest.alias_like.default
        kind, text = _message(functionalize(o), td.ones(2))
    finally:
        lib._destroy()
    assert kind is RuntimeError
    assert text.startswith(
        "Found a custom (non-ATen) operator whose output has alias annotations: "
        "td_functest::alias_like(Tensor(a) x) -> Tensor(a). We only support functionalizing "
        "operators whose outputs do not have alias annotations"
    )


def test_wrapping_twice() -> None:
    kind, text = _message(to_functional, to_functional(td.ones(1)))
    assert kind is RuntimeError
    assert text == (
        "to_functional: the tensor is already a functional tensor; wrap each tensor once "
        "(unwrap it with from_functional first)"
    )


def test_unwrapping_a_plain_tensor() -> None:
    kind, text = _message(from_functional, td.ones(1))
    assert kind is RuntimeError
    assert text == (
        "from_functional: expected a functional tensor, got a plain Tensor on device 'cpu'; "
        "only tensors made by to_functional can be unwrapped"
    )


def test_numpy_of_a_functional_tensor() -> None:
    kind, text = _message(lambda: to_functional(td.ones(1)).numpy())
    assert kind is TypeError
    assert text == (
        "numpy(): cannot convert a functional tensor to NumPy (its memory is not shared with "
        "the aliases it stands for); use tensordispatch.transforms.functionalize."
        "from_functional(t).numpy() after sync(t)"
    )


def test_functionalize_aten_op_refuses_out_ops() -> None:
    kind, text = _message(functionalize_aten_op, td.ops.aten.add.out, td.ones(1), td.ones(1))
    assert kind is RuntimeError
    assert text == (
        "functionalize_aten_op: aten.add.out is an out= operator, which cannot be run through "
        "functionalization this way; call its functional variant and copy the result into "
        "the out tensor"
    )


def test_functionalize_aten_op_needs_a_composite_kernel() -> None:
    kind, text = _message(
        functionalize_aten_op, td.ops.aten.mm.default, td.ones(1, 1), td.ones(1, 1)
    )
    assert kind is RuntimeError
    assert text == (
        "functionalize_aten_op: aten.mm.default has no CompositeExplicitAutograd(NonFunctional) "
        "kernel to run through functionalization; only composite kernels can be "
        "functionalized this way"
    )


def test_mutation_through_overlapping_unfold_matches_torch() -> None:
    def f(lib: Any, a: Any) -> Any:
        a.unfold(0, 2, 1).mul_(2)
        return a

    with pytest.raises(RuntimeError) as theirs:
        torch.func.functionalize(partial(f, torch))(torch.ones(4))
    kind, text = _message(functionalize(partial(f, td)), td.ones(4))
    assert kind is RuntimeError and text == str(theirs.value)
    assert text == (
        "While executing unfold, functionalization encountered a tensor being mutated that has "
        "internal overlap. When using torch.compile (or running functionalization directly), "
        "this is banned as the behavior is not well defined. Consider cloning the tensor "
        "before mutating it, or removing the mutation from your model."
    )


def test_scatter_size_mismatch_matches_torch() -> None:
    with pytest.raises(RuntimeError) as theirs:
        torch.select_scatter(torch.zeros(3, 4), torch.ones(3), 0, 0)
    kind, text = _message(td.select_scatter, td.zeros(3, 4), td.ones(3), 0, 0)
    assert kind is RuntimeError and text == str(theirs.value)
    assert text == (
        "expected src to have a size equal to the slice of self. src size = [3], slice size = [4]"
    )


def test_growing_a_view_with_resize() -> None:
    def f(a: td.Tensor) -> td.Tensor:
        a.view(4)[:2].resize_(6)
        return a

    with pytest.raises(RuntimeError) as theirs:
        torch.func.functionalize(f)(torch.ones(4))
    kind, text = _message(functionalize(f), td.ones(4))
    assert kind is RuntimeError and text == str(theirs.value)
    assert text == (
        "Attempted to resize a view tensor to a larger size. This is not allowed in the "
        "functionalization pass"
    )
