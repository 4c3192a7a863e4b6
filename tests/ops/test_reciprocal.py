"""aten::reciprocal, reciprocal_ and reciprocal.out against torch 2.13: integer and bool
inputs promote to the default float dtype, complex values as torch's division, the
ReciprocalBackward0 gradient, the in-place and out= cast errors, the meta result."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td

INF, NAN = float("inf"), float("nan")


@pytest.mark.parametrize(
    "dtype",
    ["bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64"],
)
def test_reciprocal_values_and_dtype_match_torch(dtype: str) -> None:
    values = np.array([0, 1, 2, 5, -3, 7]).astype(dtype)
    expected = torch.from_numpy(values.copy()).reciprocal()
    got = td.from_numpy(values.copy()).reciprocal()
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_reciprocal_of_complex_edge_values_matches_torch(dtype: str) -> None:
    values = np.array(
        [0j, 1 + 0j, 1 + 1j, 3 - 4j, complex(INF, 0), complex(NAN, 1), complex(0, -0.0)], dtype
    )
    expected = torch.from_numpy(values.copy()).reciprocal().numpy()
    got = td.from_numpy(values.copy()).reciprocal().numpy()
    np.testing.assert_array_equal(got, expected)
    finite = ~np.isnan(expected.imag)  # a NaN's sign bit is not specified
    np.testing.assert_array_equal(np.signbit(got.imag[finite]), np.signbit(expected.imag[finite]))


def test_reciprocal_of_negative_zero_is_negative_infinity() -> None:
    assert td.tensor([-0.0]).reciprocal().tolist() == torch.tensor([-0.0]).reciprocal().tolist()
    assert td.tensor([-0.0]).reciprocal().tolist() == [-INF]


def test_reciprocal_of_a_transposed_tensor_keeps_torch_strides() -> None:
    base = np.arange(1.0, 7.0).reshape(2, 3)
    expected = torch.from_numpy(base.copy()).t().reciprocal()
    got = td.from_numpy(base.copy()).t().reciprocal()
    assert got.stride() == expected.stride()
    np.testing.assert_allclose(got.numpy(), expected.numpy())


def test_reciprocal_in_place_on_floats_matches_torch() -> None:
    t, u = td.tensor([2.0, 4.0]), torch.tensor([2.0, 4.0])
    assert t.reciprocal_() is t
    assert t.tolist() == u.reciprocal_().tolist()
    assert t._version == u._version


def _message(fn: Any) -> str:
    with pytest.raises(RuntimeError) as info:
        fn()
    return str(info.value)


def test_reciprocal_in_place_on_integers_refuses_as_torch() -> None:
    got = _message(lambda: td.tensor([1, 2]).reciprocal_())
    assert got == _message(lambda: torch.tensor([1, 2]).reciprocal_())
    assert got == "result type Float can't be cast to the desired output type Long"


def test_reciprocal_out_of_integer_dtype_refuses_as_torch() -> None:
    got = _message(lambda: td.reciprocal(td.tensor([1, 2]), out=td.empty(2, dtype=td.int64)))
    assert got == "result type Float can't be cast to the desired output type Long"


def test_reciprocal_out_writes_into_out() -> None:
    out = td.empty(2, dtype=td.float64)
    assert td.reciprocal(td.tensor([2, 8]), out=out) is out
    assert (
        out.tolist() == torch.reciprocal(torch.tensor([2, 8]), out=torch.empty(2).double()).tolist()
    )


def test_reciprocal_gradient_matches_torch() -> None:
    t = td.tensor([0.5, -2.0, 4.0], requires_grad=True)
    u = torch.tensor([0.5, -2.0, 4.0], requires_grad=True)
    r, s = t.reciprocal(), u.reciprocal()
    assert type(r.grad_fn).__name__ == type(s.grad_fn).__name__ == "ReciprocalBackward0"
    r.backward(td.tensor([1.0, 2.0, 3.0]))
    s.backward(torch.tensor([1.0, 2.0, 3.0]))
    assert t.grad is not None and u.grad is not None
    np.testing.assert_allclose(t.grad.numpy(), u.grad.numpy())


def test_reciprocal_complex_gradient_matches_torch() -> None:
    t = td.tensor([1 + 2j, -0.5j], requires_grad=True)
    u = torch.tensor([1 + 2j, -0.5j], requires_grad=True)
    t.reciprocal().abs().sum().backward()
    u.reciprocal().abs().sum().backward()
    assert t.grad is not None and u.grad is not None
    np.testing.assert_allclose(t.grad.numpy(), u.grad.numpy(), rtol=1e-6)


def test_reciprocal_on_meta_promotes_integers() -> None:
    r = td.reciprocal(td.empty(3, 2, dtype=td.int32, device="meta"))
    e = torch.reciprocal(torch.empty(3, 2, dtype=torch.int32, device="meta"))
    assert (tuple(r.shape), str(r.dtype).split(".")[-1]) == (tuple(e.shape), "float32")
    assert str(e.dtype) == "torch.float32"


def test_reciprocal_is_exposed_where_torch_exposes_it() -> None:
    for name in ("reciprocal", "reciprocal_"):
        assert hasattr(torch, name) and hasattr(td, name)
        assert hasattr(torch.Tensor, name) and hasattr(td.Tensor, name)
    for overload in ("default", "out"):
        assert hasattr(torch.ops.aten.reciprocal, overload)
        assert hasattr(td.ops.aten.reciprocal, overload)


def test_reciprocal_under_vmap_matches_torch() -> None:
    base = np.array([[1.0, 2.0], [4.0, 8.0]])
    got = td.func.vmap(td.reciprocal)(td.from_numpy(base.copy()))
    expected = torch.func.vmap(torch.reciprocal)(torch.from_numpy(base.copy()))
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_reciprocal_in_place_under_functionalize_matches_torch() -> None:
    def f(lib: Any, a: Any) -> Any:
        b = a.clone()
        b.reciprocal_()
        return b

    got = td.func.functionalize(lambda a: f(td, a))(td.tensor([2.0, 4.0]))
    expected = torch.func.functionalize(lambda a: f(torch, a))(torch.tensor([2.0, 4.0]))
    assert got.tolist() == expected.tolist()
