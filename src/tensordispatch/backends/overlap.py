"""torch's memory-overlap checks of written-to tensors (TensorIterator's compute_mem_overlaps).

An in-place or out= call must not write through an output that has two elements at one
address (a stride 0 over a size > 1: ``x.expand(3, 3).add_(1)``), and no input may share
some but not all of an output's memory (``x[1:].add_(x[:-1])``): the result would depend on
the order the elements are visited in. Exactly the same memory (``x.add_(x)``, the same
elements with the same strides) is allowed, and so is any pair torch finds too hard to
decide (either side not non-overlapping-and-dense: an expanded or strided input).

Note [Overlap checks cost nothing when storage is not shared]
The check runs on every in-place and out= call of the pointwise family, so its common case
is a few attribute reads: a written-to tensor without a zero stride cannot overlap itself,
and an input whose root tensor (the owner of the storage; ``_base`` of a view) is not the
output's root cannot share its memory. Only inputs over the output's storage reach the
address arithmetic. Like torch, only tensors with data are checked: torch's meta kernels do
not check, so meta (and lazy) tensors, whose ``_data`` is None, pass.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from tensordispatch.tensor.geometry import is_non_overlapping_and_dense
from tensordispatch.tensor.tensor import Tensor

__all__ = [
    "INTERNAL_OVERLAP",
    "PARTIAL_OVERLAP",
    "assert_no_internal_overlap",
    "assert_no_overlap",
    "assert_no_partial_overlap",
    "check_bias_copy",
    "check_written",
    "check_written_no_overlap",
    "has_internal_overlap",
    "in_order",
    "partial_overlap",
    "torch_element_order",
]

PARTIAL_OVERLAP = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer "
    "to a single memory location. Please clone() the tensor before performing the operation."
)
INTERNAL_OVERLAP = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)


def has_internal_overlap(t: Tensor) -> bool:
    """Whether ``t`` surely has two elements at one address (torch's has_internal_overlap
    answering YES: a stride 0 over a size > 1; other overlaps are "too hard" and pass).

    >>> import tensordispatch as td
    >>> has_internal_overlap(td.zeros(1).expand(3)), has_internal_overlap(td.zeros(3))
    (True, False)
    """
    strides = t._strides
    if 0 not in strides:
        return False
    shape = t._shape
    if 0 in shape:
        return False
    return any(st == 0 and n > 1 for n, st in zip(shape, strides, strict=True))


def _shares_storage(a: Tensor, b: Tensor) -> bool:
    ra = a if a._base is None else a._base
    rb = b if b._base is None else b._base
    if ra is rb:
        return True
    return ra._storage is not None and ra._storage is rb._storage


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _partial(out: Tensor, src: Tensor) -> bool:
    """partial_overlap for two distinct tensors over one storage (1-d views spelled out:
    this runs on every in-place call between views of one tensor)."""
    shape, strides = out._shape, out._strides
    if len(shape) == 1:
        n_out = shape[0]
        dense = n_out < 2 or strides[0] == 1
    else:
        n_out = _numel(shape)
        dense = is_non_overlapping_and_dense(shape, strides)
    if not dense:
        return False  # torch: too hard to decide, allowed
    shape, strides = src._shape, src._strides
    if len(shape) == 1:
        n_src = shape[0]
        dense = n_src < 2 or strides[0] == 1
    else:
        n_src = _numel(shape)
        dense = is_non_overlapping_and_dense(shape, strides)
    if not (dense and n_out and n_src):
        return False
    a_size, b_size = out.dtype.itemsize, src.dtype.itemsize
    a_begin = out._offset * a_size
    a_end = a_begin + n_out * a_size
    b_begin = src._offset * b_size
    b_end = b_begin + n_src * b_size
    if a_begin == b_begin and a_end == b_end:
        return out._strides != src._strides
    return a_begin < b_end and b_begin < a_end


def partial_overlap(out: Tensor, src: Tensor) -> bool:
    """Whether ``src`` shares some but not all of ``out``'s memory (torch's
    get_overlap_status answering PARTIAL). Same elements with other strides are partial.

    >>> import tensordispatch as td
    >>> x = td.arange(6.0)
    >>> partial_overlap(x[1:4], x[0:3]), partial_overlap(x[0:3], x[0:3]), partial_overlap(x, x.t())
    (True, False, False)
    """
    if out is src or not _shares_storage(out, src):
        return False
    return _partial(out, src)


def _full(out: Tensor, src: Tensor) -> bool:
    """Whether two distinct tensors over one storage are exactly the same elements (torch's
    FULL: same byte range, same strides, both non-overlapping and dense)."""
    shape, strides = out._shape, out._strides
    if _numel(shape) == 0 or _numel(src._shape) == 0:
        return False
    if not (
        is_non_overlapping_and_dense(shape, strides)
        and is_non_overlapping_and_dense(src._shape, src._strides)
    ):
        return False
    a_size, b_size = out.dtype.itemsize, src.dtype.itemsize
    return (
        out._offset * a_size == src._offset * b_size
        and _numel(shape) * a_size == _numel(src._shape) * b_size
        and strides == src._strides
    )


def assert_no_internal_overlap(t: Tensor) -> None:
    """torch's assert_no_internal_overlap (any device: meta tensors are checked too).

    >>> import tensordispatch as td
    >>> assert_no_internal_overlap(td.zeros(1).expand(2))
    Traceback (most recent call last):
    ...
    RuntimeError: unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation.
    """
    if 0 in t._strides and has_internal_overlap(t):
        raise RuntimeError(INTERNAL_OVERLAP)


def assert_no_partial_overlap(out: Tensor, src: Tensor) -> None:
    """torch's assert_no_partial_overlap: exactly the same memory is allowed."""
    if partial_overlap(out, src):
        raise RuntimeError(PARTIAL_OVERLAP)


