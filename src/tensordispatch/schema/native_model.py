"""The native_functions.yaml data model: NativeFunction, its groups, and the per-key kernel index.

Everything here is immutable data plus the invariants torchgen checks when it builds the same
objects. A broken invariant raises NativeFunctionsError naming the yaml file and line of the
entry concerned, so the loader can collect them. Reading yaml lives in native_parse.py, and
variant generation and grouping in native_group.py; this module only defines the objects.

Differences from torchgen, on purpose: sets are frozensets and lists tuples (the objects are
hashable and cannot be mutated behind a cache); dispatch keys are plain strings (the dispatch
layer owns the enum); `ufunc_inner_loop` is a tuple of UfuncInnerLoop in yaml order.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType

from tensordispatch.schema import Argument, FunctionSchema, OperatorName, SchemaKind, Type
from tensordispatch.schema.native_keys import CEA, CEANF, CIA, CIA_NT
from tensordispatch.schema.native_yaml import NativeFunctionsError, NativeIssue
from tensordispatch.schema.signature import SIGNATURE_DEFAULT_PATCHES


class Variant(Enum):
    """Where an operator is exposed: a free function, a Tensor method, or both."""

    function = "function"
    method = "method"


class DeviceCheckType(Enum):
    """Whether generated wrappers check that all tensor arguments share one device."""

    NoCheck = "NoCheck"
    ExactSame = "ExactSame"


class ViewSchemaKind(Enum):
    """How an operator aliases its inputs (NativeFunction.view_schema_kind)."""

    aliasing = "aliasing"
    aliasing_inplace = "aliasing_inplace"
    non_aliasing = "non_aliasing"


class UfuncKey(Enum):
    """Keys of a `ufunc_inner_loop` map (Generic and ScalarOnly are the ones users write)."""

    CUDAFunctor = "CUDAFunctor"
    CUDAFunctorOnOther = "CUDAFunctorOnOther"
    CUDAFunctorOnSelf = "CUDAFunctorOnSelf"
    CPUScalar = "CPUScalar"
    CPUVector = "CPUVector"
    ScalarOnly = "ScalarOnly"
    Generic = "Generic"


# ScalarType names a ufunc loop may list, and the classes that stand for several of them.
SCALAR_TYPES: tuple[str, ...] = (
    "Byte", "Char", "Short", "Int", "Long", "Half", "Float", "Double", "ComplexHalf",
    "ComplexFloat", "ComplexDouble", "Bool", "BFloat16", "Float8_e5m2", "Float8_e5m2fnuz",
    "Float8_e4m3fn", "Float8_e4m3fnuz", "Float8_e8m0fnu",
)  # fmt: skip
_INTEGRAL = ("Byte", "Char", "Int", "Long", "Short")
_FLOATING = ("Float", "Double")
_COMPLEX = ("ComplexFloat", "ComplexDouble")
DTYPE_CLASSES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "Integral": _INTEGRAL,
        "Floating": _FLOATING,
        "Complex": _COMPLEX,
        "All": _INTEGRAL + _FLOATING,
        "AllAndComplex": _INTEGRAL + _FLOATING + _COMPLEX,
        "FloatingAndComplex": _FLOATING + _COMPLEX,
    }
)


@dataclass(frozen=True, slots=True)
class Location:
    """Where an entry was written: file and 1-based line of its first key."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True, slots=True)
class UfuncInnerLoop:
    """One `ufunc_inner_loop` item: the loop name and the dtypes it supports, in order."""

    name: str
    supported_dtypes: tuple[str, ...]
    ufunc_key: UfuncKey


@dataclass(frozen=True, slots=True)
class Precompute:
    """`precomputed`: kernel arguments replaced by values meta() computes, plus added ones."""

    replace: tuple[tuple[str, tuple[Argument, ...]], ...]
    add: tuple[Argument, ...]

    def to_list(self) -> list[str]:
        """The replacement lines as written (torchgen's to_list: the `add` line is left out)."""
        return [f"{k} -> {', '.join(str(a) for a in v)}" for k, v in self.replace]


