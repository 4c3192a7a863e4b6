"""Reading and validating a backend yaml (torchgen's parse_backend_yaml, same rules and order).

Two steps: `read_backend_yaml` checks the keys and the shape of their values (no operator
knowledge), `build_external_backend` checks the operators against a parsed
native_functions.yaml, builds the backend and autograd BackendIndex and the kernel list.
The first failure raises BackendStubsError, in torchgen's order of checks (spec 5.2), so
one run gives one message. Each message starts with torchgen's own sentence; where that
sentence leaves the reader guessing, a second line adds the yaml line and what to do.

Differences from torchgen, on purpose (docs/BACKENDS.md): the unexpected-keys message lists
the keys really accepted (torchgen lists `extra_headers`, which it rejects, and omits
`use_out_as_primary` / `device_guard`); list entries, `class_name` and `cpp_namespace` get
their types checked (torchgen crashes or emits broken code later); a backend naming a key
that native_functions.yaml may use for its own kernels (CPU, Meta, ...) is a duplicate even
if this yaml has no kernel for it; a `symint` entry for an operator without SymInt fails
here, not during emission.
"""

from __future__ import annotations

import re
from typing import Any

import yaml  # type: ignore[import-untyped,unused-ignore]

from tensordispatch.codegen.backend_stubs.gen_lazy import (
    check_ir_ops,
    ir_ops_from_native,
    non_native_ir_ops,
)
from tensordispatch.codegen.backend_stubs.model import (
    BackendStubsError,
    BackendYaml,
    ExternalBackend,
    ExternalKernel,
    NonNativeOp,
    SynthesizedKernel,
)
from tensordispatch.codegen.backend_stubs.signature import KernelSignature
from tensordispatch.schema.errors import SchemaError
from tensordispatch.schema.model import FunctionSchema, OperatorName
from tensordispatch.schema.native import ParsedNativeFunctions
from tensordispatch.schema.native_keys import NATIVE_DISPATCH_KEYS, is_dispatch_key
from tensordispatch.schema.native_model import (
    BackendIndex,
    BackendMetadata,
    NativeFunction,
    NativeFunctionsGroup,
)

__all__ = ["ACCEPTED_KEYS", "TENSOR_OPTIONS", "build_external_backend", "read_backend_yaml"]

# Every top-level key a backend yaml may have, in the order the docs list them.
ACCEPTED_KEYS: tuple[str, ...] = (
    "backend", "class_name", "cpp_namespace", "supported", "autograd", "full_codegen",
    "non_native", "ir_gen", "symint", "use_out_as_primary", "device_guard",
)  # fmt: skip
_SafeLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MODULE_PATH = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*\Z")
_NON_NATIVE_KEYS = ("func", "opkind", "properties")
# Functional arguments a generated out= kernel fills from its out tensor (torch: empty.out).
TENSOR_OPTIONS = ("dtype", "layout", "device")


def _fail(message: str, *hints: str) -> BackendStubsError:
    return BackendStubsError("\n".join([message, *(f"  {h}" for h in hints)]))


def _entry_lines(text: str) -> dict[str, int]:
    """1-based lines of each top-level key and each item of a top-level list."""
    try:
        root = yaml.compose(text, Loader=_SafeLoader)
    except yaml.YAMLError:
        return {}
    lines: dict[str, int] = {}
    if isinstance(root, yaml.MappingNode):
        for key_node, value_node in root.value:
            key = str(key_node.value)
            lines[key] = key_node.start_mark.line + 1
            if isinstance(value_node, yaml.SequenceNode):
                for i, item in enumerate(value_node.value):
                    lines[f"{key}[{i}]"] = item.start_mark.line + 1
    return lines


