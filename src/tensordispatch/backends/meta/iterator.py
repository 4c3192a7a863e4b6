"""TensorIterator's metadata rules: common shape, common dtype, output strides (no data).

The pointwise meta functions use this to compute exactly what torch's TensorIterator
computes for an op's output: the broadcast shape, the computation dtype (type promotion
over inputs, with wrapped numbers and zero-dim tensors ranked below dimensioned tensors),
the output dtype (an existing out/inplace tensor keeps its own, after the can-cast check)
and the output strides (the inputs' memory order, by TensorIterator's fast setup or its
dimension reordering). The CPU impl receives the computation dtype as its precomputed value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tensordispatch.backends.common import broadcast_shapes, shape_text
from tensordispatch.backends.overlap import check_written
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.dtypes import _result_type_of, can_cast, dtype
from tensordispatch.tensor.geometry import contiguous_of
from tensordispatch.tensor.tensor import dense_strides_like, is_non_overlapping_and_dense

__all__ = ["Spec", "check_can_cast", "index_output_strides", "output_strides", "pointwise"]

# A structured meta function's answer for one output: (shape, strides or None, dtype).
# None strides mean contiguous. Plain tuples: they are built on every call.
Spec = tuple[tuple[int, ...], "tuple[int, ...] | None", dtype]


def _contiguous(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    if strides == contiguous_of(shape):
        return True
    if 0 in shape:
        return True
    if 1 not in shape:  # no size-1 dim whose stride could differ: only the exact strides
        return False
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size != 1:
            if stride != expected:
                return False
            expected *= size
    return True


def _broadcast_strides(shape: tuple[int, ...], t: Any) -> tuple[int, ...]:
    """``t``'s strides viewed at the common ``shape``: 0 on new and broadcast dims."""
    offset = len(shape) - len(t._shape)
    out = [0] * len(shape)
    for i, (size, stride) in enumerate(zip(t._shape, t._strides)):
        if not (size == 1 and shape[offset + i] != 1):
            out[offset + i] = stride
    return tuple(out)


def _should_swap(
    dim0: int, dim1: int, shape: tuple[int, ...], strides: Sequence[tuple[int, ...]]
) -> int:
    for st in strides:
        s0, s1 = st[dim0], st[dim1]
        if s0 == 0 or s1 == 0:
            continue
        if s0 < s1:
            return -1
        if s0 > s1:
            return 1
        if shape[dim0] > shape[dim1]:
            return 1
    return 0


def output_strides(shape: tuple[int, ...], operands: Sequence[Any]) -> tuple[int, ...] | None:
    """Strides of a fresh output of ``shape`` computed from ``operands`` (outputs that are
    not resized first, then inputs), or None for contiguous: TensorIterator's rules.

    >>> from tensordispatch.tensor import from_numpy
    >>> import numpy as np
    >>> x = from_numpy(np.zeros((3, 2), np.float32)).t()  # shape (2, 3), strides (1, 2)
    >>> output_strides((2, 3), [x]), output_strides((2, 3), [from_numpy(np.zeros(3))])
    ((1, 2), None)
    """
    ndim = len(shape)
    if ndim <= 1 or not operands:
        return None
    if 0 not in shape:
        # Operands that are all contiguous in their own shapes, broadcast or not, keep the
        # default order: TensorIterator's reordering swaps no dims for them (checked for
        # every combination of up to 3 operands of up to 4 dims in tests/backends).
        for t in operands:
            if t._strides != contiguous_of(t._shape):
                break
        else:
            return None
    same = True
    for t in operands:
        if t._shape != shape:
            same = False
            break
    if same:  # fast setup
        first = operands[0]._strides
        contiguous = equal = True
        for t in operands:
            if contiguous and not _contiguous(shape, t._strides):
                contiguous = False
            if t._strides != first:
                equal = False
        if contiguous:
            return None
        if equal and is_non_overlapping_and_dense(shape, first):
            return first
    strides = [_broadcast_strides(shape, t) for t in operands]
    perm = list(range(ndim - 1, -1, -1))  # perm[0] is the fastest-moving dim
    for i in range(1, ndim):
        dim1 = i
        for dim0 in range(i - 1, -1, -1):
            cmp = _should_swap(perm[dim0], perm[dim1], shape, strides)
            if cmp > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif cmp < 0:
                break
    if perm == list(range(ndim - 1, -1, -1)):
        return None
    out = [0] * ndim
    acc = 1
    for d in perm:
        out[d] = acc
        acc *= shape[d]
    return tuple(out)