@dataclass(frozen=True, slots=True)
class BackendMetadata:
    """One kernel for one operator under one dispatch key.

    >>> BackendMetadata("view_copy_out_symint", False, "at::native").supports_symint()
    True
    """

    kernel: str
    structured: bool
    cpp_namespace: str

    def supports_symint(self) -> bool:
        return "_symint" in self.kernel


def _fail(loc: Location, subject: object, message: str) -> NativeFunctionsError:
    return NativeFunctionsError([NativeIssue(loc.file, loc.line, str(subject), message)])


_VIEW_SUFFIXES = ("_copy", "_scatter")


_PATCHED_BASES = frozenset(name.split(".")[0] for name in SIGNATURE_DEFAULT_PATCHES)

# id(type) -> (type, str(type)). Holding the type keeps its id from being reused while the
# entry exists; types are interned by the parser, so this stays small (cleared when large).
_TYPE_TEXTS: dict[int, tuple[Type, str]] = {}


def _type_text(t: Type) -> str:
    """str(t), memoised: printing a type goes through an Enum property, slow in bulk."""
    hit = _TYPE_TEXTS.get(id(t))
    if hit is not None and hit[0] is t:
        return hit[1]
    if len(_TYPE_TEXTS) > 4096:
        _TYPE_TEXTS.clear()
    text = str(t)
    _TYPE_TEXTS[id(t)] = (t, text)
    return text


# A hashable stand-in for a FunctionSchema's signature() (see Note [Signature keys]).
SignatureKey = tuple[str, bool, tuple[tuple[str, str, "str | None", bool], ...], tuple[str, ...]]


def signature_key(func: FunctionSchema, strip_view: bool = False) -> SignatureKey:
    """A tuple equal for two schemas exactly when their signature() (or view_signature()) is.

    Note [Signature keys]
    ~~~~~~~~~~~~~~~~~~~~~
    Grouping buckets every function by signature() (twice) and by view_signature(). Building
    those FunctionSchemas (each validated) and hashing them (a frozen dataclass rehashes every
    nested field on each lookup) cost more than all the rest of loading. This key holds the
    same facts as plain strings and tuples, built without validation: the base name (with
    `_copy` / `_scatter` handled as view_signature does), the dunder flag, every non-out,
    non-TensorOptions argument as (name, type, default, keyword-only), and the return types
    followed by the written inputs that are not returned. A conformance test checks that it
    partitions the real file exactly as signature() does.

    >>> from tensordispatch.schema import parse_schema
    >>> k = signature_key(parse_schema("add_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)"))
    >>> out = "add.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)"
    >>> k == signature_key(parse_schema(out))
    True
    """
    base = func.name.name.base
    if strip_view:
        if base.endswith("_copy"):
            base = base.replace("_copy", "")
        elif base.endswith("_scatter"):
            base = base.replace("scatter", "inverse")
    returned = [r.alias_info for r in func.returns]
    returns = [_type_text(r.type) for r in func.returns]
    self_arg = func.self_arg
    written = [self_arg] if self_arg is not None else []
    for a in (*written, *func.out, *func.post_self_positional):
        info = a.alias_info
        if info is not None and info.is_write and info not in returned:
            returns.append(_type_text(a.type))
    patch = None
    if func.name.name.base in _PATCHED_BASES:
        patch = SIGNATURE_DEFAULT_PATCHES.get(str(func.name))
    options = func.tensor_options
    skip = {id(o) for o in options} if options else ()
    args = []
    for a in func.non_out:
        if skip and id(a) in skip:
            continue
        default = a.default
        if patch is not None and default is None:
            default = patch.get(a.name)
        args.append((a.name, _type_text(a.type), default, a.kwarg_only))
    return (base, func.name.name.dunder_method, tuple(args), tuple(returns))


