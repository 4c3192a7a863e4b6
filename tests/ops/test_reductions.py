"""Reductions, softmax, cumsum and the batched linear algebra against torch 2.13, on 'cpu'
and 'meta' (values, dtype, shape, strides, out= results, exception types).

Each sample builds its inputs with the library it is given (torch or tensordispatch) and
returns the result. "meta-differs": torch's meta path checks differently (another exception
type, or none), so torch on CPU is the oracle there (docs/CODEGEN.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.ops.conftest import check_sample, sample_ids

Sample = tuple[str, Callable[[Any, str], Any], str]
SAMPLES: list[Sample] = []


def T(lib: Any, data: Any, dtype: str = "float32", device: str = "cpu") -> Any:
    return lib.tensor(data, dtype=getattr(lib, dtype), device=device)


def sample(op: str, flags: str = "") -> Callable[[Callable[[Any, str], Any]], None]:
    def register(fn: Callable[[Any, str], Any]) -> None:
        SAMPLES.append((op, fn, flags))

    return register


M23 = [[1.0, -2.0, 3.5], [0.25, 5.0, -6.0]]
M32 = [[1.0, 2.0], [-3.0, 4.0], [5.5, -6.0]]
V3 = [1.5, -2.0, 3.0]
I23 = [[7, -3, 2], [-8, 5, 4]]


def E(L: Any, d: str, *shape: int) -> Any:
    return L.ones(*shape, device=d)


def O(L: Any, d: str, dtype: str = "float32") -> Any:
    return L.empty(0, dtype=getattr(L, dtype), device=d)


# -- sum / mean / prod -------------------------------------------------------------------------

sample("sum")(lambda L, d: L.sum(T(L, I23, "int8", d)))
sample("sum")(lambda L, d: L.sum(T(L, M23, device=d), dtype=L.float64))
sample("sum")(lambda L, d: L.sum(E(L, d, 0, 3), 0))
sample("sum")(lambda L, d: L.sum(E(L, d, 0, 3), 1))
sample("sum")(lambda L, d: L.sum(T(L, 2.0, device=d), 0, keepdim=True))
sample("sum")(lambda L, d: L.sum(T(L, M23, device=d), 1, out=O(L, d, "float64")))
sample("sum")(lambda L, d: L.sum(T(L, I23, "int64", d), out=O(L, d, "int64")))
sample("mean")(lambda L, d: L.mean(T(L, M23, device=d), out=O(L, d)))
sample("mean", "meta-differs")(
    lambda L, d: L.mean(T(L, I23, "int64", d), dtype=L.float32, out=O(L, d, "float64"))
)
sample("mean")(lambda L, d: L.mean(E(L, d, 0, 3), 1))
sample("prod")(lambda L, d: L.prod(T(L, M23, device=d)))
sample("prod")(lambda L, d: L.prod(T(L, I23, "int32", d)))
sample("prod")(lambda L, d: L.prod(T(L, [True, False], "bool", d)))
sample("prod")(lambda L, d: L.prod(T(L, M23, device=d), dtype=L.float64))
sample("prod")(lambda L, d: L.prod(T(L, M23, device=d), 1))
sample("prod")(lambda L, d: T(L, M32, device=d).t().prod(-1, keepdim=True))
sample("prod")(lambda L, d: L.prod(T(L, I23, "int8", d), 0))
sample("prod")(lambda L, d: L.prod(T(L, M23, device=d), 0, dtype=L.float64))
sample("prod")(lambda L, d: L.prod(T(L, M23, device=d), 0, out=O(L, d, "int64")))
sample("prod")(lambda L, d: L.prod(T(L, M23, device=d), 2))
sample("prod")(lambda L, d: L.prod(E(L, d, 0, 3), 0))
sample("prod")(lambda L, d: L.prod(T(L, 3.0, device=d), -1))

# -- amax / amin / max / min / argmax / argmin -------------------------------------------------

for _name in ("amax", "amin"):

    def _am(name: str) -> None:
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d), 0))
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d)))
        sample(name)(lambda L, d: getattr(L, name)(T(L, I23, "int64", d), (0, 1), keepdim=True))
        sample(name)(lambda L, d: getattr(T(L, M32, device=d).t(), name)(-1, True))
        sample(name)(lambda L, d: getattr(L, name)(T(L, [[True, False]], "bool", d), 1))
        sample(name)(lambda L, d: getattr(L, name)(E(L, d, 0, 3), 1))
        sample(name, "meta-differs")(lambda L, d: getattr(L, name)(E(L, d, 0, 3), 0))
        sample(name)(lambda L, d: getattr(L, name)(E(L, d, 0, 3)))
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d), (0, 0)))
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d), 0, out=O(L, d)))
        sample(name, "meta-differs")(
            lambda L, d: getattr(L, name)(T(L, M23, device=d), 0, out=O(L, d, "float64"))
        )
        sample(name)(lambda L, d: getattr(L, name)(T(L, 4.0, device=d), 0))

    _am(_name)

for _name in ("max", "min"):

    def _mm(name: str) -> None:
        sample(name)(lambda L, d: tuple(getattr(L, name)(T(L, M23, device=d), 1)))
        sample(name)(lambda L, d: tuple(getattr(L, name)(T(L, I23, "int32", d), 0, True)))
        sample(name)(lambda L, d: tuple(getattr(T(L, M32, device=d).t(), name)(dim=-2)))
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d)))
        sample(name)(lambda L, d: getattr(L, name)(T(L, I23, "int64", d)))
        sample(name, "meta-differs")(lambda L, d: getattr(L, name)(E(L, d, 0, 3)))
        sample(name, "meta-differs")(lambda L, d: tuple(getattr(L, name)(E(L, d, 0, 3), 0)))
        sample(name)(lambda L, d: tuple(getattr(L, name)(E(L, d, 0, 3), 1)))
        sample(name)(lambda L, d: tuple(getattr(L, name)(T(L, 2.0, device=d), 0)))
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d), out=O(L, d)))
        sample(name)(
            lambda L, d: tuple(getattr(L, name)(T(L, M23, device=d), 0, out=(O(L, d), O(L, d))))
        )
        sample(name)(
            lambda L, d: tuple(
                getattr(L, name)(T(L, M23, device=d), 0, out=(O(L, d), O(L, d, "int64")))
            )
        )
        sample(name, "meta-differs")(
            lambda L, d: tuple(getattr(L, name)(T(L, [[1j, 2]], "complex64", d), 0))
        )
        sample(name)(
            lambda L, d: tuple(getattr(L, name)(T(L, [[1.0, float("nan"), 3.0]], device=d), 1))
        )

    _mm(_name)

for _name in ("argmax", "argmin"):

    def _arg(name: str) -> None:
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d)))
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d), keepdim=True))
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d), 1))
        sample(name)(lambda L, d: getattr(T(L, M32, device=d).t(), name)(0, keepdim=True))
        sample(name)(lambda L, d: getattr(L, name)(T(L, [3, 1, 3, 1], "int64", d)))
        sample(name, "meta-differs")(lambda L, d: getattr(L, name)(E(L, d, 0, 3)))
        sample(name)(lambda L, d: getattr(L, name)(E(L, d, 0, 3), 0))
        sample(name)(lambda L, d: getattr(L, name)(E(L, d, 0, 3), 1))
        sample(name)(lambda L, d: getattr(L, name)(T(L, 3.0, device=d), 0, keepdim=True))
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d), 0, out=O(L, d, "int64")))
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d), 0, out=O(L, d, "int32")))
        sample(name, "meta-differs")(
            lambda L, d: getattr(L, name)(T(L, [[1j, 2]], "complex64", d), 0)
        )

    _arg(_name)

# -- var / std / norm / logsumexp ----------------------------------------------------------------

for _name in ("var", "std"):

    def _var(name: str) -> None:
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d)))
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d), False))
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d), 1))
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d), 1, False, True))
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d), [0, 1], keepdim=True))
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, "float64", d), 0, correction=0))
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d), dim=1, correction=2))
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d), None, correction=0.5))
        sample(name)(lambda L, d: getattr(T(L, M32, device=d).t(), name)(1))
        sample(name, "meta-differs")(lambda L, d: getattr(L, name)(T(L, I23, "int64", d)))
        sample(name)(lambda L, d: getattr(L, name)(T(L, [[1j, 2.0]], "complex64", d), 1))
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d), 1, out=O(L, d)))
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d), 1, out=O(L, d, "float64")))
        sample(name)(
            lambda L, d: getattr(L, name)(T(L, M23, device=d), 1, correction=0, out=O(L, d))
        )
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d), 5))

    _var(_name)
sample("var", "novalues")(lambda L, d: L.var(T(L, [1.0], device=d)))

sample("norm")(lambda L, d: L.norm(T(L, M23, device=d)))
sample("norm")(lambda L, d: L.norm(T(L, M23, device=d), 1))
sample("norm")(lambda L, d: L.norm(T(L, M23, device=d), float("inf")))
sample("norm")(lambda L, d: L.norm(T(L, M23, device=d), 0))
sample("norm")(lambda L, d: L.norm(T(L, M23, device=d), 3.5))
sample("norm")(lambda L, d: L.norm(T(L, M23, device=d), 2, 1))
sample("norm")(lambda L, d: L.norm(T(L, M23, device=d), 1, (0, 1), keepdim=True))
sample("norm")(lambda L, d: L.norm(T(L, M23, device=d), float("-inf"), -1))
sample("norm")(lambda L, d: L.norm(T(L, M23, device=d), p=2, dim=1, dtype=L.float64))
sample("norm")(lambda L, d: L.norm(T(L, M23, device=d), p=2, dim=1, dtype=L.int64))
sample("norm")(lambda L, d: L.norm(T(L, I23, "int64", d)))
sample("norm")(lambda L, d: L.norm(T(L, [[3j, 4.0]], "complex64", d), 2, 1))
sample("norm")(lambda L, d: L.norm(T(L, M23, device=d), 2, 1, out=O(L, d)))
sample("norm")(lambda L, d: L.norm(T(L, M23, device=d), 2, 1, out=O(L, d, "float64")))
sample("norm")(
    lambda L, d: L.ops.aten.norm.ScalarOpt_dtype(T(L, M23, device=d), 2, dtype=L.float64)
)
sample("norm")(lambda L, d: L.ops.aten.norm.Scalar(T(L, M32, device=d).t()))
sample("norm")(lambda L, d: L.ops.aten.norm.Scalar_out(T(L, M23, device=d), 1, out=O(L, d)))
sample("norm")(
    lambda L, d: L.ops.aten.norm.ScalarOpt_dtype_out(
        T(L, M23, device=d), 2, dtype=L.float64, out=O(L, d, "float64")
    )
)
sample("prod")(lambda L, d: L.ops.aten.prod.out(T(L, M23, device=d), out=O(L, d)))
sample("prod")(lambda L, d: L.ops.aten.prod.out(T(L, I23, "int64", d), out=O(L, d, "int64")))
sample("mean")(lambda L, d: L.ops.aten.mean.dtype_out(T(L, M23, device=d), out=O(L, d)))

sample("logsumexp")(lambda L, d: L.logsumexp(T(L, M23, device=d), 1))
sample("logsumexp")(lambda L, d: L.logsumexp(T(L, M23, device=d), (0, 1), keepdim=True))
sample("logsumexp")(lambda L, d: L.logsumexp(T(L, I23, "int64", d), 0))
sample("logsumexp")(lambda L, d: L.logsumexp(T(L, [[1e4, 1e4, -1e4]], "float64", d), 1))
sample("logsumexp")(lambda L, d: L.logsumexp(T(L, [[float("-inf")] * 3], device=d), 1))
sample("logsumexp")(lambda L, d: L.logsumexp(T(L, [[float("inf"), 1.0]], device=d), 1))
sample("logsumexp", "meta-differs")(lambda L, d: L.logsumexp(T(L, M23, device=d), ()))
sample("logsumexp")(lambda L, d: L.logsumexp(T(L, M23, device=d), 1, out=O(L, d, "float64")))
sample("logsumexp")(lambda L, d: L.logsumexp(T(L, M23, device=d), 1, out=O(L, d, "int64")))
sample("logsumexp")(lambda L, d: T(L, M23, device=d).logsumexp(-1, True))

# -- softmax / log_softmax / cumsum / all / any ---------------------------------------------------

for _name in ("softmax", "log_softmax"):

    def _soft(name: str) -> None:
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d), 1))
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d), 0))
        sample(name)(lambda L, d: getattr(T(L, M32, device=d).t(), name)(-1))
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d), 1, dtype=L.float64))
        sample(name)(lambda L, d: getattr(L, name)(T(L, I23, "int64", d), 1, dtype=L.float32))
        sample(name, "meta-differs")(lambda L, d: getattr(L, name)(T(L, I23, "int64", d), 1))
        sample(name)(lambda L, d: getattr(L, name)(T(L, 2.0, device=d), 0))
        sample(name)(lambda L, d: getattr(L, name)(T(L, [[float("-inf"), 1.0, 1e4]], device=d), 1))
        sample(name, "meta-differs")(lambda L, d: getattr(L, name)(T(L, M23, device=d), 2))
        sample(name)(lambda L, d: getattr(L, name)(E(L, d, 0, 3), 0))
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d), 1, out=O(L, d)))
        sample(name)(lambda L, d: getattr(L.ops.aten, "_" + name)(T(L, M23, device=d), 1, False))
        sample(name, "meta-differs")(
            lambda L, d: getattr(L.ops.aten, "_" + name)(T(L, M23, "float16", d), 1, True)
        )

    _soft(_name)

sample("cumsum")(lambda L, d: L.cumsum(T(L, M23, device=d), 1))
sample("cumsum")(lambda L, d: L.cumsum(T(L, M32, device=d).t(), 0))
sample("cumsum")(lambda L, d: L.cumsum(T(L, I23, "int8", d), -1))
sample("cumsum")(lambda L, d: L.cumsum(T(L, [True, True, False], "bool", d), 0))
sample("cumsum")(lambda L, d: L.cumsum(T(L, M23, device=d), 0, dtype=L.float64))
sample("cumsum")(lambda L, d: L.cumsum(T(L, 3.0, device=d), 0))
sample("cumsum")(lambda L, d: L.cumsum(E(L, d, 0, 3), 0))
sample("cumsum")(lambda L, d: L.cumsum(T(L, M23, device=d), 2))
sample("cumsum")(lambda L, d: L.cumsum(T(L, M23, device=d), 0, out=O(L, d, "int64")))
sample("cumsum")(lambda L, d: T(L, M23, device=d).cumsum_(1))
sample("cumsum")(lambda L, d: T(L, I23, "int32", d).cumsum_(1))

for _name in ("all", "any"):

    def _logical(name: str) -> None:
        f = lambda L: getattr(L, name)
        sample(name)(lambda L, d: f(L)(T(L, [[1.0, 0.0], [2.0, 3.0]], device=d)))
        sample(name)(lambda L, d: f(L)(T(L, [[1.0, 0.0], [2.0, 3.0]], device=d), 1))
        sample(name)(lambda L, d: f(L)(T(L, [[1.0, 0.0], [2.0, 3.0]], device=d), 0, keepdim=True))
        sample(name)(lambda L, d: f(L)(T(L, [[1, 0], [2, 3]], "uint8", d), 0))
        sample(name)(lambda L, d: f(L)(T(L, [[1, 0], [2, 3]], "uint8", d)))
        sample(name)(lambda L, d: f(L)(T(L, [[True, False]], "bool", d), (0, 1)))
        sample(name)(lambda L, d: f(L)(T(L, [[True, False]], "bool", d), dim=None, keepdim=True))
        sample(name)(lambda L, d: f(L)(T(L, [[True, False]], "bool", d), ()))
        sample(name)(lambda L, d: f(L)(E(L, d, 0, 3), 1))
        sample(name)(lambda L, d: f(L)(E(L, d, 0, 3)))
        sample(name)(lambda L, d: f(L)(T(L, [[1j, 0]], "complex64", d), 1))
        sample(name, "meta-differs")(lambda L, d: f(L)(T(L, M23, device=d), 0, out=O(L, d)))
        sample(name)(lambda L, d: f(L)(T(L, M23, device=d), 0, out=O(L, d, "uint8")))
        sample(name)(lambda L, d: f(L)(T(L, M23, device=d), out=O(L, d, "bool")))
        sample(name)(lambda L, d: f(L)(T(L, 0.0, device=d), 0))

    _logical(_name)

# -- linear algebra --------------------------------------------------------------------------

B234 = [[[1.0, 2.0, 0.5, -1.0], [0.0, 1.0, 2.0, 3.0], [1.5, -2.0, 1.0, 0.0]],
        [[2.0, 0.0, 1.0, 1.0], [1.0, -1.0, 0.5, 2.0], [0.0, 3.0, -1.0, 1.0]]]  # fmt: skip
B242 = [[[1.0, 0.0], [2.0, 1.0], [0.5, -1.0], [1.0, 1.0]],
        [[0.0, 2.0], [1.0, 1.0], [-1.0, 3.0], [2.0, 0.5]]]  # fmt: skip
sample("baddbmm")(lambda L, d: L.baddbmm(E(L, d, 2), T(L, B234, device=d), T(L, B242, device=d)))
sample("baddbmm")(
    lambda L, d: L.baddbmm(
        E(L, d, 2, 3, 2), T(L, B234, device=d), T(L, B242, device=d), beta=0.5, alpha=2
    )
)
sample("baddbmm")(
    lambda L, d: L.baddbmm(
        T(L, [float("nan")], device=d), T(L, B234, device=d), T(L, B242, device=d), beta=0
    )
)
sample("baddbmm")(
    lambda L, d: E(L, d, 2, 3, 2).baddbmm_(T(L, B234, device=d), T(L, B242, device=d))
)
sample("baddbmm")(lambda L, d: E(L, d, 2).baddbmm_(T(L, B234, device=d), T(L, B242, device=d)))
sample("baddbmm")(lambda L, d: L.baddbmm(E(L, d, 3), T(L, B234, device=d), T(L, B242, device=d)))
sample("baddbmm")(lambda L, d: L.baddbmm(E(L, d, 2), T(L, B234, device=d), T(L, B234, device=d)))
sample("baddbmm")(lambda L, d: L.baddbmm(E(L, d, 2), T(L, M23, device=d), T(L, B242, device=d)))
sample("baddbmm")(
    lambda L, d: L.baddbmm(E(L, d, 2), T(L, B234, device=d), T(L, B242, "float64", d))
)
sample("baddbmm")(
    lambda L, d: L.baddbmm(E(L, d, 2), T(L, B234, device=d), T(L, B242, device=d), out=O(L, d))
)
sample("addmv")(lambda L, d: L.addmv(E(L, d, 2), T(L, M23, device=d), T(L, V3, device=d)))
sample("addmv")(
    lambda L, d: L.addmv(E(L, d, 1), T(L, M23, device=d), T(L, V3, device=d), beta=2, alpha=-1)
)
sample("addmv")(
    lambda L, d: L.addmv(T(L, 1.0, device=d), T(L, M32, device=d).t(), T(L, V3, device=d))
)
sample("addmv")(lambda L, d: E(L, d, 2).addmv_(T(L, M23, device=d), T(L, V3, device=d), beta=0))
sample("addmv")(lambda L, d: L.addmv(E(L, d, 2), T(L, M23, device=d), E(L, d, 4)))
sample("addmv")(lambda L, d: L.addmv(E(L, d, 3), T(L, M23, device=d), T(L, V3, device=d)))
sample("addmv")(lambda L, d: L.addmv(E(L, d, 2), T(L, M23, device=d), T(L, V3, "float64", d)))
sample("addmv")(lambda L, d: L.addmv(E(L, d, 2), T(L, V3, device=d), T(L, V3, device=d)))
sample("addmv")(
    lambda L, d: L.addmv(E(L, d, 2), T(L, M23, device=d), T(L, V3, device=d), out=O(L, d))
)
sample("addbmm")(lambda L, d: L.addbmm(E(L, d, 3, 2), T(L, B234, device=d), T(L, B242, device=d)))
sample("addbmm")(
    lambda L, d: L.addbmm(E(L, d, 2), T(L, B234, device=d), T(L, B242, device=d), beta=0, alpha=3)
)
sample("addbmm")(lambda L, d: E(L, d, 3, 2).addbmm_(T(L, B234, device=d), T(L, B242, device=d)))
sample("addbmm")(lambda L, d: L.addbmm(E(L, d, 3, 2), T(L, B234, device=d), T(L, B234, device=d)))
sample("addbmm")(lambda L, d: L.addbmm(E(L, d, 3, 2), T(L, M23, device=d), T(L, B242, device=d)))
sample("addbmm")(
    lambda L, d: L.addbmm(E(L, d, 3, 2), T(L, B234, device=d), T(L, B242, device=d), out=O(L, d))
)
sample("outer")(lambda L, d: L.outer(T(L, V3, device=d), T(L, [1.0, 2.0], device=d)))
sample("outer")(lambda L, d: L.outer(T(L, [1, 2], "int64", d), T(L, V3, device=d)))
sample("outer")(lambda L, d: T(L, V3, device=d).outer(T(L, V3, "float64", d)))
sample("outer")(lambda L, d: L.outer(T(L, M23, device=d), T(L, V3, device=d)))
sample("outer")(lambda L, d: L.outer(T(L, V3, device=d), T(L, V3, device=d), out=O(L, d)))
W = [[1.0, 0.5, -1.0], [2.0, 0.0, 1.0], [0.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
for _inp in (V3, M23, [M23, M23]):

    def _linear(inp: Any) -> None:
        F = lambda L: L.ops.aten.linear
        sample("linear")(lambda L, d: F(L)(T(L, inp, device=d), T(L, W, device=d)))
        sample("linear")(
            lambda L, d: F(L)(
                T(L, inp, device=d), T(L, W, device=d), T(L, [1.0, 2, 3, 4], device=d)
            )
        )

    _linear(_inp)
sample("linear")(
    lambda L, d: L.ops.aten.linear(
        T(L, [M32, M32], device=d).transpose(1, 2),
        T(L, W, device=d),
        T(L, [1.0, 2, 3, 4], device=d),
    )
)
sample("linear")(lambda L, d: L.ops.aten.linear(T(L, M32, device=d), T(L, W, device=d)))
sample("linear")(
    lambda L, d: L.ops.aten.linear.out(
        T(L, M23, device=d), T(L, W, device=d), T(L, [1.0, 2, 3, 4], device=d), out=O(L, d)
    )
)
# mm / bmm / matmul / dot / mv edge cases
sample("mm")(lambda L, d: L.mm(E(L, d, 0, 3), E(L, d, 3, 2)))
sample("mm")(lambda L, d: L.mm(E(L, d, 2, 0), E(L, d, 0, 2)))
sample("bmm")(lambda L, d: L.bmm(E(L, d, 0, 2, 3), E(L, d, 0, 3, 2)))
sample("bmm")(lambda L, d: L.bmm(T(L, B234, device=d), T(L, B242, device=d), out=O(L, d)))
sample("matmul")(lambda L, d: L.matmul(E(L, d, 0), E(L, d, 0)))
sample("matmul")(lambda L, d: L.matmul(E(L, d, 3), E(L, d, 4)))
sample("matmul")(lambda L, d: L.matmul(E(L, d, 2, 1, 3, 4), E(L, d, 5, 4, 2)))
sample("matmul")(lambda L, d: L.matmul(E(L, d, 4), E(L, d, 2, 4, 3)))
sample("dot")(lambda L, d: L.dot(T(L, [1, 2], "int64", d), T(L, [3, 4], "int64", d)))
sample("dot")(lambda L, d: L.dot(T(L, V3, device=d), T(L, V3, "float64", d)))
sample("dot")(lambda L, d: L.dot(E(L, d, 0), E(L, d, 0)))
sample("mv")(lambda L, d: L.mv(T(L, M32, device=d).t(), T(L, V3, device=d)))
sample("mv")(lambda L, d: L.mv(T(L, M23, device=d), E(L, d, 2)))


@pytest.mark.parametrize(("op", "fn", "flags"), SAMPLES, ids=sample_ids(SAMPLES))
def test_cpu_matches_torch(op: str, fn: Any, flags: str, coverage: Any) -> None:
    check_sample(op, fn, "cpu", "novalues" not in flags, coverage, None)


@pytest.mark.parametrize(("op", "fn", "flags"), SAMPLES, ids=sample_ids(SAMPLES))
def test_meta_matches_torch(op: str, fn: Any, flags: str, coverage: Any) -> None:
    check_sample(
        op + "[meta]", fn, "meta", False, coverage, "cpu" if "meta-differs" in flags else None
    )
