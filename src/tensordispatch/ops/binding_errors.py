"""The TypeError texts of the generated Python bindings, as torch's Python arg parser words
them. Error path only: a binding calls ``binding_type_error`` from its except clause after the
operator rejected an argument (Note [Binding argument errors] in codegen/gen_python.py).

Note [How an argument was given]
torch's parser knows which arguments came by keyword: an argument given by keyword is named
without a position ("add(): argument 'other' must be Tensor, not str"), and the "invalid
combination" message lists the call as torch saw it (``got (Tensor, other=str)``). A Python
function cannot tell ``f(t, x)`` from ``f(t, other=x)`` once it runs, so on the error path only
we read the keyword names off the caller's call instruction (KW_NAMES before CALL in CPython
3.11 and 3.12, the constant before CALL_KW in 3.13). When the call is not a plain call of the
binding from Python (``f(**kw)``, a call from C such as ``map``, ``functools.partial``) the
names are unknown and every given argument counts as positional, as before.
"""

from __future__ import annotations

import dis
import sys
from dataclasses import replace
from types import FrameType
from typing import Any

from tensordispatch.dispatch.calling import NOT_GIVEN
from tensordispatch.dispatch.convert import register_binding_modules
from tensordispatch.dispatch.errors import ArgumentTypeError, binding_argument
from tensordispatch.ops.python_signatures import HIDDEN_SIGNATURES, PYTHON_SIGNATURES

__all__ = [
    "PYTHON_SIGNATURES",
    "REQUIRED",
    "binding_type_error",
    "call_keywords",
    "combination_error",
    "invalid_combination",
]


# Our classes of torch's Python types -> the names torch's parser gives them.
class _Required:
    """Default of a generated binding's required parameters (Note [Missing arguments])."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<required>"


REQUIRED = _Required()

# the modules of Python bindings, and the module that relays a binding's first call of an
# operator (Note [Bindings take enums only as themselves] in dispatch/convert.py)
register_binding_modules(
    tuple(f"tensordispatch.generated.{m}" for m in ("functions", "methods", "nn_functions"))
    + tuple(f"tensordispatch.ops.{m}" for m in ("bindings", "bindings_pointwise",
                                                "bindings_reductions", "bindings_tensor")),
    ("tensordispatch.ops.deferred",),
)  # fmt: skip
_TORCH_TYPES = {"dtype": "torch.dtype", "Layout": "torch.layout", "device": "torch.device",
                "MemoryFormat": "torch.memory_format", "Generator": "torch.Generator"}  # fmt: skip


def call_keywords(frame: FrameType | None) -> tuple[str, ...] | None:
    """The keyword names of the call ``frame`` is making, or None when they cannot be read
    (Note [How an argument was given]).

    >>> import sys
    >>> def probe(*args, **kwargs):
    ...     return call_keywords(sys._getframe(1))
    >>> probe(1, b=2, c=3), probe(1)
    (('b', 'c'), ())
    """
    if frame is None:
        return None
    names: tuple[str, ...] = ()
    current = previous = None
    for ins in dis.get_instructions(frame.f_code):  # CACHE entries are skipped
        if ins.offset > frame.f_lasti:  # f_lasti may point into the call's cache entries
            break
        if current is not None and current.opname.startswith("CALL"):
            names = ()
        if ins.opname == "KW_NAMES":
            names = tuple(frame.f_code.co_consts[ins.arg or 0])
        previous, current = current, ins
    if current is None:
        return None
    if current.opname == "CALL":
        return names
    if current.opname == "CALL_KW" and previous is not None:
        return tuple(previous.argval)
    return None


def _type_name(value: Any, detail: bool = False) -> str:
    """torch's name for ``value``'s type; with ``detail``, a list or tuple names its items
    (``list of [int, int]``), as torch's "didn't match" lines."""
    from tensordispatch.tensor.tensor import Tensor

    if isinstance(value, Tensor):
        return "Tensor"
    if detail and isinstance(value, list | tuple):
        items = ", ".join(_type_name(v) for v in value)
        return f"list of [{items}]" if isinstance(value, list) else f"tuple of ({items})"
    return _TORCH_TYPES.get(type(value).__name__, type(value).__name__)


