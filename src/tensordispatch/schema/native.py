"""Loading a native_functions.yaml file into the data model codegen uses (torchgen's pipeline).

Pipeline, as torchgen's parse_native_yaml plus its two grouping passes:
read yaml entries -> one NativeFunction (+ kernels) per entry -> rules across entries ->
generate the variants `autogen` asks for -> one BackendIndex per dispatch key ->
NativeFunctionsGroups -> NativeFunctionsViewGroups.

Unlike torchgen, errors do not stop at the first: every bad entry is reported, each with the
file and line of its entry, and all are raised together as one NativeFunctionsError. Later
phases only run when the earlier ones found nothing (their errors would mostly be echoes).
There is no module-level cache: each call reads the file afresh.
"""

from __future__ import annotations

import collections
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from tensordispatch.schema import OperatorName
from tensordispatch.schema.native_generate import add_generated_native_functions
from tensordispatch.schema.native_group import (
    check_across_entries,
    group_native_functions,
    group_views,
)
from tensordispatch.schema.native_keys import DEVICE_GUARD_DISPATCH_KEYS
from tensordispatch.schema.native_model import (
    BackendIndex,
    BackendMetadata,
    Location,
    NativeFunction,
    NativeFunctionsGroup,
    NativeFunctionsViewGroup,
)
from tensordispatch.schema.native_parse import EntryError, parse_entry
from tensordispatch.schema.native_yaml import NativeFunctionsError, NativeIssue, read_entries

# The tags of torch 2.13's tags.yaml: the default set of valid `tags:` values.
DEFAULT_VALID_TAGS: frozenset[str] = frozenset(
    {
        "inplace_view", "pt2_compliant_tag", "view_copy", "dynamic_output_shape",
        "data_dependent_output", "generated", "nondeterministic_seeded",
        "nondeterministic_bitwise", "needs_exact_strides", "needs_contiguous_strides",
        "needs_fixed_stride_order", "flexible_layout", "core", "pointwise",
        "maybe_aliasing_or_mutating", "cudagraph_unsafe", "reduction", "inplace", "out",
        "out_variant",
    }
)  # fmt: skip

# The package's own operator file.
DEFAULT_NATIVE_FUNCTIONS_PATH = (
    Path(__file__).resolve().parent.parent / "ops" / "native_functions.yaml"
)


@dataclass(frozen=True, slots=True, repr=False)
class ParsedNativeFunctions:
    """Everything read from one native_functions.yaml file, checked and grouped.

    `native_functions` lists the yaml entries in order, then the generated variants;
    `grouped` is torchgen's get_grouped_native_functions result and `view_grouped` its
    get_grouped_by_view_native_functions result.
    """

    path: str
    entries: int
    native_functions: tuple[NativeFunction, ...]
    backend_indices: Mapping[str, BackendIndex]
    grouped: tuple[NativeFunction | NativeFunctionsGroup, ...]
    view_grouped: tuple[NativeFunction | NativeFunctionsViewGroup, ...]

    def __repr__(self) -> str:
        fields = [
            f"path={self.path!r}",
            f"entries={self.entries}",
            f"native_functions={len(self.native_functions)}",
            f"groups={len(self.groups)}",
            f"view_groups={len(self.view_groups)}",
            f"dispatch_keys={len(self.backend_indices)}",
        ]
        return f"ParsedNativeFunctions({', '.join(fields)})"

    @property
    def groups(self) -> tuple[NativeFunctionsGroup, ...]:
        return tuple(g for g in self.grouped if isinstance(g, NativeFunctionsGroup))

    @property
    def view_groups(self) -> tuple[NativeFunctionsViewGroup, ...]:
        return tuple(g for g in self.view_grouped if isinstance(g, NativeFunctionsViewGroup))

    def backend_index(self, dispatch_key: str) -> BackendIndex:
        """The index of a key; an empty `Undefined` index for a key with no kernels."""
        found = self.backend_indices.get(dispatch_key)
        if found is not None:
            return found
        return BackendIndex("Undefined", True, False, False, {})

    def counts(self) -> dict[str, int]:
        """Counts by kind, as `tensordispatch schema check` prints them."""
        groups = self.groups
        kinds = collections.Counter(f.func.kind().name for f in self.native_functions)
        result = {
            "entries": self.entries,
            "native functions": len(self.native_functions),
            "generated": sum(1 for f in self.native_functions if "generated" in f.tags),
            "groups": len(groups),
            "structured groups": sum(1 for g in groups if g.structured),
            "view groups": len(self.view_groups),
            "dispatch keys": len(self.backend_indices),
        }
        for kind in ("functional", "inplace", "out", "mutable", "scratch"):
            result[f"kind {kind}"] = kinds.get(kind, 0)
        return result


def parse_tags_yaml(text: str, path: str = "<string>") -> frozenset[str]:
    """The tag names of a tags.yaml text (a list of `{tag, desc}`, every desc non-empty).

    >>> sorted(parse_tags_yaml("- tag: core\\n  desc: Core ATen ops\\n"))
    ['core']
    """
    entries, issues = read_entries(text, path)
    tags: set[str] = set()
    for line, entry in entries:
        name = entry.get("tag")
        if not isinstance(name, str):
            issues.append(NativeIssue(path, line, "", f"expected a `tag:` string, got {name!r}"))
        elif not entry.get("desc"):
            issues.append(
                NativeIssue(path, line, name, f"Tag '{name}' must have a non-empty description")
            )
        else:
            tags.add(name)
    if issues:
        raise NativeFunctionsError(issues)
    return frozenset(tags)