def _check_devices(inputs: Sequence[Any]) -> None:
    device = None
    for t in inputs:
        if t.device.type == "cpu" and not t._shape:
            continue  # CPU scalars may meet any device, as in torch
        if device is None:
            device = t.device
        elif t.device != device:
            raise RuntimeError(
                "Expected all tensors to be on the same device, but found at least two "
                f"devices, {device} and {t.device}!"
            )


def check_can_cast(common: dtype, out: Any) -> None:
    """TensorIterator's check that the computation dtype can be cast to an existing output.

    >>> from tensordispatch.tensor import tensor, float32
    >>> check_can_cast(float32, tensor([1]))
    Traceback (most recent call last):
    ...
    RuntimeError: result type Float can't be cast to the desired output type Long
    """
    if not can_cast(common, out.dtype):
        from tensordispatch.backends.common import scalar_type_name

        raise RuntimeError(
            f"result type {scalar_type_name(common)} can't be cast to the desired output "
            f"type {scalar_type_name(out.dtype)}"
        )


def pointwise(
    outs: tuple[Any, ...] | None,
    inputs: Sequence[Any],
    *,
    int_to_float: bool = False,
) -> tuple[tuple[Spec, ...], dtype]:
    """Specs of a pointwise op's single output and its computation dtype.

    ``outs`` is None (functional) or the existing output (inplace: self; out: out).
    ``int_to_float``: integral and bool inputs compute in the default dtype (true division,
    exp, sin, ...), as TensorIterator's ``promote_integer_inputs_to_float``.

    >>> from tensordispatch.tensor import tensor
    >>> pointwise(None, (tensor([[1, 2]]), tensor([0.5])))
    ((((1, 2), None, tensordispatch.float32),), tensordispatch.float32)
    >>> pointwise(None, (tensor([1, 2]),), int_to_float=True)[1]
    tensordispatch.float32
    """
    if outs is None and len(inputs) == 2:  # the common call: same geometry, 0-d or 1-d
        a, b = inputs
        shape, common = a._shape, a.dtype
        if (
            len(shape) <= 1
            and shape == b._shape
            and common is b.dtype
            and a.device is b.device
            and not (a._wrapped_number or b._wrapped_number)
            and (common.is_floating_point or not int_to_float)
        ):
            return ((shape, None, common),), common
    elif outs is None and len(inputs) == 1:  # a unary op on a 0-d or 1-d tensor
        only = inputs[0]
        shape, common = only._shape, only.dtype
        if len(shape) <= 1 and (common.is_floating_point or not int_to_float):
            return ((shape, None, common),), common
    if outs is not None:  # TensorIterator checks memory overlap first (backends/overlap.py)
        out = outs[0]
        if out._base is not None or out._storage is not None or 0 in out._strides:
            check_written(out, inputs)
        elif len(inputs) == 2:  # check_written's first case, inline: only out's views
            first, second = inputs
            if first._base is out or second._base is out:
                check_written(out, inputs)
        else:
            for t in inputs:
                if t._base is out:
                    check_written(out, inputs)
                    break
    if len(inputs) == 1:
        only = inputs[0]
        shape = only._shape
        common = only.dtype
    elif len(inputs) == 2:
        a, b = inputs
        if a.device is not b.device:
            _check_devices(inputs)
        shape = a._shape if a._shape == b._shape else broadcast_shapes(a._shape, b._shape)
        if a.dtype is b.dtype and not (a._wrapped_number or b._wrapped_number):
            common = a.dtype  # promotion of equal dtypes, whatever their tiers
        elif b._wrapped_number and not a._wrapped_number and b.dtype._category <= a.dtype._category:
            common = a.dtype  # a wrapped number ranks last: it only lifts the category
        elif a._wrapped_number and not b._wrapped_number and a.dtype._category <= b.dtype._category:
            common = b.dtype
        else:
            common = _result_type_of((a, b))
    else:
        _check_devices(inputs)
        shape = inputs[0]._shape
        for t in inputs[1:]:
            shape = broadcast_shapes(shape, t._shape)
        common = _result_type_of(tuple(inputs))
    if int_to_float and not (common.is_floating_point or common.is_complex):
        common = _dt.get_default_dtype()
    if outs is None:
        return ((shape, output_strides(shape, as_computed(inputs, common)), common),), common
    out = outs[0]
    if out._shape == shape:
        if not can_cast(common, out.dtype):
            check_can_cast(common, out)  # raises
        return ((shape, out._strides, out.dtype),), common
    if any(out is t for t in inputs):  # read-write: TensorIterator checks shapes before dtypes
        raise RuntimeError(
            f"output with shape {shape_text(out._shape)} doesn't match the broadcast shape "
            f"{shape_text(shape)}"
        )
    check_can_cast(common, out)
    return ((shape, output_strides(shape, as_computed(inputs, common)), out.dtype),), common