def _call_arguments(
    binding: FrameType, method: bool, none_absent: bool = False
) -> tuple[list[Any], dict[str, Any]]:
    """(positional values, keyword values) of the call that ran ``binding``'s frame; every
    given argument counts as positional when the keywords cannot be read. Parameters left at
    NOT_GIVEN (or None, for hand-written bindings: ``none_absent``) were not given."""
    keywords = call_keywords(binding.f_back) or ()
    code, values = binding.f_code, binding.f_locals
    params = code.co_varnames[int(method) : code.co_argcount + code.co_kwonlyargcount]
    given = {}
    for p in params:
        v = values.get(p, NOT_GIVEN)
        absent = v is NOT_GIVEN or v is REQUIRED
        if not absent and not (v is None and (none_absent or p == "out")):
            given[p] = v
    positional = [v for p, v in given.items() if p not in keywords]
    return positional, {p: given[p] for p in sorted(given) if p in keywords}


def combination_error(name: str, method: bool) -> TypeError:
    """torch's "invalid combination" TypeError for the call of hand-written binding ``name``
    whose frame calls this (its absent arguments are None).

    >>> import tensordispatch as td
    >>> try:
    ...     td.ones(2).clamp("a")
    ... except TypeError as e:
    ...     print(str(e).splitlines()[0])
    clamp() received an invalid combination of arguments - got (str), but expected one of:
    """
    args, kwargs = _call_arguments(sys._getframe(1), method, none_absent=True)
    return TypeError(invalid_combination(name, PYTHON_SIGNATURES[(name, method)], args, kwargs))


def invalid_combination(
    name: str, signatures: tuple[str, ...], positional: list[Any], keywords: dict[str, Any]
) -> str:
    """torch's "received an invalid combination of arguments" text for a call of ``name``.

    >>> print(invalid_combination("pow", ("Tensor exponent", "Number exponent"), ["a"], {}))
    pow() received an invalid combination of arguments - got (str), but expected one of:
     * (Tensor exponent)
          didn't match because some of the arguments have invalid types: (!str!)
     * (Number exponent)
          didn't match because some of the arguments have invalid types: (!str!)
    <BLANKLINE>
    """
    got = [_type_name(v) for v in positional]
    kw = [f"{k}={_type_name(v)}" for k, v in keywords.items()]
    given = _listed(got + kw, len(got))
    head = f"{name}() received an invalid combination of arguments - got ({given}), but expected"
    if len(signatures) == 1:
        return f"{head} ({signatures[0]})"
    lines = [f"{head} one of:"]
    for sig in signatures:
        lines.append(f" * ({sig})")
        lines += _mismatch(sig, positional, keywords)
    return "\n".join(lines) + "\n"


def _listed(items: list[str], positional: int) -> str:
    """torch's list of a call's arguments: keywords alone each end with ', '."""
    return ", ".join(items) if positional else "".join(f"{k}, " for k in items)


def _mismatch(sig: str, positional: list[Any], keywords: dict[str, Any]) -> list[str]:
    """The "didn't match" line torch adds under a signature with as many entries as arguments
    were given (its ``*`` counts as one). torch's matcher never fits a parameter with a default
    (and calls a keyword naming one incorrect), which the texts here reproduce."""
    params = sig.split(", ")
    if len(params) != len(positional) + len(keywords):
        return []
    names = {p.rsplit(" ", 1)[-1]: p for p in params if p and " = " not in p}
    wrong = [k for k in keywords if k not in names]
    if wrong:
        return [
            f"      didn't match because some of the keywords were incorrect: {', '.join(wrong)}"
        ]
    marks = [_mark(p, v) for p, v in zip(params, positional, strict=False)]
    for k, v in keywords.items():
        mark = _mark(names[k], v)
        marks.append(f"!{k}={mark[1:-1]}!" if mark.startswith("!") else f"{k}={mark}")
    why = "didn't match because some of the arguments have invalid types"
    return [f"      {why}: ({_listed(marks, len(positional))})"]


def _fits(kind: str, value: Any) -> bool:
    """Whether torch's parser takes ``value`` for a parameter of type ``kind``."""
    from tensordispatch.tensor.dtypes import dtype as _dtype
    from tensordispatch.tensor.tensor import Tensor

    if kind == "Tensor":
        return isinstance(value, Tensor)
    if kind == "Number":
        return isinstance(value, bool | int | float | complex)
    if kind in ("int", "bool", "str", "float"):
        wanted = {"int": int, "bool": bool, "str": str, "float": float | int}[kind]
        return isinstance(value, wanted) and (kind == "bool" or not isinstance(value, bool))
    if kind == "tuple of ints":
        items = value if isinstance(value, list | tuple) else [value]
        return all(isinstance(v, int) and not isinstance(v, bool) for v in items)
    if kind == "torch.dtype":
        return isinstance(value, _dtype)
    return False


