"""Seeded random scenarios: registrations and removals drawn from a pool of keys.

The hand-written catalogue pins the rules one at a time; these explore their interactions
(stacks on one key, aliases over backends with fallthroughs and removals in between).
Which steps fail is decided by torch itself (``failing_on_torch``), so the generator never
has to predict torch's errors.
"""

from __future__ import annotations

import random

from .scenario import (
    Define,
    Destroy,
    Fallback,
    FallthroughFallback,
    FallthroughImpl,
    Impl,
    Registration,
    Scenario,
    Step,
)
from .scenarios import Case

IMPL_KEYS = (
    "",
    "CPU",
    "XLA",
    "Meta",
    "MTIA",
    "HIP",
    "Lazy",
    "QuantizedCPU",
    "SparseCPU",
    "SparseCsrCPU",
    "NestedTensorCPU",
    "AutogradCPU",
    "AutogradXLA",
    "AutogradOther",
    "AutogradNestedTensor",
    "AutogradMeta",
    "Autograd",
    "CompositeImplicitAutograd",
    "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional",
    "CompositeImplicitAutogradNestedTensor",
    "FuncTorchBatchedDecomposition",
    "BackendSelect",
    "ADInplaceOrView",
    "Functionalize",
)
FALLTHROUGH_KEYS = (
    "AutogradCPU",
    "AutogradMeta",
    "Autograd",
    "CPU",
    "Meta",
    "XLA",
    "CompositeExplicitAutograd",
    "ADInplaceOrView",
)
# keys torch 2.13 has no global fallback for, so registering one is legal there (not Lazy:
# torch._lazy's TS backend and our lazy layer register one when a test initialises them)
FALLBACK_KEYS = ("XLA", "CUDA", "HPU", "NestedTensorCPU", "AutogradPrivateUse2", "HIP")


def _registration(rng: random.Random, n: int) -> Registration:
    roll = rng.random()
    name = f"k{n}"
    # process-wide fallbacks are the costly registrations (every operator refreshes), so
    # they are a minority of the draws
    if roll < 0.65:
        key = rng.choice(IMPL_KEYS)
        return Impl(key, name, with_keyset=key != "" and rng.random() < 0.3)
    if roll < 0.8:
        return FallthroughImpl(rng.choice(FALLTHROUGH_KEYS), name)
    if roll < 0.9:
        return Fallback(rng.choice(FALLBACK_KEYS), name, with_keyset=rng.random() < 0.3)
    return FallthroughFallback(rng.choice(FALLBACK_KEYS), name)


def random_steps(rng: random.Random, length: int) -> tuple[Step, ...]:
    """A define (usually first, sometimes later or never), registrations and removals."""
    steps: list[Step] = []
    define_at = rng.choice([0, 0, 0, 1, 3, -1])
    live: list[int] = []
    for n in range(length):
        if n == define_at:
            steps.append(Define())
        elif live and rng.random() < 0.25:
            steps.append(Destroy(live.pop(rng.randrange(len(live)))))
            continue
        else:
            steps.append(_registration(rng, n))
        live.append(n)
    return tuple(steps)


def failing_on_torch(steps: tuple[Step, ...]) -> dict[int, str]:
    """The steps torch rejects (applied in order, removals included), with the messages."""
    from .torch_side import TorchSide

    failing: dict[int, str] = {}
    with TorchSide("py") as t:
        for i, step in enumerate(steps):
            if isinstance(step, Destroy):
                t.destroy(step.index)
                continue
            try:
                t.apply(i, step)
            except RuntimeError as e:
                failing[i] = str(e)
    return failing


def random_cases(seed: int, count: int, length: int = 8) -> list[Case]:
    """``count`` reproducible random cases (no spot checks: the comparison is the check)."""
    rng = random.Random(seed)
    cases: list[Case] = []
    for _ in range(count):
        steps = random_steps(rng, length)
        failing = failing_on_torch(steps)
        name = f"random{seed}_{len(cases)}"
        cases.append(Case(Scenario(name, steps, frozenset(failing))))
    return cases


def _stack_of(reg: Registration) -> tuple[str, str]:
    """Registrations on one stack are order-dependent (newest wins); catch-all is CIA's."""
    if isinstance(reg, (Impl, FallthroughImpl)):
        return ("op", reg.key or "CompositeImplicitAutograd")
    if isinstance(reg, (Fallback, FallthroughFallback)):
        return ("global", reg.key)
    return ("def", "")


def random_registration_set(rng: random.Random, size: int) -> tuple[Registration, ...]:
    """``size`` registrations, one per kernel stack, always with a define, never Meta."""
    regs: list[Registration] = [Define()]
    stacks = {_stack_of(regs[0])}
    while len(regs) < size:
        reg = _registration(rng, len(regs))
        if getattr(reg, "key", "") == "Meta" or _stack_of(reg) in stacks:
            continue
        stacks.add(_stack_of(reg))
        regs.append(reg)
    rng.shuffle(regs)
    return tuple(regs)