def as_computed(inputs: Sequence[Any], common: dtype) -> Sequence[Any]:
    """The operands as TensorIterator orders the output by.

    Note [Converted inputs lay out the output]
    TensorIterator converts an input of another dtype than the common one before it orders
    dims (``.to``, preserve_format): an expanded or gapped input becomes a dense copy, so
    ``bool (2, 3) expanded + uint8 transposed`` is row-major in torch, not transposed (on
    'meta' too: torch's elementwise references convert their inputs first as well).
    Unary ops on ``self.to(dtype)`` (pow with a number, clamp with numbers) do the same.

    >>> import tensordispatch as td
    >>> [t._strides for t in as_computed([td.zeros(1, 3).expand(2, 3)], td.float64)]
    [(3, 1)]
    """
    converted: list[Any] | None = None
    for i, t in enumerate(inputs):
        if t.dtype is common or not t._shape:
            continue
        strides = t._strides
        if not is_non_overlapping_and_dense(t._shape, strides):
            if converted is None:
                converted = list(inputs)
            converted[i] = _Operand(t._shape, dense_strides_like(t._shape, strides))
    return inputs if converted is None else converted


class _Operand:
    """A shape and strides standing for an operand of TensorIterator (no data)."""

    __slots__ = ("_shape", "_strides")

    def __init__(self, shape: tuple[int, ...], strides: tuple[int, ...]) -> None:
        self._shape, self._strides = shape, strides


def _as_index_operand(index: Any, bshape: tuple[int, ...], before: int, after: int) -> _Operand:
    """An index tensor broadcast to ``bshape`` and viewed with ``before`` leading and
    ``after`` trailing size-1 dims, as torch's index kernel sees it."""
    strides = _broadcast_strides(bshape, index)
    lead = strides[0] * bshape[0] if bshape else 1
    return _Operand(
        (1,) * before + bshape + (1,) * after, (lead or 1,) * before + strides + (1,) * after
    )


def index_output_strides(
    self: Any, expanded: Sequence[Any], adjacent: bool, shape: tuple[int, ...]
) -> tuple[int, ...] | None:
    """Strides of ``index.Tensor``'s fresh output of ``shape`` (None for contiguous): torch
    iterates over ``self`` restrided (the indexed dims replaced by the index shape, with
    stride 0; moved to the front first when they are not adjacent) together with the index
    tensors, so the output follows the input's layout.

    >>> from tensordispatch.tensor import from_numpy
    >>> import numpy as np
    >>> x = from_numpy(np.zeros((2, 3, 4), np.float32)).permute(2, 0, 1)  # x[:, i]
    >>> i = from_numpy(np.array([0, 1]))
    >>> x.stride(), index_output_strides(x, [None, i], True, (4, 2, 3))
    ((1, 12, 4), (1, 4, 8))
    """
    positions = [i for i, t in enumerate(expanded) if t is not None]
    if not positions:
        return None
    indexed = set(positions)
    order = list(range(len(self._shape)))
    if not adjacent:
        order = positions + [d for d in order if d not in indexed]
    before = order.index(positions[0])
    after = len(order) - before - len(positions)
    bshape = tuple(shape[before : len(shape) - after])
    kept_shape = tuple(self._shape[d] for d in order)
    kept_strides = tuple(self._strides[d] for d in order)
    src = _Operand(
        kept_shape[:before] + bshape + kept_shape[before + len(positions) :],
        kept_strides[:before] + (0,) * len(bshape) + kept_strides[before + len(positions) :],
    )
    operands = [src] + [_as_index_operand(expanded[d], bshape, before, after) for d in positions]
    return output_strides(shape, operands)
