"""Parsing schema text into the data model.

Note [Whitespace-exact schema text]
We accept exactly the spellings torchgen accepts for native_functions.yaml: arguments are
separated by ", ", there is one space on each side of "->", a single return is not
parenthesised, list sizes and defaults are written without spaces. Every accepted piece
prints back to its own text, so ``str(parse_schema(s)) == s``; we check that piece by piece
(each piece is parsed once and cached) instead of re-printing the whole schema. Where
torchgen would accept nonsense (operator names with spaces, defaults such as ``x=a b``) we
are stricter: names must be identifiers and defaults literals (see defaults.py).

Speed: a schema is split with one regex and ``str.split``; types, alias annotations,
arguments, return lists and names are each parsed by a cached function, so the ~3,100
schemas of the 2.13 file share most of their pieces. Whole schemas are cached too.
"""

from __future__ import annotations

import functools
import re

from tensordispatch.schema.defaults import check_default
from tensordispatch.schema.errors import PieceError, SchemaError
from tensordispatch.schema.model import (
    AliasInfo,
    Argument,
    BaseOperatorName,
    FunctionSchema,
    OperatorName,
    Return,
)
from tensordispatch.schema.types import Type, type_piece

_DECL_RE = re.compile(r"([^(]+)\((.*)\) -> (.*)")
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OVERLOAD_RE = re.compile(r"[A-Za-z0-9_]+")
_ALIAS_RE = re.compile(r"([a-z](?:\|[a-z])*)(!?)(?: -> (\*|[a-z](?:\|[a-z])*))?")
_DUNDER_RE = re.compile(r"__([^_]+)__")
_AUGMENTED = frozenset(
    ["add", "sub", "mul", "div", "mod", "pow", "lshift", "rshift", "and", "xor", "or"]
)


@functools.lru_cache(maxsize=1024)
def alias_piece(text: str) -> AliasInfo:
    """Parse an alias annotation (the text inside ``Tensor(...)``)."""
    match = _ALIAS_RE.fullmatch(text)
    if match is None:
        raise PieceError(f"unrecognized alias annotation {text}")
    before = tuple(match.group(1).split("|"))
    is_write = match.group(2) == "!"
    after = tuple(match.group(3).split("|")) if match.group(3) else ()
    if is_write and len(before) > 1:
        raise PieceError(f"alias set larger than 1 is not mutable, got {text} instead.")
    if len(before) > 1 and len(after) > 1:
        raise PieceError(
            f"before alias set and after alias set cannot be larger than 1 at the same time, got {text} instead."
        )
    return AliasInfo(before, after, is_write)


def _annotated_type_piece(text: str) -> tuple[Type, AliasInfo | None]:
    """Parse ``TYPE`` or ``Tensor(ANN)``, ``Tensor(ANN)?``, ``Tensor(ANN)[]``."""
    if not text.startswith("Tensor("):
        return type_piece(text), None
    close = text.rfind(")")
    suffix = text[close + 1 :]
    if close <= 7:
        return type_piece(text), None  # "Tensor()" and friends: reported as a bad type
    if suffix not in ("", "?", "[]"):
        raise PieceError(f"unrecognized alias analysis form with Tensor: {suffix}", close + 1)
    try:
        info = alias_piece(text[7:close])
    except PieceError as e:
        raise PieceError(e.reason, 7) from None
    return type_piece("Tensor" + suffix), info


@functools.lru_cache(maxsize=8192)
def argument_piece(text: str, kwarg_only: bool) -> Argument:
    """Parse ``TYPE[(ANN)] NAME[=DEFAULT]``."""
    if " " not in text:
        raise PieceError(f"illegal argument '{text}'")
    if text.count("=") > 1:
        raise PieceError(f"illegal argument with default value: '{text}'")
    left, eq, default = text.partition("=")
    if " " not in left:
        raise PieceError(f"illegal argument '{text}'")
    type_text, name = left.rsplit(" ", 1)
    t, info = _annotated_type_piece(type_text)
    if _IDENT_RE.fullmatch(name) is None:
        raise PieceError(f"argument name '{name}' is not an identifier", len(type_text) + 1)
    if not eq:
        return Argument(name, t, None, kwarg_only, info)
    if not default:
        raise PieceError(f"argument '{name}' has an empty default value", len(left) + 1)
    reason = check_default(default, t)
    if reason is not None:
        raise PieceError(reason, len(left) + 1)
    return Argument(name, t, default, kwarg_only, info)


