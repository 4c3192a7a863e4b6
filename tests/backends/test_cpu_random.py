"""The CPU uniform_ kernel (backends/cpu/random.py): its values are the generator's NumPy
draws mapped by from + (to - from) * x, the [0, 1) case included (where the mapping is
skipped: 0 + 1 * x is x exactly), for every floating dtype, seeded or default generator."""

from __future__ import annotations

import numpy as np
import pytest

import tensordispatch as td
from tensordispatch.backends.generator import Generator


def _expected(seed: int, shape: tuple[int, ...], low: float, high: float, dtype: object) -> list:
    draws = np.random.Generator(np.random.PCG64(seed)).random(shape)
    out = np.empty(shape, dtype=dtype)  # type: ignore[call-overload]
    np.copyto(out, low + (high - low) * draws, casting="unsafe")
    return out.tolist()  # type: ignore[no-any-return]


@pytest.mark.parametrize("bounds", [(0.0, 1.0), (0, 1), (-0.0, 1.0), (-2.0, 6.0), (0.5, 0.5)])
@pytest.mark.parametrize(
    ("dtype", "np_dtype"),
    [
        (td.float32, np.float32),
        (td.float64, np.float64),
        (td.float16, np.float16),
        (td.complex64, np.complex64),
    ],
)
def test_uniform_values_are_the_mapped_draws(
    bounds: tuple[float, float], dtype: td.dtype, np_dtype: object
) -> None:
    g = Generator().manual_seed(1234)
    got = td.empty(3, 5, dtype=dtype).uniform_(*bounds, generator=g)
    assert got.tolist() == _expected(1234, (3, 5), *bounds, np_dtype)


def test_rand_draws_the_default_generators_stream() -> None:
    td.manual_seed(99)
    first = td.rand(4, 4).tolist()
    second = td.rand(2, 3, dtype=td.float64).tolist()
    draws = np.random.Generator(np.random.PCG64(99))
    assert first == draws.random((4, 4)).astype(np.float32).tolist()
    assert second == draws.random((2, 3)).tolist()


def test_uniform_of_a_non_contiguous_tensor_fills_in_logical_order() -> None:
    g = Generator().manual_seed(5)
    base = td.zeros(4, 3, dtype=td.float64)
    base.t().uniform_(generator=g)
    assert base.t().tolist() == _expected(5, (3, 4), 0.0, 1.0, np.float64)


def test_uniform_bounds_error_message() -> None:
    with pytest.raises(RuntimeError) as e:
        td.ones(2).uniform_(2, 1)
    assert str(e.value) == "uniform_ expects to return a [from, to) range, but found from=2 > to=1"
