"""The dispatcher's user-facing errors: one class per rule, messages shaped like torch 2.13's.

Every class subclasses the builtin torch raises for the same situation, so code written
against torch's exceptions catches ours. Messages follow spec section 9 adapted to us: no
C++ source locations, no mobile/selective-build advice, and, for missing kernels, the list
of available keys split into the operator's own kernels and global fallbacks
(Note [Missing-kernel message]). Must not import anything else from ``dispatch``.

Note [Missing-kernel message]
torch lists every key whose slot is filled, mixing the operator's own kernels with the 38
global fallbacks every operator inherits, so the one key that matters (say CPU) drowns in
BackendSelect, Python, Functionalize, ... We keep torch's sentence and its list (the same
keys in the same order) and then add one sentence that splits it:
"Of these, 'ns::op' has kernels of its own for: [CPU, AutogradCPU]; the others are served
only by global backend fallbacks." followed by what to do. "Own kernels" means slots filled
by the operator's registrations, directly or through an alias key.
"""

from __future__ import annotations

import re

__all__ = [
    "AmbiguousAutogradOtherError",
    "ArgumentTypeError",
    "DuplicateRegistrationError",
    "FallthroughExecutedError",
    "KernelSignatureError",
    "LibraryError",
    "LibraryKindError",
    "MetaKernelMissingError",
    "MissingKernelError",
    "NoMatchingOverloadError",
    "NoTensorArgumentsError",
    "SchemaNotFoundError",
    "binding_argument_error",
    "missing_kernel_message",
    "no_tensor_arguments_message",
]


class MissingKernelError(NotImplementedError):
    """No kernel and no fallback fills the slot a call selected (spec 9.1)."""


class NoTensorArgumentsError(NotImplementedError):
    """A call whose key set has no functionality bit found no kernel at Undefined (9.2)."""


class AmbiguousAutogradOtherError(RuntimeError):
    """The AutogradOther ambiguity marker ran (spec 9.3)."""

    def __init__(self, op: str, dump: str) -> None:
        super().__init__(
            "\n".join(
                [
                    (
                        " ".join(
                            [
                                f"{op} has kernels registered to both CompositeImplicitAutograd",
                                "and a",
                                "backend mapped to AutogradOther. This makes the backend kernel",
                                "unreachable; the dispatcher will always prefer the",
                                "CompositeImplicitAutograd lowering (see Note [Ambiguity in",
                                "AutogradOther kernel]). If you want to override",
                                "CompositeImplicitAutograd, register a kernel for AutogradOther",
                                "itself on this operator.",
                            ]
                        )
                    ),
                    (
                        " ".join(
                            [
                                "If you only want to run inference, exclude the autograd keys",
                                "(e.g. with tensordispatch.dispatch._AutoDispatchBelowAutograd()).",
                            ]
                        )
                    ),
                    "Canonical state",
                    "~~~~~~~~~~~",
                    dump,
                ]
            )
        )


class MetaKernelMissingError(NotImplementedError):
    """Meta tensors reached the global Meta fallback (spec 9.4)."""

    def __init__(self, op: str) -> None:
        super().__init__(
            " ".join(
                [
                    f"{op}: attempted to run this operator with Meta tensors, but there was no",
                    "fake impl or Meta kernel registered. Register one with",
                    f"Library.impl('{op.split('::')[-1]}', fn, 'Meta') (a function computing the",
                    "output's shape and dtype without data).",
                ]
            )
        )


class FallthroughExecutedError(RuntimeError):
    """A fallthrough kernel was reached through an explicit redispatch (spec 9.5)."""

    def __init__(self) -> None:
        super().__init__(
            " ".join(
                [
                    "fallthrough_kernel was executed but it should have been short-circuited by",
                    "the dispatcher. This could occur if you registered a fallthrough kernel as a",
                    "override for a specific operator (as opposed to a backend fallback) and then",
                    "redispatched to its key explicitly; redispatch with a key set that excludes",
                    "that key instead.",
                ]
            )
        )


class SchemaNotFoundError(RuntimeError):
    """An operator name without a def'd schema was looked up (spec 9.6)."""


class LibraryError(RuntimeError):
    """A Library rule was broken: namespaces, block kinds, keys (spec 9.7)."""


class LibraryKindError(ValueError):
    """An unsupported Library kind or a reserved namespace (spec 6.1)."""


class DuplicateRegistrationError(RuntimeError):
    """A second def of one operator, a second DEF library, a second fallback (spec 9.8)."""


class KernelSignatureError(RuntimeError):
    """An impl whose Python signature cannot take the operator's arguments (spec 9.9, ours)."""


class NoMatchingOverloadError(RuntimeError):
    """No overload of a packet accepts the call's arguments (torch raises RuntimeError)."""


class ArgumentTypeError(RuntimeError):
    """A call passed a non-tensor where the schema wants a Tensor (torch raises RuntimeError)."""