@functools.lru_cache(maxsize=2048)
def return_piece(text: str) -> Return:
    """Parse ``TYPE[(ANN)] [NAME]``."""
    name: str | None = None
    type_text = text
    if " " in text:
        type_text, name = text.rsplit(" ", 1)
    t, info = _annotated_type_piece(type_text)
    if name is not None and _IDENT_RE.fullmatch(name) is None:
        raise PieceError(f"return name '{name}' is not an identifier", len(type_text) + 1)
    return Return(name, t, info)


@functools.lru_cache(maxsize=2048)
def returns_piece(text: str) -> tuple[Return, ...]:
    """Parse the text after `` -> ``: ``()``, one return, or ``(R, R, ...)``."""
    if text == "()":
        return ()
    if not (text.startswith("(") and text.endswith(")")):
        if ", " in text:
            raise PieceError(f"several returns must be parenthesised: ({text})")
        if not text:
            raise PieceError("missing return type (write () for no returns)")
        return (return_piece(text),)
    pieces = text[1:-1].split(", ")
    returns = []
    offset = 1
    for piece in pieces:
        try:
            returns.append(return_piece(piece))
        except PieceError as e:
            raise PieceError(e.reason, offset + e.offset) from None
        offset += len(piece) + 2
    if len(returns) == 1:
        raise PieceError(f"a single return must not be parenthesised (write {pieces[0]})")
    return tuple(returns)


@functools.lru_cache(maxsize=4096)
def operator_name_piece(text: str) -> OperatorName:
    """Parse ``[ns::]name[.overload]`` with torchgen's inplace / dunder / functional rules."""
    namespace: str | None = None
    start = 0
    rest = text
    if "::" in text:
        namespace, _, rest = text.partition("::")
        if "::" in rest:
            levels = text.rsplit("::", 1)[0]
            raise PieceError(
                f"Codegen doesn't support more than 1 level(s) of custom namespace. Got {levels}."
            )
        if _IDENT_RE.fullmatch(namespace) is None:
            raise PieceError(f"namespace '{namespace}' is not an identifier")
        start = len(namespace) + 2
    base_text, dot, overload = rest.partition(".")
    if dot and _OVERLOAD_RE.fullmatch(overload) is None:
        where = start + len(base_text) + 1
        raise PieceError(f"overload name '{overload}' is not made of letters, digits and _", where)
    return OperatorName(_base_name(base_text, namespace, start), overload)


@functools.lru_cache(maxsize=4096)
def _base_name(text: str, namespace: str | None, start: int) -> BaseOperatorName:
    if text == "":
        raise PieceError("operator name cannot be empty", start)
    if text.endswith("_out"):
        raise PieceError(
            "_out suffix is reserved and not permitted for operator names; did you mean to specify an out overload name instead?",
            start,
        )
    if _IDENT_RE.fullmatch(text) is None:
        raise PieceError(f"operator name '{text}' is not an identifier", start)
    dunder = _DUNDER_RE.fullmatch(text)
    if dunder is not None:
        base = dunder.group(1)
        inplace = base[0] == "i" and base[1:] in _AUGMENTED
        if inplace:
            base = base[1:]
        elif base[0] == "i":
            qualified = f"{namespace}::{text}" if namespace else text
            raise PieceError(f"unexpected dunder method starting with 'i': {qualified}", start)
    else:
        inplace = text.endswith("_")
        base = text[:-1] if inplace else text
    functional = base.endswith("_functional")
    if functional:
        base = base[: -len("_functional")]
        if dunder is not None or inplace:
            qualified = f"{namespace}::{text}" if namespace else text
            raise PieceError(
                f"functional overload cannot be a dunder method or inplace: {qualified}", start
            )
    return BaseOperatorName(base, inplace, dunder is not None, functional, namespace)


def _decl_error(text: str) -> SchemaError:
    paren = text.find("(")
    if paren <= 0:
        reason = "missing operator name" if paren == 0 else "missing '(' after the operator name"
        return SchemaError(f"{reason}; expected NAME(ARGS) -> RETURNS", text, 1)
    newline = min((i for i in (text.find("\n"), text.find("\r")) if i >= 0), default=-1)
    if newline >= 0:
        return SchemaError("line breaks are not allowed in a schema", text, newline + 1)
    close = text.rfind(")")
    column = close + 2 if close > paren else len(text) + 1
    return SchemaError(
        "expected ' -> RETURNS' after the argument list, with one space on each side of '->'",
        text,
        column,
    )


