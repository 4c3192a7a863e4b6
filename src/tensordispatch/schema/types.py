"""Schema types: base types, ``T?``, ``T[]`` / ``T[N]`` and custom classes.

Types are immutable values; parsing one spelling always returns the same (cached) object.
Only canonical spellings parse (``int[0]`` is rejected because it prints as ``int[]``), so
``str(parse_type(s)) == s`` for every accepted ``s``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from enum import Enum

from tensordispatch.schema.errors import PieceError, SchemaError


class BaseTy(Enum):
    """Every base type the torch 2.13 native_functions.yaml grammar accepts (torchgen's set).

    ``Dimname`` and ``Any`` are gone from 2.13; ``DimVector`` and ``GraphModule`` are accepted
    by torchgen only (the C++ parser rejects them), and we follow torchgen.
    """

    Tensor = "Tensor"
    int = "int"
    SymInt = "SymInt"
    float = "float"
    bool = "bool"
    str = "str"
    Scalar = "Scalar"
    ScalarType = "ScalarType"
    Layout = "Layout"
    Device = "Device"
    DeviceIndex = "DeviceIndex"
    MemoryFormat = "MemoryFormat"
    QScheme = "QScheme"
    Generator = "Generator"
    Storage = "Storage"
    Stream = "Stream"
    SymBool = "SymBool"
    DimVector = "DimVector"
    GraphModule = "GraphModule"

    # Members are singletons compared by identity; hashing by identity (C speed) instead of
    # Enum's Python-level hash(name) makes hashing types, arguments and schemas cheaper.
    __hash__ = object.__hash__


class Type:
    """Base class of the four type forms. Use :func:`parse_type` or ``Type.parse``."""

    __slots__ = ()

    @staticmethod
    def parse(text: str) -> Type:
        """Parse one type spelling.

        >>> str(Type.parse("SymInt[2]?"))
        'SymInt[2]?'
        """
        return parse_type(text)

    def is_base_ty_like(self, base_ty: BaseTy) -> bool:
        """True if the innermost element type is ``base_ty``."""
        raise NotImplementedError

    def is_tensor_like(self) -> bool:
        """Tensor, Tensor?, Tensor[], Tensor?[] (...): the arguments dispatch looks at.

        >>> Type.parse("Tensor?[]").is_tensor_like(), Type.parse("int").is_tensor_like()
        (True, False)
        """
        return self.is_base_ty_like(BaseTy.Tensor)

    def is_generator_like(self) -> bool:
        """True if the innermost element type is Generator."""
        return self.is_base_ty_like(BaseTy.Generator)

    def is_symint_like(self) -> bool:
        """True if the innermost element type is SymInt."""
        return self.is_base_ty_like(BaseTy.SymInt)

    def is_nullable(self) -> bool:
        """True for ``T?`` and for lists of nullable elements (torchgen's rule)."""
        raise NotImplementedError

    def is_list_like(self) -> ListType | None:
        """The list type under at most one ``?``, else None."""
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class BaseType(Type):
    """A base type such as ``Tensor`` or ``int``."""

    name: BaseTy

    def __str__(self) -> str:
        return self.name.value

    def is_base_ty_like(self, base_ty: BaseTy) -> bool:
        return self.name is base_ty

    def is_nullable(self) -> bool:
        return False

    def is_list_like(self) -> ListType | None:
        return None


@dataclass(frozen=True, slots=True)
class OptionalType(Type):
    """``T?``: a value of type T or None."""

    elem: Type

    def __str__(self) -> str:
        return f"{self.elem}?"

    def is_base_ty_like(self, base_ty: BaseTy) -> bool:
        return self.elem.is_base_ty_like(base_ty)

    def is_nullable(self) -> bool:
        return True

    def is_list_like(self) -> ListType | None:
        return self.elem.is_list_like()


@dataclass(frozen=True, slots=True)
class ListType(Type):
    """``T[]`` (size None) or ``T[N]`` (fixed size N >= 1)."""

    elem: Type
    size: int | None

    def __post_init__(self) -> None:
        if self.size is not None and self.size <= 0:
            raise SchemaError(
                f"list size must be a positive integer or None, got {self.size}",
                f"{self.elem}[{self.size}]",
                what="type",
            )

    def __str__(self) -> str:
        return f"{self.elem}[{'' if self.size is None else self.size}]"

    def is_base_ty_like(self, base_ty: BaseTy) -> bool:
        return self.elem.is_base_ty_like(base_ty)

    def is_nullable(self) -> bool:
        return self.elem.is_nullable()

    def is_list_like(self) -> ListType | None:
        return self


@dataclass(frozen=True, slots=True)
class CustomClassType(Type):
    """A TorchScript custom class, spelled ``__torch__.torch.classes.<class_name>``."""

    class_name: str

    def __str__(self) -> str:
        return f"__torch__.torch.classes.{self.class_name}"

    def is_base_ty_like(self, base_ty: BaseTy) -> bool:
        return False

    def is_nullable(self) -> bool:
        return False

    def is_list_like(self) -> ListType | None:
        return None


_BASE_TYPES: dict[str, BaseType] = {t.value: BaseType(t) for t in BaseTy}
_CUSTOM_CLASS = r"__torch__\.torch\.classes\.([a-zA-Z0-9_.]+)"
_LIST_SIZE = r"[1-9][0-9]*"

TENSOR = _BASE_TYPES["Tensor"]


_MAX_TYPE_NESTING = 16
_OPTIONAL = -1


# The two patterns above go through re's own cache (compiled at first use, not at import:
# only list sizes and custom classes need them, and type_piece is memoized anyway).
@functools.lru_cache(maxsize=4096)
def type_piece(text: str) -> Type:
    """Parse a type spelling; raise PieceError (offset inside ``text``) if it is invalid."""
    base = _BASE_TYPES.get(text)
    if base is not None:
        return base
    # Peel `?` and `[N]` suffixes right to left (the grammar binds them left to right).
    sizes: list[int | None] = []  # list sizes; _OPTIONAL marks a `?`
    rest = text
    while True:
        if rest.endswith("?") and len(rest) > 1:
            sizes.append(_OPTIONAL)
            rest = rest[:-1]
        elif rest.endswith("]") and rest.rfind("[") > 0:
            open_at = rest.rfind("[")
            size_text = rest[open_at + 1 : -1]
            if size_text == "":
                sizes.append(None)
            elif size_text.isdigit() and size_text.isascii():
                if re.fullmatch(_LIST_SIZE, size_text) is None:
                    canonical = f"{rest[:open_at]}[{int(size_text) or ''}]"
                    raise PieceError(
                        f"non-canonical list size in {rest} (write {canonical})", open_at + 1
                    )
                sizes.append(int(size_text))
            else:
                break
            rest = rest[:open_at]
        else:
            break
        if len(sizes) > _MAX_TYPE_NESTING:
            raise PieceError(f"type {text} nests more than {_MAX_TYPE_NESTING} levels")
    result: Type | None = _BASE_TYPES.get(rest)
    if result is None:
        match = re.fullmatch(_CUSTOM_CLASS, rest)
        if match is None:
            hint = ""
            if " " in rest or "," in rest:
                hint = " (write one space between type and name, and ', ' between arguments)"
            raise PieceError(f"unrecognized type {rest}{hint}")
        result = CustomClassType(match.group(1))
    for size in reversed(sizes):
        result = OptionalType(result) if size == _OPTIONAL else ListType(result, size)
    return result


def parse_type(text: str) -> Type:
    """Parse one type spelling such as ``Tensor?[]`` or ``SymInt[2]``.

    >>> parse_type("int[2]")
    ListType(elem=BaseType(name=<BaseTy.int: 'int'>), size=2)
    >>> parse_type("Dimname")
    Traceback (most recent call last):
    ...
    tensordispatch.schema.errors.SchemaError: ... at column 1: unrecognized type Dimname
    """
    try:
        return type_piece(text)
    except PieceError as e:
        raise SchemaError(e.reason, text, e.offset + 1, "type") from None
