"""Argument checks and conversions of OpOverload calls (convert.py, Note [Argument
conversion]) beyond the conformance tables: integer-likes, the generic entry of schemas
whose names are not identifiers, conversion before dispatch."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import torch
from dispatch_oracle import fresh

from tensordispatch import ops
from tensordispatch.dispatch import BackendComponent, backend_tensor_keyset
from tensordispatch.dispatch.errors import ArgumentTypeError
from tensordispatch.library import Library

CPU = backend_tensor_keyset(BackendComponent.CPUBit)


class T:
    __slots__ = ("_key_set",)

    def __init__(self) -> None:
        self._key_set = CPU.raw


@pytest.fixture
def lib() -> Iterator[Library]:
    lib = Library(fresh("cnv"), "DEF")
    yield lib
    lib._destroy()


def _seen(lib: Library, schema: str) -> tuple[Any, list[Any]]:
    seen: list[Any] = []
    lib.define(schema)
    name = schema.split("(")[0]

    def kernel(x: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append((args, kwargs))
        return x

    lib.impl(name, kernel, "CPU")
    packet = getattr(getattr(ops, lib.ns), name.split(".")[0])
    return packet.default, seen


def _torch_receives(schema: str, *args: Any) -> Any:
    C: Any = torch._C
    ns = fresh("cnvt")
    got: list[Any] = []
    defs = C._dispatch_library("FRAGMENT", ns, "", "/dev/null", 0)
    impls = C._dispatch_library("FRAGMENT", ns, "", "k", 0)
    try:
        defs.def_(schema)
        impls.impl(schema.split("(")[0], "CPU", lambda x, *a: got.append(a) or x, False)
        getattr(getattr(torch.ops, ns), schema.split("(")[0]).default(torch.ones(2), *args)
    finally:
        impls.reset()
        defs.reset()
    return got[0]


def test_integer_likes_convert_to_int_like_torch(lib: Library) -> None:
    op, seen = _seen(lib, "f(Tensor x, int n, int[] d) -> Tensor")
    op(T(), np.int64(3), (np.int32(1), True))
    want = _torch_receives(
        "f(Tensor x, int n, int[] d) -> Tensor", np.int64(3), (np.int32(1), True)
    )
    assert seen == [(want, {})]
    assert [type(v) for v in seen[0][0][1]] == [int, int]


def test_generic_entry_converts_too(lib: Library) -> None:
    op, seen = _seen(lib, "f(Tensor x, int from, *, float to=1.0) -> Tensor")
    op(T(), True, to=2)
    assert seen == [((1,), {"to": 2.0})]
    assert type(seen[0][1]["to"]) is float
    with pytest.raises(ArgumentTypeError, match="argument 'from' but instead found type 'str'"):
        op(T(), "a")


def test_optional_argument_is_checked_before_dispatch(lib: Library) -> None:
    lib.define("f(Tensor x, *, int n=1) -> Tensor")
    op = getattr(ops, lib.ns).f.default
    # no kernel at all: the argument error comes first, as in torch
    with pytest.raises(ArgumentTypeError, match="Expected a value of type 'int'"):
        op(T(), n=2.5)


def test_correct_types_reach_the_kernel_unchanged(lib: Library) -> None:
    op, seen = _seen(lib, "f(Tensor x, int n, float v, bool b, str s) -> Tensor")
    args = (3, 2.5, False, "s")
    op(T(), *args)
    assert seen == [(args, {})]
    assert [type(a) for a in seen[0][0]] == [int, float, bool, str]
