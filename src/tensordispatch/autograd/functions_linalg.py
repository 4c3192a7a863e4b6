"""The backward helper of the SVD (torch's FunctionsManual name ``svd_backward``), written
with aten operators so that it is differentiable. Registered in HELPERS on its last line
(functions_nn imports it). Must not build graphs or know about the engine.

For A = U diag(S) Vh (reduced: U is m x k, Vh is k x n, k = min(m, n)) and gradients gU, gS,
gVh of a real loss (any of them may be undefined):

    gA = U [ (skew(U^H gU) / E) S + S (skew(V^H gV) / E) + diag(gS) ] Vh
         + (I - U U^H) gU S^-1 Vh + U S^-1 gVh (I - V Vh)

with skew(X) = X - X^H, V = Vh^H, gV = gVh^H and E[j, k] = S[k]^2 - S[j]^2 off the diagonal,
1 on it; for complex matrices the diagonal also gets i Im(diag(U^H gU)) / S (the phase of
each singular-vector pair is free: this is the gradient in the gauge where V's phases stay
put, the same for every loss that does not depend on the phase, as torch requires). With
only gS defined (svdvals, the nuclear and spectral norms) this is U diag(gS) Vh. Differs
from torch: a loss that depends on the phases is not detected (torch raises).
"""

from __future__ import annotations

from tensordispatch.autograd.formulas import register_helpers
from tensordispatch.ops.deferred import deferred_op as _deferred_op
from tensordispatch.tensor import Tensor

__all__ = ["svd_backward"]

_eye = _deferred_op(globals(), "_eye", "eye")
_adjoint_op = _deferred_op(globals(), "_adjoint_op", "adjoint")
_diagonal = _deferred_op(globals(), "_diagonal", "diagonal")
_select = _deferred_op(globals(), "_select", "select.int")
_view_as_real = _deferred_op(globals(), "_view_as_real", "view_as_real")


def _adjoint(x: Tensor) -> Tensor:
    return x.mT if not x.dtype.is_complex else _adjoint_op(x)


def _imag(x: Tensor) -> Tensor:
    return _select(_view_as_real(x), -1, 1)


def _skew(x: Tensor) -> Tensor:
    return x - _adjoint(x)


def svd_backward(
    gU: Tensor | None, gS: Tensor | None, gVh: Tensor | None, U: Tensor, S: Tensor, Vh: Tensor
) -> Tensor | None:
    """The gradient of A from those of its reduced SVD's U, S and Vh (module docstring)."""
    if gU is None and gS is None and gVh is None:
        return None
    if gU is None and gVh is None:
        return (U * gS.unsqueeze(-2)).matmul(Vh)  # type: ignore[union-attr]
    m, n, k = U._shape[-2], Vh._shape[-1], S._shape[-1]
    eye = _eye(k, dtype=S.dtype, device=S.device)
    s2 = S * S
    E = s2.unsqueeze(-2) - s2.unsqueeze(-1) + eye
    core = eye * gS.unsqueeze(-2) if gS is not None else None
    UhgU = VhgV = None
    if gU is not None:
        UhgU = _adjoint(U).matmul(gU)
        part = _skew(UhgU) / E * S.unsqueeze(-2)
        if U.dtype.is_complex:  # the phase term (module docstring)
            phase = _imag(_diagonal(UhgU, 0, -2, -1)) / S
            part = part + eye * (phase * 1j).unsqueeze(-2)
        core = part if core is None else core + part
    if gVh is not None:
        VhgV = Vh.matmul(_adjoint(gVh))
        part = S.unsqueeze(-1) * (_skew(VhgV) / E)
        core = part if core is None else core + part
    gA: Tensor = U.matmul(core).matmul(Vh)  # type: ignore[arg-type]
    if gU is not None and m > k:
        gA = gA + ((gU - U.matmul(UhgU)) / S.unsqueeze(-2)).matmul(Vh)
    if gVh is not None and n > k:
        gA = gA + U.matmul((gVh - gVh.matmul(_adjoint(Vh)).matmul(Vh)) / S.unsqueeze(-1))
    return gA


register_helpers(globals())  # last: HELPERS gets svd_backward (formulas.py)
