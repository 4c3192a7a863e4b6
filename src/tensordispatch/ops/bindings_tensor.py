"""Tensor attributes torch defines in Python over operators: ``T``, ``mT``, ``H``, ``real``,
``imag``, ``data`` and unary ``+`` (installed by generated/methods.py from model.py's
PYTHON_METHODS, like the other hand-written bindings).

They are properties whose getters call operators through the dispatcher (so autograd and
every other key see the views). ``H`` / ``mH`` of a complex tensor are lazily conjugated
views, ``real`` / ``imag`` of one with the conjugate bit view its storage (``imag`` with the
negative bit), as torch's (Note [The conjugate and negative bits] in
ops/decompositions_conj.py). Differences from torch: ``data`` is
``detach()`` (torch's shares the storage but not the version counter); the deprecation
warnings of ``T`` and ``mT`` go through Python's warnings filters each time, where torch
warns once per process.
"""

from __future__ import annotations

import warnings
from typing import Any

from tensordispatch.backends.aten import op
from tensordispatch.dispatch.errors import ArgumentTypeError, binding_argument_error
from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import keyset_raw
from tensordispatch.tensor.tensor import Tensor

__all__ = [
    "H", "T", "conj_view", "data", "ilshift", "imag", "irshift", "is_conj", "is_neg", "lshift",
    "mH", "mT", "neg_view", "pos", "real", "rlshift", "rrshift", "rshift",
]  # fmt: skip


_CONJ_RAW = keyset_raw(DispatchKey.Conjugate)
_NEG_RAW = keyset_raw(DispatchKey.Negative)


class _Attribute(property):
    """A property that carries attributes (methods.install marks what it installed)."""


def _reversed(self: Tensor) -> Tensor:
    return op("permute")(self, list(range(self.dim() - 1, -1, -1)))  # type: ignore[no-any-return]


def _t(self: Tensor) -> Tensor:
    """``x.T``: the dims reversed (``t()`` for a matrix); other ranks warn as torch does.

    >>> import tensordispatch as td
    >>> td.ones(2, 3).T.shape
    tensordispatch.Size([3, 2])
    """
    if self.dim() != 2:
        warnings.warn(
            "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
            "deprecated and it will throw an error in a future release. Consider `x.mT` to "
            "transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` "
            "to reverse the dimensions of a tensor.",
            UserWarning,
            stacklevel=2,
        )
    return _reversed(self)


def _mt(self: Tensor) -> Tensor:
    """``x.mT``: the last two dims swapped.

    >>> import tensordispatch as td
    >>> td.ones(4, 2, 3).mT.shape
    tensordispatch.Size([4, 3, 2])
    """
    if self.dim() == 0:
        warnings.warn(
            "Tensor.mT is deprecated on 0-D tensors. This function is the identity in these cases.",
            UserWarning,
            stacklevel=2,
        )
        return op("alias")(self)  # type: ignore[no-any-return]
    if self.dim() < 2:
        raise RuntimeError(
            "tensor.mT is only supported on matrices or batches of matrices. Got "
            f"{self.dim()}-D tensor."
        )
    return op("transpose.int")(self, -2, -1)  # type: ignore[no-any-return]


def _h(self: Tensor) -> Tensor:
    """``x.H``: the conjugate transpose of a matrix (the transpose for a real dtype; the
    conjugate, with torch's deprecation warning, for a 0-D tensor).

    >>> import tensordispatch as td
    >>> td.ones(2, 3).H.shape, td.tensor([[1j, 2.0]]).H.tolist()
    (tensordispatch.Size([3, 2]), [[-1j], [(2-0j)]])
    """
    from tensordispatch.ops.decompositions_conj import conj

    if self.dim() == 0:
        warnings.warn(
            "Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
            UserWarning,
            stacklevel=2,
        )
        return conj(self)
    if self.dim() != 2:
        hint = " For batches of matrices, consider using tensor.mH" if self.dim() > 2 else ""
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {self.dim()}-D tensor."
            f"{hint}"
        )
    return conj(op("transpose.int")(self, 0, 1))


def _mh(self: Tensor) -> Tensor:
    """``x.mH``: the conjugate transpose of the last two dims.

    >>> import tensordispatch as td
    >>> td.ones(4, 2, 3).mH.shape
    tensordispatch.Size([4, 3, 2])
    """
    from tensordispatch.ops.decompositions_conj import adjoint_of

    return adjoint_of(self, "tensor.mH")


def is_conj(self: Tensor) -> bool:
    """Whether the conjugate bit is set (Note [The conjugate and negative bits]).

    >>> import tensordispatch as td
    >>> td.tensor([1j]).conj().is_conj(), td.tensor([1.0]).conj().is_conj()
    (True, False)
    """
    return bool(self._key_set & _CONJ_RAW)