def read_backend_yaml(text: str, path: str = "<string>") -> BackendYaml:
    """Check the keys of a backend yaml text and the types of their values.

    >>> y = read_backend_yaml("backend: XLA\\ncpp_namespace: torch_xla\\nsupported: [abs]\\n")
    >>> y.backend, y.class_name, y.supported, y.use_out_as_primary
    ('XLA', 'XLANativeFunctions', ('abs',), False)
    >>> read_backend_yaml("cpp_namespace: torch_xla\\n")
    Traceback (most recent call last):
    ...
    tensordispatch.codegen.backend_stubs.model.BackendStubsError: You must provide a value for "backend"
      "backend" is the dispatch key the kernels register under, e.g. XLA or PrivateUse1.
    """
    try:
        values = yaml.load(text, Loader=_SafeLoader)
    except yaml.YAMLError as err:
        raise _fail(f"{path} is not valid YAML: {err}") from None
    if not isinstance(values, dict):
        raise _fail(
            f"Expected yaml_values to be a dict, got {type(values)}",
            f"{path} must be a mapping with the keys {', '.join(ACCEPTED_KEYS)}.",
        )
    values = dict(values)
    lines = _entry_lines(text)
    backend = _pop_backend(values)
    class_name = _pop_class_name(values, backend)
    cpp_namespace = _pop_cpp_namespace(values)
    use_out_as_primary = _pop_bool(values, "use_out_as_primary")
    device_guard = _pop_bool(values, "device_guard")
    supported = _pop_names(values, "supported", lines, none_ok=True, show_type=True)
    symint = _pop_names(values, "symint", lines, none_ok=True, show_type=True)
    autograd = _pop_names(values, "autograd", lines, none_ok=False, show_type=False)
    full_codegen = _pop_names(values, "full_codegen", lines, none_ok=True, show_type=True)
    non_native = _pop_non_native(values, lines)
    ir_gen = _pop_names(values, "ir_gen", lines, none_ok=True, show_type=True)
    if values:
        raise _fail(
            f"{path} contains unexpected keys: {', '.join(str(k) for k in values)}. Only the following keys are supported: {', '.join(ACCEPTED_KEYS)}"
        )
    return BackendYaml(
        path=path,
        backend=backend,
        class_name=class_name,
        cpp_namespace=cpp_namespace,
        use_out_as_primary=use_out_as_primary,
        device_guard=device_guard,
        supported=supported + full_codegen,
        autograd=autograd,
        symint=frozenset(symint),
        full_codegen=full_codegen,
        ir_gen=ir_gen,
        non_native=non_native,
        lines=tuple(sorted(lines.items())),
    )


def _pop_backend(values: dict[Any, Any]) -> str:
    backend = values.pop("backend", None)
    if backend is None or backend == "":
        raise _fail(
            'You must provide a value for "backend"',
            '"backend" is the dispatch key the kernels register under, e.g. XLA or PrivateUse1.',
        )
    if not isinstance(backend, str):
        raise _fail(
            f'"backend" must be a dispatch key name such as XLA or PrivateUse1, but got {backend!r} (of type {type(backend).__name__})'
        )
    return backend


def _pop_class_name(values: dict[Any, Any], backend: str) -> str:
    class_name = values.pop("class_name", None)
    if class_name is None:
        return f"{backend}NativeFunctions"
    if not isinstance(class_name, str) or not class_name.isidentifier():
        raise _fail(
            f'"class_name" must be a Python class name (an identifier), but got {class_name!r}',
            "It names the class in the kernel module whose static methods are the kernels.",
        )
    return class_name


def _pop_cpp_namespace(values: dict[Any, Any]) -> str:
    namespace = values.pop("cpp_namespace", None)
    if namespace is None or (isinstance(namespace, str) and not namespace.strip()):
        raise _fail(
            'You must provide a value for "cpp_namespace"',
            '"cpp_namespace" is the Python module that holds the kernels, e.g. my_backend.kernels.',
        )
    if not isinstance(namespace, str) or not _MODULE_PATH.match(namespace):
        raise _fail(
            f'"cpp_namespace" must name the Python module that holds the kernels (dotted identifiers, e.g. my_backend.kernels), but got {namespace!r}'
        )
    return namespace


def _pop_bool(values: dict[Any, Any], key: str) -> bool:
    value = values.pop(key, False)
    if not isinstance(value, bool):
        raise _fail(f"You must provide either True or False for {key}. Provided: {value}")
    return value


def _pop_names(
    values: dict[Any, Any], key: str, lines: dict[str, int], *, none_ok: bool, show_type: bool
) -> tuple[str, ...]:
    raw = values.pop(key, [])
    if raw is None and none_ok:
        return ()
    if not isinstance(raw, list):
        shown = f"{raw} (of type {type(raw)})" if show_type else f"{raw}"
        raise _fail(
            f'expected "{key}" to be a list, but got: {shown}',
            f'Write "{key}" as a yaml list, one "- name[.overload]" per line.',
        )
    for i, item in enumerate(raw):
        if not isinstance(item, str):
            where = lines.get(f"{key}[{i}]")
            at = f" (line {where})" if where else ""
            raise _fail(
                f'"{key}" entry {i}{at} must be an operator name such as add.Tensor, but got {item!r} (of type {type(item).__name__})'
            )
    return tuple(raw)


