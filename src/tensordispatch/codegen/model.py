"""What the emitters need to know about operators, derived from the yaml model (schema/).

Owns the codegen's configuration as data (which table holds each dispatch key's kernels,
which operators Python hides, which accept numbers for tensors, the Python operators of
Tensor) and small pure helpers (identifiers, literals, parameter lists). Reads schema/ only.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass

from tensordispatch.schema.model import Argument, FunctionSchema
from tensordispatch.schema.native_model import NativeFunction
from tensordispatch.schema.types import BaseType, ListType, OptionalType

__all__ = [
    "DUNDER_METHODS",
    "FRESH_IMPLS",
    "FRESH_TABLE",
    "FUNCTIONAL_FAST",
    "FUNCTIONAL_TABLE",
    "INPLACE_FAST",
    "INPLACE_TABLE",
    "HIDDEN_FROM_PYTHON",
    "KERNEL_TABLES",
    "NUMBERS_AS_TENSORS",
    "PYTHON_FUNCTIONS",
    "PYTHON_METHODS",
    "PYTHON_MODULES",
    "PYTHON_PARAMETER_NAMES",
    "SKIPPED_PYTHON_BINDINGS",
    "STRUCTURED_KEYS",
    "CodegenError",
    "arg_ident",
    "ident",
    "is_factory",
    "kernel_params",
    "literal",
]


class CodegenError(ValueError):
    """native_functions.yaml asks for something the generator cannot produce."""


# dispatch key -> (import line alias, "module:attribute") of the table holding its kernels.
KERNEL_TABLES: dict[str, tuple[str, str]] = {
    "CPU": ("_CPU", "tensordispatch.backends.cpu:CPU_KERNELS"),
    "Meta": ("_META", "tensordispatch.backends.meta:META_KERNELS"),
    "CompositeExplicitAutograd": ("_CEA", "tensordispatch.backends.composite:COMPOSITE_KERNELS"),
    "CompositeExplicitAutogradNonFunctional": (
        "_CEA",
        "tensordispatch.backends.composite:COMPOSITE_KERNELS",
    ),
    "CompositeImplicitAutograd": ("_CIA", "tensordispatch.ops.decompositions:DECOMPOSITIONS"),
}
META_FUNCTIONS = ("_META_FN", "tensordispatch.backends.meta:META_FUNCTIONS")

# Keys whose kernels for a structured group are generated from meta + impl (spec 3.2), and
# the allocator each uses for functional outputs.
STRUCTURED_KEYS: dict[str, str] = {"CPU": "_alloc_cpu"}

# CPU out impls (yaml CPU: kernel names) that also have a fresh-result functional kernel in
# backends/cpu/fresh.py CPU_FRESH_KERNELS (Note [Fresh results]): the functional wrapper of
# their group may call ``fresh(pre, specs[0], *args)`` instead of allocate + impl.
FRESH_IMPLS: frozenset[str] = frozenset(
    {"add_out", "sub_out", "mul_out", "div_out", "neg_out", "exp_out", "sin_out", "cos_out",
     "sqrt_out"}
)  # fmt: skip
FRESH_TABLE = ("_CPU_FRESH", "tensordispatch.backends.cpu.fresh:CPU_FRESH_KERNELS")

# Structured groups (by functional overload name) whose functional CPU kernel is a complete
# hand-fused kernel of backends/cpu/fresh.py CPU_FUNCTIONAL_KERNELS (fast-path checks + one
# NumPy call, falling back to the meta function + fresh kernel itself): registered instead of
# a generated wrapper, with the wrapper's name and Python signature (~450 ns less per call).
FUNCTIONAL_FAST: frozenset[str] = frozenset(
    {"add.Tensor", "sub.Tensor", "mul.Tensor", "div.Tensor", "neg", "exp", "sin", "cos", "sqrt"}
)
FUNCTIONAL_TABLE = (
    "_CPU_FUNCTIONAL",
    "tensordispatch.backends.cpu.fresh:CPU_FUNCTIONAL_KERNELS",
)

# The same for the in-place member of a structured group: backends/cpu/fresh.py
# CPU_INPLACE_KERNELS write same-dtype same-shape operands (or a wrapped number) straight into
# self and run the meta function + in-place checks + impl otherwise (~0.6 us less per call).
INPLACE_FAST: frozenset[str] = frozenset({"add_.Tensor", "sub_.Tensor", "mul_.Tensor", "div_.Tensor"})
INPLACE_TABLE = (
    "_CPU_INPLACE",
    "tensordispatch.backends.cpu.fresh:CPU_INPLACE_KERNELS",
)

# Overloads torch's Python binding does not expose: numbers go through the Tensor overload
# as wrapped numbers instead (torch's tools/autograd skip list).
HIDDEN_FROM_PYTHON: frozenset[str] = frozenset(
    {
        "add.Scalar", "add_.Scalar", "sub.Scalar", "sub_.Scalar", "mul.Scalar",
        "mul_.Scalar", "div.Scalar", "div_.Scalar", "div.Scalar_mode", "div_.Scalar_mode",
        "slice.Tensor", "copy", "uniform", "random.from", "random.to",
        "normal_functional",
        # aliases (M1): torch's parser reaches their Tensor overloads with a number too
        "multiply.Scalar", "multiply_.Scalar", "subtract.Scalar", "subtract_.Scalar",
        "divide.Scalar", "divide_.Scalar", "divide.Scalar_mode", "divide_.Scalar_mode",
        "true_divide.Scalar", "true_divide_.Scalar",
    }
)  # fmt: skip

# Operators with no Python binding at all, by name (the out variant's name gains "_out"),
# as torch's binding generator skips them: internals reached through other functions
# (``alias``, ``index`` behind ``__getitem__``) and the forward/backward halves of nn ops.
SKIPPED_PYTHON_BINDINGS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(f"^{p}$")
    for p in (
        "alias", "index", "index_out", "item", "slice", "tensor",
        ".*_forward", ".*_forward_out", ".*_backward", ".*_backward_(out|input|weight|bias)",
        ".*_jvp", "lift", "lift_out", "lift_fresh", "lift_fresh_copy", "lift_fresh_copy_out",
        "zero", "zero_out", "resize", "resize_out", "embedding_renorm",
    )
)  # fmt: skip

# yaml ``python_module`` -> the generated module holding those functions instead of the top
# level (torch: ``nn`` -> torch._C._nn, which torch.nn.functional re-exports).
PYTHON_MODULES: dict[str, str] = {"nn": "nn_functions.py"}

# Python names bound to hand-written functions ("module:attribute") instead of generated ones:
# names whose overloads the generator cannot choose between (Note [Overload choice by
# presence] in gen_python.py: positional names that are not prefixes of one another, a
# varargs size next to a generator overload, int-vs-list parameters) and Tensor methods that
# are Python-level logic over operators (indexing). The generated module imports them, so
# they are installed and exported like generated ones.
PYTHON_FUNCTIONS: dict[str, str] = {
    "arange": "tensordispatch.ops.bindings:arange",
    "cat": "tensordispatch.ops.bindings:cat",
    "nonzero": "tensordispatch.ops.bindings:nonzero",
    "rand": "tensordispatch.ops.bindings:rand",
    "randn": "tensordispatch.ops.bindings:randn",
    "randint": "tensordispatch.ops.bindings:randint",
    "scatter": "tensordispatch.ops.bindings:scatter",
    "split": "tensordispatch.ops.bindings:split",
    "all": "tensordispatch.ops.bindings_reductions:all",
    "any": "tensordispatch.ops.bindings_reductions:any",
    "conv1d": "tensordispatch.ops.bindings_reductions:conv1d",
    "embedding_renorm_": "tensordispatch.ops.bindings_reductions:embedding_renorm_",
    "is_conj": "tensordispatch.ops.bindings_tensor:is_conj",
    "is_neg": "tensordispatch.ops.bindings_tensor:is_neg",
    "_conj": "tensordispatch.ops.bindings_tensor:conj_view",
    "_neg_view": "tensordispatch.ops.bindings_tensor:neg_view",
    "conv2d": "tensordispatch.ops.bindings_reductions:conv2d",
    "norm": "tensordispatch.ops.bindings_reductions:norm",
    "std": "tensordispatch.ops.bindings_reductions:std",
    "var": "tensordispatch.ops.bindings_reductions:var",
    "where": "tensordispatch.ops.bindings_pointwise:where",
    "clamp": "tensordispatch.ops.bindings_pointwise:clamp",
    "clamp_": "tensordispatch.ops.bindings_pointwise:clamp_",
    "clip": "tensordispatch.ops.bindings_aliases:clip",
    "clip_": "tensordispatch.ops.bindings_aliases:clip_",
    "movedim": "tensordispatch.ops.bindings_aliases:movedim",
    "moveaxis": "tensordispatch.ops.bindings_aliases:moveaxis",
    "count_nonzero": "tensordispatch.ops.bindings_aliases:count_nonzero",
    "squeeze": "tensordispatch.ops.bindings_functionalization:squeeze",
    "squeeze_copy": "tensordispatch.ops.bindings_functionalization:squeeze_copy",
    "zero_": "tensordispatch.ops.bindings_functionalization:zero_",
}
PYTHON_METHODS: dict[str, str] = {
    "__getitem__": "tensordispatch.ops.indexing:getitem",
    "__setitem__": "tensordispatch.ops.indexing:setitem",
    "to": "tensordispatch.ops.bindings:to",
    "nonzero": "tensordispatch.ops.bindings:nonzero",
    "scatter": "tensordispatch.ops.bindings:scatter",
    "scatter_": "tensordispatch.ops.bindings:scatter_",
    "split": "tensordispatch.ops.bindings:split",
    "uniform_": "tensordispatch.ops.bindings:uniform_",
    "random_": "tensordispatch.ops.bindings:random_",
    "all": "tensordispatch.ops.bindings_reductions:all",
    "any": "tensordispatch.ops.bindings_reductions:any",
    "norm": "tensordispatch.ops.bindings_reductions:norm",
    "std": "tensordispatch.ops.bindings_reductions:std",
    "var": "tensordispatch.ops.bindings_reductions:var",
    "where": "tensordispatch.ops.bindings_pointwise:method_where",
    "clamp": "tensordispatch.ops.bindings_pointwise:method_clamp",
    "clamp_": "tensordispatch.ops.bindings_pointwise:method_clamp_",
    "clip": "tensordispatch.ops.bindings_aliases:method_clip",
    "clip_": "tensordispatch.ops.bindings_aliases:method_clip_",
    "movedim": "tensordispatch.ops.bindings_aliases:method_movedim",
    "moveaxis": "tensordispatch.ops.bindings_aliases:method_moveaxis",
    "count_nonzero": "tensordispatch.ops.bindings_aliases:method_count_nonzero",
    "__invert__": "tensordispatch.ops.bindings_pointwise:invert",
    "__pos__": "tensordispatch.ops.bindings_tensor:pos",
    "T": "tensordispatch.ops.bindings_tensor:T",
    "mT": "tensordispatch.ops.bindings_tensor:mT",
    "H": "tensordispatch.ops.bindings_tensor:H",
    "mH": "tensordispatch.ops.bindings_tensor:mH",
    "is_conj": "tensordispatch.ops.bindings_tensor:is_conj",
    "is_neg": "tensordispatch.ops.bindings_tensor:is_neg",
    "_conj": "tensordispatch.ops.bindings_tensor:conj_view",
    "_neg_view": "tensordispatch.ops.bindings_tensor:neg_view",
    "real": "tensordispatch.ops.bindings_tensor:real",
    "imag": "tensordispatch.ops.bindings_tensor:imag",
    "data": "tensordispatch.ops.bindings_tensor:data",
    "__lshift__": "tensordispatch.ops.bindings_tensor:lshift",
    "__rlshift__": "tensordispatch.ops.bindings_tensor:rlshift",
    "__ilshift__": "tensordispatch.ops.bindings_tensor:ilshift",
    "__rshift__": "tensordispatch.ops.bindings_tensor:rshift",
    "__rrshift__": "tensordispatch.ops.bindings_tensor:rrshift",
    "__irshift__": "tensordispatch.ops.bindings_tensor:irshift",
    "squeeze": "tensordispatch.ops.bindings_functionalization:squeeze",
    "squeeze_": "tensordispatch.ops.bindings_functionalization:squeeze_",
    "zero_": "tensordispatch.ops.bindings_functionalization:zero_",
    "resize_": "tensordispatch.ops.bindings_functionalization:resize_",
    "float": "tensordispatch.ops.bindings_dtype:float_",
    "double": "tensordispatch.ops.bindings_dtype:double",
    "half": "tensordispatch.ops.bindings_dtype:half",
    "long": "tensordispatch.ops.bindings_dtype:long",
    "int": "tensordispatch.ops.bindings_dtype:int_",
    "short": "tensordispatch.ops.bindings_dtype:short",
    "char": "tensordispatch.ops.bindings_dtype:char",
    "byte": "tensordispatch.ops.bindings_dtype:byte",
    "bool": "tensordispatch.ops.bindings_dtype:bool_",
    "cfloat": "tensordispatch.ops.bindings_dtype:cfloat",
    "cdouble": "tensordispatch.ops.bindings_dtype:cdouble",
    "type": "tensordispatch.ops.bindings_dtype:type_",
    "new_tensor": "tensordispatch.ops.bindings_dtype:new_tensor",
}

# (method name, schema argument) -> torch's Python name for it: torch binds Tensor.copy_ by
# hand, its source called ``other`` (``a.copy_(src=b)`` is refused, ``other=b`` taken).
PYTHON_PARAMETER_NAMES: dict[tuple[str, str], str] = {("copy_", "src"): "other"}

# Python names whose Tensor parameters accept a Python number (wrapped as a 0-dim tensor).
NUMBERS_AS_TENSORS: frozenset[str] = frozenset(
    {"add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "floor_divide", "floor_divide_",
     "multiply", "multiply_", "subtract", "subtract_", "divide", "divide_", "true_divide",
     "true_divide_"}
)  # fmt: skip

# Python operator -> (method it calls, how): "same" forwards (self, other); "reflected" calls
# the named function with (other wrapped, self); "swapped" calls it with (other, self), so a
# number reaches the function's own number overload (pow.Scalar); "reciprocal" is torch's
# ``self.reciprocal() * other``. Every binary operator returns NotImplemented where its call
# raises a TypeError (Note [Operators return NotImplemented] in codegen/gen_python.py).
DUNDER_METHODS: dict[str, tuple[str, str]] = {
    "__add__": ("add", "same"),
    "__radd__": ("add", "same"),
    "__iadd__": ("add_", "same"),
    "__sub__": ("sub", "same"),
    "__rsub__": ("rsub", "function"),
    "__isub__": ("sub_", "same"),
    "__mul__": ("mul", "same"),
    "__rmul__": ("mul", "same"),
    "__imul__": ("mul_", "same"),
    "__truediv__": ("div", "same"),
    "__rtruediv__": ("reciprocal", "reciprocal"),  # torch's: self.reciprocal() * other
    "__itruediv__": ("div_", "same"),
    "__div__": ("div", "same"),  # Python 2 names torch's Tensor still defines
    "__rdiv__": ("reciprocal", "reciprocal"),
    "__idiv__": ("div_", "same"),
    "__matmul__": ("matmul", "same"),
    "__rmatmul__": ("matmul", "swapped"),  # torch's: matmul(other, self)
    "__mod__": ("remainder", "same"),
    "__rmod__": ("remainder", "reflected"),
    "__imod__": ("remainder_", "same"),
    "__pow__": ("pow", "same"),
    "__rpow__": ("pow", "swapped"),  # torch's Tensor.__rpow__ is pow(other, self)
    "__ipow__": ("pow_", "same"),
    "__floordiv__": ("floor_divide", "same"),
    "__rfloordiv__": ("floor_divide", "reflected"),
    "__ifloordiv__": ("floor_divide_", "same"),
    "__and__": ("bitwise_and", "same"),
    "__rand__": ("bitwise_and", "same"),
    "__iand__": ("bitwise_and_", "same"),
    "__or__": ("bitwise_or", "same"),
    "__ror__": ("bitwise_or", "same"),
    "__ior__": ("bitwise_or_", "same"),
    "__xor__": ("bitwise_xor", "same"),
    "__rxor__": ("bitwise_xor", "same"),
    "__ixor__": ("bitwise_xor_", "same"),
    "__neg__": ("neg", "same"),
    "__abs__": ("abs", "same"),
    "__eq__": ("eq", "same"),
    "__ne__": ("ne", "same"),
    "__lt__": ("lt", "same"),
    "__le__": ("le", "same"),
    "__gt__": ("gt", "same"),
    "__ge__": ("ge", "same"),
}


def ident(f: NativeFunction | FunctionSchema) -> str:
    """A Python identifier for an operator overload (``add_Tensor``, ``add__Tensor``).

    >>> from tensordispatch.schema import parse_schema
    >>> ident(parse_schema("add_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)"))
    'add__Tensor'
    """
    func = f.func if isinstance(f, NativeFunction) else f
    return func.name.unambiguous_name().replace(".", "_")


def literal(arg: Argument) -> str:
    """The Python source of an argument's schema default (lists become tuples)."""
    value = arg.default_value
    if isinstance(value, list):
        return repr(tuple(value))
    return repr(value)