def is_neg(self: Tensor) -> bool:
    """Whether the negative bit is set (``x.conj().imag``, ``_neg_view``).

    >>> import tensordispatch as td
    >>> td.tensor([1j]).conj().imag.is_neg()
    True
    """
    return bool(self._key_set & _NEG_RAW)


def conj_view(self: Tensor) -> Tensor:
    """``torch._conj`` / ``x._conj()``: aten::_conj, a view with the conjugate bit flipped
    (for any dtype, unlike ``conj()``).

    >>> import tensordispatch as td
    >>> td._conj(td.tensor([1 + 2j])).is_conj()
    True
    """
    return op("_conj")(self)  # type: ignore[no-any-return]


def neg_view(self: Tensor) -> Tensor:
    """``torch._neg_view`` / ``x._neg_view()``: aten::_neg_view, a view with the negative bit
    flipped.

    >>> import tensordispatch as td
    >>> td.tensor([1.0, -2.0])._neg_view()
    tensor([-1., 2.])
    """
    return op("_neg_view")(self)  # type: ignore[no-any-return]


def _real(self: Tensor) -> Tensor:
    """``x.real``: a view of the real parts of a complex tensor; ``x`` itself otherwise.

    >>> import tensordispatch as td
    >>> td.tensor([1 + 2j, 3j]).real
    tensor([1., 0.])
    """
    if not self.dtype.is_complex:
        return self
    if self._key_set & _CONJ_RAW:  # the real parts of the stored values are the same
        self = op("_conj")(self)
    return op("select.int")(op("view_as_real")(self), -1, 0)  # type: ignore[no-any-return]


def _imag(self: Tensor) -> Tensor:
    """``x.imag``: a view of the imaginary parts of a complex tensor.

    >>> import tensordispatch as td
    >>> td.tensor([1 + 2j, 3j]).imag
    tensor([2., 3.])
    """
    if not self.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    if self._key_set & _CONJ_RAW:  # the stored imaginary parts, negated by the bit
        pairs = op("_neg_view")(op("view_as_real")(op("_conj")(self)))
        return op("select.int")(pairs, -1, 1)  # type: ignore[no-any-return]
    return op("select.int")(op("view_as_real")(self), -1, 1)  # type: ignore[no-any-return]


def _data(self: Tensor) -> Tensor:
    """``x.data``: the same values without autograd history (here ``detach()``)."""
    return op("detach")(self)  # type: ignore[no-any-return]


def pos(self: Tensor) -> Tensor:
    """``+x``: ``x`` itself, refused for bool as torch.

    >>> import tensordispatch as td
    >>> t = td.ones(2); (+t) is t
    True
    """
    if self.dtype.name == "bool":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self


def _not_implemented(error: ArgumentTypeError, name: str) -> Any:
    """NotImplemented when ``error`` rejects an argument of operator ``name`` itself, as
    torch's Tensor operators (Note [Operators return NotImplemented] in codegen/gen_python.py:
    the generated operators decide the same way, by `binding_argument_error`); otherwise
    raises it."""
    if isinstance(binding_argument_error(name.partition(".")[0], error, (), True), TypeError):
        return NotImplemented
    raise error


def _shift_operators(name: str, base: str) -> tuple[Any, Any, Any]:
    """``x << y`` calls aten::__lshift__ (Tensor or Scalar overload by ``y``), ``y << x`` the
    function ``bitwise_left_shift(y, x)``, ``x <<= y`` aten::__ilshift__, as torch's Tensor;
    an operand of another type gives NotImplemented (the try costs nothing on success).

    >>> import tensordispatch as td
    >>> td.tensor([1]).__lshift__("a")
    NotImplemented
    """

    def forward(self: Tensor, other: Any) -> Any:
        overload = f"__{name}__." + ("Tensor" if isinstance(other, Tensor) else "Scalar")
        try:
            return op(overload)(self, other)
        except ArgumentTypeError as e:
            return _not_implemented(e, overload)

    def reflected(self: Tensor, other: Any) -> Any:
        try:
            return op(f"{base}.Scalar_Tensor")(other, self)
        except ArgumentTypeError as e:
            return _not_implemented(e, base)

    def in_place(self: Tensor, other: Any) -> Any:
        overload = f"__i{name}__." + ("Tensor" if isinstance(other, Tensor) else "Scalar")
        try:
            return op(overload)(self, other)
        except ArgumentTypeError as e:
            return _not_implemented(e, overload)

    return forward, reflected, in_place


lshift, rlshift, ilshift = _shift_operators("lshift", "bitwise_left_shift")
rshift, rrshift, irshift = _shift_operators("rshift", "bitwise_right_shift")

T: Any = _Attribute(_t)
mT: Any = _Attribute(_mt)
H: Any = _Attribute(_h)
mH: Any = _Attribute(_mh)
real: Any = _Attribute(_real)
imag: Any = _Attribute(_imag)
data: Any = _Attribute(_data)
