"""Boxing facts: positions a boxed kernel needs, computed once per schema."""

from __future__ import annotations

import functools
import os

import torch
import torchgen
import yaml

from tensordispatch.schema import boxing_info, parse_schema

YAML = os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen", "native", "native_functions.yaml")  # fmt: skip


@functools.lru_cache(maxsize=1)
def funcs() -> tuple[str, ...]:
    with open(YAML) as f:
        return tuple(e["func"] for e in yaml.load(f, Loader=yaml.CSafeLoader))


def test_out_variant_facts() -> None:
    info = boxing_info(parse_schema(
        "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)"
    ))  # fmt: skip
    assert info.tensor_arg_indices == (0, 1, 3)
    assert info.mutable_arg_indices == (3,)
    assert info.out_arg_indices == (3,)
    assert info.alias_pairs == ((3, 0),)
    assert info.view_pairs == ()
    assert (info.num_arguments, info.num_returns) == (4, 1)


def test_optional_and_list_tensors_are_dispatch_arguments() -> None:
    info = boxing_info(parse_schema(
        "index.Tensor(Tensor self, Tensor?[] indices, int dim, Tensor? w=None, Tensor[] ts) -> Tensor"
    ))  # fmt: skip
    assert info.tensor_arg_indices == (0, 1, 3, 4)


def test_multiple_out_pairs_in_order() -> None:
    info = parse_schema(
        "max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)"
    ).boxing_info
    assert info.alias_pairs == ((3, 0), (4, 1))
    assert info.out_arg_indices == (3, 4)


def test_view_and_wildcard_pairs() -> None:
    assert parse_schema(
        "transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)"
    ).boxing_info.view_pairs == ((0, 0),)
    split = parse_schema(
        "split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]"
    )
    assert split.boxing_info.view_pairs == ((0, 0),)
    assert split.boxing_info.alias_pairs == ()


def test_computed_once() -> None:
    s = parse_schema("neg(Tensor self) -> Tensor")
    assert s.boxing_info is s.boxing_info


def test_mutable_positions_agree_with_torch_on_every_entry() -> None:
    bad = []
    for f in funcs():
        info = parse_schema(f).boxing_info
        t = torch._C.parse_schema(f)
        written = tuple(
            i
            for i, a in enumerate(t.arguments)
            if a.alias_info is not None and a.alias_info.is_write
        )
        outs = tuple(i for i, a in enumerate(t.arguments) if a.is_out)
        if (info.mutable_arg_indices, info.out_arg_indices) != (written, outs):
            bad.append(f)
    assert bad == [], bad[:5]