def arg_ident(name: str) -> str:
    """A schema argument name usable as a Python parameter (``from`` -> ``from_``); such
    arguments are positional in every schema that has them, so only the spelling changes.

    >>> arg_ident("from"), arg_ident("dim")
    ('from_', 'dim')
    """
    return name + "_" if keyword.iskeyword(name) else name


def kernel_params(func: FunctionSchema) -> str:
    """A kernel's parameter list with the schema's names and defaults (kwarg-only after *).

    >>> from tensordispatch.schema import parse_schema
    >>> kernel_params(parse_schema("f(Tensor self, int[] d=[], *, Scalar alpha=1) -> Tensor"))
    'self, d=(), *, alpha=1'
    """
    parts: list[str] = []
    star = False
    for a in func.arguments:
        if a.kwarg_only and not star:
            parts.append("*")
            star = True
        n = arg_ident(a.name)
        parts.append(n if a.default is None else f"{n}={literal(a)}")
    return ", ".join(parts)


def is_factory(f: NativeFunction) -> bool:
    """Whether torch's BackendSelect handles the op: TensorOptions, not new_* / *_like."""
    base = f.func.name.name.base
    return (
        f.func.tensor_options is not None
        and not base.startswith("new_")
        and not base.endswith("_like")
    )


def is_tensor(arg: Argument) -> bool:
    t = arg.type
    return isinstance(t, BaseType) and str(t) == "Tensor"


def sized_int_list(arg: Argument) -> bool:
    """``int[N]`` / ``int[N]?``: Python passes a bare int for a one-element list."""
    t = arg.type
    if isinstance(t, OptionalType):
        t = t.elem
    return isinstance(t, ListType) and str(t.elem) in ("int", "SymInt") and bool(t.size)


def int_list(arg: Argument) -> bool:
    t = arg.type
    if isinstance(t, OptionalType):
        t = t.elem
    return isinstance(t, ListType) and str(t.elem) in ("int", "SymInt")


@dataclass(frozen=True, slots=True)
class Located:
    """A function and where its yaml entry is, for messages."""

    f: NativeFunction

    def __str__(self) -> str:
        return f"{self.f.loc.file}:{self.f.loc.line}"
