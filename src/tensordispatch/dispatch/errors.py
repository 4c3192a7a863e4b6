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

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "AmbiguousAutogradOtherError",
    "ArgumentMismatch",
    "ArgumentTypeError",
    "BindingArgument",
    "BindingArgumentError",
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
    "binding_argument",
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


@dataclass(frozen=True, slots=True)
class ArgumentMismatch:
    """What an argument check found: the facts an ``ArgumentTypeError`` is worded from
    (Note [Argument errors as data]). ``operator`` is the qualified name with its overload,
    ``position`` the argument's index in the schema, ``expected`` TorchScript's name of the
    wanted type (``'Optional[int]'``, ``'number'``), ``declared`` the schema's spelling of it,
    ``found`` the name printed for the given value's type.

    >>> m = ArgumentMismatch("aten::mm", "mat2", 1, "Tensor", "Tensor", "int", 2,
    ...                      "aten::mm(Tensor self, Tensor mat2) -> Tensor")
    >>> print(m.message())
    aten::mm() Expected a value of type 'Tensor' for argument 'mat2' but instead found type \
'int'.
    Position: 1
    Value: 2
    Declaration: aten::mm(Tensor self, Tensor mat2) -> Tensor
    """

    operator: str
    argument: str
    position: int
    expected: str
    declared: str
    found: str
    value: Any = field(compare=False)
    declaration: str

    def message(self) -> str:
        """torch's OpOverload-level text (its head names the operator without overload)."""
        head = " ".join(
            [
                f"{self.operator.partition('.')[0]}() Expected a value of type",
                f"'{self.expected}' for argument '{self.argument}' but instead found type",
                f"'{self.found}'.",
            ]
        )
        return "\n".join(
            [head, f"Position: {self.position}", f"Value: {self.value!r}",
             f"Declaration: {self.declaration}"]
        )  # fmt: skip


class ArgumentTypeError(RuntimeError):
    """A call passed a value its schema's type does not take (torch raises RuntimeError).
    Raised with an ``ArgumentMismatch`` (kept as ``mismatch``, the text worded from it) by the
    argument checks; with a plain text (``mismatch`` None) for the other rejections.

    >>> e = ArgumentTypeError("aten::f() got a bad value")
    >>> e.mismatch is None, str(e)
    (True, 'aten::f() got a bad value')
    """

    def __init__(self, what: ArgumentMismatch | str) -> None:
        super().__init__(what)
        self.mismatch = what if isinstance(what, ArgumentMismatch) else None

    def __str__(self) -> str:
        # worded on demand: an operator that returns NotImplemented never formats it
        return self.mismatch.message() if self.mismatch is not None else super().__str__()


class BindingArgumentError(ArgumentTypeError, TypeError):
    """A value the operator takes but torch's Python binding refuses (Note [Bindings take enums
    only as themselves] in convert.py), rejected by the check only when a binding calls: also
    a TypeError, as the binding's own error, where a hand-written binding does not word it.

    >>> issubclass(BindingArgumentError, TypeError), issubclass(ArgumentTypeError, TypeError)
    (True, False)
    """


# Note [Argument errors as data]
# torch's Python binding and its OpOverload word one wrong argument differently: "add():
# argument 'other' (position 1) must be Tensor, not str" (TypeError) against "aten::add()
# Expected a value of type 'Tensor' for argument 'other' ..." (RuntimeError). Our bindings let
# the operator's entry check the arguments (no check on their success path) and word their
# TypeError from the ArgumentMismatch the check raised, never from its text: a text-only
# ArgumentTypeError (or one about another operator) is never translated.
_WANT = {"Tensor": "Tensor", "Tensor?": "Tensor", "Tensor[]": "tuple of Tensors",
         "Tensor?[]": "tuple of Tensors", "List[int]": "tuple of ints",
         "number": "Number"}  # fmt: skip