def _pop_non_native(values: dict[Any, Any], lines: dict[str, int]) -> tuple[NonNativeOp, ...]:
    raw = values.pop("non_native", [])
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise _fail(f'expected "non_native" to be a list, but got: {raw} (of type {type(raw)})')
    ops = []
    for i, item in enumerate(raw):
        where = lines.get(f"non_native[{i}]")
        at = f" (line {where})" if where else ""
        if not isinstance(item, dict) or not isinstance(item.get("func"), str):
            raise _fail(
                f'"non_native" entry {i}{at} must be a mapping with a "func" schema string, but got {item!r}'
            )
        extra = [str(k) for k in item if k not in _NON_NATIVE_KEYS]
        if extra:
            raise _fail(
                f'"non_native" entry {i}{at} has unexpected keys: {", ".join(extra)}. Only the following keys are supported: {", ".join(_NON_NATIVE_KEYS)}'
            )
        try:
            FunctionSchema.parse(item["func"])
        except SchemaError as err:
            raise _fail(f'"non_native" entry {i}{at} has an invalid schema: {err}') from None
        props = item.get("properties") or []
        opkind = item.get("opkind")
        ops.append(NonNativeOp(item["func"], None if opkind is None else str(opkind),
                               tuple(str(p) for p in props)))  # fmt: skip
    return tuple(ops)


# ----- against native_functions.yaml --------------------------------------------------------


def _cpp_kernel_name(f: NativeFunction, symint: bool) -> str:
    """torchgen's external kernel name (dispatcher name): used in its messages."""
    name = str(f.func.name.name) + ("_symint" if symint else "")
    return name + "_out" if f.func.is_out_fn() else name


def _parse_key(backend: str, hint: str) -> str:
    if not is_dispatch_key(backend):
        raise _fail(f"unknown dispatch key {backend}", hint)
    return backend


def _lookup(
    y: BackendYaml, key: str, names: tuple[str, ...], by_name: dict[OperatorName, NativeFunction],
    native_path: str,
) -> dict[OperatorName, NativeFunction]:  # fmt: skip
    found: dict[OperatorName, NativeFunction] = {}
    for i, text in enumerate(names):
        try:
            op = OperatorName.parse(text)
        except SchemaError:
            op = None
        f = by_name.get(op) if op is not None else None
        if f is None:
            line = y.line_of(f"{key}[{i}]")
            where = f"{y.path}:{line}" if line else y.path
            raise _fail(
                f"Found an invalid operator name: {text}",
                f'{where}: "{key}" lists {text}, which is not an operator of {native_path}; write name[.overload] as that file does, e.g. add.Tensor.',
            )
        found[f.func.name] = f
    return found


def _index(y: BackendYaml, key: str, ops: dict[OperatorName, NativeFunction]) -> BackendIndex:
    metadata = {
        name: BackendMetadata(_cpp_kernel_name(f, str(name) in y.symint), False, y.cpp_namespace)
        for name, f in ops.items()
    }
    return BackendIndex(key, y.use_out_as_primary, y.device_guard, True, metadata)