def _arguments(text: str, args_text: str, start: int) -> list[Argument]:
    args: list[Argument] = []
    if not args_text:
        return args
    kwarg_only = False
    pos = start
    for piece in args_text.split(", "):
        if piece == "*":
            if kwarg_only:
                raise SchemaError(
                    "invalid syntax: kwarg-only specifier * can only occur once", text, pos + 1
                )
            kwarg_only = True
        elif not piece:
            raise SchemaError("empty argument (arguments are separated by ', ')", text, pos + 1)
        else:
            try:
                args.append(argument_piece(piece, kwarg_only))
            except PieceError as e:
                raise SchemaError(e.reason, text, pos + e.offset + 1) from None
        pos += len(piece) + 2
    if args_text.endswith("*"):
        raise SchemaError(
            "kwarg-only specifier * must be followed by at least one argument", text, pos - 2
        )
    return args


@functools.lru_cache(maxsize=4096)
def arguments_piece(args_text: str) -> tuple[Argument, ...]:
    """Parse a whole argument list (fast path; errors are located by ``_arguments``)."""
    if not args_text:
        return ()
    pieces = args_text.split(", ")
    if "*" not in pieces:
        return tuple([argument_piece(p, False) for p in pieces])
    star = pieces.index("*")
    keyword = pieces[star + 1 :]
    if not keyword or "*" in keyword:
        raise PieceError("bad kwarg-only specifier")
    positional = [argument_piece(p, False) for p in pieces[:star]]
    return tuple(positional + [argument_piece(p, True) for p in keyword])


def _parse_schema(text: str) -> FunctionSchema:
    match = _DECL_RE.fullmatch(text)
    if match is None:
        raise _decl_error(text)
    name_text, args_text, returns_text = match.groups()
    try:
        name = operator_name_piece(name_text)
    except PieceError as e:
        raise SchemaError(e.reason, text, e.offset + 1) from None
    try:
        args = arguments_piece(args_text)
    except PieceError:
        _arguments(text, args_text, len(name_text) + 1)  # raises the located error
        raise SchemaError("invalid argument list", text, len(name_text) + 2) from None
    try:
        returns = returns_piece(returns_text)
    except PieceError as e:
        raise SchemaError(e.reason, text, len(text) - len(returns_text) + e.offset + 1) from None
    try:
        schema = FunctionSchema(name, args, returns)
    except SchemaError as e:
        raise SchemaError(e.reason, text, e.column) from None
    object.__setattr__(schema, "_text", text)
    return schema


_cached_parse = functools.lru_cache(maxsize=8192)(_parse_schema)


def parse_schema(text: str) -> FunctionSchema:
    """Parse a function schema in native_functions.yaml syntax.

    >>> s = parse_schema("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    >>> str(s.name), [a.name for a in s.arguments], [a.kwarg_only for a in s.arguments]
    ('add.Tensor', ['self', 'other', 'alpha'], [False, False, True])
    >>> parse_schema("add(Tensor self,Tensor other) -> Tensor")
    Traceback (most recent call last):
    ...
    tensordispatch.schema.errors.SchemaError: invalid function schema ... at column 5: ...
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_schema expects a str, got {type(text).__name__}")
    return _cached_parse(text)


def parse_alias_info(text: str) -> AliasInfo:
    """Parse an alias annotation such as ``a!`` or ``a -> *``.

    >>> parse_alias_info("a -> *")
    AliasInfo(before_set=('a',), after_set=('*',), is_write=False)
    """
    try:
        return alias_piece(text)
    except PieceError as e:
        raise SchemaError(e.reason, text, e.offset + 1, "alias annotation") from None


def parse_argument(text: str, kwarg_only: bool = False) -> Argument:
    """Parse one argument such as ``Tensor(a!) out`` or ``int[2] stride=1``.

    >>> arg = parse_argument("Tensor(a!) out", kwarg_only=True)
    >>> arg.name, str(arg.type), str(arg.alias_info), arg.kwarg_only, arg.is_write
    ('out', 'Tensor', 'a!', True, True)
    """
    try:
        return argument_piece(text, kwarg_only)
    except PieceError as e:
        raise SchemaError(e.reason, text, e.offset + 1, "argument") from None


def parse_return(text: str) -> Return:
    """Parse one return such as ``Tensor(a!) values``.

    >>> r = parse_return("Tensor(a!) values")
    >>> r.name, str(r.type), r.is_write
    ('values', 'Tensor', True)
    """
    try:
        return return_piece(text)
    except PieceError as e:
        raise SchemaError(e.reason, text, e.offset + 1, "return") from None


def parse_operator_name(text: str) -> OperatorName:
    """Parse ``[ns::]name[.overload]``.

    >>> name = parse_operator_name("myns::__iand__.Scalar")
    >>> name.name.namespace, name.name.base, name.name.inplace, name.overload_name
    ('myns', 'and', True, 'Scalar')
    """
    try:
        return operator_name_piece(text)
    except PieceError as e:
        raise SchemaError(e.reason, text, e.offset + 1, "operator name") from None
