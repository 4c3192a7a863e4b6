"""Autogen out= kernels built from the functional op: single and multi-output bodies."""

from __future__ import annotations

import textwrap

from tensordispatch.codegen import generate_sources
from tensordispatch.codegen.gen_registrations import emit_registrations
from tensordispatch.schema.native import parse_native_functions


def _generated(yaml: str, name: str) -> str:
    text = emit_registrations(parse_native_functions(yaml, "t.yaml"), "t.yaml")
    start = text.index(f"\ndef {name}(")
    return text[start + 1 : text.index("\n\n", start + 1)]


def test_multi_output_autogen_out_resizes_and_copies_each_out_and_returns_the_tuple() -> None:
    yaml = textwrap.dedent(
        """\
        - func: two(Tensor self, float p) -> (Tensor, Tensor)
          dispatch:
            CPU: two_cpu
          autogen: two.out
        """
    )
    assert _generated(yaml, "generated_two_out") == textwrap.dedent(
        """\
        def generated_two_out(self, p, *, out0, out1):
            _r = _op('two')(self, p)
            _resize_output(out0, _r[0]._shape)
            _copy_arg(out0, _r[0])
            _resize_output(out1, _r[1]._shape)
            _copy_arg(out1, _r[1])
            return (out0, out1)"""
    )


def test_single_output_autogen_out_returns_the_out_itself() -> None:
    yaml = textwrap.dedent(
        """\
        - func: one(Tensor self) -> Tensor
          dispatch:
            CPU: one_cpu
          autogen: one.out
        """
    )
    assert _generated(yaml, "generated_one_out") == textwrap.dedent(
        """\
        def generated_one_out(self, *, out):
            _r = _op('one')(self)
            _resize_output(out, _r._shape)
            _copy_arg(out, _r)
            return out"""
    )


def test_native_layer_norm_out_is_generated_with_three_outs() -> None:
    text = generate_sources()["registrations.py"]
    assert "return (out0, out1, out2)" in text
    assert "_lib['aten:CompositeExplicitAutograd'].impl('native_layer_norm.out', " in text