def parse_native_functions(
    text: str,
    path: str = "<string>",
    *,
    valid_tags: Iterable[str] = DEFAULT_VALID_TAGS,
    ignore_keys: Iterable[str] = (),
    generate: bool = True,
) -> ParsedNativeFunctions:
    """Parse native_functions.yaml text; raise NativeFunctionsError listing every problem.

    >>> parsed = parse_native_functions('''
    ... - func: neg(Tensor self) -> Tensor
    ...   variants: function, method
    ...   dispatch:
    ...     CPU, CUDA: neg
    ... ''')
    >>> [str(f.func) for f in parsed.native_functions]
    ['neg(Tensor self) -> Tensor']
    >>> [(str(op), k.kernel) for op, k in parsed.backend_indices["CUDA"].index.items()]
    [('neg', 'neg')]
    """
    tags = frozenset(valid_tags)
    raw_entries, issues = read_entries(text, path)
    funcs: list[NativeFunction] = []
    kernels: dict[str, dict[OperatorName, BackendMetadata]] = {}
    ignored = frozenset(ignore_keys)
    for line, raw in raw_entries:
        loc = Location(path, line)
        try:
            f, by_key = parse_entry(raw, loc, tags, ignored)
        except EntryError as err:
            issues.append(NativeIssue(path, line, err.subject, err.message))
            continue
        except NativeFunctionsError as err:
            issues.extend(err.issues)
            continue
        funcs.append(f)
        for key, metadata in by_key.items():
            kernels.setdefault(key, {})[f.func.name] = metadata
    issues.extend(_duplicate_names(funcs))
    issues.extend(check_across_entries(funcs))
    _raise_if(issues)
    if generate:
        _raise_if(add_generated_native_functions(funcs, kernels))
    indices = {
        key: BackendIndex(key, True, key in DEVICE_GUARD_DISPATCH_KEYS, False, by_name)
        for key, by_name in kernels.items()
    }
    grouped = group_native_functions(funcs, issues)
    view_grouped = group_views(funcs, issues)
    _raise_if(issues)
    return ParsedNativeFunctions(
        path=path,
        entries=len(raw_entries),
        native_functions=tuple(funcs),
        backend_indices=MappingProxyType(indices),
        grouped=tuple(grouped),
        view_grouped=tuple(view_grouped),
    )


def _duplicate_names(funcs: list[NativeFunction]) -> list[NativeIssue]:
    seen: dict[object, NativeFunction] = {}
    issues = []
    for f in funcs:
        first = seen.setdefault(f.func.name, f)
        if first is not f:
            issues.append(
                NativeIssue(
                    f.loc.file,
                    f.loc.line,
                    str(f.func.name),
                    f"duplicate operator {f.func.name}: it is already declared at {first.loc}; give one of them another overload name",
                )
            )
    return issues


def _raise_if(issues: list[NativeIssue]) -> None:
    if issues:
        raise NativeFunctionsError(sorted(issues, key=lambda i: (i.file, i.line)))


def get_grouped_native_functions(
    funcs: Sequence[NativeFunction],
) -> list[NativeFunction | NativeFunctionsGroup]:
    """Group functions sharing a signature() that have an out= variant (torchgen's function).

    >>> parsed = load_native_functions()
    >>> len(get_grouped_native_functions(parsed.native_functions)) == len(parsed.grouped)
    True
    """
    issues: list[NativeIssue] = []
    grouped = group_native_functions(funcs, issues)
    _raise_if(issues)
    return grouped


def get_grouped_by_view_native_functions(
    funcs: Sequence[NativeFunction],
) -> list[NativeFunction | NativeFunctionsViewGroup]:
    """Pair each view operator with its `_copy` and inplace variants (torchgen's function).

    >>> parsed = load_native_functions()
    >>> grouped = get_grouped_by_view_native_functions(parsed.native_functions)
    >>> len(grouped) == len(parsed.view_grouped)
    True
    """
    issues: list[NativeIssue] = []
    grouped = group_views(funcs, issues)
    _raise_if(issues)
    return grouped


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        message = f"cannot read the file: {err}"
        raise NativeFunctionsError([NativeIssue(path, 1, "", message)]) from None


def load_native_functions(
    path: str | os.PathLike[str] | None = None,
    *,
    tags_path: str | os.PathLike[str] | None = None,
    valid_tags: Iterable[str] | None = None,
    ignore_keys: Iterable[str] = (),
    generate: bool = True,
) -> ParsedNativeFunctions:
    """Load, check and group a native_functions.yaml file (default: the package's own).

    Tags are checked against `tags_path` (a tags.yaml), else `valid_tags`, else torch 2.13's
    tag set. Raises NativeFunctionsError listing every problem with its file:line.

    >>> parsed = load_native_functions()
    >>> parsed.entries > 0 and all(f.namespace == "aten" for f in parsed.native_functions)
    True
    """
    shown = str(path) if path is not None else str(DEFAULT_NATIVE_FUNCTIONS_PATH)
    text = _read(shown)
    tags: Iterable[str]
    if tags_path is not None:
        tags = parse_tags_yaml(_read(str(tags_path)), str(tags_path))
    else:
        tags = DEFAULT_VALID_TAGS if valid_tags is None else valid_tags
    return parse_native_functions(text, shown, valid_tags=tags, ignore_keys=ignore_keys,
                                  generate=generate)  # fmt: skip


__all__ = [
    "DEFAULT_NATIVE_FUNCTIONS_PATH",
    "DEFAULT_VALID_TAGS",
    "BackendIndex",
    "BackendMetadata",
    "Location",
    "NativeFunction",
    "NativeFunctionsError",
    "NativeFunctionsGroup",
    "NativeFunctionsViewGroup",
    "NativeIssue",
    "ParsedNativeFunctions",
    "get_grouped_by_view_native_functions",
    "get_grouped_native_functions",
    "load_native_functions",
    "parse_native_functions",
    "parse_tags_yaml",
]
