"""CompositeImplicitAutograd decompositions of conjugation (``conj``, ``conj_physical``,
``resolve_conj``, ``resolve_neg``, ``adjoint``). Merged into ``DECOMPOSITIONS`` by
ops/decompositions.py.

Note [The conjugate and negative bits]
As torch's, ``conj()`` of a complex tensor is a lazy view: ``_conj`` (backends/math_bits.py)
makes a view sharing ``self``'s storage, ``_base`` and version counter, whose key set has the
Conjugate key flipped. The storage keeps the unconjugated values; the tensor stands for their
conjugates, so writes through ``x.conj()`` reach ``x`` conjugated. ``_neg_view`` does the same
with the Negative key (``x.conj().imag`` is a negative view of the stored imaginary parts).
Views keep the bits (``Tensor._make_view`` copies the key set). Every other kernel sees
resolved values: the Conjugate / Negative fallbacks clone such inputs first, and ``clone``
and ``copy_`` (fallthroughs) apply the bits (Note [The math-bit fallback] in
backends/math_bits.py). A tensor without a bit pays nothing: the keys are not in its key set.
``resolve_conj`` / ``resolve_neg`` clone a tensor with the bit and return any other as is;
``conj_physical`` always materializes. Printing, ``tolist()`` and ``item()`` show the
resolved values; ``numpy()`` refuses a tensor with a bit with torch's message. Autograd: the
grad_fn of ``x.conj()`` is ConjBackward0 (derivatives.yaml ``_conj``), of ``_neg_view``
NegViewBackward0; an in-place write through a bit view rebases its root through the bits
(autograd/views.py). Real tensors: ``conj`` is ``self`` (no bit), as in torch. Transforms:
a BatchedTensor or FunctionalTensor of a bit view carries the bit (its key set is its inner
tensor's), as torch's wrappers do; functionalization replays ``_conj`` / ``_neg_view`` as
their ``*_copy`` operators, so lazy tensors never carry a bit (torch's LTC alike).
Differences from torch: ``mm`` & co. resolve conjugate inputs in the fallback where torch's
BLAS reads the bit (Note [The math-bit fallback]; same values); ``deepcopy`` and pickling give a tensor without the bit holding the resolved values (torch's
pickle keeps the bit); the regenerated grad_fn of a view written in place is
AsStridedBackward0 (Note [Views replay as strided]) where torch replays ConjBackward0.
"""

from __future__ import annotations

from typing import Any

from tensordispatch.backends.aten import op
from tensordispatch.backends.math_bits import CONJ_RAW, NEG_RAW
from tensordispatch.tensor.tensor import Tensor

__all__ = ["CONJ_DECOMPOSITIONS"]


def conj(self: Tensor) -> Tensor:
    """The complex conjugate as a lazy view (Note [The conjugate and negative bits]); ``self``
    if real.

    >>> import tensordispatch as td
    >>> x = td.tensor([1 + 2j]); c = x.conj()
    >>> c, c.is_conj(), c._base is x
    (tensor([1.-2.j]), True, True)
    """
    if not self.dtype.is_complex:
        return self
    return op("_conj")(self)  # type: ignore[no-any-return]


def conj_physical(self: Tensor) -> Tensor:
    """The complex conjugate in a new tensor without the bit; ``self`` if real.

    >>> import tensordispatch as td
    >>> td.tensor([1 + 2j]).conj_physical().is_conj()
    False
    """
    if not self.dtype.is_complex:
        return self
    return op("_conj_physical")(self)  # type: ignore[no-any-return]


def resolve_conj(self: Tensor) -> Tensor:
    """``self`` without the conjugate bit: a materialized clone if it has it, else ``self``.

    >>> import tensordispatch as td
    >>> c = td.tensor([1j]).conj().resolve_conj()
    >>> c, c.is_conj()
    (tensor([0.-1.j]), False)
    """
    if not self._key_set & CONJ_RAW:
        return self
    return op("clone")(self)  # type: ignore[no-any-return]


def resolve_neg(self: Tensor) -> Tensor:
    """``self`` without the negative bit: a materialized clone if it has it, else ``self``.

    >>> import tensordispatch as td
    >>> n = td.tensor([1.0])._neg_view().resolve_neg()
    >>> n, n.is_neg()
    (tensor([-1.]), False)
    """
    if not self._key_set & NEG_RAW:
        return self
    return op("clone")(self)  # type: ignore[no-any-return]


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
    "resolve_conj": resolve_conj,
    "resolve_neg": resolve_neg,
    "adjoint": adjoint,
}