def _mark(param: str, value: Any) -> str:
    """The type of ``value``, between !s when it does not fit ``param``'s type."""
    kind = param.rsplit(" ", 1)[0] if " = " not in param else ""
    name = _type_name(value, detail=True)
    return name if kind and _fits(kind, value) else f"!{name}!"


def _plausible(signatures: tuple[str, ...], count: int) -> int:
    """How many signatures take ``count`` arguments (torch names the bad argument of the only
    one, and lists them all otherwise)."""
    n = 0
    for sig in signatures:
        params = [p for p in sig.split(", ") if p != "*"]
        if sum(" = " not in p for p in params) <= count <= len(params):
            n += 1
    return n


def binding_type_error(
    name: str, error: ArgumentTypeError, positional: tuple[str, ...], method: bool
) -> Exception:
    """The exception binding ``name`` raises when its operator rejected ``error``'s argument:
    torch's TypeError worded from the error's mismatch (Note [Argument errors as data] in
    dispatch/errors.py; named without a position when given by keyword; "invalid
    combination" when several of the name's signatures take that many arguments), or
    ``error`` itself when it has no mismatch or concerns another operator. Called from the
    binding's except clause only.

    >>> import tensordispatch as td
    >>> try:
    ...     td.maximum(td.ones(2), other=2)
    ... except TypeError as e:
    ...     print(e)
    maximum(): argument 'other' must be Tensor, not int
    """
    rejected = binding_argument(name, error, positional, method)
    if rejected is None:
        return error
    if error.mismatch is not None and error.mismatch.value is REQUIRED:
        return TypeError(_missing(name, method, sys._getframe(1)))
    args, kwargs = _call_arguments(sys._getframe(1), method)
    signatures = PYTHON_SIGNATURES.get((name, method))
    if signatures is not None and _plausible(signatures, len(args) + len(kwargs)) != 1:
        return TypeError(invalid_combination(name, signatures, args, kwargs))
    return TypeError(replace(rejected, keyword=rejected.argument in kwargs).message())


# Note [Missing arguments]
# Python words a missing argument itself ("add() missing 1 required positional argument:
# 'other'") before the function runs; torch's parser says 'neg() missing 1 required positional
# arguments: "input"' (sic: its plural is the wrong way round), or, for a name with several
# signatures (hidden ones too), that the call is an invalid combination. A generated Tensor
# method's required parameters default to REQUIRED (nothing is read on a call that gives
# them), which the operator's entry rejects as a value of the wrong type; the method's except
# clause words the error from its frame (as torch: "invalid combination" unless exactly one
# signature takes that many arguments). Functions keep Python's wording: with defaults,
# Python's "takes 2 positional arguments but 3 were given", which is torch's text for a
# function (not for a method), would read "takes from 0 to 2" (measured over the bound
# names: methods 88 -> 190 of 203 missing-argument texts equal torch's, no other change;
# functions would gain 165 and lose 127 too-many-argument texts). So do the operators
# (``_n_`` copies), whose signature lazy/inline_methods.py mirrors.
def _missing(name: str, method: bool, binding: FrameType) -> str:
    """torch's text for a call of binding ``name`` (frame ``binding``) that left required
    parameters out (Note [Missing arguments])."""
    args, kwargs = _call_arguments(binding, method)
    key = (name, method)
    signatures = PYTHON_SIGNATURES.get(key)
    if signatures is None and key in HIDDEN_SIGNATURES:
        signatures = (HIDDEN_SIGNATURES[key],)
    if signatures is not None and _plausible(signatures, len(args) + len(kwargs)) != 1:
        return invalid_combination(name, signatures, args, kwargs)
    code, values = binding.f_code, binding.f_locals
    params = code.co_varnames[int(method) : code.co_argcount]
    missing = [p for p in params if values.get(p) is REQUIRED]
    plural = "s" if len(missing) == 1 else ""
    names = ", ".join(f'"{p}"' for p in missing)
    return f"{name}() missing {len(missing)} required positional argument{plural}: {names}"
