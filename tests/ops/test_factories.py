"""Factories through BackendSelect (arange, linspace, eye, full_like) against torch 2.13 on
'cpu' and 'meta', and the random operators (rand, randn, randint, *_like, uniform_, normal_,
random_): shapes, dtypes and devices against torch, values by distribution and seed
determinism (Note [Random streams differ from torch] in backends/generator.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch.backends.generator import Generator, manual_seed
from tests.ops.conftest import assert_same_result, run_both

Sample = tuple[str, Callable[[Any, str], Any]]
SAMPLES: list[Sample] = []


def sample(op: str) -> Callable[[Callable[[Any, str], Any]], None]:
    def register(fn: Callable[[Any, str], Any]) -> None:
        SAMPLES.append((op, fn))

    return register


def O(L: Any, d: str, dtype: str = "float32", n: int = 0) -> Any:
    return L.empty(n, dtype=getattr(L, dtype), device=d)


sample("arange")(lambda L, d: L.arange(5, device=d))
sample("arange")(lambda L, d: L.arange(5.0, device=d))
sample("arange")(lambda L, d: L.arange(1, 4, device=d))
sample("arange")(lambda L, d: L.arange(1, 2.5, 0.5, device=d))
sample("arange")(lambda L, d: L.arange(10, 0, -3, device=d))
sample("arange")(lambda L, d: L.arange(0, 1, 0.1, dtype=L.float64, device=d))
sample("arange")(lambda L, d: L.arange(-1.5, 2, device=d, dtype=L.int32))
sample("arange")(lambda L, d: L.arange(start=2, end=7, step=2, device=d))
sample("arange")(lambda L, d: L.arange(4, out=O(L, d, "int64")))
sample("arange")(lambda L, d: L.arange(1, 3, 0.5, out=O(L, d, "float64", 4)))
sample("arange")(lambda L, d: L.ops.aten.arange.default(3, device=d))
sample("arange")(lambda L, d: L.ops.aten.arange.out(3, out=O(L, d)))
sample("arange")(lambda L, d: L.arange(0, 5, 0, device=d))
sample("arange")(lambda L, d: L.arange(5, 0, 1, device=d))
sample("linspace")(lambda L, d: L.linspace(0, 1, 5, device=d))
sample("linspace")(lambda L, d: L.linspace(-2, 10, 7, dtype=L.float64, device=d))
sample("linspace")(lambda L, d: L.linspace(0, 10, 4, dtype=L.int64, device=d))
sample("linspace")(lambda L, d: L.linspace(3, 3, 1, device=d))
sample("linspace")(lambda L, d: L.linspace(0, 1, 0, device=d))
sample("linspace")(lambda L, d: L.linspace(0, 1, 3, out=O(L, d, "float64")))
sample("linspace")(lambda L, d: L.linspace(0, 1, -1, device=d))
sample("linspace")(lambda L, d: L.linspace(L.tensor(0.0, device=d), L.tensor(1.0, device=d), 3))
sample("linspace")(lambda L, d: L.linspace(L.tensor(0, device=d), 4, 3, device=d))
sample("linspace")(lambda L, d: L.linspace(-1, L.tensor(4.0, device=d), 6, device=d))
sample("linspace")(lambda L, d: L.linspace(0, L.tensor(4.0, device=d), 3, out=L.empty(0, device=d)))
sample("linspace")(lambda L, d: L.linspace(L.tensor([0.0, 1.0], device=d), 1, 3, device=d))
sample("eye")(lambda L, d: L.eye(3, device=d))
sample("eye")(lambda L, d: L.eye(2, 4, dtype=L.int64, device=d))
sample("eye")(lambda L, d: L.eye(3, 0, device=d))
sample("eye")(lambda L, d: L.eye(2, out=O(L, d, "float64")))
sample("eye")(lambda L, d: L.eye(-1, device=d))
sample("full_like")(lambda L, d: L.full_like(L.ones(2, 3, device=d).t(), 7))
sample("full_like")(lambda L, d: L.full_like(L.ones(2, 3, device=d), 2.5, dtype=L.float64))
sample("full_like")(lambda L, d: L.full_like(L.ones(2, dtype=L.int64, device=d), 3.7))


def _ids() -> list[str]:
    seen: dict[str, int] = {}
    ids = []
    for op, _ in SAMPLES:
        seen[op] = seen.get(op, 0) + 1
        ids.append(f"{op}-{seen[op]}")
    return ids


@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize(("op", "fn"), SAMPLES, ids=_ids())
def test_factory_matches_torch(op: str, fn: Any, device: str, coverage: Any) -> None:
    label = op if device == "cpu" else op + "[meta]"
    coverage[label][1] += 1
    expected, got = run_both(fn, device)
    if isinstance(expected, BaseException):
        assert isinstance(got, type(expected)), f"torch raised {expected!r}; we gave {got!r}"
    else:
        if isinstance(got, BaseException):
            raise got
        assert_same_result(expected, got, values=device == "cpu")
        assert got.device.type == expected.device.type
    coverage[label][0] += 1


# -- random: metadata like torch ---------------------------------------------------------------

RANDOM: list[tuple[str, Callable[[Any, str], Any]]] = [
    ("rand", lambda L, d: L.rand(2, 3, device=d)),
    ("rand", lambda L, d: L.rand((4,), dtype=L.float64, device=d)),
    ("rand", lambda L, d: L.rand(size=(2, 2), device=d)),
    ("randn", lambda L, d: L.randn(3, device=d)),
    ("randn", lambda L, d: L.randn(2, 1, dtype=L.float16, device=d)),
    ("randint", lambda L, d: L.randint(5, (3,), device=d)),
    ("randint", lambda L, d: L.randint(-2, 5, (2, 2), dtype=L.int32, device=d)),
    ("randint", lambda L, d: L.randint(0, 5, (2,), dtype=L.float32, device=d)),
    ("rand_like", lambda L, d: L.rand_like(L.ones(2, 3, device=d).t())),
    ("randn_like", lambda L, d: L.randn_like(L.ones(2, 3, device=d), dtype=L.float64)),
    ("uniform_", lambda L, d: L.ones(3, device=d).uniform_(-1, 1)),
    ("normal_", lambda L, d: L.ones(3, device=d).normal_(2.0, 0.5)),
    ("random_", lambda L, d: L.ones(3, device=d).random_(0, 10)),
    ("random_", lambda L, d: L.ones(3, dtype=L.int64, device=d).random_(10)),
    ("rand", lambda L, d: L.rand(2, out=L.empty(0, device=d))),
    ("rand", lambda L, d: L.rand(2, dtype=L.int64, device="cpu")),
    ("uniform_", lambda L, d: L.ones(3, device="cpu").uniform_(2, 1)),
    ("normal_", lambda L, d: L.ones(3, device="cpu").normal_(0, -1)),
    ("randint", lambda L, d: L.randint(5, 5, (2,), device="cpu")),
]


@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize(("op", "fn"), RANDOM, ids=[f"{o}-{i}" for i, (o, _) in enumerate(RANDOM)])
def test_random_metadata_matches_torch(op: str, fn: Any, device: str) -> None:
    expected, got = run_both(fn, device)
    if isinstance(expected, BaseException):
        assert isinstance(got, type(expected)), f"torch raised {expected!r}; we gave {got!r}"
        return
    if isinstance(got, BaseException):
        raise got
    assert_same_result(expected, got, values=False)


# -- random: values ----------------------------------------------------------------------------

N = 20000


def test_rand_is_uniform_on_unit_interval() -> None:
    x = td.rand(N, dtype=td.float64).numpy()
    assert 0.0 <= x.min() and x.max() < 1.0
    assert abs(x.mean() - 0.5) < 0.01 and abs(x.var() - 1 / 12) < 0.005
    counts, _ = np.histogram(x, bins=10, range=(0, 1))
    chi2 = ((counts - N / 10) ** 2 / (N / 10)).sum()
    assert chi2 < 27.9  # 9 degrees of freedom, p = 0.001


def test_randn_is_standard_normal() -> None:
    x = td.randn(N, dtype=td.float64).numpy()
    assert abs(x.mean()) < 0.03 and abs(x.std() - 1.0) < 0.03
    assert abs((np.abs(x) < 1).mean() - 0.6827) < 0.015


def test_normal_and_uniform_in_place_follow_their_parameters() -> None:
    x = td.empty(N, dtype=td.float64).normal_(3.0, 0.5).numpy()
    assert abs(x.mean() - 3.0) < 0.02 and abs(x.std() - 0.5) < 0.02
    u = td.empty(N, dtype=td.float64).uniform_(-2.0, 6.0).numpy()
    assert -2.0 <= u.min() and u.max() < 6.0 and abs(u.mean() - 2.0) < 0.1


def test_randint_covers_its_half_open_range_evenly() -> None:
    x = td.randint(-3, 4, (N,)).numpy()
    assert x.dtype == np.int64 and set(np.unique(x)) == set(range(-3, 4))
    counts = np.bincount(x + 3)
    assert ((counts - N / 7) ** 2 / (N / 7)).sum() < 22.5  # 6 dof, p = 0.001


def test_random_without_bounds_stays_in_the_dtypes_exact_range() -> None:
    assert 0 <= td.empty(N, dtype=td.float16).random_().numpy().astype(np.float64).min()
    assert td.empty(N, dtype=td.float16).random_().numpy().max() <= 2**11
    assert set(np.unique(td.empty(200, dtype=td.bool).random_().numpy())) == {False, True}
    assert td.empty(N, dtype=td.uint8).random_().numpy().max() > 200
    x = td.empty(N, dtype=td.int8).random_(-5, None).numpy()
    assert x.min() >= -5 and x.max() > 100


def test_manual_seed_makes_every_random_op_repeat() -> None:
    def draw() -> list[Any]:
        return [
            td.rand(3).tolist(), td.randn(2, 2).tolist(), td.randint(0, 100, (4,)).tolist(),
            td.empty(2).uniform_(5, 6).tolist(), td.rand_like(td.ones(2)).tolist(),
        ]  # fmt: skip

    td.manual_seed(1234)
    first = draw()
    td.manual_seed(1234)
    assert draw() == first
    td.manual_seed(4321)
    assert draw() != first


def test_generator_streams_are_independent_of_the_default() -> None:
    g = Generator().manual_seed(7)
    a = td.rand(4, generator=g).tolist()
    manual_seed(0)
    td.rand(10)
    g.manual_seed(7)
    assert td.rand(4, generator=g).tolist() == a
    assert g.initial_seed() == 7


def test_generator_state_round_trips() -> None:
    g = Generator().manual_seed(3)
    state = g.get_state()
    a = td.randn(3, generator=g).tolist()
    g.set_state(state)
    assert td.randn(3, generator=g).tolist() == a


def test_manual_seed_returns_the_default_generator_and_is_exported() -> None:
    assert td.manual_seed(5) is manual_seed(5)
    assert isinstance(td.Generator(), Generator)


def test_a_non_generator_is_refused() -> None:
    with pytest.raises(TypeError) as e:
        td.rand(2, generator=42)
    assert str(e.value) == "generator must be a tensordispatch.Generator or None, got int"


def test_arange_with_four_numbers_is_refused() -> None:
    with pytest.raises(TypeError) as e:
        td.arange(1, 2, 3, 4)
    with pytest.raises(TypeError) as expected:
        torch.arange(1, 2, 3, 4)
    assert str(e.value) == str(expected.value)  # torch's "invalid combination" text
    assert str(e.value).startswith(
        "arange() received an invalid combination of arguments - got (int, int, int, int), "
        "but expected one of:\n * (Number end, *, Tensor out = None, "
    )


ERRORS: list[tuple[str, Callable[[Any], Any]]] = [
    ("arange-step", lambda L: L.arange(0, 5, 0)),
    ("arange-sign", lambda L: L.arange(5, 0, 1)),
    ("linspace-steps", lambda L: L.linspace(0, 1, -1)),
    ("eye-n", lambda L: L.eye(-1)),
    ("eye-m", lambda L: L.eye(2, -1)),
    ("uniform-bounds", lambda L: L.ones(2).uniform_(2, 1)),
    ("normal-std", lambda L: L.ones(2).normal_(0, -1)),
    ("rand-int", lambda L: L.rand(2, dtype=L.int64)),
    ("randint-range", lambda L: L.randint(5, 5, (2,))),
]


@pytest.mark.parametrize(("case", "fn"), ERRORS, ids=[c for c, _ in ERRORS])
def test_error_message_is_torchs(case: str, fn: Any) -> None:
    with pytest.raises(Exception) as theirs:
        fn(torch)
    with pytest.raises(type(theirs.value)) as ours:
        fn(td)
    assert str(ours.value) == str(theirs.value)
