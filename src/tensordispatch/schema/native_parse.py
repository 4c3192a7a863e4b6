"""One native_functions.yaml entry -> a NativeFunction and its kernels (torchgen's from_yaml).

Checks are made in torchgen's order, so the first rule an entry breaks is reported with
torchgen's wording. Entries are independent: the loader collects one error per bad entry.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import NamedTuple, cast

from tensordispatch.schema import Argument, FunctionSchema, OperatorName, SchemaError, parse_schema
from tensordispatch.schema.native_keys import (
    CEA,
    CEANF,
    CIA,
    CIA_NT,
    NATIVE_DISPATCH_KEYS,
    STRUCTURED_DISPATCH_KEYS,
    UFUNC_DISPATCH_KEYS,
    is_dispatch_key,
    is_native_dispatch_key,
)
from tensordispatch.schema.native_model import (
    DTYPE_CLASSES,
    SCALAR_TYPES,
    BackendMetadata,
    DeviceCheckType,
    Location,
    NativeFunction,
    Precompute,
    UfuncInnerLoop,
    UfuncKey,
    Variant,
)

DEFAULT_KERNEL_NAMESPACE = "at::native"

# Every key an entry may have; anything else is reported as leftover.
ENTRY_KEYS: tuple[str, ...] = (
    "func", "variants", "dispatch", "structured", "structured_delegate", "structured_inherits",
    "precomputed", "ufunc_inner_loop", "device_guard", "device_check", "python_module",
    "category_override", "manual_kernel_registration", "manual_cpp_binding", "autogen", "tags",
    "cpp_no_default_args", "use_const_ref_for_mutable_tensors",
)  # fmt: skip

_VARIANTS = {"function": Variant.function, "method": Variant.method}
# Parsed `variants:` values (only valid ones are stored, and there are few).
_VARIANTS_CACHE: dict[str, frozenset[Variant]] = {}

# One entry's kernels: dispatch key -> metadata, in yaml order.
EntryKernels = dict[str, BackendMetadata]


class EntryError(Exception):
    """Internal: a rule one entry breaks; the loader adds file, line and subject."""

    def __init__(self, message: str, subject: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.subject = subject


def cpp_name(func: FunctionSchema) -> str:
    """The C++ API name of an operator: its base name, plus `_out` for out= overloads."""
    name = str(func.name.name)
    return name + "_out" if func.out else name


def _bool(entry: dict[object, object], key: str, default: bool, message: str = "") -> bool:
    value = entry.pop(key, default)
    if not isinstance(value, bool):
        raise EntryError(f"{message or 'not a bool'}: {value}")
    return value


def _opt_str(entry: dict[object, object], key: str) -> str | None:
    value = entry.pop(key, None)
    if not (value is None or isinstance(value, str)):
        raise EntryError(f"not a str: {value}")
    return value


def _split_namespace(text: str, max_level: int, default: str) -> tuple[str, str]:
    if "::" not in text:
        return default, text
    parts = text.split("::")
    namespace = "::".join(parts[:-1])
    if len(namespace.split("::")) > max_level:
        raise EntryError(
            f"Codegen doesn't support more than {max_level} level(s) of custom namespace. Got {namespace}."
        )
    return namespace or default, parts[-1]


def _parse_operator_name(text: str) -> OperatorName:
    try:
        return OperatorName.parse(text)
    except SchemaError as err:
        raise EntryError(str(err)) from None


def _parse_argument(text: str) -> Argument:
    try:
        return Argument.parse(text)
    except SchemaError as err:
        raise EntryError(f"invalid precomputed argument '{text}': {err.reason}") from None


def parse_precomputed(src: object) -> Precompute:
    """`precomputed` lines: `arg -> TYPE name, ...`, then optionally one line of added values."""
    if not isinstance(src, list) or not src:
        raise EntryError(f"precomputed must be a non-empty list, got {src!r}")
    if not all(isinstance(item, str) for item in src):
        bad = next(item for item in src if not isinstance(item, str))
        raise EntryError(f"precomputed item must be a str, got {type(bad)}")
    lines = [str(item) for item in src]
    add: tuple[Argument, ...] = ()
    if " -> " not in lines[-1]:
        add = tuple(_parse_argument(name.strip()) for name in lines[-1].split(","))
        lines = lines[:-1]
    replace: list[tuple[str, tuple[Argument, ...]]] = []
    for item in lines:
        if " -> " not in item:
            raise EntryError(
                f"precomputed parameters without replacement are allowed only in the last line, got: {item}"
            )
        arg, _, with_list = item.partition(" -> ")
        if " " in arg:
            raise EntryError(f"illegal kernel param name '{arg}' in precomputed parameters")
        replace.append((arg, tuple(_parse_argument(n.strip()) for n in with_list.split(","))))
    # torchgen keys the replacements by argument and reprints them: a repeated argument or a
    # line not in the printed form (`arg -> TYPE name, TYPE name`) does not survive that
    by_arg = dict(replace)
    printed = [f"{arg} -> {', '.join(str(a) for a in args)}" for arg, args in by_arg.items()]
    if printed != lines:
        raise EntryError(
            f"precomputed lines must name each argument once, in the form 'arg -> TYPE name, "
            f"...': read {lines}, which prints as {printed}"
        )
    for a in add + tuple(a for _, args in replace for a in args):
        if a.name.upper() == a.name:
            raise EntryError(f"precomputed argument name must not be all uppercase: {a.name}")
    return Precompute(replace=tuple(replace), add=add)


def parse_ufunc_inner_loop(raw: object) -> tuple[UfuncInnerLoop, ...]:
    """`ufunc_inner_loop`: a `name (dtypes)` string (Generic) or a map UfuncKey -> string."""
    if isinstance(raw, str):
        return (_ufunc_loop(raw, UfuncKey.Generic),)
    if not isinstance(raw, dict):
        raise EntryError(f"ufunc_inner_loop not str or dict: {raw}")
    loops = []
    for k, value in raw.items():
        if not isinstance(k, str):
            raise EntryError(f"ufunc_inner_loop key is not a str: {k}")
        if not isinstance(value, str):
            raise EntryError(f"ufunc_inner_loop value is not a str: {value}")
        if k not in UfuncKey.__members__:
            raise EntryError(f"unknown ufunc key {k}")
        loops.append(_ufunc_loop(value, UfuncKey[k]))
    return tuple(loops)


def _ufunc_loop(value: str, key: UfuncKey) -> UfuncInnerLoop:
    name, _, dtypes = value.partition(" ")
    if not dtypes.startswith("("):
        raise EntryError(f"expected '(' at start of supported_dtypes, got: {dtypes}")
    if not dtypes.endswith(")"):
        raise EntryError(f"expected ')' at end of supported_dtypes, got: {dtypes}")
    supported: dict[str, None] = {}
    for item in dtypes[1:-1].split(", "):
        if item in DTYPE_CLASSES:
            supported.update(dict.fromkeys(DTYPE_CLASSES[item]))
        elif item in SCALAR_TYPES:
            supported[item] = None
        else:
            raise EntryError(f"unknown dtype {item}")
    return UfuncInnerLoop(name=name, supported_dtypes=tuple(supported), ufunc_key=key)


def _variants(entry: dict[object, object]) -> frozenset[Variant]:
    text = entry.pop("variants", "function")
    if not isinstance(text, str):
        raise EntryError(f"variants is not a str: {text}")
    cached = _VARIANTS_CACHE.get(text)
    if cached is not None:
        return cached
    found = set()
    for word in text.split(", "):
        if word not in _VARIANTS:
            raise EntryError(f"illegal variant {word}")
        found.add(_VARIANTS[word])
    _VARIANTS_CACHE[text] = result = frozenset(found)
    return result


def _tags(entry: dict[object, object], func: FunctionSchema, namespace: str,
          valid_tags: frozenset[str]) -> frozenset[str]:  # fmt: skip
    raw = entry.pop("tags", [])
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list):
        raise EntryError(f"tags is not a list: {raw}")
    tags = list(raw)
    if namespace == "aten" and "pt2_compliant_tag" in valid_tags:
        tags.append("pt2_compliant_tag")
    if func.out and "out" in valid_tags:
        tags.append("out")
    if func.name.name.inplace and "inplace" in valid_tags:
        tags.append("inplace")
    for t in tags:
        if not valid_tags:
            raise EntryError("valid_tags is empty")
        if t not in valid_tags:
            hint = difflib.get_close_matches(str(t), sorted(valid_tags), n=1)
            suffix = f" (did you mean '{hint[0]}'?)" if hint else ""
            raise EntryError(f"illegal tag {t}{suffix}")
    return frozenset(cast("list[str]", tags))  # every tag was found in valid_tags


def _dispatch(
    raw: object,
    func: FunctionSchema,
    structured: bool,
    manual_kernel_registration: bool,
    ignore_keys: frozenset[str],
) -> tuple[EntryKernels, int]:
    """The explicit `dispatch:` table: kernels by key, and how many keys were written."""
    if not isinstance(raw, dict):
        raise EntryError(f"dispatch is not a dict: {raw}")
    if manual_kernel_registration:
        raise EntryError(
            "cannot specify both manual_kernel_registration and dispatch; with manual registration, dispatch has no effect!"
        )
    kernels: EntryKernels = {}
    written = 0
    redundant_cia = False
    for keys, value in raw.items():
        if not isinstance(keys, str):
            raise EntryError(f"illegal dispatch key '{keys}' in {raw}")
        if not isinstance(value, str):
            raise EntryError(f"illegal dispatch value '{value}' in {raw}")
        for piece in keys.split(","):
            key = piece.strip()
            written += 1
            if not is_dispatch_key(key):
                hint = difflib.get_close_matches(key, _KEY_HINTS, n=1)
                suffix = f" (did you mean '{hint[0]}'?)" if hint else ""
                raise EntryError(f"unknown dispatch key {key}{suffix}")
            if key in ignore_keys:
                continue
            if not is_native_dispatch_key(key):
                raise EntryError(
                    f"Dispatch key {key} of kernel {value} is not a supported dispatch key."
                )
            kernels[key] = _metadata(value, structured and key in STRUCTURED_DISPATCH_KEYS)
            if key == CIA and value == cpp_name(func):
                redundant_cia = True
    if written == 1 and redundant_cia:
        raise EntryError(
            "unnecessary dispatch table for this function; just delete the dispatch key entirely"
        )
    return kernels, written


# BackendMetadata by (yaml kernel text, structured): the same few thousand values recur, and
# the objects are immutable, so entries share them (bounded: cleared when large).
_METADATA: dict[tuple[str, bool], BackendMetadata] = {}


def _metadata(value: str, structured: bool) -> BackendMetadata:
    found = _METADATA.get((value, structured))
    if found is None:
        namespace, kernel = _split_namespace(value, 3, "at")
        found = BackendMetadata(kernel, structured, namespace + "::native")
        if len(_METADATA) > 8192:
            _METADATA.clear()
        _METADATA[value, structured] = found
    return found


_KEY_HINTS: list[str] = list(NATIVE_DISPATCH_KEYS)


def _implicit_kernels(func: FunctionSchema) -> EntryKernels:
    """No `dispatch:` and not structured: one CompositeImplicitAutograd kernel, by cpp name."""
    name = str(func.name.name)
    if (
        name.startswith("new_")
        or name.endswith("_like")
        or (func.tensor_options is not None and not func.has_tensor_arg())
    ):
        raise EntryError(
            f"expected {name} to have a CompositeExplicitAutograd dispatch entry, but there was no dispatch table.  Factory functions should not have implicit dispatch as they should not be decomposed for __torch_dispatch__"
        )
    return {CIA: BackendMetadata(cpp_name(func), False, DEFAULT_KERNEL_NAMESPACE)}


def _check_dispatch_shape(
    kernels: EntryKernels, written: int, func: FunctionSchema, delegate: OperatorName | None
) -> None:
    if (
        delegate is None
        and written == 1
        and kernels.keys() == {CIA}
        and not kernels[CIA].supports_symint()
    ):
        raise EntryError(
            f"unexpected name for singleton CompositeImplicitAutograd dispatch entry: expected {cpp_name(func)} but got {kernels[CIA]!r}.  Rename your implementation to the expected name, then delete the dispatch table"
        )


def _check_composites(kernels: EntryKernels) -> None:
    composites = [k for k in kernels if k in (CEA, CEANF, CIA, CIA_NT)]
    if len(composites) <= 1 or (
        len(composites) == 2 and CEANF not in composites and CIA_NT in composites
    ):
        return
    raise EntryError(
        "cannot specify more than one of CompositeExplicitAutograd, CompositeExplicitAutogradNonFunctional, or CompositeImplicitAutograd on a single kernel; each strictly subsumes the other.  If you wanted to provide an explicit autograd implementation, specify CompositeExplicitAutograd; otherwise specify CompositeImplicitAutograd only"
    )


def _autogen(entry: dict[object, object]) -> tuple[OperatorName, ...]:
    text = entry.pop("autogen", "")
    if not isinstance(text, str):
        raise EntryError(f"autogen is not a str: {text}")
    return () if text == "" else tuple(_parse_operator_name(x) for x in text.split(", "))


def _ufunc_kernels(
    loops: tuple[UfuncInnerLoop, ...], structured: bool, func: FunctionSchema, kernels: EntryKernels
) -> None:
    if not loops:
        return
    if not structured:
        raise EntryError("ufunc must be structured")
    for key in UFUNC_DISPATCH_KEYS:
        if key in kernels:
            raise EntryError(f"ufunc should not have explicit dispatch entry for {key}")
        kernels[key] = BackendMetadata(
            f"ufunc_{func.name.name}_{key}", True, DEFAULT_KERNEL_NAMESPACE
        )


def _leftover_message(entry: Mapping[object, object]) -> str:
    hints = []
    for key in entry:
        close = difflib.get_close_matches(str(key), ENTRY_KEYS, n=1)
        if close:
            hints.append(f"'{key}' -> did you mean '{close[0]}'?")
    suffix = f" ({'; '.join(hints)})" if hints else ""
    return f"leftover entries: {dict(entry)}{suffix}"


def parse_entry(
    raw: Mapping[object, object],
    loc: Location,
    valid_tags: frozenset[str],
    ignore_keys: frozenset[str] = frozenset(),
) -> tuple[NativeFunction, EntryKernels]:
    """Turn one yaml mapping into a NativeFunction and its kernels by dispatch key.

    Raises EntryError (internal) naming the first rule broken, in torchgen's order.
    """
    e = dict(raw)
    text = e.pop("func", None)
    if text is None:
        raise EntryError(f"Missed 'func' in {dict(raw)}")
    if not isinstance(text, str):
        raise EntryError(f"not a str: {text}")
    namespace, entity = _split_namespace(text, 1, "aten")
    try:
        func = parse_schema(entity)
    except SchemaError as err:
        raise EntryError(str(err), subject=text) from None
    try:
        return _parse_fields(e, func, namespace, loc, valid_tags, ignore_keys)
    except EntryError as err:
        err.subject = err.subject or str(func.name)
        raise


class _Options(NamedTuple):
    """The scalar keys of one entry, checked."""

    no_default_args: frozenset[str]
    const_ref: bool
    variants: frozenset[Variant]
    manual_kernel_registration: bool
    manual_cpp_binding: bool
    device_guard: bool
    device_check: DeviceCheckType
    structured: bool
    delegate: OperatorName | None
    inherits: str | None
    python_module: str | None
    category_override: str | None
    precomputed: Precompute | None


def _options(e: dict[object, object], func: FunctionSchema) -> _Options:
    no_default_args = e.pop("cpp_no_default_args", [])
    if not isinstance(no_default_args, list):
        raise EntryError(f"cpp_no_default_args is not a list: {no_default_args}")
    const_ref = _bool(
        e,
        "use_const_ref_for_mutable_tensors",
        False,
        "use_const_ref_for_mutable_tensors is not a bool",
    )
    if const_ref and func.out:
        raise EntryError("see https://github.com/pytorch/pytorch/issues/145522")
    variants = _variants(e)
    manual_kernel_registration = _bool(e, "manual_kernel_registration", False)
    manual_cpp_binding = _bool(e, "manual_cpp_binding", False)
    device_guard = _bool(e, "device_guard", True)
    device_check_text = _opt_str(e, "device_check")
    if device_check_text is not None and device_check_text not in DeviceCheckType.__members__:
        raise EntryError(f"illegal device_check: {device_check_text}")
    structured = _bool(e, "structured", False)
    delegate_text = _opt_str(e, "structured_delegate")
    if delegate_text is not None and "::" in delegate_text:
        raise EntryError(
            "namespace is not supported in structured delegate, using the same namespace as the native function"
        )
    inherits = _opt_str(e, "structured_inherits")
    if inherits is not None and "::" in inherits:
        raise EntryError(
            "namespace is not supported in structured inherits, using the same namespace as the native function"
        )
    python_module = _opt_str(e, "python_module")
    if python_module is not None and Variant.method in variants:
        raise EntryError("functions in modules cannot be methods")
    category_override = _opt_str(e, "category_override")
    raw_precomputed = e.pop("precomputed", None)
    if raw_precomputed is not None and structured is not True:
        raise EntryError(f"precomputed requires structured=True, got structured={structured}")
    return _Options(
        no_default_args=frozenset(str(a) for a in no_default_args),
        const_ref=const_ref,
        variants=variants,
        manual_kernel_registration=manual_kernel_registration,
        manual_cpp_binding=manual_cpp_binding,
        device_guard=device_guard,
        device_check=DeviceCheckType[device_check_text or "ExactSame"],
        structured=structured,
        delegate=None if delegate_text is None else _parse_operator_name(delegate_text),
        inherits=inherits,
        python_module=python_module,
        category_override=category_override,
        precomputed=parse_precomputed(raw_precomputed) if raw_precomputed else None,
    )


def _kernels(
    e: dict[object, object], func: FunctionSchema, o: _Options, ignore_keys: frozenset[str]
) -> EntryKernels:
    """The `dispatch:` table, or the implicit CompositeImplicitAutograd kernel."""
    raw_dispatch = e.pop("dispatch", None)
    if raw_dispatch is not None:
        kernels, written = _dispatch(
            raw_dispatch, func, o.structured, o.manual_kernel_registration, ignore_keys
        )
        _check_dispatch_shape(kernels, written, func, o.delegate)
    elif not o.structured and o.delegate is None:
        kernels = _implicit_kernels(func)
    else:
        kernels = {}
    _check_composites(kernels)
    return kernels


def _parse_fields(
    e: dict[object, object],
    func: FunctionSchema,
    namespace: str,
    loc: Location,
    valid_tags: frozenset[str],
    ignore_keys: frozenset[str],
) -> tuple[NativeFunction, EntryKernels]:
    o = _options(e, func)
    tags = _tags(e, func, namespace, valid_tags)
    kernels = _kernels(e, func, o, ignore_keys)
    autogen = _autogen(e)
    loops = parse_ufunc_inner_loop(e.pop("ufunc_inner_loop", {}))
    _ufunc_kernels(loops, o.structured, func, kernels)
    if e:
        raise EntryError(_leftover_message(e))
    if o.delegate is not None:
        for key in kernels:  # torchgen's order is a set's; we name the first one written
            if key in STRUCTURED_DISPATCH_KEYS:
                raise EntryError(
                    f"if structured_delegate, then must not have {key} in dispatch dictionary (it is delegated!)"
                )
    keys = kernels.keys()
    composite_only = keys == {CIA} or keys == {CIA_NT} or keys == {CIA, CIA_NT}
    f = NativeFunction(
        namespace=namespace,
        func=func,
        use_const_ref_for_mutable_tensors=o.const_ref,
        device_guard=o.device_guard,
        device_check=o.device_check,
        python_module=o.python_module,
        category_override=o.category_override,
        variants=o.variants,
        manual_kernel_registration=o.manual_kernel_registration,
        manual_cpp_binding=o.manual_cpp_binding,
        loc=loc,
        autogen=autogen,
        ufunc_inner_loop=loops,
        structured=o.structured,
        structured_delegate=o.delegate,
        structured_inherits=o.inherits,
        precomputed=o.precomputed,
        cpp_no_default_args=o.no_default_args,
        is_abstract=o.delegate is not None or not composite_only,
        has_composite_implicit_autograd_kernel=CIA in kernels,
        has_composite_implicit_autograd_nested_tensor_kernel=CIA_NT in kernels,
        has_composite_explicit_autograd_kernel=CEA in kernels,
        has_composite_explicit_autograd_non_functional_kernel=CEANF in kernels,
        tags=tags,
    )
    return f, kernels
