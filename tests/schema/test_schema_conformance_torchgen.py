"""Every `func:` of the torch 2.13 native_functions.yaml against torchgen's own model."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable

import torchgen
import torchgen.model as tg
import yaml
from torchgen.gen import parse_native_yaml

from tensordispatch.schema import FunctionSchema, parse_schema

NATIVE = os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen", "native")


@functools.lru_cache(maxsize=1)
def funcs() -> tuple[str, ...]:
    with open(os.path.join(NATIVE, "native_functions.yaml")) as f:
        entries = yaml.load(f, Loader=yaml.CSafeLoader)
    return tuple(e["func"] for e in entries)


@functools.lru_cache(maxsize=1)
def pairs() -> tuple[tuple[FunctionSchema, tg.FunctionSchema], ...]:
    return tuple((parse_schema(f), tg.FunctionSchema.parse(f)) for f in funcs())


def mismatches(fact: Callable[[object], object], fact_tg: Callable[[object], object]) -> list[str]:
    out = []
    for ours, theirs in pairs():
        a, b = fact(ours), fact_tg(theirs)
        if a != b:
            out.append(f"{theirs}: ours {a!r} != torchgen {b!r}")
    return out


def test_file_has_2584_entries() -> None:
    assert len(funcs()) == 2584


def test_every_func_parses_and_prints_back_exactly() -> None:
    bad = [f for f in funcs() if str(parse_schema(f)) != f]
    assert bad == [], bad[:5]


def test_rebuilt_schema_prints_the_same_text() -> None:
    # str() of a schema built from fields (no cached source text) must also be exact.
    bad = []
    for f in funcs():
        s = parse_schema(f)
        if str(FunctionSchema(s.name, s.arguments, s.returns)) != f:
            bad.append(f)
    assert bad == [], bad[:5]


def test_parse_of_print_is_equal_and_hashes_equal() -> None:
    for f in funcs():
        s = parse_schema(f)
        again = FunctionSchema(s.name, s.arguments, s.returns)
        assert again == s and hash(again) == hash(s), f


def test_kind_agrees() -> None:
    assert mismatches(lambda s: s.kind().name, lambda t: t.kind().name) == []


def test_kind_counts_match_spec() -> None:
    counts: dict[str, int] = {}
    for s, _ in pairs():
        counts[s.kind().name] = counts.get(s.kind().name, 0) + 1
    assert counts == {"functional": 1606, "inplace": 337, "out": 631, "mutable": 10}


def test_inplace_out_mutable_detection_agrees() -> None:
    assert mismatches(lambda s: s.name.name.inplace, lambda t: t.name.name.inplace) == []
    assert mismatches(lambda s: s.is_out_fn(), lambda t: t.is_out_fn()) == []
    assert mismatches(lambda s: s.is_mutable, lambda t: t.is_mutable) == []
    assert mismatches(lambda s: s.modifies_arguments(), lambda t: t.modifies_arguments) == []
    assert mismatches(lambda s: s.is_functional_fn(), lambda t: t.is_functional_fn()) == []


def test_names_agree() -> None:
    def name(n: object) -> tuple[object, ...]:
        b = n.name  # type: ignore[attr-defined]
        return (b.base, b.inplace, b.dunder_method, b.functional_overload, n.overload_name)  # type: ignore[attr-defined]

    assert mismatches(lambda s: name(s.name), lambda t: name(t.name)) == []
    assert (
        mismatches(lambda s: s.name.unambiguous_name(), lambda t: t.name.unambiguous_name()) == []
    )


def test_argument_partitions_agree() -> None:
    def names(args: object) -> list[str]:
        return [a.name for a in args]  # type: ignore[attr-defined]

    def ours(s: FunctionSchema) -> tuple[object, ...]:
        self_arg = s.self_arg.name if s.self_arg is not None else None
        options = names(s.tensor_options) if s.tensor_options is not None else None
        return (
            names(s.pre_self_positional), self_arg, names(s.post_self_positional),
            names(s.pre_tensor_options_kwarg_only), options,
            names(s.post_tensor_options_kwarg_only), names(s.out),
            names(s.flat_non_out), names(s.schema_order_arguments()),
        )  # fmt: skip

    def theirs(t: tg.FunctionSchema) -> tuple[object, ...]:
        a = t.arguments
        self_arg = a.self_arg.argument.name if a.self_arg is not None else None
        options = names(a.tensor_options.all()) if a.tensor_options is not None else None
        return (
            names(a.pre_self_positional), self_arg, names(a.post_self_positional),
            names(a.pre_tensor_options_kwarg_only), options,
            names(a.post_tensor_options_kwarg_only), names(a.out),
            names(a.flat_non_out), names(t.schema_order_arguments()),
        )  # fmt: skip

    assert mismatches(ours, theirs) == []


def test_signature_agrees() -> None:
    assert mismatches(lambda s: str(s.signature()), lambda t: str(t.signature())) == []


def test_signature_variants_agree() -> None:
    for kw in ({"strip_default": True}, {"keep_return_names": True}):
        ours = functools.partial(lambda s, kw: str(s.signature(**kw)), kw=kw)
        theirs = functools.partial(lambda t, kw: str(t.signature(**kw)), kw=kw)
        assert mismatches(ours, theirs) == []
    assert mismatches(lambda s: str(s.view_signature()), lambda t: str(t.view_signature())) == []


def test_aliased_return_names_and_mutable_args_agree() -> None:
    assert mismatches(lambda s: s.aliased_return_names(), lambda t: t.aliased_return_names()) == []
    assert (
        mismatches(lambda s: s.mutable_arg_names(), lambda t: t.arguments.mutable_arg_names()) == []
    )


def test_symint_tensor_generator_predicates_agree() -> None:
    assert mismatches(lambda s: s.has_symint(), lambda t: t.has_symint()) == []
    assert mismatches(lambda s: s.has_tensor_arg(), lambda t: t.arguments.has_tensor_arg()) == []
    assert (
        mismatches(lambda s: s.has_generator_arg(), lambda t: t.arguments.has_generator_arg()) == []
    )


def test_is_view_agrees_with_torchgen_schema_rule() -> None:
    # torchgen's NativeFunction.is_view_op without the yaml's inplace_view tag.
    def tg_view(t: tg.FunctionSchema) -> bool:
        rets = any(r.annotation is not None and not r.annotation.is_write for r in t.returns)
        wild = any(
            a.annotation is not None and "*" in a.annotation.alias_set_after
            for a in t.schema_order_arguments()
        )
        return rets or wild

    assert mismatches(lambda s: s.is_view, tg_view) == []


def test_is_view_agrees_with_native_function_is_view_op() -> None:
    # Over torchgen's parsed and variant-generated NativeFunctions (3101 schemas), minus the
    # inplace_view tag, which belongs to the yaml entry, not to the schema.
    parsed = parse_native_yaml(
        os.path.join(NATIVE, "native_functions.yaml"), os.path.join(NATIVE, "tags.yaml")
    )
    bad = []
    for f in parsed.native_functions:
        ours = parse_schema(str(f.func))
        if str(ours) != str(f.func):
            bad.append(f"round trip {f.func}")
        tagged = "inplace_view" in f.tags and str(f.func.name) not in ("resize_", "resize_as_")
        if f.is_view_op != (ours.is_view or tagged):
            bad.append(f"is_view {f.func}")
        if ours.kind().name != f.func.kind().name:
            bad.append(f"kind {f.func}")
    assert len(parsed.native_functions) == 3101
    assert bad == [], bad[:5]


def test_signatures_have_the_partitions_a_fresh_parse_gives() -> None:
    # signature() builds its result without re-analysing it; parsing its text must agree.
    def facts(s: FunctionSchema) -> tuple[object, ...]:
        return (s.kind(), s.self_arg, s.positional, s.kwarg_only, s.out, s.tensor_options)

    bad = []
    for ours, _ in pairs():
        for sig in (ours.signature(), ours.signature(strip_default=True), ours.view_signature()):
            if facts(sig) != facts(parse_schema(str(sig))):
                bad.append(str(sig))
    assert bad == [], bad[:5]


def test_signature_is_computed_once() -> None:
    s = parse_schema("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)")
    assert s.signature() is s.signature()
    assert s.signature(keep_return_names=True) == s.signature()
