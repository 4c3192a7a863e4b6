"""Kernel names and Python signatures derived from schemas, and the parameter comparison."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tensordispatch.codegen.backend_stubs.signature import (
    ActualParams,
    KernelSignature,
    kernel_name,
    parameter_problems,
)
from tensordispatch.schema import parse_schema
from tensordispatch.schema.native import load_native_functions


@pytest.mark.parametrize(
    ("schema", "text"),
    [
        ("abs(Tensor self) -> Tensor", "def abs(self: Tensor) -> Tensor"),
        (
            "add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
            "def add_Scalar(self: Tensor, other: Scalar, alpha: Scalar = ...) -> Tensor",
        ),
        (
            "max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)",
            "def max_dim_max(self: Tensor, dim: int, keepdim: bool = ..., *, max: Tensor, max_values: Tensor) -> tuple[Tensor, Tensor]",
        ),
        (
            "_foreach_add_.List(Tensor(a!)[] self, Tensor[] other, *, Scalar alpha=1) -> ()",
            "def _foreach_add__List(self: Sequence[Tensor], other: Sequence[Tensor], *, alpha: Scalar = ...) -> None",
        ),
        (
            "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
            "def index_Tensor(self: Tensor, indices: Sequence[Tensor | None]) -> Tensor",
        ),
        (
            "random_.from(Tensor(a!) self, int from, int? to, *, Generator? generator=None) -> Tensor(a!)",
            "def random__from(*args: Any, **kwargs: Any) -> Tensor",
        ),
    ],
)
def test_signature_text(schema: str, text: str) -> None:
    assert KernelSignature.from_schema(parse_schema(schema)).text() == text


def test_symint_signature() -> None:
    func = parse_schema("view(Tensor(a) self, SymInt[] size) -> Tensor(a)")
    sig = KernelSignature.from_schema(func, symint=True)
    assert sig.text() == "def view_symint(self: Tensor, size: Sequence[SymInt]) -> Tensor"
    assert KernelSignature.from_schema(func).text() == (
        "def view(self: Tensor, size: Sequence[int]) -> Tensor"
    )


def test_kernel_names_are_unique_over_torch_native_functions() -> None:
    """Python has no overloading: every operator of torch's yaml needs its own kernel name."""
    import torchgen

    d = Path(os.path.dirname(torchgen.__file__)) / "packaged" / "ATen" / "native"
    parsed = load_native_functions(d / "native_functions.yaml", tags_path=d / "tags.yaml")
    names = [kernel_name(f.func) for f in parsed.native_functions]
    assert len(names) == len(set(names)) > 3000


def test_kernel_names_match_torch_unambiguous_names() -> None:
    from torchgen.model import FunctionSchema as TorchSchema

    for text in ("add_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
                 "abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", "abs(Tensor self) -> Tensor"):  # fmt: skip
        assert kernel_name(parse_schema(text)) == TorchSchema.parse(text).name.unambiguous_name()


_ADD = (("self", False, False), ("other", False, False), ("alpha", True, True))


def _actual(pos: tuple[str, ...], kw: tuple[str, ...] = (), defaulted: tuple[str, ...] = (),
            var_pos: bool = False, var_kw: bool = False) -> ActualParams:  # fmt: skip
    return ActualParams(pos, kw, frozenset(defaulted), var_pos, var_kw)


def test_exact_match_passes() -> None:
    assert parameter_problems(_ADD, _actual(("self", "other"), ("alpha",), ("alpha",))) == []


def test_extra_default_is_fine() -> None:
    actual = _actual(("self", "other"), ("alpha",), ("alpha", "other"))
    assert parameter_problems(_ADD, actual) == []


def test_args_kwargs_kernel_passes() -> None:
    assert parameter_problems(_ADD, _actual((), var_pos=True, var_kw=True)) == []


def test_wrong_names_are_reported() -> None:
    assert parameter_problems(_ADD, _actual(("x", "y"), ("alpha",), ("alpha",))) == [
        "positional parameters (x, y) but the schema has (self, other)"
    ]


def test_missing_default_is_reported() -> None:
    assert parameter_problems(_ADD, _actual(("self", "other"), ("alpha",))) == [
        "no default for (alpha): the schema has one, so callers may leave them out"
    ]


def test_kwargs_may_stand_for_keyword_only_parameters() -> None:
    assert parameter_problems(_ADD, _actual(("self", "other"), var_kw=True)) == []