def assert_no_overlap(out: Tensor, src: Tensor) -> None:
    """torch's assert_no_overlap: neither partial nor full overlap (``out`` itself as an
    input is refused too), with the partial-overlap message.

    >>> import tensordispatch as td
    >>> x = td.arange(4.0)
    >>> assert_no_overlap(x[:2], x[2:]); assert_no_overlap(x, x)
    Traceback (most recent call last):
    ...
    RuntimeError: unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation.
    """
    if out is src:
        if _numel(out._shape):
            raise RuntimeError(PARTIAL_OVERLAP)
        return
    if _shares_storage(out, src) and (_partial(out, src) or _full(out, src)):
        raise RuntimeError(PARTIAL_OVERLAP)


def check_written(out: Any, inputs: Iterable[Any]) -> None:
    """Raise torch's overlap errors for one written-to tensor and the call's input tensors
    (Note [Overlap checks cost nothing when storage is not shared]). Tensors without data
    (meta, lazy) are not checked.

    >>> import tensordispatch as td
    >>> x = td.arange(5.0)
    >>> check_written(x[1:], (x[:-1],))
    Traceback (most recent call last):
    ...
    RuntimeError: unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation.
    """
    base = out._base
    if base is None and out._storage is None:
        # A root whose storage bytes were never shared with another root: only its own
        # views (``_base`` is out) can reach its memory.
        if 0 in out._strides and out._data is not None and has_internal_overlap(out):
            raise RuntimeError(INTERNAL_OVERLAP)
        for t in inputs:
            if t._base is out and out._data is not None and _partial(out, t):
                raise RuntimeError(PARTIAL_OVERLAP)
        return
    if out._data is None:
        return
    if 0 in out._strides and has_internal_overlap(out):
        raise RuntimeError(INTERNAL_OVERLAP)
    root = out if base is None else base
    storage = root._storage
    for t in inputs:
        b = t._base
        other = t if b is None else b
        if (other is root or (storage is not None and other._storage is storage)) and (
            t is not out and _partial(out, t)
        ):
            raise RuntimeError(PARTIAL_OVERLAP)


def check_written_no_overlap(out: Tensor, inputs: Iterable[Tensor]) -> None:
    """assert_no_internal_overlap(out), then assert_no_overlap(out, t) for every input (cat,
    index_select: even exactly the same memory is refused). A root never viewed is only
    compared by identity (Note [Overlap checks cost nothing when storage is not shared])."""
    assert_no_internal_overlap(out)
    if out._base is None and out._storage is None and out._vc is None:
        for t in inputs:
            if t is out and _numel(out._shape):
                raise RuntimeError(PARTIAL_OVERLAP)
        return
    for t in inputs:
        assert_no_overlap(out, t)


def check_bias_copy(out: Tensor, bias: Tensor) -> None:
    """The checks of torch's copy of addmm's / baddbmm's ``self`` (broadcast to the result)
    into an out= tensor before the product is added: internal overlap of ``out``, partial
    overlap with the broadcast bias (an expanded bias is too hard to decide: allowed)."""
    assert_no_internal_overlap(out)
    if out is bias or not _shares_storage(out, bias):
        return
    if bias._shape != out._shape:
        from tensordispatch.backends.aten import op

        bias = op("expand")(bias, out._shape)
    if _partial(out, bias):
        raise RuntimeError(PARTIAL_OVERLAP)


# Note [Overlaps torch allows but computes in its own order]
# torch refuses a partial overlap only when it can decide it (both tensors non-overlapping
# and dense). ``m[:, 1:].add_(m[:, :2])`` on a 2x3 ``m`` is "too hard" (neither view is
# dense) and runs, reading elements that the same call already wrote: torch's CPU loop
# gives [[0, 1, 3], [3, 7, 12]] for ``m = arange(6.).view(2, 3)``; NumPy sees the overlap and
# buffers the input, which gives [[0, 1, 3], [3, 7, 9]] (every read before any write).
# torch's answer follows TensorIterator's loop: dimensions ordered by the operands' strides
# (output first; a stride 0 decides nothing; equal strides put the smaller size inside),
# the innermost varying fastest, one element after another, EXCEPT in an inner loop over
# unit-stride operands of at least 2 * Vectorized<T>::size() elements, which torch runs in
# chunks of that many elements (all of a chunk read, then all written), and that size is 32
# or 64 bytes per vector depending on the machine's SIMD (AVX2/default or AVX512). So
# ``torch_element_order`` gives the order of torch's loop when the answer is the same on
# every CPU (the inner loop is strided, or shorter than the smallest chunk, 64 bytes), and
# None otherwise, or when the written and read elements do not meet (then any order gives
# one answer). The fused in-place kernels of add_/sub_/mul_/div_ and copy_ of one dtype
# and shape follow it element by element (a Python loop: only such calls pay); other
# kernels and longer unit-stride rows keep NumPy's buffered answer, which is torch's on no
# machine in general: torch's own answer there depends on the machine it runs on.

