"""Facts shared by every backend: dim wrapping, broadcasting, dtype names, formats, sentinels.

Owns the small pure functions meta functions and kernels share (no tensors are made here)
and the user-facing ``memory_format`` / ``layout`` objects until the tensor layer owns them.
Must not import the dispatcher's registration API or generated code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.dtypes import dtype

__all__ = [
    "Layout",
    "MemoryFormat",
    "broadcast_shapes",
    "channels_last",
    "check_batch_pair",
    "contiguous_format",
    "expand_check",
    "preserve_format",
    "reduction_dims",
    "reduction_shape",
    "scalar_type_name",
    "shape_text",
    "strided",
    "type_meta_name",
    "wrap_dim",
]


class MemoryFormat:
    """torch.memory_format: how a new tensor lays out its dims (a named singleton).

    >>> contiguous_format, preserve_format
    (torch.contiguous_format, torch.preserve_format)
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


class Layout:
    """torch.layout; only ``strided`` exists here.

    >>> strided
    torch.strided
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


contiguous_format = MemoryFormat("contiguous_format")
preserve_format = MemoryFormat("preserve_format")
channels_last = MemoryFormat("channels_last")
strided = Layout("strided")

# c10's ScalarType names (toString) and TypeMeta names, as torch's messages print them.
_SCALAR_TYPE_NAMES = {
    "bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
    "int64": "Long", "float16": "Half", "float32": "Float", "float64": "Double",
    "complex64": "ComplexFloat", "complex128": "ComplexDouble", "uint16": "UInt16",
    "uint32": "UInt32", "uint64": "UInt64",
}  # fmt: skip
_TYPE_META_NAMES = {
    "bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
    "int32": "int", "int64": "long int", "float16": "c10::Half", "float32": "float",
    "float64": "double", "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>", "uint16": "unsigned short", "uint32": "unsigned int",
    "uint64": "unsigned long",
}  # fmt: skip


def scalar_type_name(d: dtype) -> str:
    """c10 ScalarType spelling of a dtype ("Float"), as in torch's dtype-mismatch messages.

    >>> scalar_type_name(_dt.int64)
    'Long'
    """
    return _SCALAR_TYPE_NAMES[d.name]


def type_meta_name(d: dtype) -> str:
    """c10 TypeMeta spelling of a dtype ("float", "long int").

    >>> type_meta_name(_dt.int64)
    'long int'
    """
    return _TYPE_META_NAMES[d.name]


def shape_text(shape: Sequence[int]) -> str:
    """torch's ``[2, 3]`` spelling of a shape in messages.

    >>> shape_text((2, 3))
    '[2, 3]'
    """
    return "[" + ", ".join(str(s) for s in shape) + "]"


def check_batch_pair(batch1: Any, batch2: Any) -> tuple[int, int, int]:
    """torch's shape checks of a batched matrix product (bmm, baddbmm): ``(b, n, m)``."""
    if batch1.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    bs, n, m = batch1._shape
    if batch2._shape[0] != bs or batch2._shape[1] != m:
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"{shape_text((bs, m))} but got: {shape_text(batch2._shape[:2])}."
        )
    return bs, n, m


def wrap_dim(dim: int, ndim: int, wrap_scalar: bool = True) -> int:
    """A dim in ``[0, ndim)`` from a possibly negative one, with torch's IndexError.

    >>> wrap_dim(-1, 3), wrap_dim(0, 0)
    (2, 0)
    """
    if ndim <= 0:
        if not wrap_scalar:
            raise IndexError(f"dimension specified as {dim} but tensor has no dimensions")
        ndim = 1
    if not -ndim <= dim < ndim:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], "
            f"but got {dim})"
        )
    return dim + ndim if dim < 0 else dim


# Broadcasts of shape pairs seen (the first 4096): a pure function of the two tuples.
_BROADCAST: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[int, ...]] = {}


def broadcast_shapes(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast of two shapes, with torch's error naming tensors a and b.

    >>> broadcast_shapes((2, 1), (3,))
    (2, 3)
    """
    if a == b:
        return a
    cacheable = type(a) is tuple and type(b) is tuple
    if cacheable:
        known = _BROADCAST.get((a, b))
        if known is not None:
            return known
    n = max(len(a), len(b))
    out = [0] * n
    for i in range(-1, -n - 1, -1):
        sa = a[i] if -i <= len(a) else 1
        sb = b[i] if -i <= len(b) else 1
        if sa == sb or sb == 1:
            out[i] = sa
        elif sa == 1:
            out[i] = sb
        else:
            raise RuntimeError(
                f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) "
                f"at non-singleton dimension {n + i}"
            )
    result = tuple(out)
    if cacheable and len(_BROADCAST) < 4096:
        _BROADCAST[(a, b)] = result
    return result


def expand_check(t: Any, target: tuple[int, ...]) -> None:
    """torch's expand_size check: ``t`` must broadcast to ``target``."""
    if len(t._shape) > len(target):
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(target)}) must be greater or equal to "
            f"the number of dimensions in the tensor ({len(t._shape)})"
        )
    offset = len(target) - len(t._shape)
    for i, s in enumerate(t._shape):
        if s != 1 and s != target[offset + i]:
            raise RuntimeError(
                f"The expanded size of the tensor ({target[offset + i]}) must match the "
                f"existing size ({s}) at non-singleton dimension {offset + i}.  Target sizes: "
                f"{shape_text(target)}.  Tensor sizes: {shape_text(t._shape)}"
            )


def is_integral(d: dtype, include_bool: bool) -> bool:
    """Whether ``d`` is an integer dtype (bool counted only if ``include_bool``)."""
    if d is _dt.bool:
        return include_bool
    return not (d.is_floating_point or d.is_complex)


def scalar_kind_error(value: Any) -> TypeError:
    """The TypeError for a value where a Python number was expected."""
    return TypeError(f"expected a number (bool, int, float, complex), got {type(value).__name__}")


def reduction_dims(dim: Any, ndim: int) -> tuple[int, ...]:
    """The wrapped, de-duplicated-checked dims of a reduction (None or [] = every dim).

    >>> reduction_dims([-1], 3), reduction_dims(None, 2)
    ((2,), (0, 1))
    """
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = [dim]
    if len(dim) == 0:
        return tuple(range(ndim))
    seen: list[int] = []
    for d in dim:
        w = wrap_dim(d, ndim)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.append(w)
    return tuple(seen)


def reduction_shape(
    shape: tuple[int, ...], dims: tuple[int, ...], keepdim: bool
) -> tuple[int, ...]:
    """The shape after reducing ``dims`` (kept as size 1 with ``keepdim``).

    >>> reduction_shape((2, 3), (1,), True), reduction_shape((2, 3), (1,), False)
    ((2, 1), (2,))
    """
    if len(dims) == len(shape):  # every dim (dims are distinct): the common full reduction
        return (1,) * len(shape) if keepdim else ()
    if keepdim:
        return tuple([1 if i in dims else s for i, s in enumerate(shape)])
    return tuple([s for i, s in enumerate(shape) if i not in dims])


def _register_value_types() -> None:
    """Declare dtypes, layouts, memory formats and the device class to the dispatcher, which
    checks and converts such arguments of direct calls as torch does (dispatch/value_types.py,
    Note [Value types]); the dispatcher cannot import this layer itself."""
    from tensordispatch.dispatch.value_types import register_value_types
    from tensordispatch.tensor.device import device

    register_value_types(
        dtypes=_dt.ALL_DTYPES,
        layouts=[strided],
        memory_formats=[contiguous_format, preserve_format, channels_last],
        device=device,
    )


_register_value_types()
