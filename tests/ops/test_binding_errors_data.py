"""Binding errors worded from data (Note [Argument errors as data] in dispatch/errors.py) and
bindings refusing enums for numbers and numbers for enums as torch's arg parser (Note [Bindings
take enums only as themselves] in dispatch/convert.py), against torch 2.13."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
import torch

import tensordispatch as td
from tensordispatch.dispatch.errors import (
    ArgumentMismatch,
    ArgumentTypeError,
    BindingArgument,
    BindingArgumentError,
    binding_argument,
    binding_argument_error,
)
from tensordispatch.dispatch.modes import DispatchMode
from tensordispatch.ops.binding_errors import binding_type_error


def _message(fn: Callable[[], Any]) -> tuple[type, str]:
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


def _mismatch(fn: Callable[[], Any]) -> ArgumentMismatch:
    with pytest.raises(ArgumentTypeError) as info:
        fn()
    assert info.value.mismatch is not None
    return info.value.mismatch


# ----- the operator-level error carries its facts ----------------------------------------


def test_tensor_argument_mismatch_fields() -> None:
    m = _mismatch(lambda: td.ops.aten.maximum.default(td.ones(2), 2))
    assert (m.operator, m.argument, m.position, m.expected, m.declared, m.found, m.value) == (
        "aten::maximum", "other", 1, "Tensor", "Tensor", "int", 2,
    )  # fmt: skip
    assert m.declaration == "aten::maximum(Tensor self, Tensor other) -> Tensor"


def test_non_tensor_argument_mismatch_fields() -> None:
    m = _mismatch(lambda: td.ops.aten.sum.dim_IntList(td.ones(2), "a"))
    assert (m.operator, m.argument, m.position, m.expected, m.declared, m.found) == (
        "aten::sum.dim_IntList", "dim", 1, "Optional[List[int]]", "int[1]?", "str",
    )  # fmt: skip


def test_operator_level_text_is_torchs_up_to_the_cast_details() -> None:
    def call(L: Any) -> Any:
        return L.ops.aten.add.Tensor(L.ones(2), "a")

    kind, text = _message(lambda: call(td))
    want_kind, want = _message(lambda: call(torch))
    assert issubclass(kind, want_kind) and not issubclass(kind, TypeError)
    assert text == want.partition("\nCast error details")[0]


def test_text_is_worded_from_the_mismatch() -> None:
    m = ArgumentMismatch("aten::mm", "mat2", 1, "Tensor", "Tensor", "int", 2, "aten::mm(...)")
    assert str(ArgumentTypeError(m)) == (
        "aten::mm() Expected a value of type 'Tensor' for argument 'mat2' but instead found "
        "type 'int'.\nPosition: 1\nValue: 2\nDeclaration: aten::mm(...)"
    )


def test_binding_argument_message() -> None:
    a = BindingArgument("maximum", "other", 2, "Tensor", "int")
    assert a.message() == "maximum(): argument 'other' (position 2) must be Tensor, not int"
    assert BindingArgument("maximum", "other", 2, "Tensor", "int", keyword=True).message() == (
        "maximum(): argument 'other' must be Tensor, not int"
    )


# ----- no message text is read on the binding error path --------------------------------


def test_a_text_only_error_is_never_translated() -> None:
    """The text the old path parsed with a regex: without a mismatch it is left alone."""
    e = ArgumentTypeError(
        "aten::maximum() Expected a value of type 'Tensor' for argument 'other' but instead "
        "found type 'int'.\nPosition: 1\nValue: 2\nDeclaration: aten::maximum(Tensor self, "
        "Tensor other) -> Tensor"
    )
    assert binding_argument("maximum", e, ("input", "other"), False) is None
    assert binding_argument_error("maximum", e, ("input", "other"), False) is e
    assert binding_type_error("maximum", e, ("input", "other"), False) is e


def test_a_nested_operators_mismatch_is_not_translated() -> None:
    m = ArgumentMismatch("aten::mm", "mat2", 1, "Tensor", "Tensor", "int", 2, "aten::mm(...)")
    e = ArgumentTypeError(m)
    assert binding_argument_error("matmul", e, ("input", "other"), False) is e


class _Fooling:
    """A value whose repr reads like the lines the old regex looked for."""

    def __repr__(self) -> str:
        return "x\nPosition: 0\nDeclaration: aten::copy_(Tensor self, ScalarType? src)"


def test_a_value_that_reads_like_message_lines_does_not_fool_the_binding() -> None:
    """The old path renamed copy_'s ``src`` by the last "Position:" of the text (the value's
    here) and read the declared type off the last declaration."""
    kind, text = _message(lambda: td.ones(2).copy_(_Fooling()))
    assert (kind, text) == (
        TypeError,
        "copy_(): argument 'other' (position 1) must be Tensor, not _Fooling",
    )
    assert _message(lambda: torch.ones(2).copy_(_Fooling())) == (kind, text)


# ----- enums are not numbers, numbers are not enums (bindings only) ----------------------

DTYPE_CASES: list[Any] = [
    pytest.param(lambda L: L.ones(2).pow(L.float32), id="Tensor.pow dtype"),
    pytest.param(lambda L: L.ones(2).pow_(L.float32), id="Tensor.pow_ dtype"),
    pytest.param(lambda L: L.pow(L.ones(2), L.float32), id="pow dtype"),
    pytest.param(lambda L: L.ones(2).pow(L.strided), id="Tensor.pow layout"),
    pytest.param(lambda L: L.ones(2).add(L.ones(2), alpha=L.int64), id="Tensor.add alpha dtype"),
    pytest.param(lambda L: L.add(L.ones(2), L.ones(2), alpha=L.float32), id="add alpha dtype"),
    pytest.param(lambda L: L.add(L.ones(2), L.int64), id="add other dtype"),
    pytest.param(lambda L: L.clamp(L.ones(2), L.float32), id="clamp dtype"),
    pytest.param(lambda L: L.ones(2).clamp(min=L.float32), id="Tensor.clamp min dtype"),
    pytest.param(lambda L: L.full((2,), L.float32), id="full fill_value dtype"),
    pytest.param(lambda L: L.ones(2).fill_(L.float32), id="Tensor.fill_ dtype"),
    pytest.param(lambda L: L.ones(2).masked_fill(L.ones(2) > 0, L.float32), id="masked_fill dtype"),
    pytest.param(lambda L: L.ones(2).eq(L.float32), id="Tensor.eq dtype"),
    pytest.param(lambda L: L.ones(2).lerp(L.ones(2), L.float32), id="Tensor.lerp dtype"),
    pytest.param(
        lambda L: L.ones(2).addcmul(L.ones(2), L.ones(2), value=L.float32), id="addcmul value"
    ),
    pytest.param(lambda L: L.where(L.ones(2) > 0, L.ones(2), L.float32), id="where dtype"),
    pytest.param(lambda L: L.rsub(L.ones(2), L.ones(2), alpha=L.float32), id="rsub alpha"),
    pytest.param(lambda L: L.remainder(L.ones(2), L.float32), id="remainder dtype"),
    pytest.param(
        lambda L: L.bitwise_and(L.ones(2, dtype=L.int64), L.int64), id="bitwise_and dtype"
    ),
    pytest.param(lambda L: L.ones(2).sum(dim=L.float32), id="Tensor.sum dim dtype"),
    pytest.param(lambda L: L.ones(2).narrow(0, L.int64, 1), id="Tensor.narrow start dtype"),
    pytest.param(lambda L: L.ones(2).narrow(0, 0, length=L.int64), id="narrow length dtype"),
    pytest.param(lambda L: L.ones(2).select(0, L.strided), id="Tensor.select layout"),
    pytest.param(lambda L: L.ones(2).unsqueeze(L.contiguous_format), id="unsqueeze memfmt"),
    pytest.param(lambda L: L.ones(2, dtype=6), id="ones dtype int"),
    pytest.param(lambda L: L.ones(2, layout=0), id="ones layout int"),
    pytest.param(lambda L: L.ones(2).sum(dtype=6), id="Tensor.sum dtype int"),
    pytest.param(lambda L: L.ones(2).clone(memory_format=0), id="clone memory_format int"),
]


@pytest.mark.parametrize("call", DTYPE_CASES)
def test_binding_refuses_enum_number_mixups_as_torch(call: Callable[[Any], Any]) -> None:
    expected = _message(lambda: call(torch))
    assert _message(lambda: call(td)) == expected


def test_operator_level_still_takes_enums_as_codes() -> None:
    t, u = td.ones(2) * 2, torch.ones(2) * 2
    assert (
        td.ops.aten.pow.Tensor_Scalar(t, td.float32).tolist()
        == torch.ops.aten.pow.Tensor_Scalar(u, torch.float32).tolist()
    )
    assert str(td.ops.aten.ones.default([2], dtype=6).dtype) == "tensordispatch.float32"
    assert str(torch.ops.aten.ones.default([2], dtype=6).dtype) == "torch.float32"
    assert list(td.ops.aten.unsqueeze.default(t, td.strided).shape) == [1, 2]


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda L: L.ones(2) ** L.float32, id="t ** dtype"),
        pytest.param(lambda L: L.float32 ** L.ones(2), id="dtype ** t"),
        pytest.param(lambda L: L.ones(2, dtype=L.int64) << L.int64, id="t << dtype"),
        pytest.param(lambda L: L.ones(2) * L.strided, id="t * layout"),
    ],
)
def test_operators_with_an_enum_are_unsupported_as_torch(call: Callable[[Any], Any]) -> None:
    """Python's own text names the classes (torch's are torch.dtype, ours dtype)."""
    kind, text = _message(lambda: call(td))
    want_kind, want = _message(lambda: call(torch))
    assert kind is want_kind is TypeError
    assert text.startswith("unsupported operand type(s)") and want.startswith(text[:30])


def test_comparing_with_an_enum_is_false_as_torch() -> None:
    assert (td.ones(2) == td.float32) is (torch.ones(2) == torch.float32) is False


def test_binding_refuses_under_a_dispatch_mode() -> None:
    class Passing(DispatchMode):
        def __torch_dispatch__(
            self, func: Any, types: Any, args: Any = (), kwargs: Any = None
        ) -> Any:
            return func(*args, **(kwargs or {}))

    with Passing():
        kind, text = _message(lambda: td.full((2,), td.float32))
    assert (kind, text) == _message(lambda: torch.full((2,), torch.float32))


def test_first_and_later_calls_refuse_alike() -> None:
    """The first call of a binding's operator goes through the deferred global and the lazy
    entry (relays); later calls reach the entry directly."""
    code = (
        "import tensordispatch as td\n"
        "t = td.ones(2)\n"
        "for _ in range(3):\n"
        "    try:\n"
        "        t.lerp(t, td.float32)\n"
        "    except TypeError as e:\n"
        "        print(str(e).splitlines()[0])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    head = "lerp() received an invalid combination of arguments - got (Tensor, torch.dtype), "
    assert out == [head + "but expected one of:"] * 3


# ----- a 0-dim tensor is a Scalar for a binding only ------------------------------------

ZERO_DIM_CASES: list[Any] = [
    pytest.param(lambda L: L.ones(2).add(L.ones(2), alpha=L.tensor(2)), id="add alpha int"),
    pytest.param(lambda L: L.full((2,), L.tensor(3.0)), id="full float"),
    pytest.param(lambda L: L.full((2,), L.tensor(3)), id="full int"),
    pytest.param(
        lambda L: L.ones(2).addcmul(L.ones(2), L.ones(2), value=L.tensor(0.5)), id="addcmul"
    ),
]


@pytest.mark.parametrize("call", ZERO_DIM_CASES)
def test_binding_takes_a_zero_dim_tensor_for_a_scalar(call: Callable[[Any], Any]) -> None:
    want, got = call(torch), call(td)
    assert got.tolist() == want.tolist()
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda L: L.full((2,), L.tensor([3.0])), id="one element, one dim"),
        pytest.param(lambda L: L.full((2,), L.tensor(3.0, requires_grad=True)), id="requires grad"),
    ],
)
def test_binding_refuses_other_tensors_for_a_scalar(call: Callable[[Any], Any]) -> None:
    assert _message(lambda: call(td)) == _message(lambda: call(torch))


def test_operator_level_refuses_a_tensor_for_a_scalar() -> None:
    kind, text = _message(lambda: td.ops.aten.full.default([2], td.tensor(3.0)))
    want_kind, want = _message(lambda: torch.ops.aten.full.default([2], torch.tensor(3.0)))
    assert issubclass(kind, want_kind) and text == want.partition("\nCast error details")[0]


# ----- missing arguments of Tensor methods (Note [Missing arguments]) --------------------

MISSING_CASES: list[Any] = [
    pytest.param(lambda t: t.add(), id="add, hidden signature: invalid combination"),
    pytest.param(lambda t: t.add(alpha=2), id="add alpha only: one plausible, missing"),
    pytest.param(lambda t: t.mm(), id="mm: several signatures"),
    pytest.param(lambda t: t.narrow(0), id="narrow: two missing of several signatures"),
    pytest.param(lambda t: t.copy_(), id="copy_"),
    pytest.param(lambda t: t.masked_select(), id="masked_select"),
    pytest.param(lambda t: t.dot(), id="dot"),
    pytest.param(lambda t: t.index_select(0), id="index_select"),
    pytest.param(lambda t: t.maximum(), id="maximum"),
    pytest.param(lambda t: t.pow(), id="pow"),
    pytest.param(lambda t: t.addcmul(), id="addcmul: two missing, hidden signature"),
    pytest.param(lambda t: t.unsqueeze(), id="unsqueeze: int parameter"),
    pytest.param(lambda t: t.transpose(0), id="transpose"),
]


@pytest.mark.parametrize("call", MISSING_CASES)
def test_method_missing_argument_as_torch(call: Callable[[Any], Any]) -> None:
    assert _message(lambda: call(td.ones(2, 2))) == _message(lambda: call(torch.ones(2, 2)))


def test_missing_argument_text_plural_as_torch() -> None:
    """torch's plural is the wrong way round: one argument is "arguments"."""
    kind, text = _message(lambda: td.ones(2).masked_select())
    assert (kind, text) == (
        TypeError,
        'masked_select() missing 1 required positional arguments: "mask"',
    )


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda L: L.neg(L.ones(2), 1), id="neg"),
        pytest.param(lambda L: L.maximum(L.ones(2), L.ones(2), 1), id="maximum"),
    ],
)
def test_functions_keep_their_argument_count_texts(
    call: Callable[[Any], Any],
) -> None:
    """With defaults, Python would word too many arguments "takes from 0 to 2", where torch's
    function text is Python's "takes 2"."""
    assert _message(lambda: call(td)) == _message(lambda: call(torch))


def test_a_hand_written_binding_refuses_an_enum_with_a_type_error() -> None:
    """ops/bindings.py's cat does not word the refusal as torch (its text is the operator's),
    but it is a TypeError, as torch's."""
    with pytest.raises(TypeError) as info:
        td.cat([td.ones(2), td.ones(2)], td.int64)
    assert isinstance(info.value, BindingArgumentError)
    assert str(info.value).splitlines()[0] == (
        "aten::cat() Expected a value of type 'int' for argument 'dim' but instead found type "
        "'dtype'."
    )
    with pytest.raises(TypeError):
        torch.cat([torch.ones(2), torch.ones(2)], torch.int64)