def build_external_backend(
    y: BackendYaml, native: ParsedNativeFunctions, *, synthesize: bool = True
) -> ExternalBackend:
    """Check a backend yaml's operators against native_functions.yaml and build the model.

    `synthesize=False` turns off the generated out=/inplace kernels (as use_out_as_primary).

    >>> from tensordispatch.schema.native import load_native_functions
    >>> y = read_backend_yaml("backend: XLA\\ncpp_namespace: torch_xla\\nsupported: [abs]\\n")
    >>> b = build_external_backend(y, load_native_functions())
    >>> [k.name for k in b.kernels], [str(s.f.func.name) for s in b.synthesized]
    (['abs'], ['abs.out', 'abs_'])
    """
    by_name = {f.func.name: f for f in native.native_functions}
    supported_ops = autograd_ops = None
    backend_key = autograd_key = None
    indices = dict(native.backend_indices)
    if y.supported:
        hint = f'The provided value for "backend" must be a valid DispatchKey, but got {y.backend}.'
        backend_key = _parse_key(y.backend, hint)
        supported_ops = _lookup(y, "supported", y.supported, by_name, native.path)
        if backend_key in indices or backend_key in NATIVE_DISPATCH_KEYS:
            raise _fail(
                f"Duplicate backend key: {backend_key}",
                f"{backend_key} is a key native_functions.yaml gives its own kernels; an external backend needs its own key (e.g. PrivateUse1, XLA).",
            )
    if y.autograd:
        hint = f'The "autograd" key was specified, which indicates that you would like to override the behavior of autograd for some operators on your backend. However "Autograd{y.backend}" is not a valid DispatchKey.'
        autograd_key = _parse_key(f"Autograd{y.backend}", hint)
        autograd_ops = _lookup(y, "autograd", y.autograd, by_name, native.path)
        if autograd_key in indices:
            raise _fail(f"Duplicate autograd key: {autograd_key}")
    # lazy codegen builds node classes from the schemas of full_codegen and ir_gen ops
    _lookup(y, "ir_gen", y.ir_gen, by_name, native.path)
    lazy_ops: tuple[Any, ...] = ()
    if y.full_codegen or y.ir_gen or y.non_native:
        lazy_ops = tuple(ir_ops_from_native(y.full_codegen, y.ir_gen, native, y.path))
        lazy_ops += tuple(non_native_ir_ops(y.non_native))
        check_ir_ops(lazy_ops, y.path)
    backend_index = None if supported_ops is None else _index(y, y.backend, supported_ops)
    autograd_index = (
        None if autograd_ops is None else _index(y, f"Autograd{y.backend}", autograd_ops)
    )
    _check_mixing(native, backend_index, autograd_index)
    kernels: list[ExternalKernel] = []
    for key, ops in ((backend_key, supported_ops), (autograd_key, autograd_ops)):
        if key is None or ops is None:
            continue
        for name, f in ops.items():
            _check_symint(y, f)
            sig = KernelSignature.from_schema(f.func, symint=str(name) in y.symint)
            kernels.append(ExternalKernel(f, key, sig, str(name) in y.full_codegen))
    kernels.sort(key=lambda k: (k.dispatch_key != backend_key, k.name))
    synthesized = []
    if synthesize and not y.use_out_as_primary:
        synthesized = _synthesized(native, kernels)
    return ExternalBackend(
        y, backend_key, autograd_key, backend_index, autograd_index, tuple(kernels),
        tuple(synthesized), lazy_ops,
    )  # fmt: skip


def _check_symint(y: BackendYaml, f: NativeFunction) -> None:
    if str(f.func.name) in y.symint and not f.func.has_symint():
        raise _fail(
            f"attempted to define symint kernel for {y.backend} without SymInt in schema",
            f'{f.func.name} has no SymInt argument ({f.func}); remove it from "symint".',
        )


def _check_mixing(
    native: ParsedNativeFunctions, backend: BackendIndex | None, autograd: BackendIndex | None
) -> None:
    if backend is None or autograd is None:
        return
    for g in native.grouped:
        members = list(g.functions()) if isinstance(g, NativeFunctionsGroup) else [g]
        forward = [f for f in members if f.func.name in backend.index]
        backward = [f for f in members if f.func.name in autograd.index]
        if forward and backward:
            fk = backend.index[forward[0].func.name].kernel
            bk = autograd.index[backward[0].func.name].kernel
            fo, bo = forward[0].func.name, backward[0].func.name
            if fo == bo:
                ops = f'{fo} is listed under both "supported" and "autograd"'
            else:
                ops = f'Operators: {fo} under "supported", {bo} under "autograd"'
            raise _fail(
                f'Currently, all variants of an op must either be registered to a backend key, or to a backend\'s autograd key. They cannot be mix and matched. If this is something you need, feel free to create an issue! {fk} is listed under "supported", but {bk} is listed under "autograd".',
                f"{ops}; list every variant of {members[0].root_name} under one of the two keys.",
            )


def _synthesized(
    native: ParsedNativeFunctions, kernels: list[ExternalKernel]
) -> list[SynthesizedKernel]:
    have = {(k.f.func.name, k.dispatch_key): k for k in kernels}
    keys = list(dict.fromkeys(k.dispatch_key for k in kernels))
    result = []
    for g in native.groups:
        for key in keys:
            functional = have.get((g.functional.func.name, key))
            if functional is None:
                continue
            for f in (g.out, g.inplace):
                if f is not None and (f.func.name, key) not in have:
                    s = SynthesizedKernel(f, key, functional)
                    if synthesizable(s):
                        result.append(s)
    result.sort(key=lambda s: (keys.index(s.dispatch_key), str(s.f.func.name)))
    return result


def synthesizable(s: SynthesizedKernel) -> bool:
    """Whether a wrapper can be built: every functional argument is known, outputs match."""
    func, fn = s.f.func, s.functional.f.func
    names = {a.name for a in func.arguments}
    for a in fn.arguments:
        if a.name not in names and a.default is None and a.name not in TENSOR_OPTIONS:
            return False
    dests = [func.self_arg] if s.is_inplace else list(func.out)
    if len(func.returns) == 0:
        return len(dests) == 1 and dests[0] is not None and dests[0].type.is_list_like() is not None
    return len(func.returns) == len(dests)
