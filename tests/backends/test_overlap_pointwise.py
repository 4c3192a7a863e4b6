"""Memory-overlap errors of in-place and out= pointwise calls, a golden table against torch.

torch's TensorIterator refuses an output with internal overlap (a stride 0 over a size > 1)
and an input that shares some but not all of an output's memory; exactly the same memory,
disjoint views of one base and inputs it cannot decide about (expanded, strided) pass. Each
case is run on torch and on tensordispatch: same exception type and message, or same values
(the result and the base the views were taken from).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch

td: Any = tensordispatch  # operators are generated attributes

INTERNAL = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)
PARTIAL = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer "
    "to a single memory location. Please clone() the tensor before performing the operation."
)

BASE: dict[str, list[Any]] = {"f": [0.15, 0.3, 0.45, 0.6, 0.75, 0.9], "i": [1, 2, 3, 4, 5, 6]}
FRESH: dict[str, list[list[Any]]] = {
    "f": [[0.2, 0.4, 0.7], [0.35, 0.55, 0.95]],
    "i": [[3, 5, 6], [7, 2, 9]],
}


@dataclass(frozen=True, slots=True)
class Op:
    """One operator: ``functional(L, inputs, **out)`` and ``inplace(inputs)`` (or None)."""

    id: str
    arity: int
    domain: str
    functional: Callable[..., Any] | None
    inplace: Callable[..., Any] | None


def _op(
    name: str,
    arity: int,
    domain: str = "f",
    *args: Any,
    inplace: bool = True,
    out: bool = True,
    id: str | None = None,
    **kwargs: Any,
) -> Op:
    def functional(lib: Any, ts: list[Any], **o: Any) -> Any:
        return getattr(lib, name)(*ts, *args, **kwargs, **o)

    def in_place(ts: list[Any]) -> Any:
        return getattr(ts[0], name + "_")(*ts[1:], *args, **kwargs)

    return Op(id or name, arity, domain, functional if out else None, in_place if inplace else None)


UNARY = "neg abs exp log log1p expm1 sqrt rsqrt sin cos tan tanh sigmoid erf floor ceil round sign"
OPS = [
    *(_op(n, 1) for n in UNARY.split()),
    _op("relu", 1, out=False),
    _op("logical_not", 1),
    _op("bitwise_not", 1, "i"),
    *(_op(n, 2) for n in ["add", "sub", "mul", "div", "remainder", "pow"]),
    *(_op(n, 2, inplace=False) for n in ("maximum", "minimum")),
    *(
        _op(n, 2)
        for n in ["eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"]
    ),
    *(_op(n, 2, "i") for n in ("bitwise_and", "bitwise_or", "bitwise_xor")),
    _op("add", 2, "f", alpha=2, id="add_alpha"),
    _op("sub", 2, "i", id="sub_int"),
    _op("mul", 2, "i", id="mul_int"),
    _op("div", 2, "f", rounding_mode="floor", id="div_floor"),
    _op("add", 1, "f", 2, id="add_scalar"),
    _op("mul", 1, "f", 0.5, id="mul_scalar"),
    _op("pow", 1, "f", 2, id="pow_scalar"),
    _op("lt", 1, "f", 0.5, id="lt_scalar"),
    _op("clamp", 1, "f", 0.3, 0.7),
    _op("clamp_min", 1, "f", 0.4),
    _op("clamp", 3, id="clamp_tensor"),
    _op("lerp", 2, "f", 0.25),
    _op("lerp", 3, id="lerp_tensor"),
    _op("addcmul", 3, value=0.5),
    _op("addcdiv", 3, value=0.5),
    Op("pow_base_scalar", 1, "f", lambda lib, ts, **o: lib.pow(2.0, ts[0], **o), None),
    Op("where", 2, "f", lambda lib, ts, **o: lib.where(ts[0] > 0.5, ts[0], ts[1], **o), None),
]


def _views(lib: Any, domain: str, scenario: str, arity: int) -> tuple[Any, list[Any], Any]:
    """(base, inputs, out or None) of one scenario; inputs[0] is self for in-place calls."""
    dt = lib.float32 if domain == "f" else lib.int64
    base = lib.tensor(BASE[domain], dtype=dt)
    fresh = [lib.tensor(v, dtype=dt) for v in FRESH[domain]]
    square = scenario.endswith("transposed")
    if square:
        fresh = [f[:2].repeat(2).reshape(2, 2) for f in fresh]
    ts: list[Any] = [lib.tensor(BASE[domain][::-1][:3], dtype=dt), *fresh][:arity]
    if square:
        ts[0] = ts[0].repeat(2)[:4].reshape(2, 2)
    out = None
    kind, what = scenario.split("_", 1)
    target, source = (0, 1) if kind == "inplace" else (None, 0)
    if what == "partial_last":
        source = arity - 1
    pairs = {
        "internal": (base[:1].expand(3), None),
        "resize_internal": (base[:1].expand(2), None),
        "partial": (base[1:4], base[0:3]),
        "partial_last": (base[1:4], base[0:3]),
        "partial_0dim": (base[0:3], base[1]),
        "full_view": (base[0:3], base[0:3]),
        "disjoint": (base[3:6], base[0:3]),
        "expanded_input": (base[1:4], base[0:1].expand(3)),
        "strided_out": (base[0:6:2], base[2:5]),
        "transposed": (base[:4].view(2, 2), base[:4].view(2, 2).t()),
    }
    if what == "same":
        written = read = base[0:3]
    else:
        written, read = pairs[what]
    if target is None:
        out = written
    else:
        ts[target] = written
    if read is not None and source is not None and source < arity:
        ts[source] = read
    return base, ts, out


SCENARIOS = [
    *(
        f"inplace_{w}"
        for w in [
            "internal",
            "partial",
            "partial_0dim",
            "full_view",
            "same",
            "disjoint",
            "expanded_input",
            "transposed",
        ]
    ),
    *(
        f"out_{w}"
        for w in [
            "internal",
            "resize_internal",
            "partial",
            "partial_last",
            "partial_0dim",
            "full_view",
            "same",
            "disjoint",
            "expanded_input",
            "strided_out",
            "transposed",
        ]
    ),
]


def _cases() -> list[Any]:
    cases = []
    for op in OPS:
        for s in SCENARIOS:
            inplace = s.startswith("inplace")
            if (op.inplace if inplace else op.functional) is None:
                continue
            needs_second = s.split("_", 1)[1] not in ("internal", "resize_internal")
            if inplace and needs_second and op.arity < 2:
                continue  # an in-place unary op reads only self
            if s == "out_partial_last" and op.arity < 2:
                continue
            cases.append(pytest.param(op, s, id=f"{op.id}-{s}"))
    return cases


def _run(lib: Any, op: Op, scenario: str) -> tuple[Any, ...]:
    base, ts, out = _views(lib, op.domain, scenario, op.arity)
    try:
        if out is None:
            assert op.inplace is not None
            result = op.inplace(ts)
        else:
            assert op.functional is not None
            result = op.functional(lib, ts, out=out)
    except Exception as e:  # noqa: BLE001 - the exception is the observation
        return ("error", type(e), str(e).split("\n")[0])
    return ("ok", np.array(result.tolist()), np.array(base.tolist()))


@pytest.mark.filterwarnings("ignore:An output with one or more elements was resized")
@pytest.mark.parametrize(("op", "scenario"), _cases())
def test_overlap_matches_torch(op: Op, scenario: str) -> None:
    expected = _run(torch, op, scenario)
    got = _run(td, op, scenario)
    assert got[0] == expected[0], (got, expected)
    if expected[0] == "error":
        assert got[1:] == expected[1:]
    else:
        np.testing.assert_allclose(got[1], expected[1], rtol=1e-6, equal_nan=True)
        np.testing.assert_allclose(got[2], expected[2], rtol=1e-6, equal_nan=True)


def test_table_covers_both_errors() -> None:
    """The table exercises both of torch's messages and allowed calls (a sanity check of the
    oracle side: a table where torch never raises would test nothing)."""
    outcomes = {
        _run(torch, op, s)[-1] if _run(torch, op, s)[0] == "error" else "ok"
        for op in OPS[:3]
        for s in ("out_internal", "out_partial", "out_disjoint")
    }
    assert outcomes == {INTERNAL, PARTIAL, "ok"}


def test_internal_overlap_golden() -> None:
    x = td.zeros(1).expand(3)
    with pytest.raises(RuntimeError) as info:
        x.add_(1)
    assert str(info.value) == INTERNAL


def test_partial_overlap_golden() -> None:
    x = td.arange(5.0)
    with pytest.raises(RuntimeError) as info:
        x[1:].add_(x[:-1])
    assert str(info.value) == PARTIAL


def test_same_tensor_is_allowed() -> None:
    x = td.arange(5.0)
    assert x.add_(x).tolist() == [0.0, 2.0, 4.0, 6.0, 8.0]


def test_overlap_error_comes_before_the_dtype_check() -> None:
    """torch checks memory overlap first (TensorIterator's build order)."""
    with pytest.raises(RuntimeError) as info:
        torch.zeros(1, dtype=torch.int64).expand(3).add_(1.5)
    with pytest.raises(RuntimeError) as ours:
        td.zeros(1, dtype=td.int64).expand(3).add_(1.5)
    assert str(ours.value) == str(info.value) == INTERNAL


def _meta_internal_inplace(lib: Any) -> Any:
    return lib.zeros(1, device="meta").expand(3).add_(1)


def _meta_partial_inplace(lib: Any) -> Any:
    x = lib.zeros(5, device="meta")
    return x[1:].add_(x[:-1])


def _meta_partial_out(lib: Any) -> Any:
    x = lib.zeros(6, device="meta")
    return lib.neg(x[:3], out=x[1:4])


def _meta_partial_out_ternary(lib: Any) -> Any:
    x = lib.zeros(6, device="meta")
    return lib.addcmul(x[:3], x[1:4], x[2:5], out=x[1:4])


@pytest.mark.parametrize(
    "call",
    [_meta_internal_inplace, _meta_partial_inplace, _meta_partial_out, _meta_partial_out_ternary],
)
def test_meta_tensors_are_not_checked(call: Callable[[Any], Any]) -> None:
    """torch's meta kernels run no overlap check; ours neither (same shape, no error)."""
    assert tuple(call(td).shape) == tuple(call(torch).shape)


@pytest.mark.parametrize("name", ["add_.Tensor", "sub_.Tensor", "mul_.Tensor", "div_.Tensor"])
def test_fused_inplace_kernels_check_overlap(name: str) -> None:
    """The fused CPU in-place kernels (cpu/fresh_inplace.py) run the same checks as the wrapper."""
    from tensordispatch.backends.cpu.fresh import CPU_INPLACE_KERNELS

    kernel = CPU_INPLACE_KERNELS[name]
    x = td.arange(1.0, 7.0)
    with pytest.raises(RuntimeError) as partial:
        kernel(x[1:4], x[0:3])
    with pytest.raises(RuntimeError) as internal:
        kernel(td.ones(1).expand(3), td.ones(3))
    assert (str(partial.value), str(internal.value)) == (PARTIAL, INTERNAL)
    torch_x = torch.arange(1.0, 7.0)
    getattr(torch_x[:3], name.split(".")[0])(torch_x[3:])
    kernel(x[:3], x[3:])  # disjoint views of one base: allowed
    assert x.tolist() == torch_x.tolist()


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: x.detach()[1:4].add_(x[0:3]),
        lambda lib, x: x.detach().add_(x[0:6]),
        lambda lib, x: lib.neg(x[0:3], out=x.detach()[1:4]),
    ],
    ids=["detached_root_inplace", "detached_root_full", "detached_root_out"],
)
def test_roots_sharing_a_storage_are_checked(call: Callable[[Any, Any], Any]) -> None:
    """detach() makes a new root over the same storage: overlap is still seen, as in torch."""

    def outcome(lib: Any) -> Any:
        try:
            return call(lib, lib.arange(6.0)).tolist()
        except RuntimeError as e:
            return str(e)

    assert outcome(td) == outcome(torch)
