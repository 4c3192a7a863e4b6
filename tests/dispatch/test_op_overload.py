"""OpOverload / OpOverloadPacket / ops namespaces: names, resolution, redispatch."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import torch
from dispatch_oracle import fresh

from tensordispatch import ops
from tensordispatch.dispatch import (
    BackendComponent,
    OpOverload,
    OpOverloadPacket,
    backend_tensor_keyset,
)
from tensordispatch.library import Library


class T:
    __slots__ = ("_key_set",)

    def __init__(self) -> None:
        self._key_set = backend_tensor_keyset(BackendComponent.CPUBit).raw


@pytest.fixture
def lib() -> Iterator[Library]:
    lib = Library(fresh("opo"), "DEF")
    yield lib
    lib._destroy()


def test_names_and_reprs_match_torch(lib: Library) -> None:
    lib.define("f.Tensor(Tensor x) -> Tensor")
    ns = fresh("topo")
    tlib = torch.library.Library(ns, "DEF")
    tlib.define("f.Tensor(Tensor x) -> Tensor")
    theirs = getattr(torch.ops, ns).f.Tensor
    ours = getattr(ops, lib.ns).f.Tensor
    for attr in (
        repr,
        str,
        lambda o: o.name(),
        lambda o: o.__name__,
        lambda o: o._overloadname,
        lambda o: o.namespace,
        lambda o: o._opname,
        lambda o: str(o._schema),
        lambda o: repr(o.overloadpacket),
        lambda o: str(o.overloadpacket),
    ):
        assert attr(ours).replace(lib.ns, "NS") == attr(theirs).replace(ns, "NS")
    tlib._destroy()


def test_ops_attributes_are_opoverloads_and_packets(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    packet = getattr(ops, lib.ns).f
    assert isinstance(packet, OpOverloadPacket)
    assert isinstance(packet.default, OpOverload)
    assert packet.default is getattr(ops, lib.ns).f.default
    assert packet.overloads() == ["default"]


def test_missing_overload_is_attribute_error(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    with pytest.raises(AttributeError) as info:
        _ = getattr(ops, lib.ns).f.nope
    assert str(info.value) == f"The underlying op of '{lib.ns}.f' has no overload name 'nope'"


def test_packet_resolves_the_overload_by_arguments(lib: Library) -> None:
    lib.define("f.Tensor(Tensor x, Tensor y) -> Tensor")
    lib.define("f.Scalar(Tensor x, Scalar y) -> Tensor")
    lib.define("f.int(int a, int b) -> int")
    lib.impl("f.Tensor", lambda x, y: "Tensor", "CPU")
    lib.impl("f.Scalar", lambda x, y: "Scalar", "CPU")
    lib.impl("f.int", lambda a, b: "int", "CompositeExplicitAutograd")
    f = getattr(ops, lib.ns).f
    assert f(T(), T()) == "Tensor"
    assert f(T(), 2.5) == "Scalar"
    assert f(1, 2) == "int"
    assert f.overloads() == ["Tensor", "Scalar", "int"]


def test_call_without_schema_reports_the_missing_def() -> None:
    ns = fresh("nodef")
    lib = Library(ns, "FRAGMENT")
    lib.impl("bar", lambda x: x, "CPU")
    with pytest.raises(AttributeError):
        _ = getattr(ops, ns).bar
    lib._destroy()


def test_redispatch_with_raw_word_and_keyset(lib: Library) -> None:
    from tensordispatch.dispatch import DispatchKey, DispatchKeySet

    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: "cpu", "CPU")
    f = getattr(ops, lib.ns).f.default
    ks = DispatchKeySet(DispatchKey.CPU)
    assert f.redispatch(ks, T()) == "cpu"
    assert f.redispatch(ks.raw, T()) == "cpu"


def test_entry_for_keyword_argument_names(lib: Library) -> None:
    lib.define("r(Tensor self, int from, int? to=None) -> Tensor")
    seen: list[Any] = []
    lib.impl("r", lambda *a, **k: seen.append((len(a), k)) or "ok", "CPU")
    r = getattr(ops, lib.ns).r.default
    assert r(T(), 1) == "ok"
    assert r(T(), **{"from": 2, "to": 3}) == "ok"
    assert seen == [(2, {}), (3, {})]  # torch's kernel sees (self, 2, 3) too
    assert r._call_boxed([T(), 4, None]) == "ok"
    assert seen[-1] == (2, {})


def test_impl_accepts_an_opoverload(lib: Library) -> None:
    from tensordispatch.dispatch.errors import LibraryError

    lib.define("f.ov(Tensor x) -> Tensor")
    op = getattr(ops, lib.ns).f.ov
    lib.impl(op, lambda x: "via overload", "CPU")
    assert op(T()) == "via overload"
    other = Library(fresh("opo"), "FRAGMENT")
    with pytest.raises(LibraryError, match="does not match namespace of enclosing"):
        other.impl(op, lambda x: x, "CPU")
    other._destroy()


def test_dunder_operator_names_resolve_as_in_torch(lib: Library) -> None:
    lib.define("__shl__.Scalar(Tensor self, Scalar other) -> Tensor")
    lib.impl("__shl__.Scalar", lambda x, y: "shl", "CPU")
    tlib = torch.library.Library(lib.ns, "DEF")
    tlib.define("__shl__.Scalar(Tensor self, Scalar other) -> Tensor")
    try:
        ours = getattr(ops, lib.ns).__shl__
        theirs = getattr(torch.ops, lib.ns).__shl__
        assert ours.overloads() == theirs.overloads() == ["Scalar"]
        assert str(ours.Scalar) == str(theirs.Scalar)
        assert ours.Scalar(T(), 1) == "shl"
    finally:
        tlib._destroy()


def test_unknown_dunder_names_fail_fast_with_attribute_error(lib: Library) -> None:
    import copy

    namespace = getattr(ops, lib.ns)
    with pytest.raises(AttributeError):
        _ = namespace.__deepcopy__
    assert not hasattr(namespace, "__getstate_x__")
    assert copy.copy(namespace) is not None


def test_a_dunder_operator_defined_on_first_lookup_resolves(lib: Library) -> None:
    from tensordispatch.dispatch.dispatcher import DISPATCHER

    def materialise(qualified: str) -> None:
        lib.define("__shr__(Tensor self) -> Tensor")
        lib.impl("__shr__", lambda x: "shr", "CPU")

    handle = DISPATCHER.add_lazy_operators(lib.ns, ["__shr__"], materialise)
    try:
        assert DISPATCHER.pending_operators(lib.ns) == [f"{lib.ns}::__shr__"]
        assert getattr(ops, lib.ns).__shr__.default(T()) == "shr"
        assert DISPATCHER.pending_operators(lib.ns) == []
    finally:
        handle.remove()
