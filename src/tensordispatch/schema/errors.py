"""The one exception the schema language raises for bad schema text or bad schema objects."""

from __future__ import annotations


class SchemaError(ValueError):
    """A function schema (text or object) breaks the grammar or one of its invariants.

    ``text`` is the offending schema text (or the printed form of the object being built),
    ``column`` the 1-based column of the problem in ``text`` when known, ``reason`` the rule
    that was broken, ``what`` the kind of text (a function schema, a type, an argument...).

    >>> from tensordispatch.schema import parse_schema
    >>> try:
    ...     parse_schema("foo(Tensorr self) -> Tensor")
    ... except SchemaError as e:
    ...     print(e.column, e.reason)
    5 unrecognized type Tensorr
    """

    text: str
    column: int | None
    reason: str
    what: str

    def __init__(
        self, reason: str, text: str, column: int | None = None, what: str = "function schema"
    ) -> None:
        self.reason = reason
        self.text = text
        self.column = column
        self.what = what
        where = f" at column {column}" if column is not None else ""
        super().__init__(f"invalid {what} '{text}'{where}: {reason}")

    def __reduce__(self) -> tuple[type[SchemaError], tuple[str, str, int | None, str]]:
        return (type(self), (self.reason, self.text, self.column, self.what))


class PieceError(Exception):
    """Internal: an error inside one piece of a schema (a type, an argument, a name).

    The top-level parser turns it into a SchemaError with the piece's position added.
    ``offset`` is 0-based inside the piece.
    """

    def __init__(self, reason: str, offset: int = 0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.offset = offset
