"""Reading native_functions.yaml-format text into (line, mapping) entries, safely and quickly.

This module owns only the YAML layer: it turns text into a list of entries, each the line of
its first key and the plain mapping written there. It knows nothing about schemas or kernels.

Note [Fast path for native_functions.yaml]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
torchgen loads the file with a PyYAML loader whose mapping hook runs in Python, to tag every
mapping with its line. That costs more than the rest of our whole pipeline. The real file is
a very regular subset of YAML (a list of flat mappings, with `dispatch`-style nested maps, a few
block or flow lists, plain scalars and trailing comments), so `_fast_entries` reads that subset
line by line. It gives up (returns None) on anything outside the subset, and then the text is
read by PyYAML's C safe loader, node by node, which is always correct. A test checks that both
readers agree on the real file and on every test input. Only the safe loader is ever used, so
Python object tags (`!!python/object/...`) are rejected, never constructed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import yaml  # type: ignore[import-untyped,unused-ignore]

# The loader classes: the C one when PyYAML was built with libyaml, else the pure-Python one.
_SafeLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# (line of the entry's first key, the entry's mapping as YAML gives it)
RawEntry = tuple[int, dict[object, object]]


@dataclass(frozen=True, slots=True)
class NativeIssue:
    """One problem found in a native_functions.yaml file, at the line of its entry.

    >>> str(NativeIssue("ops.yaml", 3, "add.Tensor", "illegal variant meth"))
    'ops.yaml:3: add.Tensor: illegal variant meth'
    """

    file: str
    line: int
    subject: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}"
        return (
            f"{where}: {self.subject}: {self.message}"
            if self.subject
            else f"{where}: {self.message}"
        )


class NativeFunctionsError(ValueError):
    """A native_functions.yaml file broke one or more rules; `issues` lists every one found.

    >>> e = NativeFunctionsError([NativeIssue("f.yaml", 1, "", "expected a list")])
    >>> print(e)
    f.yaml:1: expected a list
    >>> e.issues[0].line
    1
    """

    def __init__(self, issues: list[NativeIssue] | tuple[NativeIssue, ...]) -> None:
        self.issues: tuple[NativeIssue, ...] = tuple(issues)
        super().__init__("\n".join(str(i) for i in self.issues))


# ------------------------------------------------------------------------------------------
# Fast path (Note [Fast path for native_functions.yaml])

# Plain scalars that YAML 1.1 (PyYAML) resolves to something other than a string, and that
# start with a letter; anything starting with another character is left to PyYAML.
_BOOL_WORDS: dict[str, bool] = {
    **dict.fromkeys(("true", "True", "TRUE"), True),
    **dict.fromkeys(("false", "False", "FALSE"), False),
}
_NOT_PLAIN_STR = frozenset(
    ("yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF")
    + ("null", "Null", "NULL")
)
_KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_FLOW_ITEM_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*\Z|'[A-Za-z0-9_.]*'\Z|\"[A-Za-z0-9_.]*\"\Z")


class _GiveUp(Exception):
    """Raised inside the fast reader when the text leaves the supported subset."""


def _scalar(text: str) -> object:
    """The value of a plain block scalar, or _GiveUp when YAML might read it differently."""
    if " #" in text:
        text = text[: text.index(" #")].rstrip()
    if not text:
        return None
    first = text[0]
    if not (first.isalpha() or first == "_") or not first.isascii():
        if text == "[]":
            return []
        if text == "{}":
            return {}
        if first == "[" and text[-1] == "]":
            return _flow_list(text)
        raise _GiveUp
    if ": " in text or text[-1] == ":" or "\t" in text:
        raise _GiveUp
    if text in _BOOL_WORDS:
        return _BOOL_WORDS[text]
    if text in _NOT_PLAIN_STR:
        raise _GiveUp
    return text


def _flow_list(text: str) -> list[object]:
    items: list[object] = []
    for raw in text[1:-1].split(","):
        item = raw.strip()
        if not _FLOW_ITEM_RE.match(item):
            raise _GiveUp
        if item[0] in "'\"":
            items.append(item[1:-1])
        elif item in _BOOL_WORDS or item in _NOT_PLAIN_STR:
            raise _GiveUp
        else:
            items.append(item)
    return items


def _plain_key(key: str) -> bool:
    """A mapping key that YAML reads as this very string."""
    first = key[0]
    return (
        (first.isalpha() or first == "_")
        and first.isascii()
        and key not in _BOOL_WORDS
        and key not in _NOT_PLAIN_STR
        and " #" not in key
    )


def _key_value(body: str) -> tuple[str, str]:
    """Split `key: value` / `key:`; _GiveUp on anything else."""
    colon = body.find(":")
    if colon <= 0:
        raise _GiveUp
    key = body[:colon]
    rest = body[colon + 1 :]
    if rest and rest[0] != " ":
        raise _GiveUp
    return key, rest.strip()


def _fast_entries(text: str) -> list[RawEntry] | None:
    """Read the regular subset of YAML used by native_functions.yaml, or None if outside it."""
    try:
        return _fast_entries_or_give_up(text)
    except _GiveUp:
        return None


# Characters str.splitlines() treats as line breaks but YAML reads differently (or that we do
# not want to reason about): their presence sends the text to the safe loader.
_ODD_BREAKS = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def _fast_entries_or_give_up(text: str) -> list[RawEntry]:
    if any(c in text for c in _ODD_BREAKS):
        raise _GiveUp
    entries: list[RawEntry] = []
    entry: dict[object, object] | None = None
    open_key: str | None = None  # a key written as `key:` whose block value follows
    block: dict[object, object] | list[object] | None = None
    block_indent = 0
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        stripped = line.lstrip(" ")
        if not stripped or stripped[0] == "#":
            continue
        indent = len(line) - len(stripped)
        if "\t" in line:
            raise _GiveUp
        if indent == 0:
            if not line.startswith("- ") or line[2] == " ":
                raise _GiveUp
            entry = {}
            entries.append((lineno, entry))
            open_key, block = _put(entry, line[2:], lineno)
            continue
        if entry is None:
            raise _GiveUp
        if open_key is not None and (indent > 2 or (indent == 2 and stripped[:2] == "- ")):
            if block is None:  # first line of the block decides its shape and indent
                block_indent = indent
                block = [] if stripped[:2] == "- " else {}
                entry[open_key] = block
            if indent != block_indent:
                raise _GiveUp
            if isinstance(block, list):
                if stripped[:2] != "- ":
                    raise _GiveUp
                block.append(_scalar(stripped[2:].strip()))
            else:
                key, value = _key_value(stripped)
                if key in block or not value or not _plain_key(key):
                    raise _GiveUp
                block[key] = _scalar(value)
            continue
        if indent != 2:
            raise _GiveUp
        open_key, block = _put(entry, stripped, lineno)
    if not entries:
        raise _GiveUp
    return entries


def _put(
    entry: dict[object, object], body: str, lineno: int
) -> tuple[str | None, dict[object, object] | list[object] | None]:
    """Store one `key: value` line of an entry; return the key if its value is a block."""
    colon = body.find(":")
    key = body[:colon]
    if colon <= 0 or key in entry or not _plain_entry_key(key):
        raise _GiveUp
    value = body[colon + 1 :]
    if value:
        if value[0] != " ":
            raise _GiveUp
        value = value.strip()
    if value and value[0] != "#":
        entry[key] = _scalar(value)
        return None, None
    entry[key] = None
    return key, None


# Verdicts of _plain_entry_key: the same few keys recur on every entry.
_ENTRY_KEY_OK: dict[str, bool] = {}


def _plain_entry_key(key: str) -> bool:
    """An entry key (`func`, `dispatch`, ...) that YAML reads as this very string."""
    ok = _ENTRY_KEY_OK.get(key)
    if ok is None:
        ok = bool(_KEY_RE.match(key)) and key not in _BOOL_WORDS and key not in _NOT_PLAIN_STR
        if len(_ENTRY_KEY_OK) < 4096:
            _ENTRY_KEY_OK[key] = ok
    return ok


# ------------------------------------------------------------------------------------------
# Safe loader path


def _yaml_error_issue(path: str, err: yaml.YAMLError) -> NativeIssue:
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    line = mark.line + 1 if mark is not None else 1
    problem = getattr(err, "problem", None) or str(err)
    tag = re.search(r"constructor for the tag '([^']*)'", problem)
    if tag is not None:
        message = f"YAML tag '{tag.group(1)}' is not allowed: native_functions.yaml is read with a safe loader that builds only lists, mappings, strings, numbers and booleans, never Python objects; remove the tag"
    else:
        context = getattr(err, "context", None)
        message = f"invalid YAML: {problem}" + (f" ({context})" if context else "")
    return NativeIssue(path, line, "", message)


def _safe_entries(text: str, path: str) -> tuple[list[RawEntry], list[NativeIssue]]:
    loader = _SafeLoader(text)
    try:
        try:
            root = loader.get_single_node()
        except yaml.YAMLError as err:
            return [], [_yaml_error_issue(path, err)]
        if not isinstance(root, yaml.SequenceNode):
            line = root.start_mark.line + 1 if root is not None else 1
            given = "an empty file" if root is None else f"a {root.id}"
            message = f"expected a YAML list of operator entries (`- func: ...`), got {given}; start each entry with `- func:`"
            return [], [NativeIssue(path, line, "", message)]
        return _construct_items(loader, root, path)
    finally:
        loader.dispose()


def _first_duplicate_key(node: yaml.Node) -> tuple[str, int] | None:
    """The first key written twice in one mapping under `node`, with its line, if any."""
    if isinstance(node, yaml.MappingNode):
        seen: set[object] = set()
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            if key is not None and key in seen:
                return str(key), key_node.start_mark.line + 1
            seen.add(key)
            found = _first_duplicate_key(value_node)
            if found is not None:
                return found
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            found = _first_duplicate_key(item)
            if found is not None:
                return found
    return None


def _construct_items(
    loader: yaml.BaseLoader, root: yaml.SequenceNode, path: str
) -> tuple[list[RawEntry], list[NativeIssue]]:
    entries: list[RawEntry] = []
    issues: list[NativeIssue] = []
    for node in root.value:
        line = node.start_mark.line + 1
        if not isinstance(node, yaml.MappingNode):
            message = f"expected a mapping with a `func:` key, got a {node.id}"
            issues.append(NativeIssue(path, line, "", message))
            continue
        subject = ""
        for key_node, value_node in node.value:
            if key_node.value == "func" and isinstance(value_node, yaml.ScalarNode):
                subject = str(value_node.value).split("(", 1)[0]
        duplicate = _first_duplicate_key(node)
        if duplicate is not None:
            key, key_line = duplicate
            message = f"duplicate key '{key}' in one mapping; keep only one of them"
            issues.append(NativeIssue(path, key_line, subject, message))
            continue
        try:
            data = loader.construct_object(node, deep=True)  # type: ignore[attr-defined,unused-ignore]
        except yaml.YAMLError as err:
            issue = _yaml_error_issue(path, err)
            issues.append(NativeIssue(path, issue.line, subject, issue.message))
            continue
        entries.append((line, data))
    return entries, issues


def read_entries(text: str, path: str = "<string>") -> tuple[list[RawEntry], list[NativeIssue]]:
    """Split native_functions.yaml text into entries, each with the line of its first key.

    Returns the entries that could be read and one issue per entry that could not (YAML
    syntax errors stop the reading: they are reported alone).

    >>> entries, issues = read_entries("- func: neg(Tensor self) -> Tensor\\n  variants: function")
    >>> entries
    [(1, {'func': 'neg(Tensor self) -> Tensor', 'variants': 'function'})]
    >>> read_entries("- func: f() -> ()\\n  x: !!python/name:os.system\\n", "a.yaml")[1][0].line
    2
    """
    fast = _fast_entries(text)
    if fast is not None:
        return fast, []
    return _safe_entries(text, path)
