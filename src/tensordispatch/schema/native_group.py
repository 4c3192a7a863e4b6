"""Rules across entries, and grouping NativeFunctions into NativeFunctionsGroup / ViewGroup.

torchgen checks these in `error_check_native_functions`, `get_grouped_native_functions`,
`get_grouped_by_view_native_functions` and the groups' constructors. Here every check names
the yaml line of the function it is about, and the loader collects one error per group
instead of stopping at the first.
"""

from __future__ import annotations

import keyword
from collections.abc import Iterable, Sequence

from tensordispatch.schema import OperatorName, SchemaKind
from tensordispatch.schema.native_model import (
    NativeFunction,
    NativeFunctionsGroup,
    NativeFunctionsViewGroup,
    SignatureKey,
    ViewSchemaKind,
)
from tensordispatch.schema.native_yaml import NativeFunctionsError, NativeIssue

# (operator, argument) pairs that predate the reserved-keyword rule.
_KEYWORD_EXCEPTIONS = frozenset(
    {("_has_compatible_shallow_copy_type", "from"), ("random_.from", "from"), ("uniform_", "from")}
)
_PYTHON_KEYWORDS = frozenset(keyword.kwlist)
# View ops that already had a hand-written copy before the `_copy` naming rule.
_EXPLICIT_VIEW_COPY_NAMES = {"narrow": "narrow_copy"}


def issue(f: NativeFunction, message: str) -> NativeIssue:
    return NativeIssue(f.loc.file, f.loc.line, str(f.func.name), message)


def _fail(f: NativeFunction, message: str) -> NativeFunctionsError:
    return NativeFunctionsError([issue(f, message)])


def kind_name(kind: SchemaKind) -> str:
    return f"SchemaKind.{kind.name}"


# ------------------------------------------------------------------------------------------
# Phase B: rules across entries


def check_across_entries(funcs: Sequence[NativeFunction]) -> list[NativeIssue]:
    """Delegates exist and are structured; no Python keywords; inplace views are named so."""
    by_name = {f.func.name: f for f in funcs}
    # Out-of-place base names, as torchgen keys them (not inplace, not `_functional`).
    bases = {
        (name.base, name.dunder_method)
        for name in (f.func.name.name for f in funcs)
        if not name.inplace and not name.functional_overload
    }
    issues: list[NativeIssue] = []
    for f in funcs:
        message = _delegate_problem(f, by_name) or _keyword_problem(f)
        if message is None and "inplace_view" in f.tags:
            message = _inplace_view_problem(f, bases)
        if message is not None:
            issues.append(issue(f, message))
    return issues


def _delegate_problem(f: NativeFunction, by_name: dict[OperatorName, NativeFunction]) -> str | None:
    target = f.structured_delegate
    if target is None:
        return None
    delegate = by_name.get(target)
    prefix = f"{f.func.name} is marked as a structured_delegate pointing to {target}"
    if delegate is None:
        return f"{prefix}, but {target} is missing."
    if not delegate.structured:
        return f"{prefix}, but {target} is not marked as structured. Consider adding 'structured=True' to the delegated operator"
    return None


def _keyword_problem(f: NativeFunction) -> str | None:
    for a in f.func.flat_all:
        if a.name in _PYTHON_KEYWORDS and (str(f.func.name), a.name) not in _KEYWORD_EXCEPTIONS:
            return f"Argument name '{a.name}' in function '{f.func.name}' is a reserved Python keyword."
    return None


def _inplace_view_problem(f: NativeFunction, bases: set[tuple[str, bool]]) -> str | None:
    name = f.func.name
    if str(name) in ("resize_", "resize_as_") or str(name.name) == "set_":
        return None
    if not name.name.inplace:
        return f"{name} is marked with tag: inplace_view, but it doesn't follow the naming convention for inplace ops - the codegen expects the base name to have a trailing underscore."
    if (name.name.base, name.name.dunder_method) not in bases:
        return f"{name} is marked with tag: inplace_view. The codegen expects there to be a corresponding out-of-place view op with the name '{name.name}' and matching schema, but it didn't find one."
    return None


# ------------------------------------------------------------------------------------------
# Grouping by signature()


