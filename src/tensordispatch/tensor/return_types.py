"""Named-tuple result types (torch.return_types): what ``max(x, dim)`` and ``sort(x)`` return.

An operator whose schema names every return (``max.dim(...) -> (Tensor values, Tensor
indices)``) returns, through the Python API, an instance of a tuple subclass named after the
operator (``max``; ``max_out`` for the out= form) whose fields are the return names. It is a
tuple (indexable, unpackable, equal to the plain tuple) with read-only attributes, and prints
one field a line as torch's do. The types themselves are generated from the schemas
(generated/return_types.py, by codegen/gen_python.py); this module only builds them.

Note [Named tuples like torch's structseq]
torch's types are CPython struct sequences: the constructor takes one sequence (and an
unused dict), ``n_fields`` / ``n_sequence_fields`` / ``n_unnamed_fields`` are class
attributes, attributes are read-only and no others can be set, pickling goes through the
type with ``(tuple(self), {})``. ``collections.namedtuple`` differs on several of these
(positional constructor, ``_fields``, ``_replace``), so the types are built here instead.
Calling an OpOverload directly (``ops.aten.max.dim``) returns a plain tuple, as in torch.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any

__all__ = ["structseq"]

# The public name in reprs (torch prints "torch.return_types.max("); the classes' __module__
# is the generated module that holds them, so pickle finds them.
_MODULE = "tensordispatch.return_types"


def _new(cls: type, sequence: Any = None, dict: Any = None) -> tuple[Any, ...]:
    name = f"{_MODULE}.{cls.__name__}"
    try:
        items = tuple(sequence)
    except TypeError:
        raise TypeError("constructor requires a sequence") from None
    n: int = cls.n_fields  # type: ignore[attr-defined]
    if len(items) != n:
        raise TypeError(f"{name}() takes a {n}-sequence ({len(items)}-sequence given)")
    return tuple.__new__(cls, items)


def _repr(self: tuple[Any, ...]) -> str:
    fields = type(self).__match_args__  # type: ignore[attr-defined]
    body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self, strict=True))
    return f"{_MODULE}.{type(self).__name__}(\n{body})"


def _reduce(self: tuple[Any, ...]) -> tuple[type, tuple[tuple[Any, ...], dict[str, Any]]]:
    return (type(self), (tuple(self), {}))


def structseq(name: str, fields: tuple[str, ...], module: str = _MODULE) -> type[tuple[Any, ...]]:
    """A named-tuple type like torch.return_types.<name> with the given field names.

    >>> max = structseq("max", ("values", "indices"))
    >>> r = max((3.0, 1))
    >>> r.values, r[1], tuple(r) == (3.0, 1)
    (3.0, 1, True)
    >>> r
    tensordispatch.return_types.max(
    values=3.0,
    indices=1)
    """
    namespace: dict[str, Any] = {
        "__slots__": (),
        "__module__": module,
        "__qualname__": name,
        "__match_args__": tuple(fields),
        "n_fields": len(fields),
        "n_sequence_fields": len(fields),
        "n_unnamed_fields": 0,
        "__new__": _new,
        "__repr__": _repr,
        "__str__": _repr,
        "__reduce__": _reduce,
    }
    for i, field in enumerate(fields):
        namespace[field] = property(itemgetter(i), doc=f"Alias for field number {i}")
    return type(name, (tuple,), namespace)
