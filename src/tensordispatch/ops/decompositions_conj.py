"""CompositeImplicitAutograd decompositions of conjugation (``conj``, ``conj_physical``,
``resolve_conj``, ``resolve_neg``, ``adjoint``). Merged into ``DECOMPOSITIONS`` by
ops/decompositions.py.

Note [No conjugate bit]
torch's ``conj`` of a complex tensor is a lazy view: it sets the conjugate bit (DispatchKey
Conjugate) and a fallback conjugates when a kernel reads it. tensordispatch has no such bit:
``conj`` materializes the conjugate with ``_conj_physical`` (a fresh tensor, not a view of
``self``; its grad_fn is ConjPhysicalBackward0 where torch's is ConjBackward0), ``is_conj`` is
always False and ``resolve_conj`` / ``resolve_neg`` return ``self``. Values, dtypes, shapes
and strides agree with torch (``x.H`` / ``x.mH`` / ``x.adjoint()`` keep the transposed
strides: the conjugate preserves its input's layout); writes through ``x.conj()`` do not reach
``x``, as they do in torch. Real tensors: ``conj`` is ``self`` in both libraries.
"""

from __future__ import annotations

from typing import Any

from tensordispatch.backends.aten import op
from tensordispatch.tensor.tensor import Tensor

__all__ = ["CONJ_DECOMPOSITIONS"]


def conj(self: Tensor) -> Tensor:
    """The complex conjugate, materialized (Note [No conjugate bit]); ``self`` if real.

    >>> import tensordispatch as td
    >>> td.tensor([1 + 2j]).conj()
    tensor([1.-2.j])
    """
    if not self.dtype.is_complex:
        return self
    return op("_conj_physical")(self)  # type: ignore[no-any-return]


def conj_physical(self: Tensor) -> Tensor:
    if not self.dtype.is_complex:
        return self
    return op("_conj_physical")(self)  # type: ignore[no-any-return]


def resolve(self: Tensor) -> Tensor:
    """``resolve_conj`` / ``resolve_neg``: no bit to resolve, ``self``."""
    return self


def adjoint_of(self: Tensor, name: str) -> Tensor:
    """The conjugate transpose of the last two dims (``adjoint()``, ``mH``)."""
    if self.dim() < 2:
        raise RuntimeError(
            f"{name} is only supported on matrices or batches of matrices. Got "
            f"{self.dim()}-D tensor."
        )
    return conj(op("transpose.int")(self, -2, -1))


def adjoint(self: Tensor) -> Tensor:
    """``x.adjoint()``: the conjugate transpose of (a batch of) matrices.

    >>> import tensordispatch as td
    >>> td.tensor([[1j, 2.0]]).adjoint()
    tensor([[0.-1.j],
            [2.-0.j]])
    """
    return adjoint_of(self, "tensor.adjoint()")


CONJ_DECOMPOSITIONS: dict[str, Any] = {
    "conj": conj,
    "conj_physical": conj_physical,
    "resolve_conj": resolve,
    "resolve_neg": resolve,
    "adjoint": adjoint,
}