_ENUMS = {"Layout": "torch.layout", "ScalarType": "torch.dtype", "Device": "torch.device",
          "MemoryFormat": "torch.memory_format"}  # fmt: skip
# the types' names in an operator-level text -> the names torch's Python parser gives them
_TORCH_TYPES = {"dtype": "torch.dtype", "Layout": "torch.layout", "layout": "torch.layout",
                "device": "torch.device", "Device": "torch.device",
                "MemoryFormat": "torch.memory_format", "memory_format": "torch.memory_format",
                "Generator": "torch.Generator"}  # fmt: skip


@dataclass(frozen=True, slots=True)
class BindingArgument:
    """One argument a Python binding rejects, as torch's arg parser names it: the binding's
    ``function`` name, the Python ``argument`` name, its 1-based ``position`` among the
    positional parameters (None for a keyword-only one), torch's Python names of the
    ``expected`` and ``found`` types, and whether the call gave it by ``keyword``.

    >>> print(BindingArgument("add", "alpha", None, "Number", "str").message())
    add(): argument 'alpha' must be Number, not str
    """

    function: str
    argument: str
    position: int | None
    expected: str
    found: str
    keyword: bool = False

    def message(self) -> str:
        """torch's TypeError text (an argument given by keyword is named without position)."""
        where = "" if self.keyword or self.position is None else f" (position {self.position})"
        what = f"must be {self.expected}, not {self.found}"
        return f"{self.function}(): argument '{self.argument}'{where} {what}"


def binding_argument(
    name: str, error: ArgumentTypeError, positional: tuple[str, ...], method: bool
) -> BindingArgument | None:
    """The argument of binding ``name`` that ``error`` rejects (Note [Argument errors as
    data]), or None when ``error`` has no mismatch or concerns another operator (a nested
    call's). ``positional``: the binding's positional parameter names (``self`` excluded for
    a method), in the schema's order; a schema argument the binding renames (Tensor.copy_'s
    ``src`` is ``other``) is found by its position.

    >>> m = ArgumentMismatch("aten::copy_", "src", 1, "Tensor", "Tensor", "str", "x", "...")
    >>> binding_argument("copy_", ArgumentTypeError(m), ("other", "non_blocking"), True)
    BindingArgument(function='copy_', argument='other', position=1, expected='Tensor', \
found='str', keyword=False)
    """
    m = error.mismatch
    if m is None or not m.operator.startswith("aten::"):
        return None
    base = m.operator[len("aten::") :].partition(".")[0]
    if base != name and base != name.rstrip("_"):
        return None
    arg, index = m.argument, m.position - int(method)
    if arg not in positional and arg != "self" and 0 <= index < len(positional):
        arg = positional[index]
    if arg == "self" and not method:
        arg = "input"
    position = positional.index(arg) + 1 if arg in positional else None
    want = m.expected
    if want.startswith("Optional[") and want.endswith("]"):
        want = want[len("Optional[") : -1]
    want = _ENUMS.get(m.declared.rstrip("?"), _WANT.get(want, want))
    return BindingArgument(name, arg, position, want, _TORCH_TYPES.get(m.found, m.found))


def binding_argument_error(
    name: str, error: ArgumentTypeError, positional: tuple[str, ...], method: bool
) -> Exception:
    """The TypeError torch's Python binding ``name`` raises for ``error`` (an operator-level
    ArgumentTypeError about one of the binding's own arguments), or ``error`` itself when it
    has no mismatch or comes from another operator (``binding_argument``).

    >>> m = ArgumentMismatch("aten::maximum", "other", 1, "Tensor", "Tensor", "int", 2, "...")
    >>> print(binding_argument_error("maximum", ArgumentTypeError(m), ("input", "other"), False))
    maximum(): argument 'other' (position 2) must be Tensor, not int
    """
    found = binding_argument(name, error, positional, method)
    return error if found is None else TypeError(found.message())


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
