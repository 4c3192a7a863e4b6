"""gradcheck / gradgradcheck: analytical gradients against central finite differences.

Owns the numerical check torch.autograd.gradcheck performs (float64 inputs, perturb each
element by ``eps``, compare each Jacobian column with the one backward computes). Must not
know operators or formulas.

Note [Complex gradcheck]
A complex number counts as the pair (real part, imaginary part): a complex input is
perturbed along 1 and along i, a complex output is read as its two parts, and the
analytical Jacobian seeds backward with 1 and with i per output element. Under torch's
convention (formulas.py, Note [Complex gradients]) backward then returns d/da + i d/db of
the seeded real part, so both Jacobians are the same real matrix.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tensordispatch.tensor import Tensor
from tensordispatch.tensor.values import resolved_values

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck when the gradients differ (torch's GradcheckError)."""


def _values(t: Tensor) -> Any:
    """A CPU tensor's values: its array, with a conjugate / negative view's bits applied."""
    return resolved_values(t._data, t._key_set)


def _outputs(fn: Callable[..., Any], inputs: Sequence[Any]) -> list[Tensor]:
    out = fn(*inputs)
    return [out] if isinstance(out, Tensor) else [o for o in out if isinstance(o, Tensor)]


def _parts(t: Tensor) -> tuple[complex, ...]:
    """The real directions of one element of ``t`` (Note [Complex gradcheck])."""
    return (1, 1j) if t.dtype.is_complex else (1,)


def _real_flat(a: Any) -> np.ndarray[Any, Any]:
    """An array as real numbers, a complex element as (real, imaginary)."""
    a = np.asarray(a)
    if a.dtype.kind == "c":
        return np.stack([a.real, a.imag], axis=-1).reshape(-1)
    return a.reshape(-1).copy()  # a copy: an output may share the perturbed input's data


def _numerical(fn: Callable[..., Any], inputs: list[Any], i: int, eps: float) -> list[Any]:
    """Jacobian columns d(outputs)/d(inputs[i]) by central differences, per output."""
    x = inputs[i]
    data = x._data
    cols: list[list[np.ndarray[Any, Any]]] = []
    for idx in np.ndindex(*x._shape):
        for part in _parts(x):
            orig = data[idx]
            data[idx] = orig + eps * part
            plus = [_real_flat(_values(o)) for o in _outputs(fn, inputs)]
            data[idx] = orig - eps * part
            minus = [_real_flat(_values(o)) for o in _outputs(fn, inputs)]
            data[idx] = orig
            cols.append([(p - m) / (2 * eps) for p, m in zip(plus, minus, strict=True)])
    if not cols:  # an empty input: empty Jacobians
        return [np.zeros((0, o.numel() * len(_parts(o)))) for o in _outputs(fn, inputs)]
    return [np.stack([c[k] for c in cols], axis=0) for k in range(len(cols[0]))]


def _analytical(fn: Callable[..., Any], inputs: list[Any], i: int) -> list[Any]:
    from tensordispatch.autograd.engine import grad  # the engine loads at first use (issue 4)

    outs = _outputs(fn, inputs)
    x = inputs[i]
    jac = []
    for o in outs:
        parts = _parts(o)
        rows = np.zeros((x.numel() * len(_parts(x)), o.numel() * len(parts)))
        for j in range(o.numel()):
            for p, part in enumerate(parts):
                if not o.requires_grad:
                    continue
                g = np.zeros(o.numel(), dtype=o._data.dtype)
                g[j] = part
                seed = Tensor._wrap_numpy(g.reshape(o._shape), o.dtype)
                (gx,) = grad(o, x, seed, retain_graph=True, allow_unused=True)
                if gx is not None:
                    rows[:, j * len(parts) + p] = _real_flat(_values(gx))
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
    >>> z = td.tensor([0.5 + 1j, -1.5j], dtype=td.complex128).requires_grad_()
    >>> gradcheck(lambda t: (t * t).exp(), (z,))
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


def _random_like(o: Tensor, rng: np.random.Generator) -> Tensor:
    data = rng.standard_normal(o._shape)
    if o.dtype.is_complex:
        data = data + 1j * rng.standard_normal(o._shape)
    return Tensor._wrap_numpy(np.asarray(data, dtype=o._data.dtype), o.dtype)


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
        grad_outputs = [_random_like(o, rng).requires_grad_() for o in outs]
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
