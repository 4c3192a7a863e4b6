"""Registration scenarios: plain data applied both to torch 2.13 and to tensordispatch.

A scenario is a list of steps on one operator ``<ns>::foo``. Every step runs in a fresh
library (as torch's test_dispatch harness does), so a ``Destroy(i)`` step undoes exactly
step ``i``. Kernels are named; the name becomes the kernel's debug string on both sides
(see ``debug_of``), which is what makes the two dispatch tables comparable key by key.

This module imports neither torch nor tensordispatch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Union

OP_NAME = "foo"
SCHEMA = "foo(Tensor x) -> Tensor"

# How torch's side implements an ``Impl`` step:
# - "py":   a Python kernel through torch's raw library binding. Its debug string is the
#           library's, ``registered at <name>:0``, and calls can see which kernel ran.
# - "hook": torch's C++ test hook ``impl_t_t`` (identity kernel, debug exactly ``<name>``).
# Catch-all impls (empty key) always use the hook: the Python binding cannot express them.
Flavour = Literal["py", "hook"]


@dataclass(frozen=True, slots=True)
class Define:
    """``lib.define(schema, alias_analysis)``."""

    schema: str = SCHEMA
    alias_analysis: str = ""


@dataclass(frozen=True, slots=True)
class Impl:
    """A kernel for ``foo`` under ``key``; ``key == ""`` is the catch-all.

    ``with_keyset``: the kernel takes the key set first and records it with its name, so
    calls compare the key set each side passes (torch's side only in the "py" flavour).
    ``bad_signature``: our kernel takes an extra required parameter, so it cannot bind the
    schema (ours only: torch does not check Python kernels' signatures).
    """

    key: str
    name: str
    with_keyset: bool = False
    bad_signature: bool = False


@dataclass(frozen=True, slots=True)
class FallthroughImpl:
    """``fallthrough_kernel`` registered for ``foo`` under ``key`` (runtime or alias)."""

    key: str
    name: str


@dataclass(frozen=True, slots=True)
class Fallback:
    """A process-wide boxed fallback for ``key`` (namespace ``_``); ``with_keyset`` as Impl."""

    key: str
    name: str
    with_keyset: bool = False


@dataclass(frozen=True, slots=True)
class FallthroughFallback:
    """A process-wide fallthrough fallback for ``key``."""

    key: str
    name: str


@dataclass(frozen=True, slots=True)
class Destroy:
    """Undo step number ``index`` (destroy its library / remove its handle)."""

    index: int


Registration = Union[Define, Impl, FallthroughImpl, Fallback, FallthroughFallback]
Step = Union[Registration, Destroy]


@dataclass(frozen=True, slots=True)
class Scenario:
    """A named list of steps; ``failing`` lists the step indices that must raise on both sides."""

    name: str
    steps: tuple[Step, ...]
    failing: frozenset[int] = frozenset()

    def __str__(self) -> str:
        return self.name


def uses_hook(step: Registration, flavour: Flavour) -> bool:
    """Whether torch's side registers ``step`` through the C++ test hook ``impl_t_t``."""
    return isinstance(step, Impl) and (flavour == "hook" or step.key == "")


def debug_of(step: Registration, flavour: Flavour) -> str:
    """The exact debug string the kernel of ``step`` carries on both sides."""
    if isinstance(step, Define):
        raise ValueError("a Define step has no kernel debug string")
    if isinstance(step, Impl) and flavour == "hook":
        return step.name
    return f"registered at {step.name}:0"


def kernel_debugs(steps: tuple[Step, ...], flavour: Flavour) -> frozenset[str]:
    """Debug strings of every kernel a scenario registers (to tell them from built-ins)."""
    return frozenset(debug_of(s, flavour) for s in steps if not isinstance(s, (Define, Destroy)))


# -- the catalogue's vocabulary (scenarios.py, scenarios_alias.py) ------------------------------

CIA = "CompositeImplicitAutograd"
CEA = "CompositeExplicitAutograd"
CEANF = "CompositeExplicitAutogradNonFunctional"
CIANT = "CompositeImplicitAutogradNestedTensor"
FTBD = "FuncTorchBatchedDecomposition"
D = Define()
MATH = "cia [math kernel]"
GLOBAL_FB = "<global> [backend fallback]"


@dataclass(frozen=True, slots=True)
class Case:
    """A scenario plus its spot checks ``{key: expected normalised entry}``."""

    scenario: Scenario
    expect: tuple[tuple[str, str], ...] = ()

    def __str__(self) -> str:
        return self.scenario.name


def case(name: str, *steps: Step, failing: tuple[int, ...] = (), **expect: str) -> Case:
    return Case(Scenario(name, tuple(steps), frozenset(failing)), tuple(expect.items()))
