"""Default values of schema arguments: accepted spellings and their Python values.

The text of a default is kept verbatim on the Argument (printing must reproduce it); this
module checks its syntax at parse time and computes the value torch's own schema parser
reports (``Mean`` -> 1, ``long`` -> 4, ``int[2] x=1`` -> [1, 1], ``float x=1`` -> 1.0).

We are a little stricter than torchgen here, which does not look at defaults at all: an
identifier must be one of the enum words torch understands, and the rest must be a literal.
Every default in the 2.13 yaml passes; garbage is reported at parse time, not at first use.
"""

from __future__ import annotations

import functools
import re

from tensordispatch.schema.types import BaseTy, BaseType, ListType, OptionalType, Type

# Enum words torch's schema parser accepts as a default for any type.
_ENUM_WORDS: dict[str, int] = {
    "Mean": 1,  # at::Reduction::Mean
    "long": 4,
    "float": 6,
    "complex": 9,
    "strided": 0,
    "contiguous_format": 0,
}

# ScalarType names accepted (in addition) when the argument's type is ScalarType / ScalarType?.
_SCALAR_TYPE_WORDS: dict[str, int] = {
    "uint8": 0,
    "int8": 1,
    "short": 2,
    "int16": 2,
    "int": 3,
    "int32": 3,
    "int64": 4,
    "half": 5,
    "float16": 5,
    "float32": 6,
    "double": 7,
    "float64": 7,
    "chalf": 8,
    "complex32": 8,
    "cfloat": 9,
    "complex64": 9,
    "cdouble": 10,
    "complex128": 10,
    "bool": 11,
    "qint8": 12,
    "quint8": 13,
    "qint32": 14,
    "bfloat16": 15,
}

_NUMBER = r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_STRING = r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\""
_LITERAL = rf"(?:{_NUMBER}|{_STRING}|[A-Za-z_][A-Za-z0-9_]*)"
_INT_RE = re.compile(r"-?[0-9]+")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", "'": "'", '"': '"'}


@functools.cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(whole default, one literal), compiled on first use: compiling them costs ~1 ms, which
    ``import tensordispatch`` (it parses no schema) should not pay (issue 4)."""
    whole = re.compile(rf"{_LITERAL}|\[(?:{_LITERAL}(?:,{_LITERAL})*)?\]", re.DOTALL)
    return whole, re.compile(_LITERAL, re.DOTALL)


def _literals(text: str) -> list[str]:
    return _patterns()[1].findall(text)


def _is_scalar_type(t: Type) -> bool:
    while isinstance(t, (OptionalType, ListType)):
        t = t.elem
    return isinstance(t, BaseType) and t.name is BaseTy.ScalarType


def check_default(text: str, t: Type) -> str | None:
    """Return None if ``text`` is an acceptable default for type ``t``, else the reason."""
    if _patterns()[0].fullmatch(text) is None:
        return f"unrecognized default value {text} (expected None, True, False, a number, a quoted string, an enum word or a [list] without spaces)"
    for word in _literals(text):
        if word[0].isalpha() or word[0] == "_":
            if word in ("None", "True", "False", "true", "false") or word in _ENUM_WORDS:
                continue
            if word in _SCALAR_TYPE_WORDS and _is_scalar_type(t):
                continue
            return f"unrecognized default value {word} for type {t}"
    return None


def _unquote(text: str) -> str:
    body = text[1:-1]
    if "\\" not in body:
        return body
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            out.append(_ESCAPES.get(nxt, "\\" + nxt))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _scalar_value(text: str, elem: Type) -> object:
    if text == "None":
        return None
    if text in ("True", "true"):
        return True
    if text in ("False", "false"):
        return False
    if text[0] in "'\"":
        return _unquote(text)
    if text[0].isalpha() or text[0] == "_":
        word = _ENUM_WORDS.get(text)
        return _SCALAR_TYPE_WORDS[text] if word is None else word
    is_float_type = isinstance(elem, BaseType) and elem.name is BaseTy.float
    if _INT_RE.fullmatch(text) is not None and not is_float_type:
        return int(text)
    return float(text)


@functools.lru_cache(maxsize=1024)
def _value(text: str, t: Type) -> object:
    inner = t.elem if isinstance(t, OptionalType) else t
    if text == "None":
        return None
    if isinstance(inner, ListType):
        elem = inner.elem.elem if isinstance(inner.elem, OptionalType) else inner.elem
        if text.startswith("["):
            return tuple(_scalar_value(w, elem) for w in _literals(text))
        return (_scalar_value(text, elem),) * (inner.size or 1)
    if text == "[]" and inner.is_tensor_like():
        return None  # torchgen's legacy spelling of an absent optional tensor
    if text.startswith("["):
        return tuple(_scalar_value(w, inner) for w in _literals(text))
    return _scalar_value(text, inner)


def default_value(text: str | None, t: Type) -> object:
    """The Python value of default ``text`` for an argument of type ``t``.

    >>> from tensordispatch.schema.types import parse_type
    >>> default_value("1", parse_type("int[2]")), default_value("1", parse_type("float"))
    ([1, 1], 1.0)
    >>> default_value("'linear'", parse_type("str")), default_value("Mean", parse_type("int"))
    ('linear', 1)
    """
    if text is None:
        return None
    value = _value(text, t)
    return list(value) if isinstance(value, tuple) else value
