"""Shapes and strides: Size, and the stride rules torch uses (contiguity, dense layouts).

Pure functions on tuples of ints, shared by the Tensor class and by the meta functions and
kernels of later layers (which must compute the same strides torch does).
"""

from __future__ import annotations

import operator
from typing import Any, SupportsIndex

__all__ = [
    "CONTIGUOUS_STRIDES",
    "Size",
    "contiguous_of",
    "contiguous_strides",
    "dense_strides_like",
    "extent",
    "is_non_overlapping_and_dense",
    "wrap_dim",
]


class Size(tuple[int, ...]):
    """A tensor's shape: a tuple of ints that prints like torch.Size.

    >>> s = Size([2, 3]); s, s[1:], s + (4,), s.numel()
    (tensordispatch.Size([2, 3]), tensordispatch.Size([3]), tensordispatch.Size([2, 3, 4]), 6)
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"tensordispatch.Size({list(self)!r})"

    __str__ = __repr__

    def __getitem__(self, key: Any) -> Any:
        got = tuple.__getitem__(self, key)
        return Size(got) if isinstance(key, slice) else got

    def __add__(self, other: Any) -> Size:
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(self, other))

    def __radd__(self, other: Any) -> Size:
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def numel(self) -> int:
        """The number of elements of a tensor of this shape."""
        n = 1
        for s in self:
            n *= s
        return n


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides in elements (size-0 and size-1 dims count as 1, like torch).

    >>> contiguous_strides((2, 3, 4)), contiguous_strides(()), contiguous_strides((2, 0))
    ((12, 4, 1), (), (1, 1))
    """
    strides = [1] * len(shape)
    acc = 1
    for i in range(len(shape) - 1, -1, -1):
        strides[i] = acc
        acc *= max(shape[i], 1)
    return tuple(strides)


#: ``contiguous_of``'s cache (shape -> strides), read inline by the hot paths that test a
#: tensor's strides (a dict read instead of a call); only ``contiguous_of`` fills it.
CONTIGUOUS_STRIDES: dict[tuple[int, ...], tuple[int, ...]] = {}


def contiguous_of(shape: tuple[int, ...]) -> tuple[int, ...]:
    """``contiguous_strides(shape)`` for a tuple ``shape``, cached per shape (the first 4096
    shapes seen): the hot paths compare a tensor's strides with it.

    >>> contiguous_of((2, 3)), contiguous_of((2, 3)) is contiguous_of((2, 3))
    ((3, 1), True)
    """
    strides = CONTIGUOUS_STRIDES.get(shape)
    if strides is None:
        strides = contiguous_strides(shape)
        if len(CONTIGUOUS_STRIDES) < 4096:
            CONTIGUOUS_STRIDES[shape] = strides
    return strides


def is_non_overlapping_and_dense(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Whether the elements fill a block of memory exactly once in some dim order (torch's
    definition; dims of size 0 or 1 impose nothing).

    >>> is_non_overlapping_and_dense((2, 3), (1, 2)), is_non_overlapping_and_dense((2, 3), (0, 1))
    (True, False)
    """
    if 0 in shape:
        return True  # an empty tensor counts as contiguous, whatever its strides
    if len(shape) == 1:
        return shape[0] < 2 or strides[0] == 1
    if strides == contiguous_of(shape):
        return True
    if len(shape) == 2:  # the sort below, spelled out (a transposed matrix, ~1 us less)
        (s0, s1), (t0, t1) = shape, strides
        if s0 < 2 or s1 < 2:
            return (t1 if s0 < 2 else t0) == 1 or (s0 < 2 and s1 < 2)
        inner, outer = (t0, t1) if t0 <= t1 else (t1, t0)
        return inner == 1 and outer == (s0 if t0 <= t1 else s1)
    dims = sorted((d for d in range(len(shape)) if shape[d] >= 2), key=lambda d: strides[d])
    expected = 1
    for d in dims:
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def dense_strides_like(shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, ...]:
    """Dense strides that keep the memory order of `strides` (torch's preserve_format rule
    for copies): dims sorted by stride, ties by size, zero strides left in place.

    >>> dense_strides_like((2, 3), (8, 1)), dense_strides_like((3, 2), (1, 3))
    ((3, 1), (1, 3))
    >>> dense_strides_like((2, 3), (0, 1))
    (3, 1)
    """
    if is_non_overlapping_and_dense(shape, strides):
        return strides
    ndim = len(shape)
    perm = list(range(ndim - 1, -1, -1))  # innermost first

    def order(a: int, b: int) -> int:  # > 0: dim a belongs after dim b
        sa, sb = strides[a], strides[b]
        if sa == 0 or sb == 0:
            return 0
        if sa != sb:
            return 1 if sa > sb else -1
        return 1 if shape[a] > shape[b] else 0

    for i in range(1, ndim):  # stable insertion sort; zero-stride dims never move
        moving = i
        for j in range(i - 1, -1, -1):
            cmp = order(perm[j], perm[moving])
            if cmp > 0:
                perm[j], perm[moving] = perm[moving], perm[j]
                moving = j
            elif cmp < 0:
                break
    out = [0] * ndim
    acc = 1
    for d in perm:
        out[d] = acc
        if shape[d] > 1:
            acc *= shape[d]
    return tuple(out)


def wrap_dim(name: str, dim: SupportsIndex, ndim: int) -> int:
    d = operator.index(dim)
    if ndim == 0:
        raise IndexError(
            f"{name}({d}): dimension specified as {d} but the tensor has no dimensions; "
            "a 0-dim tensor has no sizes or strides to ask for"
        )
    if not -ndim <= d < ndim:
        raise IndexError(
            f"{name}({d}): dimension out of range (expected to be in range of "
            f"[{-ndim}, {ndim - 1}], but got {d}); pass a dim in that range"
        )
    return d + ndim if d < 0 else d


def extent(shape: tuple[int, ...], strides: tuple[int, ...]) -> int:
    """Elements spanned from the first to the last element inclusive (0 if empty)."""
    span = 1
    for size, stride in zip(shape, strides, strict=True):
        if size == 0:
            return 0
        span += (size - 1) * stride
    return span