@dataclass(frozen=True, slots=True)
class NativeFunction:
    """One operator of native_functions.yaml (an entry, or a variant generated from one).

    Kernels are not stored here: they live in the BackendIndex of each dispatch key.
    Build these with `load_native_functions` / `parse_native_entries`, which also check them.
    """

    namespace: str
    func: FunctionSchema
    use_const_ref_for_mutable_tensors: bool
    device_guard: bool
    device_check: DeviceCheckType
    python_module: str | None
    category_override: str | None
    variants: frozenset[Variant]
    manual_kernel_registration: bool
    manual_cpp_binding: bool
    loc: Location
    autogen: tuple[OperatorName, ...]
    ufunc_inner_loop: tuple[UfuncInnerLoop, ...]
    structured: bool
    structured_delegate: OperatorName | None
    structured_inherits: str | None
    precomputed: Precompute | None
    cpp_no_default_args: frozenset[str]
    is_abstract: bool
    has_composite_implicit_autograd_kernel: bool
    has_composite_implicit_autograd_nested_tensor_kernel: bool
    has_composite_explicit_autograd_kernel: bool
    has_composite_explicit_autograd_non_functional_kernel: bool
    tags: frozenset[str]
    # signature() and view_signature() keys of func, and signature() itself, computed once:
    # grouping asks for them several times per function (see Note [Signature keys]).
    _keys: tuple[SignatureKey, SignatureKey] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    _signature: FunctionSchema | None = field(default=None, init=False, repr=False, compare=False)
    _is_view: bool | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        message = self._broken_rule()
        if message is not None:
            raise _fail(self.loc, self.func.name, message)

    def _broken_rule(self) -> str | None:
        func = self.func
        kind = func.kind()
        if func.out and self.variants != {Variant.function}:
            return "Native functions with out arguments MUST be declared with only function variant; e.g., variants: function; otherwise you will tickle a Python argument binding bug (which usually manifests itself as the result variable being undefined.)"
        if self.structured and kind is not SchemaKind.out:
            return "Put structured field on the out= variant of a function; did you mean structured_delegate?"
        if self.structured_delegate is not None and kind is SchemaKind.out:
            return (
                "structured_delegate field not allowed on out= functions; did you mean structured?"
            )
        if (self.structured or self.structured_delegate is not None) and not self.device_guard:
            return "device_guard: False is not respected by structured kernels"
        if self.cpp_no_default_args:
            defaulted = {a.name for a in func.flat_all if a.default is not None}
            invalid = self.cpp_no_default_args - defaulted
            if invalid:
                shown = ", ".join(repr(x) for x in sorted(invalid))
                return f"Invalid cpp_no_default_args: {{{shown}}}"
        if self.structured_inherits is not None and not self.structured:
            return "structured_inherits must also imply structured: True"
        name = str(func.name)
        if name.startswith("_foreach") and self.device_check is not DeviceCheckType.NoCheck:
            return "foreach kernels fall back to slow path when tensor are on different devices, device_check not allowed to be enabled"
        if "nondeterministic_seeded" not in self.tags and self._looks_random(name):
            return f"nondeterministic_seeded tag missing for {name}"
        return None

    def _looks_random(self, name: str) -> bool:
        if "rand" in name:
            return True
        func = self.func
        # One join instead of a generator per argument; no name contains a space, so the
        # joined text has "dropout" exactly when some argument name does.
        arg_names = " ".join([a.name for a in func.arguments])
        if (
            ("dropout" in name or "dropout" in arg_names)
            and "backward" not in name
            and str(func.name.name) != "_cudnn_init_dropout_state"
        ):
            return True
        return func.has_generator_arg()

    def signature(self) -> FunctionSchema:
        """`func.signature()`, computed once per function."""
        sig = self._signature
        if sig is None:
            sig = self.func.signature()
            object.__setattr__(self, "_signature", sig)
        return sig

    def signature_key(self) -> SignatureKey:
        """signature_key(func): equal for two functions exactly when their signature() is."""
        keys = self._keys
        if keys is None:
            keys = self._compute_keys()
        return keys[0]

    def view_signature_key(self) -> SignatureKey:
        """signature_key(func, strip_view=True), the view_signature() counterpart."""
        keys = self._keys
        if keys is None:
            keys = self._compute_keys()
        return keys[1]

    def _compute_keys(self) -> tuple[SignatureKey, SignatureKey]:
        key = signature_key(self.func)
        # view_signature() differs from signature() only for these names.
        if self.func.name.name.base.endswith(_VIEW_SUFFIXES):
            keys = (key, signature_key(self.func, strip_view=True))
        else:
            keys = (key, key)
        object.__setattr__(self, "_keys", keys)
        return keys

    @property
    def is_view_op(self) -> bool:
        """Returns an alias of an input, is an inplace view, or has a `(a -> *)` argument."""
        found = self._is_view
        if found is None:
            func = self.func
            found = func.is_view or (
                "inplace_view" in self.tags and str(func.name) not in ("resize_", "resize_as_")
            )
            object.__setattr__(self, "_is_view", found)
        return found

    @property
    def view_schema_kind(self) -> ViewSchemaKind:
        if not self.is_view_op:
            return ViewSchemaKind.non_aliasing
        if self.func.name.name.inplace:
            if "inplace_view" not in self.tags:
                raise _fail(
                    self.loc, self.func.name, f"inplace_view tag missing for {self.func.name}"
                )
            return ViewSchemaKind.aliasing_inplace
        return ViewSchemaKind.aliasing

    @property
    def root_name(self) -> str:
        return self.func.name.name.base

    @property
    def part_of_structured_group(self) -> bool:
        return self.structured or self.structured_delegate is not None

    @property
    def has_composite_kernel(self) -> bool:
        return (
            self.has_composite_implicit_autograd_kernel
            or self.has_composite_explicit_autograd_kernel
            or self.has_composite_explicit_autograd_non_functional_kernel
        )


