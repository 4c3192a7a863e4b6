"""Library misuse fails the same way as torch.library (spec 6.1-6.4, 9.7-9.8).

The same sequence of calls runs against ``torch.library.Library`` and against our
``Library``; the exception type and the first clause of its message (namespace
normalised, registration sites cut off) must match, and so must success.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch

from . import known
from .normalise import first_clause

_ns = itertools.count()


def _ident(x: Any) -> Any:
    return x


# Each case: (lib_cls, ns, fallthrough) -> None, performing the calls; the last may raise.
Case = Callable[[Any, str, Any], None]


def _second_def(L: Any, ns: str, ft: Any) -> None:
    keep.append(L(ns, "DEF"))
    L(ns, "DEF")


def _define_in_impl(L: Any, ns: str, ft: Any) -> None:
    L(ns, "IMPL", "CPU").define("q(Tensor x) -> Tensor")


def _define_other_namespace(L: Any, ns: str, ft: Any) -> None:
    L(ns, "FRAGMENT").define("other::q(Tensor x) -> Tensor")


def _impl_other_namespace(L: Any, ns: str, ft: Any) -> None:
    L(ns, "FRAGMENT").impl("other::q", _ident, "CPU")


def _impl_key_mismatch(L: Any, ns: str, ft: Any) -> None:
    L(ns, "IMPL", "CPU").impl("q", _ident, "CUDA")


def _fallback_in_named_namespace(L: Any, ns: str, ft: Any) -> None:
    L(ns, "IMPL", "XLA").fallback(_ident, "XLA")


def _fallback_without_key(L: Any, ns: str, ft: Any) -> None:
    L("_", "IMPL").fallback(_ident)


def _unknown_key(L: Any, ns: str, ft: Any) -> None:
    L(ns, "FRAGMENT").impl("q", _ident, "NotAKey")


def _not_callable(L: Any, ns: str, ft: Any) -> None:
    L(ns, "FRAGMENT").impl("q", 3, "CPU")


def _duplicate_define(L: Any, ns: str, ft: Any) -> None:
    lib = L(ns, "FRAGMENT")
    keep.append(lib)
    lib.define("q(Tensor x) -> Tensor")
    L(ns, "FRAGMENT").define("q(Tensor x) -> Tensor")


def _define_pure_function(L: Any, ns: str, ft: Any) -> None:
    L(ns, "FRAGMENT").define("q(Tensor x) -> Tensor", alias_analysis="PURE_FUNCTION")


def _define_default_overload(L: Any, ns: str, ft: Any) -> None:
    L(ns, "FRAGMENT").define("q.default(Tensor x) -> Tensor")


def _impl_before_define_then_define(L: Any, ns: str, ft: Any) -> None:
    lib = L(ns, "FRAGMENT")
    keep.append(lib)
    lib.impl("q", _ident, "CPU")
    lib.define("q(Tensor x) -> Tensor")


def _fallthrough_impl_on_alias(L: Any, ns: str, ft: Any) -> None:
    lib = L(ns, "FRAGMENT")
    keep.append(lib)
    lib.define("q(Tensor x) -> Tensor")
    lib.impl("q", ft, "Autograd")


def _use_after_destroy(L: Any, ns: str, ft: Any) -> None:
    lib = L(ns, "FRAGMENT")
    lib._destroy()
    lib.define("q(Tensor x) -> Tensor")


CASES: dict[str, Case] = {
    "unsupported_kind": lambda L, ns, ft: L(ns, "FOO"),
    "prim_is_reserved": lambda L, ns, ft: L("prim", "DEF"),
    "fragment_on_wildcard": lambda L, ns, ft: L("_", "FRAGMENT"),
    "second_def_library": _second_def,
    "define_in_impl_library": _define_in_impl,
    "define_other_namespace": _define_other_namespace,
    "impl_other_namespace": _impl_other_namespace,
    "impl_key_mismatch": _impl_key_mismatch,
    "fallback_in_named_namespace": _fallback_in_named_namespace,
    "fallback_without_key": _fallback_without_key,
    "unknown_dispatch_key": _unknown_key,
    "impl_not_callable": _not_callable,
    "duplicate_define": _duplicate_define,
    "define_pure_function": _define_pure_function,
    "define_default_overload": _define_default_overload,
    "impl_before_define_then_define": _impl_before_define_then_define,
    "fallthrough_impl_on_alias": _fallthrough_impl_on_alias,
    "use_after_destroy": _use_after_destroy,
}

keep: list[Any] = []  # libraries a case needs alive until it has finished


def _builtin_base(e: BaseException) -> str:
    """The builtin exception class ours subclass (LibraryError -> RuntimeError, ...)."""
    return next(c.__name__ for c in type(e).__mro__ if c.__module__ == "builtins")


def _outcome(lib_cls: Any, ns: str, fallthrough: Any, case: Case) -> str:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            case(lib_cls, ns, fallthrough)
    except Exception as e:  # noqa: BLE001 - the exception is the observation
        return f"{_builtin_base(e)}: {first_clause(str(e), ns)}"
    finally:
        while keep:
            keep.pop()._destroy()
    return "ok"


@pytest.mark.parametrize("name", known.params(list(CASES), known.OTHER_LIBRARY))
def test_library_misuse_fails_like_torch_library(name: str) -> None:
    from tensordispatch.library import Library, fallthrough_kernel

    n = next(_ns)
    torch_ft = torch.library.fallthrough_kernel
    want = _outcome(torch.library.Library, f"tdlib{n}x", torch_ft, CASES[name])
    got = _outcome(Library, f"tdlibours{n}x", fallthrough_kernel, CASES[name])
    assert got == want