_SMALLEST_CHUNK_BYTES = 64  # 2 * Vectorized<T>::size() elements of 32 bytes (AVX2, default)


def torch_element_order(out: Tensor, src: Tensor) -> list[tuple[int, ...]] | None:
    """The indices of ``out`` in the order torch's CPU loop computes an elementwise
    ``out = f(out, src)`` of one shape, when the result depends on that order and the
    order is the same on every machine; None otherwise (Note [Overlaps torch allows but
    computes in its own order]).

    >>> import tensordispatch as td
    >>> m = td.arange(6.0).view(2, 3)
    >>> torch_element_order(m[:, 1:], m[:, :2]), torch_element_order(m[0], m[1])
    ([(0, 0), (0, 1), (1, 0), (1, 1)], None)
    """
    if out is src or out._data is None or not _shares_storage(out, src):
        return None
    if out._offset == src._offset and out._strides == src._strides:
        return None  # each element reads only itself
    if not _spans_meet(out, src) or not np.shares_memory(out._data, src._data, max_work=10_000):
        return None
    perm = _loop_dims(out._shape, (out._strides, src._strides))
    if not perm:
        return None
    inner = _coalesced_inner(out._shape, (out._strides, src._strides), perm)
    size, strides = inner
    if all(st == 1 for st in strides) and size * out.dtype.itemsize >= _SMALLEST_CHUNK_BYTES:
        return None  # chunked by torch's vector width: the answer depends on the machine
    ranges = [range(out._shape[d]) for d in reversed(perm)]  # outermost first
    order = []
    for outer_first in _product(ranges):
        index = [0] * len(perm)
        for d, i in zip(reversed(perm), outer_first, strict=True):
            index[d] = i
        order.append(tuple(index))
    return order


def in_order(ufunc: Any, a: Any, b: Any, order: list[tuple[int, ...]]) -> None:
    """``a = ufunc(a, b)`` on two arrays one element at a time in ``order``, each reading
    what the previous ones wrote, as torch's loop does; NumPy's floating-point reports off,
    as for every CPU kernel (Note [Quiet context] in cpu/fpstate.py).

    >>> import numpy as np
    >>> x = np.arange(4.0); in_order(np.add, x[1:], x[:-1], [(0,), (1,), (2,)]); x
    array([0., 1., 3., 6.])
    """
    from tensordispatch.backends.cpu.fpstate import quiet_fp  # cpu/ imports this module

    with quiet_fp():
        for i in order:
            a[i] = ufunc(a[i], b[i])


def _spans_meet(a: Tensor, b: Tensor) -> bool:
    """Whether the element ranges of two views of one storage intersect (a cheap first test
    before NumPy's exact one); False when either is empty."""
    a_lo = a_hi = a._offset
    for n, st in zip(a._shape, a._strides, strict=True):
        if st < 0:
            a_lo += (n - 1) * st
        else:
            a_hi += (n - 1) * st
    b_lo = b_hi = b._offset
    for n, st in zip(b._shape, b._strides, strict=True):
        if st < 0:
            b_lo += (n - 1) * st
        else:
            b_hi += (n - 1) * st
    return a_lo <= b_hi and b_lo <= a_hi and 0 not in a._shape and 0 not in b._shape


def _product(ranges: list[range]) -> list[tuple[int, ...]]:
    from itertools import product

    return list(product(*ranges))


def _loop_dims(shape: tuple[int, ...], strides: tuple[tuple[int, ...], ...]) -> list[int]:
    """TensorIterator's reorder_dimensions: the dims, innermost first (size-1 dims
    dropped: they do not move the loop)."""
    dims = [d for d in range(len(shape) - 1, -1, -1) if shape[d] != 1]

    def should_swap(d0: int, d1: int) -> int:
        for st in strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 < s1:
                return -1
            if s0 > s1:
                return 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    for i in range(1, len(dims)):
        j = i
        for k in range(i - 1, -1, -1):
            c = should_swap(dims[k], dims[j])
            if c > 0:
                dims[k], dims[j] = dims[j], dims[k]
                j = k
            elif c < 0:
                break
    return dims


def _coalesced_inner(
    shape: tuple[int, ...], strides: tuple[tuple[int, ...], ...], perm: list[int]
) -> tuple[int, tuple[int, ...]]:
    """The size of the innermost loop after TensorIterator's coalescing, with each
    operand's stride in it."""
    first = perm[0]
    size = shape[first]
    for d in perm[1:]:
        if all(st[d] == st[first] * size for st in strides):
            size *= shape[d]
        else:
            break
    return size, tuple(st[first] for st in strides)