def composite_flags(keys: Mapping[str, object] | frozenset[str]) -> tuple[bool, bool, bool, bool]:
    """(CIA, CIA-NT, CEA, CEANF) presence among dispatch keys."""
    return CIA in keys, CIA_NT in keys, CEA in keys, CEANF in keys


@dataclass(frozen=True, slots=True)
class NativeFunctionsGroup:
    """The functional, out and optional inplace/mutable variants of one operator signature.

    Build with `from_dict`; `structured` is the out variant's flag. Members iterate in the
    order functional, out, inplace, mutable.
    """

    functional: NativeFunction
    inplace: NativeFunction | None
    mutable: NativeFunction | None
    out: NativeFunction

    def __post_init__(self) -> None:
        from tensordispatch.schema.native_group import check_group

        check_group(self)

    @property
    def structured(self) -> bool:
        return self.out.structured

    def signature(self) -> FunctionSchema:
        return self.out.signature()

    def functions(self) -> Iterator[NativeFunction]:
        yield self.functional
        yield self.out
        if self.inplace is not None:
            yield self.inplace
        if self.mutable is not None:
            yield self.mutable

    @property
    def root_name(self) -> str:
        return self.functional.root_name

    @staticmethod
    def from_dict(d: Mapping[SchemaKind, NativeFunction]) -> NativeFunctionsGroup | None:
        """Group one signature's variants; None when there is no out variant or one member."""
        if len(d) <= 1:
            return None
        functional = d.get(SchemaKind.functional)
        if functional is None:
            member = next(iter(d.values()))
            raise _fail(member.loc, member.func.name, "functional variant is required")
        out = d.get(SchemaKind.out)
        if out is None:
            return None
        return NativeFunctionsGroup(
            functional=functional,
            inplace=d.get(SchemaKind.inplace),
            mutable=d.get(SchemaKind.mutable),
            out=out,
        )


