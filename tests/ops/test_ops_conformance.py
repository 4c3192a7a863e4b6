"""Every operator of the first set against torch 2.13, on 'cpu' and on 'meta'.

Each sample builds its inputs with the library it is given (torch or tensordispatch, same
API) and returns the result; results are compared for type, dtype, shape, strides and (on
CPU) values; a sample that raises in torch must raise the same exception type in ours.
On 'meta' the same samples compare shape, dtype and strides (torch's meta tensors).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.ops.conftest import check_sample, sample_ids

Sample = tuple[str, Callable[[Any, str], Any], str]  # (op, fn(lib, device), flags)


def T(lib: Any, data: Any, dtype: str = "float32", device: str = "cpu") -> Any:
    return lib.tensor(data, dtype=getattr(lib, dtype), device=device)


M23 = [[1.0, -2.0, 3.5], [0.25, 5.0, -6.0]]
M32 = [[1.0, 2.0], [-3.0, 4.0], [5.5, -6.0]]
V3 = [1.5, -2.0, 3.0]
I23 = [[7, -3, 2], [-8, 5, 4]]

SAMPLES: list[Sample] = []


def sample(op: str, flags: str = "") -> Callable[[Callable[[Any, str], Any]], None]:
    def register(fn: Callable[[Any, str], Any]) -> None:
        SAMPLES.append((op, fn, flags))

    return register


# -- binary pointwise --------------------------------------------------------------------------

for _name in ("add", "sub", "mul", "div"):

    def _binary(name: str) -> None:
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d), T(L, M23, device=d)))
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d), T(L, V3, device=d)))
        sample(name)(lambda L, d: getattr(L, name)(T(L, I23, "int64", d), 2.5))
        sample(name)(lambda L, d: getattr(L, name)(T(L, I23, "int64", d), 3))
        sample(name)(lambda L, d: getattr(L, name)(T(L, I23, "int32", d), T(L, I23, "int64", d)))
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d), T(L, 2.0, "float64", d)))
        sample(name)(lambda L, d: getattr(L, name)(T(L, V3, "float16", d), T(L, 2, "int64", d)))
        sample(name)(
            lambda L, d: getattr(L, name)(T(L, M32, device=d).t(), T(L, M32, device=d).t())
        )
        sample(name)(lambda L, d: getattr(L, name)(T(L, M32, device=d).t(), T(L, M23, device=d)))
        sample(name)(
            lambda L, d: getattr(L, name)(T(L, [[1.0], [2.0]], device=d), T(L, M32, device=d).t())
        )
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d), T(L, [1.0, 2.0], device=d)))
        sample(name)(
            lambda L, d: getattr(L, name)(
                T(L, M23, device=d), T(L, V3, device=d), out=L.empty(0, device=d)
            )
        )
        sample(name)(
            lambda L, d: getattr(L, name)(
                T(L, M23, device=d), 1, out=L.empty(2, 3, dtype=L.float64, device=d)
            )
        )
        sample(name)(
            lambda L, d: getattr(L, name)(
                T(L, M23, device=d), 1, out=L.empty(2, 3, dtype=L.int64, device=d)
            )
        )
        sample(name)(lambda L, d: getattr(T(L, M23, device=d), name + "_")(T(L, V3, device=d)))
        sample(name, "meta-differs")(lambda L, d: getattr(T(L, I23, "int64", d), name + "_")(1.5))
        sample(name)(lambda L, d: getattr(T(L, V3, device=d), name + "_")(T(L, M23, device=d)))
        sample(name)(lambda L, d: getattr(T(L, M23, device=d), name)(T(L, V3, device=d)))

    _binary(_name)

for _name in ("add", "sub"):

    def _alpha(name: str) -> None:
        sample(name)(
            lambda L, d: getattr(L, name)(T(L, M23, device=d), T(L, V3, device=d), alpha=2)
        )
        sample(name, "meta-differs")(
            lambda L, d: getattr(L, name)(T(L, I23, "int64", d), T(L, I23, "int64", d), alpha=1.5)
        )
        sample(name, "meta-differs")(
            lambda L, d: getattr(L, name)(T(L, M23, device=d), 1, alpha=True)
        )

    _alpha(_name)

sample("add")(lambda L, d: L.add(T(L, [True, False], "bool", d), T(L, [True, True], "bool", d)))
sample("sub")(lambda L, d: L.sub(T(L, [True, False], "bool", d), T(L, [True, True], "bool", d)))
sample("mul")(lambda L, d: L.mul(T(L, [True, False], "bool", d), T(L, [True, True], "bool", d)))
for _mode in ("floor", "trunc"):

    def _div(mode: str) -> None:
        sample("div")(lambda L, d: L.div(T(L, I23, "int64", d), -3, rounding_mode=mode))
        sample("div")(lambda L, d: L.div(T(L, M23, device=d), -1.5, rounding_mode=mode))
        sample("div")(
            lambda L, d: L.div(T(L, I23, "int64", d), T(L, I23, "int64", d), rounding_mode=mode)
        )
        sample("div")(lambda L, d: L.div(T(L, I23, "int64", d), 0, rounding_mode=mode))

    _div(_mode)
sample("div")(lambda L, d: L.div(T(L, M23, device=d), 2, rounding_mode=None))
sample("div", "meta-differs")(lambda L, d: L.div(T(L, M23, device=d), 2, rounding_mode="round"))
sample("div")(lambda L, d: T(L, I23, "int64", d).div_(2, rounding_mode="floor"))
sample("rsub")(lambda L, d: 1 - T(L, M23, device=d))
sample("rsub")(lambda L, d: L.rsub(T(L, M23, device=d), T(L, V3, device=d), alpha=2))
sample("div")(lambda L, d: 2 / T(L, M23, device=d))

for _name in ("eq", "ne", "lt", "le", "gt", "ge"):

    def _compare(name: str) -> None:
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d), T(L, V3, device=d)))
        sample(name)(lambda L, d: getattr(L, name)(T(L, I23, "int64", d), 2.5))
        sample(name)(lambda L, d: getattr(L, name)(T(L, M32, device=d).t(), T(L, M23, device=d)))
        sample(name)(lambda L, d: getattr(L, name)(T(L, I23, "int32", d), T(L, M23, "float64", d)))
        sample(name)(
            lambda L, d: getattr(L, name)(
                T(L, M23, device=d), 0.25, out=L.empty(0, dtype=L.float32, device=d)
            )
        )
        sample(name)(lambda L, d: getattr(T(L, M23, device=d), name + "_")(T(L, V3, device=d)))
        sample(name, "meta-differs")(
            lambda L, d: getattr(T(L, V3, device=d), name + "_")(T(L, M23, device=d))
        )
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d), T(L, [1.0, 2.0], device=d)))

    _compare(_name)
sample("eq")(lambda L, d: T(L, M23, device=d) == 5.0)
sample("ne")(lambda L, d: T(L, M23, device=d) != T(L, V3, device=d))
sample("lt")(lambda L, d: T(L, M23, device=d) < 1)
sample("le")(lambda L, d: T(L, I23, "int64", d) <= T(L, I23, "int64", d))
sample("gt")(lambda L, d: 1 > T(L, M23, device=d))
sample("ge")(lambda L, d: T(L, M23, device=d) >= 0.25)

# -- unary pointwise ---------------------------------------------------------------------------

for _name in ("exp", "sin", "cos", "sqrt", "neg", "abs"):

    def _unary(name: str) -> None:
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d)))
        sample(name)(lambda L, d: getattr(L, name)(T(L, I23, "int64", d)))
        sample(name)(lambda L, d: getattr(L, name)(T(L, M32, "float64", d).t()))
        sample(name)(lambda L, d: getattr(L, name)(T(L, V3, "float16", d)))
        sample(name)(lambda L, d: getattr(L, name)(T(L, 2.0, device=d)))
        sample(name)(lambda L, d: getattr(L, name)(T(L, [True, False], "bool", d)))
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d), out=L.empty(0, device=d)))
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d), out=L.empty(6, device=d)))
        sample(name)(lambda L, d: getattr(T(L, M23, device=d), name + "_")())
        sample(name)(lambda L, d: getattr(T(L, I23, "int64", d), name + "_")())
        sample(name)(lambda L, d: getattr(L, name)(T(L, [[1 + 2j, -3j]], "complex64", d)))

    _unary(_name)
sample("neg")(lambda L, d: -T(L, M23, device=d))
sample("abs")(lambda L, d: abs(T(L, I23, "int32", d)))

# -- factories ---------------------------------------------------------------------------------

sample("empty", "novalues")(lambda L, d: L.empty(2, 3, device=d))
sample("empty", "novalues")(lambda L, d: L.empty((2, 3), dtype=L.int64, device=d))
sample("empty", "novalues")(lambda L, d: L.empty([], device=d))
sample("empty", "novalues")(lambda L, d: L.empty(2, 0, 3, device=d))
sample("empty", "novalues")(
    lambda L, d: L.empty(2, 3, 4, 5, memory_format=L.channels_last, device=d)
)
sample("empty")(lambda L, d: L.empty(2, -1, device=d))
sample("empty_strided", "novalues")(lambda L, d: L.empty_strided((2, 3), (1, 2), device=d))
sample("zeros")(lambda L, d: L.zeros(2, 3, device=d))
sample("zeros")(lambda L, d: L.zeros((2, 3), dtype=L.int64, device=d))
sample("zeros")(lambda L, d: L.zeros(3, device=d, dtype=L.bool))
sample("zeros")(lambda L, d: L.zeros(size=(2, 1), device=d))
sample("view")(lambda L, d: T(L, M23, device=d).view(size=(3, 2)))
sample("ones")(lambda L, d: L.ones(2, 3, dtype=L.float64, device=d))
sample("ones")(lambda L, d: L.ones([4], device=d))
sample("full")(lambda L, d: L.full((2, 2), 1.5, device=d))
sample("full")(lambda L, d: L.full((2,), 3, device=d))
sample("full")(lambda L, d: L.full((2,), True, device=d))
sample("full")(lambda L, d: L.full((2,), 2, dtype=L.float16, device=d))
sample("zeros")(lambda L, d: L.zeros(2, 3, out=L.empty(0, device=d)))
for _like in ("empty_like", "zeros_like", "ones_like"):

    def _likes(name: str) -> None:
        flags = "novalues" if name == "empty_like" else ""
        sample(name, flags)(lambda L, d: getattr(L, name)(T(L, M23, device=d)))
        sample(name, flags)(lambda L, d: getattr(L, name)(T(L, M32, device=d).t()))
        sample(name, flags)(lambda L, d: getattr(L, name)(T(L, M32, device=d).t(), dtype=L.int64))
        sample(name, flags)(lambda L, d: getattr(L, name)(T(L, M32, device=d).t().expand(2, 2, 3)))
        sample(name, flags)(
            lambda L, d: getattr(L, name)(
                T(L, M32, device=d).t(), memory_format=L.contiguous_format
            )
        )

    _likes(_like)

# -- views -------------------------------------------------------------------------------------

sample("view")(lambda L, d: T(L, M23, device=d).view(6))
sample("view")(lambda L, d: T(L, M23, device=d).view(-1, 2))
sample("view")(lambda L, d: T(L, M23, device=d).view(3, 1, 2))
sample("view")(lambda L, d: T(L, M23, device=d).view((1, 6)))
sample("view")(lambda L, d: T(L, M23, device=d).t().view(6))
sample("view")(lambda L, d: T(L, M23, device=d).t().view(3, 2, 1))
sample("view")(lambda L, d: T(L, M23, device=d).view(-1, -1))
sample("view")(lambda L, d: T(L, M23, device=d).view(4, 2))
sample("view")(lambda L, d: T(L, 5.0, device=d).view(1))
sample("transpose")(lambda L, d: L.transpose(T(L, M23, device=d), 0, 1))
sample("transpose")(lambda L, d: T(L, M23, device=d).unsqueeze(0).transpose(-1, 0))
sample("transpose")(lambda L, d: T(L, M23, device=d).transpose(0, 2))
sample("t")(lambda L, d: L.t(T(L, V3, device=d)))
sample("t")(lambda L, d: T(L, M23, device=d).t())
sample("t")(lambda L, d: T(L, M23, device=d).unsqueeze(0).t())
sample("unsqueeze")(lambda L, d: T(L, M23, device=d).unsqueeze(-1))
sample("unsqueeze")(lambda L, d: T(L, M23, device=d).t().unsqueeze(1))
sample("unsqueeze")(lambda L, d: L.unsqueeze(T(L, M23, device=d), 3))
sample("select")(lambda L, d: T(L, M23, device=d).select(1, -1))
sample("select")(lambda L, d: L.select(T(L, M23, device=d).t(), 0, 2))
sample("select")(lambda L, d: T(L, M23, device=d).select(0, 2))
sample("select")(lambda L, d: T(L, 1.0, device=d).select(0, 0))
sample("slice")(lambda L, d: L.ops.aten.slice.Tensor(T(L, M23, device=d), 1, 1, None, 2))
sample("slice")(lambda L, d: L.ops.aten.slice.Tensor(T(L, M23, device=d), 0, -1))
sample("slice")(lambda L, d: L.ops.aten.slice.Tensor(T(L, M23, device=d), 1, 5, 1))
sample("slice")(lambda L, d: L.ops.aten.slice.Tensor(T(L, M23, device=d), 1, 0, 3, 0))
sample("expand")(lambda L, d: T(L, V3, device=d).expand(2, 3))
sample("expand")(lambda L, d: T(L, [[1.0], [2.0]], device=d).expand(-1, 4))
sample("expand")(lambda L, d: T(L, V3, device=d).expand(2, 2, -1))
sample("expand")(lambda L, d: T(L, V3, device=d).expand(4))
sample("expand")(lambda L, d: T(L, M23, device=d).expand(3))
sample("squeeze")(lambda L, d: L.squeeze(T(L, [[1.0, 2.0]], device=d), 0))
sample("squeeze")(lambda L, d: L.squeeze(T(L, M23, device=d), 1))
sample("reshape")(lambda L, d: L.reshape(T(L, M23, device=d).t(), (6,)))
sample("reshape")(lambda L, d: T(L, M23, device=d).reshape(3, 2))
for _copy in ("t_copy", "transpose_copy", "unsqueeze_copy", "select_copy", "view_copy"):
    _args = {"t_copy": (), "transpose_copy": (0, 1), "unsqueeze_copy": (1,),
             "select_copy": (1, 0), "view_copy": ((3, 2),)}[_copy]  # fmt: skip

    def _copies(name: str, args: tuple[Any, ...]) -> None:
        sample(name)(lambda L, d: getattr(L, name)(T(L, M23, device=d), *args))

    _copies(_copy, _args)

# -- copies ------------------------------------------------------------------------------------

sample("clone")(lambda L, d: L.clone(T(L, M32, device=d).t()))
sample("clone")(lambda L, d: T(L, M32, device=d).t().clone(memory_format=L.contiguous_format))
sample("clone")(lambda L, d: T(L, V3, device=d).expand(2, 3).clone())
sample("clone")(lambda L, d: L.clone(T(L, V3, device=d), out=L.empty(3, device=d)))
sample("zeros_like")(lambda L, d: L.zeros_like(T(L, V3, device=d), out=L.empty(3, device=d)))
sample("sum")(lambda L, d: L.sum(T(L, V3, device=d), out=L.empty((), device=d)))
sample("t_copy")(lambda L, d: L.t_copy(T(L, M23, device=d), out=L.empty(0, device=d)))
sample("copy_")(lambda L, d: L.zeros(2, 3, device=d).copy_(T(L, V3, device=d)))
sample("copy_")(lambda L, d: L.zeros(2, 3, dtype=L.int64, device=d).copy_(T(L, M23, device=d)))
sample("copy_")(lambda L, d: L.zeros(2, 3, device=d).t().copy_(T(L, M32, device=d)))
sample("copy_")(lambda L, d: L.zeros(3, device=d).copy_(T(L, M23, device=d)))
sample("fill_")(lambda L, d: L.zeros(2, 3, device=d).fill_(2.5))

# -- reductions --------------------------------------------------------------------------------

sample("sum")(lambda L, d: L.sum(T(L, M23, device=d)))
sample("sum")(lambda L, d: L.sum(T(L, M23, device=d), 0))
sample("sum")(lambda L, d: T(L, M23, device=d).sum(-1, keepdim=True))
sample("sum")(lambda L, d: L.sum(T(L, M23, device=d), (0, 1)))
sample("sum")(lambda L, d: L.sum(T(L, M23, device=d), dim=None))
sample("sum")(lambda L, d: L.sum(T(L, I23, "int32", d), 1))
sample("sum")(lambda L, d: L.sum(T(L, [True, True, False], "bool", d)))
sample("sum")(lambda L, d: L.sum(T(L, M23, device=d), 1, dtype=L.float64))
sample("sum")(lambda L, d: L.sum(T(L, M32, device=d).t(), 1))
sample("sum")(lambda L, d: L.sum(T(L, M23, device=d), [0, 0]))
sample("sum")(lambda L, d: L.sum(T(L, M23, device=d), 2))
sample("sum")(lambda L, d: L.sum(T(L, M23, device=d), 1, out=L.empty(0, device=d)))
sample("mean")(lambda L, d: L.mean(T(L, M23, device=d)))
sample("mean")(lambda L, d: T(L, M23, device=d).mean(1))
sample("mean")(lambda L, d: L.mean(T(L, M23, "float64", d), (0, 1), keepdim=True))
sample("mean")(lambda L, d: L.mean(T(L, I23, "int64", d)))
sample("mean")(lambda L, d: L.mean(T(L, I23, "int64", d), 0, dtype=L.float32))
sample("mean")(lambda L, d: L.mean(T(L, M23, device=d), 0, dtype=L.int64))
sample("mean")(lambda L, d: L.mean(T(L, M23, device=d), 0, out=L.empty(0, device=d)))

sample("aminmax")(lambda L, d: L.aminmax(T(L, M23, device=d)))
sample("aminmax")(lambda L, d: L.aminmax(T(L, M23, device=d), dim=1))
sample("aminmax")(lambda L, d: T(L, I23, "int64", d).aminmax(dim=-2, keepdim=True))
sample("aminmax")(lambda L, d: L.aminmax(T(L, M32, device=d).t(), keepdim=True))
sample("aminmax")(lambda L, d: L.aminmax(T(L, 3.0, device=d), dim=0))
sample("aminmax", "meta-differs")(lambda L, d: L.aminmax(L.ones(0, 3, device=d), dim=0))
sample("aminmax")(lambda L, d: L.aminmax(L.ones(0, 3, device=d)))
sample("aminmax")(lambda L, d: L.aminmax(L.ones(0, 3, device=d), dim=1))
sample("aminmax")(
    lambda L, d: L.aminmax(
        T(L, M23, device=d), dim=0, out=(L.empty(0, device=d), L.empty(0, device=d))
    )
)
sample("aminmax")(
    lambda L, d: L.aminmax(
        T(L, M23, device=d), out=(L.empty(0, device=d), L.empty(0, dtype=L.int64, device=d))
    )
)

# -- linear algebra ----------------------------------------------------------------------------

sample("mm")(lambda L, d: L.mm(T(L, M23, device=d), T(L, M32, device=d)))
sample("mm")(lambda L, d: L.mm(T(L, M32, device=d).t(), T(L, M23, device=d).t()))
sample("mm")(lambda L, d: L.mm(T(L, I23, "int64", d), T(L, I23, "int64", d).t()))
sample("mm", "meta-differs")(lambda L, d: L.mm(T(L, M23, device=d), T(L, M32, "float64", d)))
sample("mm")(lambda L, d: L.mm(T(L, M23, device=d), T(L, M23, device=d)))
sample("mm")(lambda L, d: L.mm(T(L, V3, device=d), T(L, M32, device=d)))
sample("mm")(lambda L, d: L.mm(T(L, M23, device=d), T(L, M32, device=d), out=L.empty(0, device=d)))
sample("mm")(
    lambda L, d: L.mm(
        T(L, M23, device=d), T(L, M32, device=d), out=L.empty(0, dtype=L.float64, device=d)
    )
)
sample("addmm")(
    lambda L, d: L.addmm(T(L, [1.0, 2.0], device=d), T(L, M23, device=d), T(L, M32, device=d))
)
sample("addmm")(
    lambda L, d: L.addmm(
        T(L, [[1.0, 2.0], [3.0, 4.0]], device=d), T(L, M23, device=d), T(L, M32, device=d),
        beta=0.5, alpha=2,
    )
)  # fmt: skip
sample("addmm")(
    lambda L, d: T(L, [[1.0, 2.0], [3.0, 4.0]], device=d).addmm_(
        T(L, M23, device=d), T(L, M32, device=d), beta=0
    )
)
sample("addmm")(lambda L, d: L.addmm(T(L, V3, device=d), T(L, M23, device=d), T(L, M32, device=d)))
sample("addmm")(
    lambda L, d: L.addmm(T(L, V3, "float64", d), T(L, M23, device=d), T(L, M32, device=d))
)
sample("addmm")(
    lambda L, d: T(L, [1.0, 2.0], device=d).addmm_(T(L, M23, device=d), T(L, M32, device=d))
)
sample("bmm")(lambda L, d: L.bmm(T(L, [M23, M23], device=d), T(L, [M32, M32], device=d)))
sample("bmm")(lambda L, d: L.bmm(T(L, M23, device=d), T(L, M32, device=d)))
sample("dot")(lambda L, d: L.dot(T(L, V3, device=d), T(L, V3, device=d)))
sample("dot")(lambda L, d: L.dot(T(L, V3, device=d), T(L, [1.0, 2.0], device=d)))
sample("mv")(lambda L, d: L.mv(T(L, M23, device=d), T(L, V3, device=d)))
for _a, _b in [(V3, V3), (M23, V3), ([1.0, 2.0], M23), (M23, M32), ([M23, M23], M32),
               ([M23, M23], V3), (M23, [M32, M32, M32]), ([[M23]], [M32, M32]), (2.0, V3)]:  # fmt: skip

    def _matmul(a: Any, b: Any) -> None:
        sample("matmul")(lambda L, d: L.matmul(T(L, a, device=d), T(L, b, device=d)))

    _matmul(_a, _b)
sample("matmul")(lambda L, d: T(L, M23, device=d) @ T(L, M32, device=d))
sample("matmul")(
    lambda L, d: L.matmul(T(L, M23, device=d), T(L, M32, device=d), out=L.empty(0, device=d))
)


@pytest.mark.parametrize(("op", "fn", "flags"), SAMPLES, ids=sample_ids(SAMPLES))
def test_cpu_matches_torch(op: str, fn: Any, flags: str, coverage: Any) -> None:
    check_sample(op, fn, "cpu", "novalues" not in flags, coverage)


@pytest.mark.parametrize(("op", "fn", "flags"), SAMPLES, ids=sample_ids(SAMPLES))
def test_meta_matches_torch(op: str, fn: Any, flags: str, coverage: Any) -> None:
    # For "meta-differs" samples torch's meta path (Python meta registrations and refs)
    # checks differently from its CPU kernels (another exception type, or none); ours runs
    # the same meta function on both devices, so torch on CPU is the oracle there
    # (docs/CODEGEN.md, "Differences from torch").
    oracle = "cpu" if "meta-differs" in flags else None
    check_sample(op + "[meta]", fn, "meta", False, coverage, oracle)
