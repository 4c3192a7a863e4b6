"""What the OpInfo gradient tests share (test_opinfo_gradients.py in float64,
test_complex_gradients.py in complex128): a torch sample rebuilt in tensordispatch with its
differentiable leaves paired, run in both libraries, the smallest sample per operator, and the
sample as a function of its leaves for gradcheck."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch

import tensordispatch as td


class Leaves:
    """torch leaves and their tensordispatch twins, in the order they were met."""

    def __init__(self) -> None:
        self.torch: list[torch.Tensor] = []
        self.ours: list[td.Tensor] = []

    def convert(self, x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            dtype = getattr(td, str(x.dtype).split(".")[-1])
            t = td.tensor(x.detach().resolve_conj().numpy().copy(), dtype=dtype)
            if x.requires_grad:
                t.requires_grad_()
                self.torch.append(x)
                self.ours.append(t)
            return t
        if isinstance(x, (torch.dtype, torch.memory_format)):
            return getattr(td, str(x).split(".")[-1])
        if isinstance(x, (list, tuple)):
            return type(x)(self.convert(v) for v in x)
        if isinstance(x, dict):
            return {k: self.convert(v) for k, v in x.items()}
        return x


def flat(x: Any) -> list[Any]:
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in flat(v)]
    return [x]


def run(info: Any, s: Any, ours: Callable[..., Any], forward: str) -> tuple[Any, Any, Leaves]:
    """torch's and our outputs of sample ``s`` and its leaves; an xfail naming ``forward``
    when our forward raises (the forward is tests/ops' subject)."""
    leaves = Leaves()
    args = leaves.convert((s.input, *s.args))
    kwargs = leaves.convert(dict(s.kwargs))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = info.op(s.input, *s.args, **s.kwargs)
    try:
        with td.no_grad():
            ours(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the forward is tests/ops' subject, not ours
        pytest.xfail(f"{forward} not supported by tensordispatch: {type(e).__name__}: {e}")
    return expected, ours(*args, **kwargs), leaves


def differentiable(expected: Any, got: Any) -> list[tuple[torch.Tensor, td.Tensor]]:
    """(torch output, ours) for every output that requires grad in torch."""
    pairs = []
    for e, g in zip(flat(expected), flat(got), strict=True):
        if isinstance(e, torch.Tensor) and e.requires_grad:
            assert g.requires_grad, f"torch's output requires grad, ours does not: {g!r}"
            pairs.append((e, g))
    return pairs


def size(s: Any) -> int:
    """The number of input elements that require grad."""
    leaves = [t for t in flat([s.input, *s.args, *s.kwargs.values()])
              if isinstance(t, torch.Tensor) and t.requires_grad]  # fmt: skip
    return sum(t.numel() for t in leaves)


def smallest(samples: list[Any]) -> list[Any]:
    """Per operator (and variant), its smallest non-empty sample (finite differences cost
    two calls per input element, twice over for gradgradcheck)."""
    best: dict[tuple[str, str], Any] = {}
    for p in samples:
        info, s, _ = p.values
        n = size(s)
        key = (info.name, info.variant_test_name)
        if n > 0 and (key not in best or n < size(best[key].values[1])):
            best[key] = p
    return list(best.values())


def replay(ours: Callable[..., Any], s: Any) -> Callable[..., Any]:
    """Sample ``s`` as a function of its differentiable leaves (for gradcheck)."""

    def fn(*xs: Any) -> Any:
        swap = Leaves()
        args = swap.convert((s.input, *s.args))
        kwargs = swap.convert(dict(s.kwargs))
        mapping = {id(t): x for t, x in zip(swap.ours, xs, strict=True)}
        out = ours(*substitute(args, mapping), **substitute(kwargs, mapping))
        outs = [o for o in flat(out) if getattr(o, "requires_grad", False)]
        return outs[0] if len(outs) == 1 else tuple(outs)

    return fn


def substitute(x: Any, mapping: dict[int, Any]) -> Any:
    if isinstance(x, td.Tensor):
        return mapping.get(id(x), x)
    if isinstance(x, (list, tuple)):
        return type(x)(substitute(v, mapping) for v in x)
    if isinstance(x, dict):
        return {k: substitute(v, mapping) for k, v in x.items()}
    return x