@dataclass(frozen=True, slots=True)
class NativeFunctionsViewGroup:
    """A view operator with its optional `_copy` twin and its optional inplace view."""

    view: NativeFunction
    view_copy: NativeFunction | None
    view_inplace: NativeFunction | None

    def __post_init__(self) -> None:
        from tensordispatch.schema.native_group import check_view_group

        check_view_group(self)

    def functions(self, *, include_copy: bool = True) -> Iterator[NativeFunction]:
        yield self.view
        if self.view_inplace is not None:
            yield self.view_inplace
        if self.view_copy is not None and include_copy:
            yield self.view_copy

    @property
    def root_name(self) -> str:
        return self.view.root_name

    @property
    def composite(self) -> bool:
        return self.view.has_composite_implicit_autograd_kernel


@dataclass(frozen=True, slots=True)
class BackendIndex:
    """The kernels one dispatch key has, by operator name.

    In-tree keys use the out variant as a group's primary kernel; external backends use the
    functional one.

    >>> from tensordispatch.schema import OperatorName
    >>> neg_out = OperatorName.parse("neg.out")
    >>> idx = BackendIndex("CPU", True, False, False, {neg_out: BackendMetadata("neg_out", True, "at")})
    >>> idx.index[OperatorName.parse("neg.out")].kernel
    'neg_out'
    """

    dispatch_key: str
    use_out_as_primary: bool
    device_guard: bool
    external: bool
    index: Mapping[OperatorName, BackendMetadata]

    def __post_init__(self) -> None:
        if not isinstance(self.index, MappingProxyType):
            object.__setattr__(self, "index", MappingProxyType(dict(self.index)))

    def __hash__(self) -> int:
        return hash((self.dispatch_key, self.use_out_as_primary, self.device_guard, self.external))

    @staticmethod
    def grow_index(
        parent: dict[str, dict[OperatorName, BackendMetadata]],
        child: Mapping[str, Mapping[OperatorName, BackendMetadata]],
    ) -> None:
        """Merge `child` kernels into `parent` (key -> op -> metadata); duplicates are an error.

        >>> parent, neg = {}, OperatorName.parse("neg")
        >>> BackendIndex.grow_index(parent, {"CPU": {neg: BackendMetadata("neg", False, "at")}})
        >>> BackendIndex.grow_index(parent, {"CPU": {neg: BackendMetadata("neg2", False, "at")}})
        Traceback (most recent call last):
        ...
        ValueError: duplicate operator neg for dispatch key CPU: it already has kernel neg; ...
        """
        for key, by_name in child.items():
            target = parent.setdefault(key, {})
            for name, metadata in by_name.items():
                if name in target:
                    raise ValueError(
                        f"duplicate operator {name} for dispatch key {key}: it already has kernel {target[name].kernel}; register each operator once per key"
                    )
                target[name] = metadata

    def primary(self, g: NativeFunctionsGroup) -> NativeFunction:
        return g.out if self.use_out_as_primary else g.functional

    def get_kernel(self, g: NativeFunction | NativeFunctionsGroup) -> BackendMetadata | None:
        f = g if isinstance(g, NativeFunction) else self.primary(g)
        return self.index.get(f.func.name)

    def has_kernel(self, g: NativeFunction | NativeFunctionsGroup) -> bool:
        return self.get_kernel(g) is not None

    def native_function_class_name(self) -> str | None:
        return f"{self.dispatch_key}NativeFunctions" if self.external else None


__all__ = [
    "DTYPE_CLASSES",
    "SCALAR_TYPES",
    "BackendIndex",
    "BackendMetadata",
    "DeviceCheckType",
    "Location",
    "NativeFunction",
    "NativeFunctionsGroup",
    "NativeFunctionsViewGroup",
    "Precompute",
    "SignatureKey",
    "UfuncInnerLoop",
    "UfuncKey",
    "Variant",
    "ViewSchemaKind",
    "signature_key",
]
