"""Small torch oracle for the dispatcher unit tests: apply the same registrations to torch
and to tensordispatch in fresh namespaces and read both tables in one normal form.

Normal form of a table: ``{key name: "<kernel name> [<label>]"}`` where a kernel registered
by the test is named by the test, any global fallback is ``FALLBACK`` and a fallthrough gets
a ``fallthrough `` prefix. torch names a Python kernel by the line that constructed its
Library, so each torch registration gets its own Library compiled under the kernel's name.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch

from tensordispatch.dispatch import dump_table
from tensordispatch.library import Library, fallthrough_kernel

_SEQ = itertools.count()
_LINE = re.compile(r"^(\w+): (fallthrough )?(.*) \[([a-z ]+)\]$")


@dataclass(frozen=True)
class Reg:
    """One impl registration: key ("" = catch-all), kernel name, fallthrough or not."""

    key: str
    name: str
    fallthrough: bool = False


def fresh(prefix: str = "orc") -> str:
    """A namespace nobody used yet in this process."""
    return f"{prefix}{next(_SEQ)}"


def _identity(*args: Any, **kwargs: Any) -> Any:
    return args[0] if args else None


def _normal(text: str, fallback_marker: Callable[[str], bool]) -> dict[str, str]:
    from tensordispatch.dispatch.fallbacks import _KERNELS
    from tensordispatch.dispatch.keys import key_name

    builtin = {key_name(k) for k in _KERNELS}
    out = {}
    for line in text.splitlines():
        m = _LINE.match(line)
        assert m, line
        key, ft, debug, label = m.groups()
        if label == "backend fallback" and key not in builtin:
            # a backend initialised elsewhere in the process (torch._lazy's TS backend,
            # our lazy layer): not torch 2.13's default state, so not compared
            continue
        name = "FALLBACK" if label == "backend fallback" else debug
        if label != "backend fallback" and fallback_marker(debug):
            name = "FALLBACK"
        out[key] = f"{ft or ''}{name} [{label}]"
    return out


def torch_table(schema: str, regs: Sequence[Reg]) -> dict[str, str]:
    """Register on torch and return its normalised ``_dispatch_dump_table``."""
    ns = fresh("torc")
    libs = [torch.library.Library(ns, "DEF")]
    libs[0].define(schema)
    op = schema.split("(")[0]
    for r in regs:
        scope: dict[str, Any] = {"L": torch.library.Library, "ns": ns}
        # torch names a Python kernel by the file:line constructing its Library.
        exec(compile("lib = L(ns, 'FRAGMENT')", r.name, "exec"), scope)  # noqa: S102
        lib = scope["lib"]
        fn = torch.library.fallthrough_kernel if r.fallthrough else _identity
        lib.impl(op, fn, r.key)
        libs.append(lib)
    text = torch._C._dispatch_dump_table(f"{ns}::{op}")
    fixed = {
        k: re.sub(r"registered at (\S+):1 ", r"\1 ", v)
        for k, v in _normal(text, lambda d: False).items()
    }
    for lib in libs:
        lib._destroy()
    return fixed


def td_registrations(schema: str, regs: Sequence[Reg]) -> tuple[str, list[Library]]:
    """Register on tensordispatch; returns the operator name and the libraries (to destroy)."""
    ns = fresh("tdo")
    libs = [Library(ns, "DEF")]
    libs[0].define(schema)
    op = schema.split("(")[0]
    for r in regs:
        lib = Library(ns, "FRAGMENT")
        lib.impl(op, fallthrough_kernel if r.fallthrough else _identity, r.key, debug=r.name)
        libs.append(lib)
    return f"{ns}::{op}", libs


def td_table(schema: str, regs: Sequence[Reg]) -> dict[str, str]:
    """Register on tensordispatch and return its normalised ``dump_table``."""
    name, libs = td_registrations(schema, regs)
    text = dump_table(name)
    for lib in libs:
        lib._destroy()
    return _normal(text, lambda d: d.startswith("registered at "))


@contextmanager
def only_builtin_fallbacks() -> Iterator[None]:
    """Put, for the block, the dispatcher's import-time global fallbacks back in place of
    whatever layers above registered in this process (our lazy layer's Lazy and
    AutogradLazy fallbacks, ...), so golden texts that list every key with a kernel see the
    built-in state whatever was imported before."""
    from tensordispatch.dispatch.dispatcher import DISPATCHER
    from tensordispatch.dispatch.fallbacks import _KERNELS
    from tensordispatch.dispatch.keys import key_of_slot

    with DISPATCHER.lock:
        saved = list(DISPATCHER.fallbacks)
        # each slot back to its import-time kernel (a layer may have replaced one) or empty
        wanted = [_KERNELS.get(key_of_slot(i)) for i in range(len(saved))]
        slots = [i for i, k in enumerate(saved) if k is not wanted[i]]
        for i in slots:
            DISPATCHER.fallbacks[i] = wanted[i]
        DISPATCHER._refresh_slots(slots)
    try:
        yield
    finally:
        with DISPATCHER.lock:
            for i in slots:
                DISPATCHER.fallbacks[i] = saved[i]
            DISPATCHER._refresh_slots(slots)
