"""gradcheck / gradgradcheck: analytical gradients against central finite differences.

Owns the numerical check torch.autograd.gradcheck performs (float64 inputs, perturb each
element by ``eps``, compare each Jacobian column with the one backward computes). Must not
know operators or formulas.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tensordispatch.tensor import Tensor

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck when the gradients differ (torch's GradcheckError)."""


def _outputs(fn: Callable[..., Any], inputs: Sequence[Any]) -> list[Tensor]:
    out = fn(*inputs)
    return [out] if isinstance(out, Tensor) else [o for o in out if isinstance(o, Tensor)]


def _numerical(fn: Callable[..., Any], inputs: list[Any], i: int, eps: float) -> list[Any]:
    """Jacobian columns d(outputs)/d(inputs[i]) by central differences, per output."""
    x = inputs[i]
    data = x._data
    cols: list[list[np.ndarray[Any, Any]]] = []
    for idx in np.ndindex(*x._shape):
        orig = data[idx]
        data[idx] = orig + eps
        plus = [o._data.copy() for o in _outputs(fn, inputs)]
        data[idx] = orig - eps
        minus = [o._data.copy() for o in _outputs(fn, inputs)]
        data[idx] = orig
        cols.append([((p - m) / (2 * eps)).reshape(-1) for p, m in zip(plus, minus, strict=True)])
    if not cols:  # an empty input: empty Jacobians
        return [np.zeros((0, o.numel())) for o in _outputs(fn, inputs)]
    return [np.stack([c[k] for c in cols], axis=0) for k in range(len(cols[0]))]


def _analytical(fn: Callable[..., Any], inputs: list[Any], i: int) -> list[Any]:
    from tensordispatch.autograd.engine import grad  # the engine loads at first use (issue 4)

    outs = _outputs(fn, inputs)
    x = inputs[i]
    jac = []
    for o in outs:
        rows = np.zeros((x.numel(), o.numel()))
        for j in range(o.numel()):
            g = np.zeros(o.numel())
            g[j] = 1.0
            seed = Tensor._wrap_numpy(g.reshape(o._shape).astype(o._data.dtype), o.dtype)
            if not o.requires_grad:
                continue
            (gx,) = grad(o, x, seed, retain_graph=True, allow_unused=True)
            if gx is not None:
                rows[:, j] = np.asarray(gx._data).reshape(-1)
        jac.append(rows)
    return jac


def gradcheck(
    func: Callable[..., Any],
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    **kwargs: Any,
) -> bool:
    """Check ``func``'s gradients w.r.t. its float64 inputs that require grad.

    >>> import tensordispatch as td
    >>> x = td.tensor([0.5, 1.5], dtype=td.float64).requires_grad_()
    >>> gradcheck(lambda t: (t * t).sin(), (x,))
    True
    """
    ins = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    for i, x in enumerate(ins):
        if not isinstance(x, Tensor) or not x.requires_grad:
            continue
        numerical = _numerical(func, ins, i, eps)
        analytical = _analytical(func, ins, i)
        for k, (n, a) in enumerate(zip(numerical, analytical, strict=True)):
            if n is not None and not np.allclose(a, n, rtol=rtol, atol=atol):
                if not raise_exception:
                    return False
                raise GradcheckError(
                    f"Jacobian mismatch for output {k} with respect to input {i},\n"
                    f"numerical:{n}\nanalytical:{a}\n"
                )
    return True


def gradgradcheck(
    func: Callable[..., Any],
    inputs: Any,
    grad_outputs: Any = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    **kwargs: Any,
) -> bool:
    """Check second derivatives: gradcheck of the function computing ``func``'s gradients.

    >>> import tensordispatch as td
    >>> x = td.tensor([0.5, 1.5], dtype=td.float64).requires_grad_()
    >>> gradgradcheck(lambda t: (t * t * t).sum(), (x,))
    True
    """
    ins = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    outs = _outputs(func, ins)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = [
            Tensor._wrap_numpy(rng.standard_normal(o._shape), o.dtype).requires_grad_()
            for o in outs
        ]
    gos = [grad_outputs] if isinstance(grad_outputs, Tensor) else list(grad_outputs)
    diff = [x for x in ins if isinstance(x, Tensor) and x.requires_grad]
    n_in = len(ins)

    def first_grads(*args: Any) -> tuple[Tensor, ...]:
        from tensordispatch.autograd.engine import grad

        outs = _outputs(func, list(args[:n_in]))
        gs = grad(outs, diff_of(args), list(args[n_in:]), create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    def diff_of(args: tuple[Any, ...]) -> list[Tensor]:
        return [a for a in args[:n_in] if isinstance(a, Tensor) and a.requires_grad]

    del diff
    return gradcheck(
        first_grads, (*ins, *gos), eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception
    )