def pre_group(
    funcs: Iterable[NativeFunction], issues: list[NativeIssue]
) -> dict[SignatureKey, dict[SchemaKind, NativeFunction]]:
    """Bucket functions by signature(), then by kind; a repeated kind is reported and dropped."""
    buckets: dict[SignatureKey, dict[SchemaKind, NativeFunction]] = {}
    for f in funcs:
        d = buckets.setdefault(f.signature_key(), {})
        kind = f.func.kind()
        if kind in d:
            issues.append(issue(f, f"Duplicate schema kind {kind_name(kind)} for {f.func}"))
            continue
        d[kind] = f
    return buckets


def group_native_functions(
    funcs: Sequence[NativeFunction], issues: list[NativeIssue]
) -> list[NativeFunction | NativeFunctionsGroup]:
    """torchgen's get_grouped_native_functions: groups where there is an out variant."""
    result: list[NativeFunction | NativeFunctionsGroup] = []
    for d in pre_group(funcs, issues).values():
        try:
            g = NativeFunctionsGroup.from_dict(d)
        except NativeFunctionsError as err:
            issues.extend(err.issues)
            continue
        if g is not None:
            result.append(g)
            continue
        generated = [f for f in d.values() if "generated" in f.tags]
        if generated:
            names = ", ".join(str(f.func.name) for f in d.values())
            issues.append(
                issue(
                    generated[0],
                    f"Generated NativeFunctions should have been grouped into NativeFunctionsGroup objects: {names}",
                )
            )
        result.extend(d.values())
    return result


def check_group(g: NativeFunctionsGroup) -> None:
    """NativeFunctionsGroup invariants (run by its constructor)."""
    sig = g.functional.signature_key()
    for f in g.functions():
        if f.signature_key() != sig:
            raise _fail(
                f,
                f"NativeFunctionsGroup constructed from two NativeFunctions that don't have matching signatures: {g.functional.signature()} != {f.signature()}",
            )
        if g.structured != f.part_of_structured_group:
            raise _fail(
                f,
                f"NativeFunctionsGroup constructed from structured and unstructured functions: {g.out.func.name} and {f.func.name}",
            )
    for member, kind in ((g.functional, SchemaKind.functional), (g.out, SchemaKind.out),
                         (g.inplace, SchemaKind.inplace), (g.mutable, SchemaKind.mutable)):  # fmt: skip
        if member is None:
            continue
        if member.func.kind() is not kind:
            got = kind_name(member.func.kind())
            raise _fail(member, f"expected a {kind.name} function here, got {got}")
        if member.namespace != g.functional.namespace:
            raise _fail(
                member,
                f"namespace {member.namespace} differs from the functional variant's ({g.functional.namespace}); all variants of one operator share a namespace",
            )
    if g.mutable is not None and not g.functional.func.name.name.functional_overload:
        raise _fail(
            g.functional,
            "functional.func.name.name.functional_overload must be True when mutable is not None",
        )
    if g.structured:
        _check_structured_group(g)
    _check_autogen(g)


def _check_structured_group(g: NativeFunctionsGroup) -> None:
    out = g.out
    if (
        out.has_composite_implicit_autograd_kernel
        or out.has_composite_implicit_autograd_nested_tensor_kernel
    ):
        raise _fail(out, "structured composite kernels are not supported")
    for f in (g.functional, g.inplace):
        if f is not None and f.structured_delegate != out.func.name:
            raise _fail(
                f,
                f"{f.func.name} delegates to {f.structured_delegate} but its actual delegate is {out.func.name}",
            )


def _check_autogen(g: NativeFunctionsGroup) -> None:
    generated = sorted(str(f.func.name) for f in g.functions() if "generated" in f.tags)
    expected = sorted({str(op) for f in g.functions() for op in f.autogen})
    generated_str = ", ".join(generated)
    expected_str = ", ".join(expected)
    if generated_str == expected_str:
        return
    owner = next((f for f in g.functions() if "generated" not in f.tags), g.out)
    if not expected and generated:
        last = list(g.functions())[-1]
        raise _fail(
            owner,
            f"The codegen expects to be able to generate '{generated_str}'. In order to generate them however, we expect them to be called out explicitly in the yaml. Please add an 'autogen: {generated_str}' line to the entry for {last.func.name}",
        )
    raise _fail(
        owner,
        f"The codegen expects to be able to generate '{generated_str}'. To do so, it expects a line: 'autogen: {generated_str}'. Instead, it found 'autogen: {expected_str}'",
    )


# ------------------------------------------------------------------------------------------
# Grouping views


