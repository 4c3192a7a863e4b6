"""Whether a Python kernel can take an operator's arguments: the registration-time check.

Owns the binding test of a kernel's Python signature against a schema's CallingFacts (a fast
path over the code object for plain functions, ``inspect.signature`` otherwise) and the
``name at file:line`` spelling of a kernel in messages. Must not register anything: the
dispatcher calls ``signature_problem`` and builds the error (dispatcher.py).
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable, Sequence
from typing import Any

from tensordispatch.dispatch.calling import NO_DEFAULT, CallingFacts

__all__ = ["kernel_site", "signature_problem"]


def kernel_site(fn: Callable[..., Any]) -> str:
    """``name at file:line`` of a Python function (for signature errors).

    >>> kernel_site(len)
    'len'
    """
    code = getattr(fn, "__code__", None)
    name = getattr(fn, "__qualname__", None) or repr(fn)
    if code is None:
        return name
    return f"{name} at {code.co_filename}:{code.co_firstlineno}"


def _binds(fn: Callable[..., Any], npos: int, keywords: Sequence[str]) -> bool:
    """Fast yes for a plain function that takes ``npos`` positional arguments and the given
    keywords (False means "ask inspect", which also words the error)."""
    if type(fn) is not types.FunctionType:
        return False
    code = fn.__code__
    varargs, varkw = code.co_flags & inspect.CO_VARARGS, code.co_flags & inspect.CO_VARKEYWORDS
    nparams = code.co_argcount
    names = code.co_varnames
    kwonly = names[nparams : nparams + code.co_kwonlyargcount]
    if npos > nparams and not varargs:
        return False
    filled = set(names[: min(npos, nparams)])
    for k in keywords:
        if k in filled or k in names[: code.co_posonlyargcount]:
            return False
        if k not in names[:nparams] and k not in kwonly and not varkw:
            return False
        filled.add(k)
    first_default = nparams - len(fn.__defaults__ or ())
    kwdefaults = fn.__kwdefaults__ or {}
    missing = [n for i, n in enumerate(names[:nparams]) if n not in filled and i < first_default]
    return not missing and all(n in filled or n in kwdefaults for n in kwonly)


def signature_problem(fn: Callable[..., Any], facts: CallingFacts, with_keyset: bool) -> str | None:
    """Why ``fn`` cannot take the schema's arguments (None if it can, or if uninspectable).

    >>> from tensordispatch.schema import parse_schema
    >>> facts = CallingFacts.of(parse_schema("f(Tensor x, *, int n=1) -> Tensor"))
    >>> signature_problem(lambda x, n=1: x, facts, False) is None
    True
    >>> signature_problem(lambda x: x, facts, False)
    "it cannot be called with all arguments, as (x, n=n): got an unexpected keyword argument 'n'"
    """
    nlead = 1 if with_keyset else 0
    npos = facts.num_positional
    kws = facts.names[npos:]
    req_pos = sum(1 for d in facts.defaults[:npos] if d is NO_DEFAULT)
    req_kw = [n for n, d in zip(kws, facts.defaults[npos:], strict=True) if d is NO_DEFAULT]
    if _binds(fn, nlead + npos, kws) and _binds(fn, nlead + req_pos, req_kw):
        return None
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    lead = ["keyset"] if with_keyset else []
    pos = list(facts.names[: facts.num_positional])
    kw = list(facts.names[facts.num_positional :])
    required = [n for i, n in enumerate(facts.names) if facts.defaults[i] is NO_DEFAULT]
    for label, p, k in (
        ("all arguments", pos, kw),
        (
            "only the arguments without defaults",
            [n for n in pos if n in required],
            [n for n in kw if n in required],
        ),
    ):
        try:
            sig.bind(*(lead + p), **{n: None for n in k})
        except TypeError as e:
            shown = ", ".join(lead + p + [f"{n}={n}" for n in k])
            return f"it cannot be called with {label}, as ({shown}): {e}"
    return None
