"""Operators defined on first lookup: what codegen emits for it (generated/names.py and the
per-operator materialisers of registrations.py). Behaviour: tests/test_import.py."""

from __future__ import annotations

import textwrap

from tensordispatch.codegen.gen_registrations import emit_names, emit_registrations
from tensordispatch.schema.native import parse_native_functions

_YAML = textwrap.dedent(
    """\
    - func: tdcg_lazy::f(Tensor self) -> Tensor
      dispatch:
        CPU: f_cpu
    - func: tdcg_lazy::f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
      dispatch:
        CPU: f_out
    - func: tdcg_lazy::g_(Tensor(a!) self) -> Tensor(a!)
      dispatch:
        CompositeExplicitAutograd: g_
    """
)


def test_names_module_lists_each_operator_name_once_and_claims_the_namespace() -> None:
    text = emit_names(parse_native_functions(_YAML, "t.yaml"), "t.yaml")
    body = text[text.index("NAMES = {") :]
    assert body == textwrap.dedent(
        """\
        NAMES = {
            'tdcg_lazy': (
                'f',
                'g_',
            ),
        }

        # Claimed at import, as TORCH_LIBRARY claims its namespace when loaded.
        DEF_LIBRARIES = {'tdcg_lazy': Library('tdcg_lazy', 'DEF')}


        def _materialise(qualified):
            from tensordispatch.generated.registrations import materialise

            materialise(qualified)


        HANDLES = [_DISPATCHER.add_lazy_operators(ns, names, _materialise) for ns, names in NAMES.items()]
        """
    )


def test_one_materialiser_per_operator_name_defs_then_impls() -> None:
    text = emit_registrations(parse_native_functions(_YAML, "t.yaml"), "t.yaml")
    start = text.index("def _op0(")
    body = text[start : text.index("\n\n\ndef materialise(")]
    lines = [line.split(", debug=")[0] for line in body.splitlines()]
    assert lines == [
        "def _op0(_def, _lib):  # tdcg_lazy::f",
        "    _def['tdcg_lazy'].define('f(Tensor self) -> Tensor', tags=())",
        (
            "    _def['tdcg_lazy'].define('f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)', "
            "tags=('out',))"
        ),
        "    _lib['tdcg_lazy:CPU'].impl('f', _k_CPU_f",
        "    _lib['tdcg_lazy:CPU'].impl('f.out', _k_CPU_f_out",
        "",
        "",
        "def _op1(_def, _lib):  # tdcg_lazy::g_",
        "    _def['tdcg_lazy'].define('g_(Tensor(a!) self) -> Tensor(a!)', tags=('inplace',))",
        (
            "    _lib['tdcg_lazy:CompositeExplicitAutograd'].impl('g_', "
            "_k_CompositeExplicitAutograd_g_"
        ),
        "",
        "",
        "OPERATORS = {",
        "    'tdcg_lazy::f': _op0,",
        "    'tdcg_lazy::g_': _op1,",
        "}",
    ]


def test_every_table_kernel_is_looked_up_at_module_level() -> None:
    # a missing kernel fails when registrations.py is imported, for every operator at once
    text = emit_registrations(parse_native_functions(_YAML, "t.yaml"), "t.yaml")
    assert "\n_k_CPU_f = _kernel(_CPU, 'tensordispatch.backends.cpu:CPU_KERNELS', 'f_cpu', " in text
    assert "\n_k_CompositeExplicitAutograd_g_ = _kernel(_CEA, " in text
