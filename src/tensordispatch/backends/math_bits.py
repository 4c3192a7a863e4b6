"""The conjugate and negative bits: the views that set them, the boxed fallback that resolves
them (torch's MathOpFallback), and the operators that read the bits themselves.

Owns the Conjugate and Negative dispatch keys' kernels: the ``_conj`` / ``_neg_view``
CompositeExplicitAutograd kernels (a view with the bit flipped), the global fallbacks of
both keys, their fallthrough lists, and the NumPy helpers that give a bit tensor's values.
The design is in Note [The conjugate and negative bits] (ops/decompositions_conj.py). Must not
be imported by the dispatcher: it replaces the import-time redispatching fallbacks of
dispatch/fallbacks.py when installed (``install()``, called when backends/composite.py's
kernel table loads, i.e. at the first operator definition; a bit view re-installs it after
``uninstall()``).

Note [The math-bit fallback]
A tensor with a bit set stores the values *before* the bit is applied: ``x.conj()`` shares
``x``'s storage, and its values are the conjugates of what is stored. Kernels that do not
know the bit must see resolved values, so the Conjugate (Negative) fallback, as torch's:

* an operator whose aliasing arguments are all read-only (a view) redispatches unchanged:
  views propagate the bit by copying the input's key set (``Tensor._make_view``);
* otherwise every Tensor argument (and every element of a Tensor[] / Tensor?[]) with the
  bit is replaced by ``clone(t)``, which resolves it (clone is a fallthrough: ``copy_``
  materializes the bits, backends/cpu/kernels.py);
* a written argument with the bit (in-place ``self``, ``out=``) is cloned too, the operator
  runs on the clone, then the result is copied back into the original (resized first, as
  out= arguments are) and returned in the clone's place. Only one such argument is allowed,
  and none inside a written Tensor[]; an operator mixing written and read-only aliasing
  arguments is refused; the messages are torch's.

The fallthrough lists are torch 2.13's (``torch._C._dispatch_get_registrations_for_dispatch_
key``), restricted to the operators we define; they are registered on each operator's
definition by a registration listener, so they cost nothing at import (the fallbacks and
the listener ~0.2 ms at the first operator definition). ``dot`` reads the bit in its CPU
kernel as torch's does (``dot_with_conj_bits``). One difference: torch's ``mm``, ``bmm``,
``addmm``, ``baddbmm`` and ``vdot`` (and their ``_`` / out= forms) are Conjugate fallthroughs
because its BLAS calls read the bit; our NumPy kernels do not, so for them the fallback
resolves the inputs (``explain`` shows the fallback there; the values are the same).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from tensordispatch.dispatch.dispatcher import DISPATCHER, RegistrationHandle
from tensordispatch.dispatch.fallbacks import global_fallback_handle, restore_global_fallback
from tensordispatch.dispatch.kernel import fallthrough_kernel
from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import full_after_raw, keyset_raw
from tensordispatch.dispatch.library import Library
from tensordispatch.dispatch.operator import OperatorEntry
from tensordispatch.tensor.tensor import Tensor
from tensordispatch.tensor.values import resolved_values

__all__ = [
    "CONJUGATE_FALLTHROUGHS",
    "CONJ_RAW",
    "MATH_BITS_RAW",
    "MATH_BIT_KERNELS",
    "NEGATIVE_FALLTHROUGHS",
    "NEG_RAW",
    "apply_bits_in_place",
    "copy_with_math_bits",
    "dot_with_conj_bits",
    "install",
    "installed",
    "logical_array",
    "uninstall",
]

CONJ_RAW: int = keyset_raw(DispatchKey.Conjugate)
NEG_RAW: int = keyset_raw(DispatchKey.Negative)
MATH_BITS_RAW: int = CONJ_RAW | NEG_RAW

# torch 2.13's view and utility fallthroughs, shared by both keys (MathBitFallThroughLists.h)
_VIEWS_AND_UTILITIES = (
    "_conj", "_has_same_storage_numel", "_new_zeros_with_same_feature_meta", "_unsafe_view",
    "alias", "as_strided", "as_strided_", "chunk", "clone", "conj", "copy_", "detach",
    "detach_", "diagonal", "dsplit.array", "dsplit.int", "empty.memory_format", "empty.out",
    "empty_like", "empty_strided", "expand", "expand_as", "full_like", "hsplit.array",
    "hsplit.int", "imag", "is_complex", "is_floating_point", "linalg_solve_triangular",
    "linalg_solve_triangular.out", "linalg_svd", "linalg_svd.U", "movedim.int",
    "movedim.intlist", "narrow", "permute", "real", "repeat_interleave.Tensor",
    "repeat_interleave.self_Tensor", "repeat_interleave.self_int", "requires_grad_",
    "reshape", "resize_", "resolve_conj", "resolve_neg", "select.int", "set_",
    "set_.source_Storage_storage_offset", "set_.source_Tensor", "size.int", "split.Tensor",
    "split_with_sizes", "squeeze", "squeeze_", "stride.int", "swapaxes", "swapdims", "t",
    "t_", "transpose.int", "transpose_", "unbind.int", "unflatten.int", "unfold",
    "unsqueeze", "unsqueeze_", "view", "view_as", "view_as_real", "vsplit.array",
    "vsplit.int",
)  # fmt: skip
#: Operators the Conjugate key skips (torch's list minus the BLAS ones, module docstring).
CONJUGATE_FALLTHROUGHS: frozenset[str] = frozenset(
    (*_VIEWS_AND_UTILITIES, "_conj_physical", "conj_physical", "conj_physical_", "dot", "dot.out")
)
#: Operators the Negative key skips (torch 2.13's list).
NEGATIVE_FALLTHROUGHS: frozenset[str] = frozenset((*_VIEWS_AND_UTILITIES, "neg_"))


# -- values of a tensor with bits ----------------------------------------------------------------


def logical_array(t: Tensor) -> np.ndarray[Any, Any]:
    """The values a CPU tensor stands for: its array with its bits applied (a new array when
    a bit is set, else the tensor's own array).

    >>> import tensordispatch as td
    >>> x = td.tensor([1 + 2j])
    >>> logical_array(x.conj()).tolist(), x.conj()._data.tolist()
    ([(1-2j)], [(1+2j)])
    """
    return resolved_values(t._data, t._key_set)


def apply_bits_in_place(t: Tensor, bits: int) -> None:
    """Conjugate and/or negate ``t``'s stored values in place (``bits``: CONJ_RAW / NEG_RAW)."""
    data = t._data
    if bits & CONJ_RAW and data.dtype.kind == "c":
        np.conjugate(data, out=data)
    if bits & NEG_RAW:
        np.negative(data, out=data)


def copy_with_math_bits(self: Tensor, src: Tensor) -> Tensor:
    """The CPU copy_ between tensors whose conjugate or negative bits differ: ``self``'s stored
    values become ``src``'s values with ``self``'s bits undone (both bits are self-inverse),
    as torch's copy kernel conjugates / negates when the bits differ.

    >>> import tensordispatch as td
    >>> x = td.zeros(1, dtype=td.complex64)
    >>> _ = copy_with_math_bits(x.conj(), td.tensor([1 + 2j])); x
    tensor([1.-2.j])
    """
    from tensordispatch.backends.cpu.kernels import _copy_checked, check_no_overlap
    from tensordispatch.backends.meta.kernels import check_copy_shapes

    check_copy_shapes(self, src)
    check_no_overlap(self, src)
    values = Tensor._wrap_numpy(np.array(logical_array(src), copy=True), src.dtype)
    _copy_checked(self, values)  # reads arrays only, not key sets
    apply_bits_in_place(self, self._key_set)
    return self


def dot_with_conj_bits(self: Tensor, other: Tensor, dot: Any) -> Tensor:
    """The CPU ``dot`` of operands with different conjugate bits, as torch's (``dot`` is a
    Conjugate fallthrough there and here): one conjugate operand gives a plain result, two
    give the conjugate view of the stored values' dot (``dot`` calls itself with both bits
    cleared through this; the Negative fallback has resolved negative bits already).

    >>> import tensordispatch as td
    >>> a, b = td.tensor([1j, 2.0]), td.tensor([1.0, 1j])
    >>> r = td.dot(a.conj(), b.conj()); r, r.is_conj()
    (tensor(0.-3.j), True)
    >>> td.dot(a.conj(), b)
    tensor(0.+1.j)
    """
    both = self._key_set & other._key_set & CONJ_RAW
    if both:  # conj(a) . conj(b) == conj(a . b): the view over the stored values' dot
        result: Tensor = dot(_flipped_view(self, CONJ_RAW), _flipped_view(other, CONJ_RAW))
        return _flipped_view(result, CONJ_RAW)
    a = self if not self._key_set & CONJ_RAW else _clone()(self)
    b = other if not other._key_set & CONJ_RAW else _clone()(other)
    return dot(a, b)  # type: ignore[no-any-return]


# -- the views that set the bits (CompositeExplicitAutograd kernels) -----------------------------


def _flipped_view(self: Tensor, bit: int) -> Tensor:
    if not _LIBS:
        install()
    t = self._make_view(self._shape, self._strides, self._offset, self._data)
    t._key_set = self._key_set ^ bit
    return t


def _conj(self: Tensor) -> Tensor:
    """``aten::_conj``: a view of ``self`` with the conjugate bit flipped.

    >>> import tensordispatch as td
    >>> x = td.tensor([1 + 2j]); c = x._conj()
    >>> c.is_conj(), c._base is x, c
    (True, True, tensor([1.-2.j]))
    """
    return _flipped_view(self, CONJ_RAW)


def _neg_view(self: Tensor) -> Tensor:
    """``aten::_neg_view``: a view of ``self`` with the negative bit flipped.

    >>> import tensordispatch as td
    >>> n = td.tensor([1.0, -2.0])._neg_view()
    >>> n.is_neg(), n
    (True, tensor([-1., 2.]))
    """
    return _flipped_view(self, NEG_RAW)


MATH_BIT_KERNELS: dict[str, Any] = {"_conj": _conj, "_neg_view": _neg_view}


# -- the fallback (Note [The math-bit fallback]) -------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Plan:
    """What the fallback needs from one schema, computed once per operator."""

    schema: Any  # the FunctionSchema it was computed from (identity)
    is_view: bool  # aliasing arguments, all read-only: redispatch unchanged
    tensors: tuple[tuple[int, bool], ...]  # (stack position, written) of Tensor / Tensor?
    lists: tuple[tuple[int, bool], ...]  # (stack position, written) of Tensor[] / Tensor?[]
    mixed: bool  # written and read-only aliasing arguments together (refused)


_PLANS: dict[OperatorEntry, _Plan] = {}

# torch's texts, word for word (its double space and missing ones included)
_MIXED = " ".join([  # noqa: FLY002 - no adjacent literals (STYLE.md)
    "Unsupported operator for {what} fallback: {name}{what} fallback doesn't work for",
    "operators with a mix mutable and non-mutable inputs that alias with outputs, this must",
    "be implemented manually.  If you got this error on a core op, please report a bug to",
    "PyTorch.",
])  # fmt: skip
_TWO_WRITTEN = " ".join([  # noqa: FLY002 - no adjacent literals
    "{what} fallback does not support operators with more than one mutable tensors with",
    "{what}bit set to true.",
])  # fmt: skip
_WRITTEN_LIST = " ".join([  # noqa: FLY002 - no adjacent literals
    " fallback doesn't currently support mutable TensorLists with {what} inputs. Please",
    "materialize all the {what} input tensor(s) in the mutable TensorList inputs before",
    "calling {name}",
])  # fmt: skip


def _plan(op: Any) -> _Plan:
    entry = op._entry
    plan = _PLANS.get(entry)
    if plan is not None and plan.schema is entry.schema:
        return plan
    schema = op.schema
    writes = {a.alias_info.is_write for a in schema.arguments if a.alias_info is not None}
    tensors, lists = [], []
    for i, a in enumerate(schema.arguments):
        kind = str(a.type)
        if kind in ("Tensor", "Tensor?"):
            tensors.append((i, a.is_write))
        elif kind in ("Tensor[]", "Tensor?[]"):
            lists.append((i, a.is_write))
    plan = _Plan(schema, writes == {False}, tuple(tensors), tuple(lists), len(writes) == 2)
    _PLANS[entry] = plan
    return plan


def _make_fallback(key: DispatchKey, bit: int, what: str) -> Any:
    mask = full_after_raw(key)

    def fallback(op: Any, keyset: Any, stack: list[Any]) -> Any:
        raw = keyset if type(keyset) is int else keyset.raw
        plan = _plan(op)
        if plan.mixed:
            raise RuntimeError(_MIXED.format(what=what, name=op.schema.name))
        if plan.is_view:
            return op._redispatch_boxed(raw & mask, stack)
        clone = _clone()
        written: tuple[Tensor, Tensor] | None = None
        for i, is_write in plan.tensors:
            t = stack[i]
            if t is None or not t._key_set & bit:
                continue
            resolved = clone(t)
            if is_write:
                if written is not None:
                    raise RuntimeError(_TWO_WRITTEN.format(what=what))
                written = (t, resolved)
            stack[i] = resolved
        for i, is_write in plan.lists:
            ts = stack[i]
            if ts is None or not any(t is not None and t._key_set & bit for t in ts):
                continue
            if is_write:
                raise RuntimeError(_WRITTEN_LIST.format(what=what, name=op.schema.name))
            stack[i] = [t if t is None or not t._key_set & bit else clone(t) for t in ts]
        result = op._redispatch_boxed(raw & mask, stack)
        if written is None:
            return result
        return _write_back(result, *written)

    fallback.__qualname__ = f"{what}_fallback"
    return fallback


def _write_back(result: Any, original: Tensor, resolved: Tensor) -> Any:
    """Copy the written clone back into the tensor with the bit; it replaces the clone in
    the result. (torch reads the first return; an operator returning nothing copies the
    clone, where torch's fallback fails.)"""
    from tensordispatch.backends.aten import op

    out = result[0] if isinstance(result, tuple) else result
    if out is None:
        out = resolved
    if original._shape != out._shape:
        op("resize_")(original, list(out._shape))
    op("copy_")(original, out)
    if isinstance(result, tuple):
        return tuple(original if r is resolved else r for r in result)
    return original if result is resolved else result


def _clone() -> Any:
    from tensordispatch.backends.aten import op

    return op("clone")


# -- registration --------------------------------------------------------------------------------

_LIBS: list[Library] = []
_LOCK = threading.RLock()
_DONE: set[str] = set()
_STATE: dict[str, RegistrationHandle] = {}
_WHAT = ((DispatchKey.Conjugate, "conjugate"), (DispatchKey.Negative, "negation"))
_KEYS = (
    (DispatchKey.Conjugate, CONJUGATE_FALLTHROUGHS),
    (DispatchKey.Negative, NEGATIVE_FALLTHROUGHS),
)


def _on_definition(entry: OperatorEntry) -> None:
    if entry.schema is None or not entry.qualified_name.startswith("aten::"):
        return
    name = entry.qualified_overload_name.split("::")[1]
    if name in _DONE or not _LIBS:
        return
    _DONE.add(name)
    for key, names in _KEYS:
        if name in names:
            _LIBS[1].impl(name, fallthrough_kernel, key.name, debug=_debug(_on_definition))


def _debug(fn: Any) -> str:
    return f"registered at tensordispatch/backends/math_bits.py:{fn.__code__.co_firstlineno}"


def installed() -> bool:
    """Whether the math-bit fallbacks are registered."""
    return bool(_LIBS)


def install() -> None:
    """Register the Conjugate and Negative fallbacks and their fallthroughs (idempotent).

    >>> install()
    >>> from tensordispatch.dispatch import dump_table
    >>> [r for r in dump_table("aten::view").splitlines() if r.startswith("Conjugate")]
    ['Conjugate: fallthrough registered at tensordispatch/backends/math_bits.py:... [kernel]']
    """
    if _LIBS:
        return
    with _LOCK:
        if _LIBS:
            return
        fallbacks, impls = Library("_", "IMPL"), Library("aten", "IMPL")
        with DISPATCHER.batch():
            for key, what in _WHAT:
                global_fallback_handle(key).remove()
                fn = _make_fallback(key, keyset_raw(key), what)
                fallbacks.fallback(fn, key.name, boxed=True, debug=_debug(fn))
            _LIBS.extend([fallbacks, impls])
            _STATE["listener"] = DISPATCHER.add_registration_listener(_on_definition)
            for entry in [e for e in list(DISPATCHER.entries.values()) if e.is_live]:
                _on_definition(entry)


def uninstall() -> None:
    """Remove the math-bit kernels and restore the import-time redispatching fallbacks."""
    with _LOCK:
        handle = _STATE.pop("listener", None)
        if handle is not None:
            handle.remove()
        while _LIBS:
            _LIBS.pop()._destroy()
        _DONE.clear()
        for key, _ in _KEYS:
            restore_global_fallback(key)
