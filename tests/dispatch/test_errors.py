"""Golden tests for every user-facing dispatcher error (spec 9, adapted to us)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from dispatch_oracle import fresh, only_builtin_fallbacks

from tensordispatch import ops
from tensordispatch.dispatch import (
    BackendComponent,
    DispatchKey,
    DispatchKeySet,
    backend_tensor_keyset,
)
from tensordispatch.dispatch.dispatcher import DISPATCHER
from tensordispatch.dispatch.errors import (
    AmbiguousAutogradOtherError,
    ArgumentTypeError,
    DuplicateRegistrationError,
    FallthroughExecutedError,
    KernelSignatureError,
    LibraryError,
    LibraryKindError,
    MetaKernelMissingError,
    MissingKernelError,
    NoMatchingOverloadError,
    NoTensorArgumentsError,
    SchemaNotFoundError,
)
from tensordispatch.dispatch.keys import DispatchKeyError
from tensordispatch.library import Library, fallthrough_kernel

FILE = __file__


class T:
    __slots__ = ("_key_set",)

    def __init__(self, ks: DispatchKeySet) -> None:
        self._key_set = ks.raw


def norm(text: str, ns: str = "") -> str:
    """Our file -> <file>, line numbers -> N, the fresh namespace -> ns."""
    text = text.replace(FILE, "<file>")
    text = re.sub(r"(<file>|fallbacks\.py):\d+", r"\1:N", text)
    return text.replace(ns, "ns") if ns else text


@pytest.fixture
def lib() -> Iterator[Library]:
    lib = Library(fresh("err"), "DEF")
    yield lib
    lib._destroy()


def _raise(fn: Any, exc: type[BaseException]) -> str:
    with pytest.raises(exc) as info:
        fn()
    return str(info.value)


def test_missing_kernel(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, "CPU", debug="fn_cpu")
    f = getattr(ops, lib.ns).f.default
    with only_builtin_fallbacks():
        msg = _raise(
            lambda: f(T(backend_tensor_keyset(BackendComponent.XLABit))), MissingKernelError
        )
    first, table = norm(msg, lib.ns).split("\n\n", 1)
    assert first == (
        "Could not run 'ns::f' with arguments from the 'XLA' backend. This could be because "
        "the operator doesn't exist for this backend. 'ns::f' is only available for these "
        "backends: [CPU, Meta, BackendSelect, Python, FuncTorchDynamicLayerBackMode, "
        "Functionalize, Conjugate, Negative, ZeroTensor, ADInplaceOrView, AutogradOther, "
        "AutogradCPU, AutogradCUDA, AutogradXLA, AutogradMPS, AutogradXPU, AutogradHPU, "
        "AutogradLazy, AutogradMTIA, AutogradMAIA, AutogradPrivateUse1, AutogradMeta, Tracer, "
        "AutocastCPU, AutocastMTIA, AutocastMAIA, AutocastXPU, AutocastMPS, AutocastCUDA, "
        "FuncTorchBatched, BatchedNestedTensor, FuncTorchVmapMode, Batched, VmapMode, "
        "FuncTorchGradWrapper, PythonTLSSnapshot, FuncTorchDynamicLayerFrontMode, PreDispatch, "
        "PythonDispatcher]. Of these, 'ns::f' has kernels of its own for: [CPU]; the others "
        "are served only by global backend fallbacks. To add one, register a kernel: "
        "Library('ns', 'IMPL').impl('f', fn, 'XLA')."
    )
    assert table.startswith("CPU: fn_cpu [kernel]\nMeta: registered at ")


def test_missing_kernel_with_only_fallbacks(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    f = getattr(ops, lib.ns).f.default
    msg = _raise(lambda: f(T(backend_tensor_keyset(BackendComponent.CPUBit))), MissingKernelError)
    assert "None of these are kernels of 'ns::f' itself: all are global backend fallbacks." in (
        norm(msg, lib.ns)
    )


def test_no_tensor_arguments(lib: Library) -> None:
    lib.define("h(int n) -> Tensor")
    with only_builtin_fallbacks():
        call = getattr(ops, lib.ns).h.default
        msg = norm(_raise(lambda: call(3), NoTensorArgumentsError), lib.ns)
    assert msg.split("  Available functions are [")[0] == (
        "There were no tensor arguments to this function (e.g., you passed an empty list of "
        "Tensors), but no fallback function is registered for schema ns::h.  This usually means "
        "that this function requires a non-empty list of Tensors, or that you (the operator "
        "writer) forgot to register a fallback function (a CompositeExplicitAutograd or "
        "CompositeImplicitAutograd kernel, which also serve calls without tensors)."
    )
    assert "Available functions are [Meta, BackendSelect, Python," in msg


def test_ambiguous_autogradother(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, "CompositeImplicitAutograd", debug="cia")
    lib.impl("f", lambda x: x, "SparseCPU", debug="sparse")
    mkldnn = T(DispatchKeySet(DispatchKey.MkldnnCPU, DispatchKey.AutogradOther))
    msg = norm(
        _raise(lambda: getattr(ops, lib.ns).f.default(mkldnn), AmbiguousAutogradOtherError), lib.ns
    )
    assert msg.split("\n")[:4] == [
        (
            "ns::f has kernels registered to both CompositeImplicitAutograd and a backend "
            "mapped to AutogradOther. This makes the backend kernel unreachable; the "
            "dispatcher will always prefer the CompositeImplicitAutograd lowering (see Note "
            "[Ambiguity in AutogradOther kernel]). If you want to override "
            "CompositeImplicitAutograd, register a kernel for AutogradOther itself on this "
            "operator."
        ),
        (
            "If you only want to run inference, exclude the autograd keys (e.g. with "
            "tensordispatch.dispatch._AutoDispatchBelowAutograd())."
        ),
        "Canonical state",
        "~~~~~~~~~~~",
    ]
    assert msg.endswith(
        "SparseCPU: sparse :: (none) [ boxed ]\n"
        "CompositeImplicitAutograd[alias]: cia :: (none) [ boxed ]\n"
    )


def test_meta_without_meta_kernel(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    meta = T(backend_tensor_keyset(BackendComponent.MetaBit))
    msg = norm(_raise(lambda: getattr(ops, lib.ns).f.default(meta), MetaKernelMissingError), lib.ns)
    assert msg == (
        "ns::f: attempted to run this operator with Meta tensors, but there was no fake impl or "
        "Meta kernel registered. Register one with Library.impl('f', fn, 'Meta') (a function "
        "computing the output's shape and dtype without data)."
    )


def test_fallthrough_executed() -> None:
    assert _raise(fallthrough_kernel, FallthroughExecutedError) == (
        "fallthrough_kernel was executed but it should have been short-circuited by the "
        "dispatcher. This could occur if you registered a fallthrough kernel as a override for "
        "a specific operator (as opposed to a backend fallback) and then redispatched to its "
        "key explicitly; redispatch with a key set that excludes that key instead."
    )


def test_schema_lookup_errors(lib: Library) -> None:
    impl_only = Library(lib.ns, "FRAGMENT")
    impl_only.impl("bar", lambda x: x, "CPU")
    try:
        msg = _raise(lambda: DISPATCHER.find_schema_or_throw(f"{lib.ns}::bar"), SchemaNotFoundError)
        assert norm(msg, lib.ns) == (
            "Could not find schema for ns::bar. but we found an implementation; did you forget "
            "to def() the operator?"
        )
        msg = _raise(
            lambda: DISPATCHER.find_schema_or_throw(f"{lib.ns}::none"), SchemaNotFoundError
        )
        assert norm(msg, lib.ns) == "Could not find schema for ns::none."
        msg = _raise(lambda: getattr(ops, lib.ns).bar, AttributeError)
        assert norm(msg, lib.ns) == "'_OpNamespace' 'ns' object has no attribute 'bar'"
    finally:
        impl_only._destroy()


def test_argument_of_wrong_type(lib: Library) -> None:
    lib.define("f(Tensor x, Tensor[] ys) -> Tensor")
    f = getattr(ops, lib.ns).f.default
    x = T(backend_tensor_keyset(BackendComponent.CPUBit))
    assert norm(_raise(lambda: f(3, []), ArgumentTypeError), lib.ns) == (
        "ns::f() Expected a value of type 'Tensor' for argument 'x' but instead found type "
        "'int'.\nPosition: 0\nValue: 3\nDeclaration: ns::f(Tensor x, Tensor[] ys) -> Tensor"
    )
    assert norm(_raise(lambda: f(x, [x, "s"]), ArgumentTypeError), lib.ns) == (
        "ns::f() Expected a value of type 'Tensor[]' for argument 'ys' but instead found type "
        "'str'.\nPosition: 1\nValue: 's'\nDeclaration: ns::f(Tensor x, Tensor[] ys) -> Tensor"
    )
    assert norm(_raise(lambda: f(x, [x, None]), ArgumentTypeError), lib.ns) == "\n".join(
        [
            " ".join(
                [
                    "ns::f() Expected a value of type 'Tensor[]' for argument 'ys' but instead",
                    "found type 'NoneType'.",
                ]
            ),
            "Position: 1",
            "Value: None",
            "Declaration: ns::f(Tensor x, Tensor[] ys) -> Tensor",
        ]
    )


def test_kernel_signature_mismatch_is_the_same_in_both_orders(lib: Library) -> None:
    def bad(x: Any, y: Any) -> Any:
        return x

    lib.define("f(Tensor x) -> Tensor")
    msg1 = _raise(lambda: lib.impl("f", bad, "CPU", debug="bad_kernel"), KernelSignatureError)
    other = Library(fresh("err"), "DEF")
    try:
        other.impl("f", bad, "CPU", debug="bad_kernel")
        msg2 = _raise(lambda: other.define("f(Tensor x) -> Tensor"), KernelSignatureError)
    finally:
        other._destroy()
    expected = (
        "The kernel's Python signature doesn't match the operator schema.\n"
        "  operator: ns::f\n"
        "  expected schema: ns::f(Tensor x) -> Tensor\n"
        "    registered at <file>:N\n"
        "  kernel: test_kernel_signature_mismatch_is_the_same_in_both_orders.<locals>.bad at "
        "<file>:N\n"
        "    bad_kernel\n"
        "  reason: it cannot be called with all arguments, as (x): missing a required "
        "argument: 'y'\n"
        "Make the kernel accept the schema's arguments (positional ones by position, "
        "keyword-only ones by name), or take *args, **kwargs."
    )
    assert norm(msg1, lib.ns) == expected
    assert norm(msg2, other.ns) == expected


def test_signature_mismatch_leaves_no_trace(lib: Library) -> None:
    from tensordispatch.dispatch import dump

    lib.define("f(Tensor x, *, int n=0) -> Tensor")
    before = dump(f"{lib.ns}::f")
    with pytest.raises(KernelSignatureError, match="cannot be called with all arguments"):
        lib.impl("f", lambda x: x, "CPU")  # n is keyword-only: the kernel must take it
    assert dump(f"{lib.ns}::f") == before


def test_duplicate_def(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    msg = _raise(lambda: lib.define("f(Tensor x) -> Tensor"), DuplicateRegistrationError)
    assert norm(msg, lib.ns) == (
        "Tried to register an operator (ns::f(Tensor x) -> Tensor) with the same name and "
        "overload name multiple times. Each overload's schema should only be registered with a "
        "single call to def(). Duplicate registration: registered at <file>:N. Original "
        "registration: registered at <file>:N"
    )


def test_duplicate_fallback() -> None:
    fb = Library("_", "IMPL")
    try:
        fb.fallback(lambda op, *a: None, "XLA", debug="first")
        msg = _raise(
            lambda: fb.fallback(lambda op, *a: None, "XLA", debug="second"),
            DuplicateRegistrationError,
        )
    finally:
        fb._destroy()
    assert msg == (
        "Tried to register multiple backend fallbacks for the same dispatch key XLA; previous "
        "registration first, new registration second"
    )


def test_duplicate_def_library(lib: Library) -> None:
    msg = _raise(lambda: Library(lib.ns, "DEF"), LibraryError)
    assert norm(msg, lib.ns) == (
        "Only a single TORCH_LIBRARY can be used to register the namespace ns; please put all "
        "of your definitions in a single TORCH_LIBRARY block.  If you were trying to specify "
        "implementations, consider using TORCH_LIBRARY_IMPL (which can be duplicated).  If you "
        "really intended to define operators for a single namespace in a distributed way, you "
        "can use TORCH_LIBRARY_FRAGMENT to explicitly indicate this.  Previous registration of "
        "TORCH_LIBRARY was registered at <file>:N; latest registration was registered at "
        "<file>:N"
    )


def test_library_kind_errors() -> None:
    assert _raise(lambda: Library("x", "FOO"), LibraryKindError) == "Unsupported kind: FOO"
    assert _raise(lambda: Library("prim", "DEF"), LibraryKindError) == (
        "prim is a reserved namespace. Please try creating a library with another name."
    )
    assert norm(_raise(lambda: Library("_", "FRAGMENT"), LibraryError)) == (
        "TORCH_LIBRARY_FRAGMENT: cannot define TORCH_LIBRARY_FRAGMENT with the wildcard "
        "namespace _ (every TORCH_LIBRARY_FRAGMENT defines operators for a distinct namespace!) "
        "Did you mean to use TORCH_LIBRARY_IMPL instead?  (Error occurred while processing "
        "TORCH_LIBRARY_FRAGMENT block at <file>:N)"
    )
    assert _raise(lambda: Library("x", "DEF", "CPU"), LibraryError) == (
        "Library('x', 'DEF', 'CPU'): only IMPL libraries have a dispatch key; pass the key to "
        "impl() or use an IMPL library."
    )


def test_block_errors(lib: Library) -> None:
    impl_lib = Library(lib.ns, "IMPL", "CPU")
    assert norm(_raise(lambda: impl_lib.define("q(Tensor x) -> Tensor"), LibraryError), lib.ns) == (
        'def("q"): Cannot define an operator inside of a TORCH_LIBRARY_IMPL block.  All def()s '
        "should be placed in the (unique) TORCH_LIBRARY block for their namespace.  (Error "
        "occurred while processing TORCH_LIBRARY_IMPL block at <file>:N)"
    )
    assert norm(_raise(lambda: impl_lib.impl("q", lambda x: x, "CUDA"), LibraryError), lib.ns) == (
        'impl("q", ...): Explicitly provided dispatch key (CUDA) is inconsistent with the '
        "dispatch key of the enclosing TORCH_LIBRARY_IMPL block (CPU).  Please declare a "
        "separate TORCH_LIBRARY_IMPL block for this dispatch key and move your impl() there.  "
        "(Error occurred while processing TORCH_LIBRARY_IMPL block at <file>:N)"
    )
    assert norm(_raise(lambda: impl_lib.impl("other::q", lambda x: x), LibraryError), lib.ns) == (
        'impl("other::q", ...): Explicitly provided namespace (other) in operator name does not '
        "match namespace of enclosing TORCH_LIBRARY_IMPL block (ns).  Move this definition to "
        "the TORCH_LIBRARY_IMPL block corresponding to this namespace (and consider deleting "
        "the namespace from your schema string.)  (Error occurred while processing "
        "TORCH_LIBRARY_IMPL block at <file>:N)"
    )
    assert norm(
        _raise(lambda: lib.define("other::q(Tensor x) -> Tensor"), LibraryError), lib.ns
    ) == (
        "Explicitly provided namespace (other) in schema string does not match namespace of "
        "enclosing TORCH_LIBRARY block (ns).  Move this definition to the (unique) "
        "TORCH_LIBRARY block corresponding to this namespace (and consider deleting the "
        "namespace from your schema string.)  (Error occurred while processing TORCH_LIBRARY "
        "block at <file>:N)"
    )
    impl_lib._destroy()


def test_impl_argument_errors(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    assert _raise(lambda: lib.impl("f", 3, "CPU"), TypeError) == (  # type: ignore[arg-type]
        "Input function is required to be a callable but found type <class 'int'>"
    )
    assert _raise(lambda: lib.impl("f", lambda x: x, "NotAKey"), DispatchKeyError) == (
        "could not parse dispatch key: NotAKey"
    )
    assert _raise(lambda: lib.define("g(Tensor x) -> Tensor", "PURE_FUNCTION"), RuntimeError) == (
        "Invalid alias_analysis type PURE_FUNCTION"
    )
    lib.impl("f", lambda x: x, "CompositeImplicitAutograd")
    assert _raise(lambda: lib.impl("f", lambda x: x, "Meta"), RuntimeError) == (
        "We should not register a meta kernel directly to the operator 'f', because it has a "
        "CompositeImplicitAutograd kernel in core. Instead we should let the operator "
        "decompose, and ensure that we have meta kernels for the base ops that it decomposes "
        "into."
    )


def test_fallback_errors(lib: Library) -> None:
    assert _raise(lambda: lib.fallback(lambda op: None, "CPU"), RuntimeError) == (
        f'Fallback can only be registered using library fragment on the global namespace "_" '
        f"but it is {lib.ns}"
    )
    fb = Library("_", "IMPL")
    assert _raise(lambda: fb.fallback(lambda op: None), AssertionError) == (
        "dispatch_key must not be empty for fallback"
    )
    assert _raise(
        lambda: fb.fallback(lambda op: None, "Autograd", debug="mine"), DuplicateRegistrationError
    ) == (
        "Tried to register multiple backend fallbacks for the same dispatch key AutogradOther; "
        "previous registration registered at tensordispatch/dispatch/fallbacks.py:"
        f"{_autograd_fallback_line()}, new registration mine"
    )
    fb._destroy()


def _autograd_fallback_line() -> int:
    from tensordispatch.dispatch import fallbacks

    return fallbacks._autograd_fallback.__code__.co_firstlineno


def test_packet_without_matching_overload(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    lib.define("f.int(int n) -> int")
    msg = _raise(lambda: getattr(ops, lib.ns).f("s"), NoMatchingOverloadError)
    assert norm(msg, lib.ns) == (
        "ns::f: no overload accepts the given arguments; tried 2, in definition order:\n\n"
        "ns::f() Expected a value of type 'Tensor' for argument 'x' but instead found type "
        "'str'.\nPosition: 0\nValue: 's'\nDeclaration: ns::f(Tensor x) -> Tensor\n\n"
        "ns::f() Expected a value of type 'int' for argument 'n' but instead found type "
        "'str'.\nPosition: 0\nValue: 's'\nDeclaration: ns::f.int(int n) -> int\n\n"
        "Pass arguments matching one schema, or call an overload directly (e.g. "
        "ops.ns.f.default)."
    )


def test_packet_arity_reasons(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    lib.define("f.int(Tensor x, int n) -> Tensor")
    lib.define("f.kw(Tensor x, *, float alpha) -> Tensor")
    x = T(backend_tensor_keyset(BackendComponent.CPUBit))
    packet = getattr(ops, lib.ns).f
    assert norm(_raise(lambda: packet(x, 1, 2), NoMatchingOverloadError), lib.ns) == (
        "ns::f: no overload accepts the given arguments; tried 3, in definition order:\n\n"
        "ns::f() expected at most 1 argument(s) but received 3 argument(s). Declaration: "
        "ns::f(Tensor x) -> Tensor\n\n"
        "ns::f() expected at most 2 argument(s) but received 3 argument(s). Declaration: "
        "ns::f.int(Tensor x, int n) -> Tensor\n\n"
        "ns::f() expected at most 2 argument(s) but received 3 argument(s). Declaration: "
        "ns::f.kw(Tensor x, *, float alpha) -> Tensor\n\n"
        "Pass arguments matching one schema, or call an overload directly (e.g. "
        "ops.ns.f.default)."
    )
    assert norm(_raise(lambda: packet(x, beta=1), NoMatchingOverloadError), lib.ns) == (
        "ns::f: no overload accepts the given arguments; tried 3, in definition order:\n\n"
        "ns::f() expected at most 1 argument(s) but received 2 argument(s). Declaration: "
        "ns::f(Tensor x) -> Tensor\n\n"
        "ns::f() got an unexpected keyword argument 'beta'. Declaration: "
        "ns::f.int(Tensor x, int n) -> Tensor\n\n"
        "ns::f() got an unexpected keyword argument 'beta'. Declaration: "
        "ns::f.kw(Tensor x, *, float alpha) -> Tensor\n\n"
        "Pass arguments matching one schema, or call an overload directly (e.g. "
        "ops.ns.f.default)."
    )
    assert norm(_raise(lambda: packet(x, 2.5), NoMatchingOverloadError), lib.ns).split("\n\n")[
        2:4
    ] == [
        "ns::f() Expected a value of type 'int' for argument 'n' but instead found type "
        "'float'.\nPosition: 1\nValue: 2.5\nDeclaration: ns::f.int(Tensor x, int n) -> Tensor",
        "ns::f() takes 1 positional argument(s) but 2 was/were given. Declaration: "
        "ns::f.kw(Tensor x, *, float alpha) -> Tensor",
    ]


def test_non_tensor_argument_of_wrong_type(lib: Library) -> None:
    lib.define("f(Tensor x, int n, SymInt[2] k, float? a=None) -> Tensor")
    f = getattr(ops, lib.ns).f.default
    x = T(backend_tensor_keyset(BackendComponent.CPUBit))
    decl = "Declaration: ns::f(Tensor x, int n, SymInt[2] k, float? a=None) -> Tensor"
    assert norm(_raise(lambda: f(x, 2.5, [1]), ArgumentTypeError), lib.ns) == (
        "ns::f() Expected a value of type 'int' for argument 'n' but instead found type "
        f"'float'.\nPosition: 1\nValue: 2.5\n{decl}"
    )
    assert norm(_raise(lambda: f(x, 1, [1.5]), ArgumentTypeError), lib.ns) == (
        "ns::f() Expected a value of type 'List[int]' for argument 'k' but instead found type "
        f"'list'.\nPosition: 2\nValue: [1.5]\n{decl}"
    )
    assert norm(_raise(lambda: f(x, 1, [1], a="s"), ArgumentTypeError), lib.ns) == (
        "ns::f() Expected a value of type 'Optional[float]' for argument 'a' but instead found "
        f"type 'str'.\nPosition: 3\nValue: 's'\n{decl}"
    )


def test_meta_impl_of_an_unknown_operator_fails_like_torch() -> None:
    lib = Library(fresh("err"), "FRAGMENT")
    try:
        msg = _raise(lambda: lib.impl("foo", lambda x: x, "Meta"), RuntimeError)
    finally:
        lib._destroy()
    assert norm(msg, lib.ns) == "operator ns::foo does not exist"