_ARGUMENT_RE = re.compile(r"^aten::(\w+?)(?:\.\w+)?\(\) Expected a value of type '([^']*)' for "
                          r"argument '(\w+)' but instead found type '([^']*)'")  # fmt: skip
_WANT = {"Tensor": "Tensor", "Tensor?": "Tensor", "Tensor[]": "tuple of Tensors",
         "Tensor?[]": "tuple of Tensors", "List[int]": "tuple of ints"}  # fmt: skip
_ENUMS = {"Layout": "torch.layout", "ScalarType": "torch.dtype", "Device": "torch.device",
          "MemoryFormat": "torch.memory_format"}  # fmt: skip


def binding_argument_error(
    name: str, error: ArgumentTypeError, positional: tuple[str, ...], method: bool
) -> Exception:
    """The TypeError torch's Python binding ``name`` raises for ``error`` (an operator-level
    ArgumentTypeError about one of the binding's own arguments), or ``error`` itself when it
    comes from another operator. ``positional``: the binding's positional parameter names
    (``self`` excluded for a method); position is 1-based among them, as torch's.

    >>> e = ArgumentTypeError("aten::maximum() Expected a value of type 'Tensor' for argument "
    ...                       "'other' but instead found type 'int'.")
    >>> print(binding_argument_error("maximum", e, ("input", "other"), False))
    maximum(): argument 'other' (position 2) must be Tensor, not int
    """
    m = _ARGUMENT_RE.match(str(error))
    if m is None or m.group(1) != name.rstrip("_") and m.group(1) != name:
        return error
    arg = "input" if m.group(3) == "self" and not method else m.group(3)
    where = f" (position {positional.index(arg) + 1})" if arg in positional else ""
    want = m.group(2)
    if want.startswith("Optional[") and want.endswith("]"):
        want = want[len("Optional[") : -1]
    want = _WANT.get(want, want)
    declared = re.search(rf"([\w\[\]]+)\?? {m.group(3)}\b", str(error).partition("Declaration:")[2])
    if declared is not None and declared.group(1) in _ENUMS:
        want = _ENUMS[declared.group(1)]
    return TypeError(f"{name}(): argument '{arg}'{where} must be {want}, not {m.group(4)}")


def _key_list(keys: list[str]) -> str:
    return "[" + ", ".join(keys) + "]"


def _split_sentence(op: str, available: list[str], own: list[str]) -> str:
    if not own:
        return f"None of these are kernels of '{op}' itself: all are global backend fallbacks."
    return " ".join(
        [
            f"Of these, '{op}' has kernels of its own for: {_key_list(own)}; the others are",
            "served only by global backend fallbacks.",
        ]
    )


def missing_kernel_message(
    op: str, key: str, available: list[str], own: list[str], table: str
) -> str:
    """Spec 9.1 adapted: see Note [Missing-kernel message].

    >>> print(missing_kernel_message("ns::f", "XLA", ["CPU", "Meta"], ["CPU"], "CPU: k [kernel]"))
    Could not run 'ns::f' with arguments from the 'XLA' backend. This could be because the \
operator doesn't exist for this backend. 'ns::f' is only available for these backends: \
[CPU, Meta]. Of these, 'ns::f' has kernels of its own for: [CPU]; the others are served only \
by global backend fallbacks. To add one, register a kernel: Library('ns', 'IMPL').impl('f', \
fn, 'XLA').
    <BLANKLINE>
    CPU: k [kernel]
    """
    short = op.split("::", 1)[-1]
    ns = op.split("::", 1)[0]
    sentence = " ".join(
        [
            f"Could not run '{op}' with arguments from the '{key}' backend. This could be",
            f"because the operator doesn't exist for this backend. '{op}' is only available for",
            f"these backends: {_key_list(available)}. {_split_sentence(op, available, own)} To",
            f"add one, register a kernel: Library('{ns}', 'IMPL').impl('{short}', fn, '{key}').",
        ]
    )
    return f"{sentence}\n\n{table}"


def no_tensor_arguments_message(op: str, available: list[str], table: str) -> str:
    """Spec 9.2 adapted (same sentences; our fallback advice names our API).

    >>> no_tensor_arguments_message("ns::h", [], "")[:60]
    'There were no tensor arguments to this function (e.g., you p'
    """
    return " ".join(
        [
            "There were no tensor arguments to this function (e.g., you passed an empty list of",
            f"Tensors), but no fallback function is registered for schema {op}.  This usually",
            "means that this function requires a non-empty list of Tensors, or that you (the",
            "operator writer) forgot to register a fallback function (a",
            "CompositeExplicitAutograd or CompositeImplicitAutograd kernel, which also serve",
            f"calls without tensors).  Available functions are {_key_list(available)}.\n\n{table}",
        ]
    )
