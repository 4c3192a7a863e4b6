"""The TypeError texts of the generated Python bindings, as torch's Python arg parser words
them. Error path only: a binding calls ``binding_type_error`` from its except clause after the
operator rejected an argument (Note [Binding argument errors] in codegen/gen_python.py).

Note [How an argument was given]
torch's parser knows which arguments came by keyword: an argument given by keyword is named
without a position ("add(): argument 'other' must be Tensor, not str"), and the "invalid
combination" message lists the call as torch saw it (``got (Tensor, other=str)``). A Python
function cannot tell ``f(t, x)`` from ``f(t, other=x)`` once it runs, so on the error path only
we read the keyword names off the caller's call instruction (KW_NAMES before CALL in CPython
3.11 and 3.12, the constant before CALL_KW in 3.13), and its argument count: a parameter
neither among the call's positional arguments nor its keywords was not given, whatever its
value (a default of False or 0 is not listed). When the call is not a plain call of the
binding from Python (``f(*args)``, ``f(**kw)``, a call from C such as ``map``,
``functools.partial``) both are unknown and every argument that differs from the binding's
"absent" markers counts as given positionally, as before.
"""

from __future__ import annotations

import dis
import inspect
import operator
import sys
from dataclasses import replace
from types import FrameType
from typing import Any

from tensordispatch.dispatch.calling import NOT_GIVEN
from tensordispatch.dispatch.convert import register_binding_modules
from tensordispatch.dispatch.errors import ArgumentTypeError, BindingArgument, binding_argument
from tensordispatch.ops.python_signatures import HIDDEN_SIGNATURES, PYTHON_SIGNATURES

__all__ = [
    "PYTHON_SIGNATURES",
    "REQUIRED",
    "binding_type_error",
    "call_keywords",
    "called_as_method",
    "combination_error",
    "extra_arguments",
    "invalid_combination",
    "missing_list",
    "no_overload",
    "sequence_error",
    "varargs_list",
]