def group_views(
    funcs: Sequence[NativeFunction], issues: list[NativeIssue]
) -> list[NativeFunction | NativeFunctionsViewGroup]:
    """torchgen's get_grouped_by_view_native_functions."""
    buckets: dict[SignatureKey, dict[object, NativeFunction]] = {}
    for f in funcs:
        try:
            view_kind = f.view_schema_kind
        except NativeFunctionsError as err:
            issues.extend(err.issues)
            continue
        slot: object = f.func.kind() if view_kind is ViewSchemaKind.non_aliasing else view_kind
        d = buckets.setdefault(f.view_signature_key(), {})
        other = d.get(slot)
        if other is not None:
            message = f"{f.func.name} and {other.func.name} (line {other.loc.line}) have the same view_signature() and are both {_slot_name(slot)}; only a view operator and its `_copy` operator may share one, so rename one of them"
            issues.append(issue(f, message))
            continue
        d[slot] = f
    result: list[NativeFunction | NativeFunctionsViewGroup] = []
    for d in buckets.values():
        view = d.pop(ViewSchemaKind.aliasing, None)
        if view is not None:
            try:
                result.append(
                    NativeFunctionsViewGroup(
                        view=view,
                        view_copy=d.pop(SchemaKind.functional, None),
                        view_inplace=d.pop(ViewSchemaKind.aliasing_inplace, None),
                    )
                )
            except NativeFunctionsError as err:
                issues.extend(err.issues)
        result.extend(d.values())
    return result


def _slot_name(slot: object) -> str:
    return f"{type(slot).__name__}.{getattr(slot, 'name', slot)}"


def gets_generated_view_copy(f: NativeFunction) -> bool:
    """A view op needs a `_copy` twin unless composite, an inplace view, or an `_inverse`."""
    return (
        f.is_view_op
        and not f.has_composite_implicit_autograd_kernel
        and "inplace_view" not in f.tags
        and not f.func.name.name.base.endswith("_inverse")
    )


def view_copy_name(f: NativeFunction) -> str:
    """`transpose.int` -> `transpose_copy.int`."""
    base = f.func.name.name.base
    copy = _EXPLICIT_VIEW_COPY_NAMES.get(base, f"{base}_copy")
    overload = f.func.name.overload_name
    return f"{copy}.{overload}" if overload else copy


def check_view_group(g: NativeFunctionsViewGroup) -> None:
    """NativeFunctionsViewGroup invariants (run by its constructor)."""
    view = g.view
    if not view.is_view_op:
        raise _fail(view, f"view is not a view op: {view.func.name}")
    if g.view_copy is None:
        if gets_generated_view_copy(view):
            raise _fail(
                view,
                f"{view.func.name} appears to be a new operator that aliases its inputs. The codegen expects you to add a corresponding operator to native_functions.yaml: {view_copy_name(view)}. See Note [view_copy NativeFunctions] for details.",
            )
    else:
        _check_view_copy(view, g.view_copy)
    inplace = g.view_inplace
    if inplace is None:
        return
    if view.signature_key() != inplace.signature_key():
        raise _fail(
            inplace,
            f"view and view_inplace signatures don't match: {view.signature()} != {inplace.signature()}",
        )
    for flag, key in (("has_composite_implicit_autograd_kernel", "CompositeImplicitAutograd"),
                      ("has_composite_implicit_autograd_nested_tensor_kernel",
                       "CompositeImplicitAutogradNestedTensor")):  # fmt: skip
        if getattr(view, flag) and not getattr(inplace, flag):
            raise _fail(
                inplace,
                f"{view.func.name} and {inplace.func.name} must either both have {key} kernels, or both not have composite kernels.",
            )


def _check_view_copy(view: NativeFunction, copy: NativeFunction) -> None:
    if not copy.func.name.name.base.endswith(("_copy", "_scatter")):
        raise _fail(copy, f"view_copy name must end with '_copy' or '_scatter': {copy.func.name}")
    if view.signature_key() != copy.view_signature_key():
        raise _fail(
            copy,
            f"view and view_copy signatures don't match: {view.signature()} != {copy.func.view_signature()}",
        )
    if "view_copy" not in copy.tags:
        raise _fail(
            copy,
            f"{(str(copy.func.name), str(set(view.tags)))} appears to be a view_copy operator. The codegen expects view_copy operators to be annotated with the 'view_copy' tag in native_functions.yaml. See Note [view_copy NativeFunction] for details.",
        )