# Our classes of torch's Python types -> the names torch's parser gives them.
class _Required:
    """Default of a generated binding's required parameters (Note [Missing arguments])."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<required>"


REQUIRED: Any = _Required()  # typed Any: the default of parameters of any type

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
    shape = _call_shape(frame)
    return None if shape is None else shape[1]


def _call_shape(frame: FrameType | None) -> tuple[int, tuple[str, ...]] | None:
    """(number of arguments, keyword names) of the call ``frame`` is making (the number
    leaves out a bound method's self), or None when they cannot be read."""
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
        return current.arg or 0, names
    if current.opname == "CALL_KW" and previous is not None:
        return current.arg or 0, tuple(previous.argval)
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
    shape = _call_shape(binding.f_back)
    keywords = () if shape is None else shape[1]
    code, values = binding.f_code, binding.f_locals
    params = code.co_varnames[int(method) : code.co_argcount + code.co_kwonlyargcount]
    given = {}
    for i, p in enumerate(params):
        v = values.get(p, NOT_GIVEN)
        if shape is not None and p not in keywords and i >= shape[0] - len(keywords):
            continue  # neither among the call's positional arguments nor its keywords
        absent = v is NOT_GIVEN or v is REQUIRED or (p == "requires_grad" and v is False)
        if not absent and not (v is None and (none_absent or p == "out")):
            given[p] = v
    positional = [v for p, v in given.items() if p not in keywords]
    return positional + _varargs(binding), {p: given[p] for p in sorted(given) if p in keywords}


def _varargs(binding: FrameType) -> list[Any]:
    """The values a binding's ``*`` parameter took (``*_td_more``, ``*_td_args``)."""
    code = binding.f_code
    if not code.co_flags & inspect.CO_VARARGS:
        return []
    return list(binding.f_locals[code.co_varnames[code.co_argcount + code.co_kwonlyargcount]])


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


def called_as_method(binding: FrameType) -> bool:
    """Whether the hand-written binding running in frame ``binding``, which serves both
    ``torch.<name>`` and ``Tensor.<name>`` (``var(input, *args, **kwargs)``, ``split``), was
    called as a Tensor method: the call passed one positional argument fewer than the frame
    received (the bound method's self); a positional parameter left at its default counts as
    not received.

    >>> import tensordispatch as td
    >>> try:
    ...     td.ones(2).var("a")
    ... except TypeError as e:
    ...     print(str(e).splitlines()[1])
     * (tuple of ints dim, bool unbiased = True, bool keepdim = False)
    """
    shape = _call_shape(binding.f_back)
    code, values = binding.f_code, binding.f_locals
    first = code.co_varnames[0]
    if shape is None or first in shape[1] or values[first] is REQUIRED:
        return False
    function = binding.f_globals.get(code.co_name)
    defaults = getattr(function, "__defaults__", None) or ()
    names = code.co_varnames[: code.co_argcount]
    lead = len(names) - len(defaults)
    received = len(_varargs(binding))
    for i, name in enumerate(names):
        left = i >= lead and values[name] is defaults[i - lead]
        received += name not in shape[1] and not left
    return received == shape[0] - len(shape[1]) + 1


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
        return _one_signature(head, signatures[0], positional, keywords)
    lines = [f"{head} one of:"]
    for sig in signatures:
        lines.append(f" * ({sig})")
        lines += _mismatch(sig, positional, keywords)
    return "\n".join(lines) + "\n"


def _one_signature(head: str, sig: str, positional: list[Any], keywords: dict[str, Any]) -> str:
    """The invalid-combination text naming one signature: torch lists the keywords alone
    when there are any, else marks the arguments that do not fit when there are as many as
    the signature's entries."""
    if keywords:
        unknown = ", ".join(sorted(keywords))
        return f"{head.split(' - got (')[0]} - got unrecognized keyword arguments: {unknown}"
    mismatch = _mismatch(sig, positional, keywords)
    if mismatch and "invalid types: (" in mismatch[0]:
        marked = mismatch[0].split("invalid types: (", 1)[1][:-1]
        head = f"{head.split(' - got (')[0]} - got ({marked}), but expected"
    return f"{head} ({sig})"


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
    binding = sys._getframe(1)
    if error.mismatch is not None and error.mismatch.value is REQUIRED:
        return TypeError(_missing(name, method, binding))
    args, kwargs = _call_arguments(binding, method)
    signatures = PYTHON_SIGNATURES.get((name, method))
    if signatures is not None and _plausible(signatures, len(args) + len(kwargs)) != 1:
        return TypeError(invalid_combination(name, signatures, args, kwargs))
    rejected = replace(rejected, keyword=rejected.argument in kwargs)
    if rejected.expected == "tuple of ints" and error.mismatch is not None:
        text = _int_list_text(rejected, error.mismatch.value, binding)
        if text is not None:
            return TypeError(text)
    return TypeError(rejected.message())


def _int_like(value: Any) -> bool:
    """Whether torch's parser takes ``value`` as an item of an int list."""
    try:
        operator.index(value)
    except Exception:  # noqa: BLE001 - any failure means "not an integer"
        return False
    return True


def _int_list_text(rejected: BindingArgument, value: Any, binding: FrameType) -> str | None:
    """torch's text for an int list it cannot read: the value as the call gave it (a varargs
    binding's arguments, Note [Size lists given as varargs] in codegen/python_errors.py); a
    list or tuple names its first item that is no integer, and too many varargs after a
    list are extra arguments. None when every item is an integer."""
    given = binding.f_locals.get("_td_args")
    if given:  # the list came as varargs
        one = len(given) == 1 and not isinstance(given[0], int)
        if len(given) > 1 and not _int_like(given[0]):
            n = len(given)
            return f"{rejected.function}() takes 1 positional argument but {n} were given"
        value = given[0] if one else given
    if not isinstance(value, list | tuple):
        return replace(rejected, found=_type_name(value)).message()
    for i, item in enumerate(value):
        if not _int_like(item):
            what = f'"type must be tuple of ints,but got {_type_name(item)}"'
            unpack = f"failed to unpack the object at pos {i + 1} with error {what}"
            return f"{rejected.function}(): argument '{rejected.argument}' {unpack}"
    return None


def extra_arguments(name: str, method: bool) -> TypeError:
    """torch's error for a call of binding ``name`` with more positional arguments than it
    takes (Note [Functions count their arguments] in codegen/python_errors.py); called by the
    binding, whose frame is read.

    >>> import tensordispatch as td
    >>> try:
    ...     td.neg(td.ones(2), 1)
    ... except TypeError as e:
    ...     print(e)
    neg() takes 1 positional argument but 2 were given
    """
    binding = sys._getframe(1)
    args, kwargs = _call_arguments(binding, method)
    signatures = _signatures(name, method)
    code = binding.f_code
    n = len(args)
    most = code.co_argcount - int(method)
    if signatures is not None:
        plausible = [s for s in signatures if _plausible((s,), n + len(kwargs))]
        if len(plausible) != 1 or _positional_count(plausible[0])[1] >= n:
            return TypeError(invalid_combination(name, signatures, args, kwargs))
        least, most = _positional_count(plausible[0])
    else:
        defaults = binding.f_globals[code.co_name].__defaults__ or ()
        least = sum(d is REQUIRED for d in defaults) + most - len(defaults)
    if least != most:
        return TypeError(
            f"{name}() takes from {least} to {most} positional arguments but {n} were given"
        )
    plural, were = "" if most == 1 else "s", "was" if n == 1 else "were"
    return TypeError(f"{name}() takes {most} positional argument{plural} but {n} {were} given")


def no_overload(name: str, method: bool) -> TypeError:
    """torch's invalid-combination error for a call of binding ``name`` that none of its
    overloads takes (the arguments given or left out fit none); called by the binding, whose
    frame is read.

    >>> import tensordispatch as td
    >>> try:
    ...     td.bitwise_and()
    ... except TypeError as e:
    ...     print(str(e).splitlines()[0])
    bitwise_and() received an invalid combination of arguments - got (), but expected one of:
    """
    binding = sys._getframe(1)
    args, kwargs = _call_arguments(binding, method)
    signatures = _signatures(name, method) or (f"{name}(...)",)
    return TypeError(invalid_combination(name, signatures, args, kwargs))


def _signatures(name: str, method: bool) -> tuple[str, ...] | None:
    """torch's visible signatures of a name with several, or with hidden ones (its only
    visible one), else None."""
    key = (name, method)
    found = PYTHON_SIGNATURES.get(key)
    if found is None and key in HIDDEN_SIGNATURES:
        found = (HIDDEN_SIGNATURES[key],)
    return found


def _positional_count(signature: str) -> tuple[int, int]:
    """(required, all) parameters of a signature text: torch's min_args and max_pos_args."""
    params = [p for p in signature.split(", ") if p]
    positional = params[: params.index("*")] if "*" in params else params
    return sum(" = " not in p and p != "*" for p in params), len(positional)


def varargs_list(name: str, param: str, method: bool) -> list[int]:
    """The int list of a varargs binding whose ``_td_args`` could not be made one (Note
    [Size lists given as varargs] in codegen/python_errors.py): a single integer-like as a
    one-item list, else torch's TypeError (no argument: missing; another object: not a tuple
    of ints). Called by the binding, whose frame is read.

    >>> import numpy as np, tensordispatch as td
    >>> td.zeros(np.int64(2)).shape
    tensordispatch.Size([2])
    >>> try:
    ...     td.zeros(td.int64)
    ... except TypeError as e:
    ...     print(e)
    zeros(): argument 'size' (position 1) must be tuple of ints, not torch.dtype
    """
    binding = sys._getframe(1)
    given = binding.f_locals["_td_args"]
    if given:
        if _int_like(given[0]):
            return [operator.index(given[0])]
        found = _type_name(given[0])
        raise TypeError(f"{name}(): argument '{param}' (position 1) must be tuple of ints, "
                        f"not {found}")  # fmt: skip
    raise missing_list(name, param, method, binding)


def missing_list(name: str, param: str, method: bool, binding: FrameType) -> TypeError:
    """torch's error for a call of binding ``name`` (frame ``binding``) that gave its varargs
    list parameter ``param`` nothing (``t.flip()``, ``td.rand()``)."""
    args, kwargs = _call_arguments(binding, method, none_absent=True)
    signatures = _signatures(name, method)
    if signatures is not None and _plausible(signatures, len(kwargs)) != 1:
        return TypeError(invalid_combination(name, signatures, args, kwargs))
    return TypeError(f'{name}() missing 1 required positional arguments: "{param}"')


def sequence_error(name: str, param: str, want: str, method: bool = False) -> TypeError:
    """torch's error for a hand-written binding ``name`` whose sequence parameter ``param``
    was left out (its default is REQUIRED) or is no sequence (torch's ``want`` type); called
    by the binding once reading the sequence failed, whose frame is read.

    >>> import tensordispatch as td
    >>> try:
    ...     td.cat(5)
    ... except TypeError as e:
    ...     print(e)
    cat(): argument 'tensors' (position 1) must be tuple of Tensors, not int
    """
    binding = sys._getframe(1)
    value = binding.f_locals[param]
    if value is REQUIRED:
        return missing_list(name, param, method, binding)
    _, kwargs = _call_arguments(binding, method, none_absent=True)
    position = binding.f_code.co_varnames.index(param) + 1 - int(method)
    found = BindingArgument(name, param, position, want, _type_name(value), param in kwargs)
    return TypeError(found.message())


# Note [Missing arguments]
# Python words a missing argument itself ("add() missing 1 required positional argument:
# 'other'") before the function runs; torch's parser says 'neg() missing 1 required positional
# arguments: "input"' (sic: its plural is the wrong way round), or, for a name with several
# signatures (hidden ones too), that the call is an invalid combination. A generated binding's
# required parameters default to REQUIRED (nothing is read on a call that gives them), which
# the operator's entry rejects as a value of the wrong type; the binding's except clause words
# the error from its frame (as torch: "invalid combination" unless exactly one signature takes
# that many arguments). Defaults would make Python word too many arguments "takes from 0 to
# 2", so bindings with keyword-only parameters also take ``*_td_more`` and word that error
# themselves; functions without them are left as they were (Note [Functions count their
# arguments] in codegen/python_errors.py). Measured over the bound names called with 0..6
# tensors: functions 557 -> 914 of 1124 texts torch's parser words equal torch's (the rest
# are those 61 functions' missing arguments and hand-written bindings); methods' missing
# texts 192 -> 200 of 203, their too-many texts (1..5 tensors) 47 -> 118 of 826. The
# operators' ``_n_`` copies keep no defaults: lazy/inline_methods.py mirrors their signature.
def _missing(name: str, method: bool, binding: FrameType) -> str:
    """torch's text for a call of binding ``name`` (frame ``binding``) that left required
    parameters out (Note [Missing arguments])."""
    args, kwargs = _call_arguments(binding, method)
    signatures = _signatures(name, method)
    if signatures is not None and _plausible(signatures, len(args) + len(kwargs)) != 1:
        return invalid_combination(name, signatures, args, kwargs)
    code, values = binding.f_code, binding.f_locals
    params = code.co_varnames[int(method) : code.co_argcount]
    missing = [p for p in params if values.get(p) is REQUIRED]
    plural = "s" if len(missing) == 1 else ""
    names = ", ".join(f'"{p}"' for p in missing)
    return f"{name}() missing {len(missing)} required positional argument{plural}: {names}"
