"""The one-hop path of basic indexing (``x[1]``, ``x[1:3]``, ``x[:, 0]``, ``x[..., None]``).

Used by ops/indexing.py before its general path; must not change what any key gives.

Note [Basic indexing in one hop]
torch's ``x[1:3]`` calls ``slice.Tensor`` through the dispatcher: for a plain CPU tensor
that does not require grad, under the default thread-local words, that reaches the
autograd kernel's no-grad branch (a plain redispatch) and then the view kernel of
backends/views.py, once per index item. The result is fully determined by the geometry of
``self`` (Note [Views share the root] in tensor.py), so here a whole key of ints, slices,
None and Ellipsis is turned into one shape, strides and offset and one ``_make_view``, with
NumPy's basic indexing of ``self``'s array giving the data (Note [NumPy-derived view data]
in backends/views.py): about 4x fewer Python frames.

It is only taken when nothing could observe the hops it skips: ``self`` is exactly a
Tensor with the CPU key set whose autograd meta neither requires grad nor carries a view
creation meta, grad mode is on (in no_grad the autograd kernels of view ops mark the
views they make: autograd/views.py, Note [View creation meta]), the thread-local
include/exclude words are the defaults (no Python mode, vmap level, functionalization or
dispatch-key guard: those change them), and each operator it stands for (select.int,
slice.Tensor, unsqueeze) still resolves, for that key set, to the autograd kernels'
plain no-grad redispatch and then to the view kernel of backends/views.py. That last fact
is checked once per published dispatch state of the operator (operator.py, Note
[Published dispatch state]): a registration (a user kernel at CPU or Autograd, a fallback,
an open dispatch trace) publishes a new state and the next call re-checks it. Anything
else, and any key it does not handle in range (errors included), takes the general path,
which raises torch's messages.

Note [Assignment in one hop]
``x[1:3] = b`` is the view of the key, then ``copy_`` (``fill_.Scalar`` for a number) on it:
the autograd kernel (no grad: a plain redispatch), ADInplaceOrView (the CPU kernel with
the autograd keys and ADInplaceOrView excluded, then a version bump of the written view),
the CPU kernel. Under the conditions above, plus ``value`` being a Python number or a
plain CPU tensor not requiring grad of the view's shape or 0-dim (torch views and expands
any other first), ``assign`` does exactly those last two steps itself;
``InplaceGuard`` checks the chain per published state as ``ViewGuard`` does. When the CPU
kernel is our own ``fill_`` or ``copy_``, which dispatch nothing and read no thread-local
word, the exclusion ADInplaceOrView sets around it is unobservable and is skipped.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from tensordispatch.dispatch.kernel import KernelKind
from tensordispatch.dispatch.keyset import (
    AFTER_AD_INPLACE_OR_VIEW_RAW,
    AFTER_AUTOGRAD_RAW,
    AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW,
    DEFAULT_EXCLUDED_RAW,
    DEFAULT_INCLUDED_RAW,
)
from tensordispatch.dispatch.tls import local_state
from tensordispatch.tensor.device import CPU
from tensordispatch.tensor.tensor import Tensor

__all__ = [
    "COPY_",
    "FILL_",
    "SELECT",
    "SLICE",
    "UNSQUEEZE",
    "FunctionalGuard",
    "Guard",
    "InplaceGuard",
    "ViewGuard",
    "assign",
    "basic_view",
    "fits",
    "plain_cpu",
]

_INT64_MAX = 2**63 - 1
_ndarray = np.ndarray
_CPU_RAW: int = CPU._key_set
_ST = local_state()
_DX = DEFAULT_EXCLUDED_RAW
_DI = DEFAULT_INCLUDED_RAW
_EMPTY = builtins.slice(0, 0)
_slice = builtins.slice
_BELOW_ADIOV = AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW
_SCALARS = (int, float, bool)


class _Unbound:
    """Stands for an operator entry before the first check (its state never matches)."""

    __slots__ = ("state",)

    def __init__(self) -> None:
        self.state = object()


class Guard:
    """Whether an operator's calls on plain CPU tensors still take the chain of kernels a
    one-hop path stands for, re-checked only when its published state changes (Note [Basic
    indexing in one hop]); ``kernel`` is the backend kernel at the end once checked.
    Callers test ``g.entry.state is g.state or g.recheck()``. Subclasses say which chain.
    """

    __slots__ = ("entry", "kernel", "known_bad", "name", "state")

    def __init__(self, name: str) -> None:
        self.name = name  # the operator
        self.entry: Any = _Unbound()
        self.state: Any = None
        self.known_bad: Any = None
        self.kernel: Any = None

    def recheck(self) -> bool:
        """Check the operator's current state; True when plain."""
        from tensordispatch.backends.aten import op

        self.entry = entry = op(self.name)._entry
        state = entry.state
        if state is self.known_bad:
            return False
        kernel = None if state.tracer is not None else self.chain(state)
        if kernel is not None:
            self.kernel = kernel  # before the state: a reader matching it sees this kernel
            self.state = state
            return True
        self.state, self.known_bad = None, state
        return False

    def chain(self, state: Any) -> Any:
        """The backend kernel ``state`` leads a plain CPU call to, or None."""
        raise NotImplementedError


class ViewGuard(Guard):
    """A view operator: the autograd kernels' fast-path kernel (its no-grad branch is a
    plain redispatch), then the kernel named ``kernel`` of backends/views.py or view_ops.py.

    >>> g = ViewGuard("select.int", "select")
    >>> g.entry.state is g.state or g.recheck()
    True
    """

    __slots__ = ("kernel_name",)

    def __init__(self, name: str, kernel: str) -> None:
        super().__init__(name)
        self.kernel_name = kernel

    def chain(self, state: Any) -> Any:
        from tensordispatch.backends import view_ops, views

        kernels = {**views.VIEW_KERNELS, **view_ops.VIEW_OP_KERNELS}
        below = _below_autograd(state)
        return below if below is kernels[self.kernel_name] else None


class FunctionalGuard(Guard):
    """A functional operator: the autograd kernels' fast-path kernel, then the CPU kernel
    whose ``__module__`` and ``__name__`` are given (a generated wrapper, say).

    >>> g = FunctionalGuard("index.Tensor", "tensordispatch.generated.registrations",
    ...                     "wrapper_CPU_index_Tensor")
    >>> g.entry.state is g.state or g.recheck()
    True
    """

    __slots__ = ("function", "module")

    def __init__(self, name: str, module: str, function: str) -> None:
        super().__init__(name)
        self.module, self.function = module, function

    def chain(self, state: Any) -> Any:
        below = _below_autograd(state)
        if (
            getattr(below, "__module__", None) == self.module
            and getattr(below, "__name__", None) == self.function
        ):
            return below
        return None


# Note [Plain kernel markers]
# Which autograd and ADInplaceOrView kernels a one-hop path may skip is said by the kernels
# themselves, not by their names or modules (moving code must not silently turn the paths
# off, nor a look-alike turn them on): autograd/ sets ``_td_plain_no_grad = True`` on an
# autograd kernel whose call with grad mode on and no input requiring grad is exactly a
# redispatch below the autograd keys (the generated kernels' ``_fast_path``, copy_'s), and
# ``_td_plain_inplace = True`` on the ADInplaceOrView kernel that runs below it and then
# bumps the version of each written tensor. ``test_every_guard_is_plain_by_default`` checks
# that the default tables have them.
_PLAIN_NO_GRAD = "_td_plain_no_grad"
_PLAIN_INPLACE = "_td_plain_inplace"


def _below_autograd(state: Any) -> Any:
    """The unboxed kernel a CPU call under the default words reaches right below a plain
    autograd kernel (Note [Plain kernel markers]), or None."""
    final = state.final_keyset(_DX, _CPU_RAW | _DI)
    try:
        top, raw = state.resolve(final)
        below, _ = state.resolve(raw & AFTER_AUTOGRAD_RAW)
    except Exception:  # noqa: BLE001 - a missing kernel: the general path reports it
        return None
    if getattr(top.fn, _PLAIN_NO_GRAD, False) is True and below.kind is KernelKind.UNBOXED:
        return below.fn
    return None


class InplaceGuard(Guard):
    """An in-place operator: a plain autograd kernel (its no-grad branch a redispatch),
    the plain ADInplaceOrView kernel's bump (Note [Plain kernel markers]), then a CPU kernel
    of backends/ (Note [Assignment in one hop]).

    >>> g = InplaceGuard("fill_.Scalar")
    >>> (g.entry.state is g.state or g.recheck()), g.kernel.__name__
    (True, 'fill_')
    """

    __slots__ = ("quiet",)

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.quiet = False  # the checked kernel is our CPU fill_ or copy_ (Note [Assignment ...])

    def chain(self, state: Any) -> Any:
        final = state.final_keyset(_DX, _CPU_RAW | _DI)
        try:
            top, raw = state.resolve(final)
            middle, raw = state.resolve(raw & AFTER_AUTOGRAD_RAW)
            below, _ = state.resolve(raw & AFTER_AD_INPLACE_OR_VIEW_RAW)
        except Exception:  # noqa: BLE001 - a missing kernel: the general path reports it
            return None
        fn = below.fn
        plain = (
            getattr(top.fn, _PLAIN_NO_GRAD, False) is True
            and getattr(middle.fn, _PLAIN_INPLACE, False) is True
            and below.kind is KernelKind.UNBOXED
            and getattr(fn, "__module__", "").startswith("tensordispatch.backends.")
        )
        if not plain:
            return None
        from tensordispatch.backends.cpu import kernels  # loaded by now: its kernels resolved

        self.quiet = fn is kernels.fill_ or fn is kernels.copy_  # before recheck sets state
        return fn


SELECT = ViewGuard("select.int", "select")
SLICE = ViewGuard("slice.Tensor", "slice")
UNSQUEEZE = ViewGuard("unsqueeze", "unsqueeze")
COPY_ = InplaceGuard("copy_")
FILL_ = InplaceGuard("fill_.Scalar")


def plain_cpu(t: Any) -> bool:
    """Whether ``t`` is a plain CPU tensor not requiring grad, under the default
    thread-local words (the first half of Note [Basic indexing in one hop]).

    >>> import tensordispatch as td
    >>> plain_cpu(td.zeros(2)), plain_cpu(td.zeros(2, requires_grad=True))
    (True, False)
    >>> with td.no_grad():
    ...     plain_cpu(td.zeros(2))
    False
    """
    if type(t) is not Tensor or t._key_set != _CPU_RAW:
        return False
    m = t._autograd_meta
    if m is not None and (m.requires_grad or getattr(m, "creation_meta", 0)):
        return False  # a view made in no_grad passes its creation meta on (autograd/views.py)
    st = _ST
    return (
        st.excluded is _DX
        and st.included is _DI
        and st.grad_enabled  # in no_grad the view kernels mark views (Note [View creation meta])
        and type(t._data) is _ndarray
    )


def _clamp(item: slice, size: int) -> tuple[int, int, int] | None:
    """(start, length, step) of a slice as slice.Tensor clamps it, or None to decline."""
    start, stop, step = item.start, item.stop, item.step
    if step is None:
        step = 1
    elif type(step) is not int or step <= 0:
        return None
    if start is None:
        lo = 0
    elif type(start) is int:
        lo = start + size if start < 0 else start
        lo = 0 if lo < 0 else (size if lo > size else lo)  # noqa: FURB136 - no call
    else:
        return None
    if stop is None:
        hi = size
    elif type(stop) is int:
        hi = stop + size if stop < 0 else stop
        hi = lo if hi < lo else (size if hi > size else hi)  # noqa: FURB136 - no call
    else:
        return None
    return lo, (hi - lo + step - 1) // step, step


def _one_int(self: Tensor, index: int) -> Tensor | None:
    g = SELECT
    shape = self._shape
    if not shape or not (g.entry.state is g.state or g.recheck()):
        return None
    size = shape[0]
    if index < 0:
        index += size
    if not 0 <= index < size:
        return None
    strides = self._strides
    return self._make_view(
        shape[1:], strides[1:], self._offset + index * strides[0], self._data[index, ...]
    )


def _one_slice(self: Tensor, item: slice) -> Tensor | None:
    g = SLICE
    shape = self._shape
    if not shape or not (g.entry.state is g.state or g.recheck()):
        return None
    # _clamp inlined for the common steps (a call costs ~60 ns)
    start, stop, step = item.start, item.stop, item.step
    size = shape[0]
    if step is None:
        step = 1
    elif type(step) is not int or step <= 0:
        return None
    if start is None:
        lo = 0
    elif type(start) is int:
        lo = start + size if start < 0 else start
        lo = 0 if lo < 0 else (size if lo > size else lo)  # noqa: FURB136 - no call
    else:
        return None
    if stop is None:
        hi = size
    elif type(stop) is int:
        hi = stop + size if stop < 0 else stop
        hi = lo if hi < lo else (size if hi > size else hi)  # noqa: FURB136 - no call
    else:
        return None
    strides = self._strides
    offset = self._offset + lo * strides[0]
    if step == 1:
        length = hi - lo
        return self._make_view(
            (length,) + shape[1:], strides, offset, self._data[lo:hi] if length else self._data[0:0]
        )
    length = (hi - lo + step - 1) // step
    part = builtins.slice(lo, lo + length * step, step) if length else _EMPTY
    return self._make_view(
        (length,) + shape[1:], (strides[0] * step,) + strides[1:], offset, self._data[part]
    )


# Note [Tuple keys by plan]
# A tuple key's result geometry (shape, strides, offset from self's) and how its NumPy data
# is made depend only on self's shape, strides and dtype and on the key's items (ints by
# value, slices by their three fields). So the first 4096 (geometry, key) pairs seen are
# kept with their plan; a later call rebuilds the key's hashable signature (a slice becomes
# its fields), finds the plan and makes the view: no item loop, clamping or stride
# arithmetic. A plan that reshapes NumPy's data to insert dims keeps the byte strides it
# was checked against and is used only while self's array still has them.

_PLANS: dict[Any, Any] = {}


def _signature(key: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """The hashable form of a tuple key (slices as their fields), None for other items."""
    sig: list[Any] = []
    for item in key:
        t = type(item)
        if t is _slice:
            sig.append((item.start, item.stop, item.step))
        elif t is int or item is None or item is Ellipsis:
            sig.append(item)
        else:
            return None
    return tuple(sig)


# the last tuple key seen and its signature (one tuple: read and replaced atomically); the
# key is kept alive, so `is` cannot match a new object at its address
_LAST_KEY: tuple[Any, Any] = (None, None)


def _tuple_view(self: Tensor, key: tuple[Any, ...]) -> Tensor | None:
    """A tuple of ints, slices, None and at most one Ellipsis, applied left to right as
    ops/indexing.py's general path does (Note [Indexing: basic then advanced]), through its
    plan (Note [Tuple keys by plan])."""
    global _LAST_KEY
    sel, sl, un = SELECT, SLICE, UNSQUEEZE
    if not (
        (sel.entry.state is sel.state or sel.recheck())
        and (sl.entry.state is sl.state or sl.recheck())
        and (un.entry.state is un.state or un.recheck())
    ):
        return None
    last = _LAST_KEY
    if last[0] is key:  # a constant key (a[..., None] in a loop): its signature is known
        sig = last[1]
    else:
        sig = _signature(key)
        if sig is None:
            return None
        _LAST_KEY = (key, sig)
    at = (self._shape, self._strides, self.dtype, sig)
    try:
        plan = _PLANS.get(at)
    except TypeError:  # a slice field that does not hash: the general path
        return None
    if plan is None:
        plan = _plan(self, key)
        if len(_PLANS) < 4096:
            _PLANS[at] = plan
    shape, strides, delta, np_key, byte_strides = plan
    if shape is None:
        return None
    data = self._data
    if np_key is None:  # empty result, or NumPy cannot give the data: from the storage
        data = None
    elif byte_strides is None:
        data = data[np_key]
    elif data.strides == byte_strides:
        data = data[np_key].reshape(shape)
    else:
        data = None
    return self._make_view(shape, strides, self._offset + delta, data)


def _plan(self: Tensor, key: tuple[Any, ...]) -> tuple[Any, ...]:
    """The plan of ``self[key]`` (Note [Tuple keys by plan]): (shape, strides, offset delta,
    NumPy key or None, self's array byte strides a reshape was checked for, or None);
    shape None when the general path must handle the key. NumPy's
    basic indexing clamps slices and counts dims as torch does (positive steps, ints checked
    in range first), so the key itself gives the data; an inserted dim (NumPy gives it
    stride 0, torch unsqueeze's) is reshaped in and checked; an empty result gets its array
    from the storage."""
    declined = (None, None, 0, None, None)
    shape, strides = self._shape, self._strides
    ndim = len(shape)
    named = 0
    ellipsis = False
    for item in key:
        t = type(item)
        if t is int or t is _slice:
            named += 1
        elif item is Ellipsis and not ellipsis:
            ellipsis = True
        elif item is not None:
            return declined
    if named > ndim:
        return declined
    out_shape: list[int] = []
    out_strides: list[int] = []
    offset = 0
    d = 0
    changed = inserted = False
    for item in key:
        if type(item) is int:
            size = shape[d]
            index = item + size if item < 0 else item
            if not 0 <= index < size:
                return declined
            offset += index * strides[d]
            d += 1
            changed = True
        elif type(item) is _slice:
            if item.start is None and item.stop is None and item.step is None:
                out_shape.append(shape[d])
                out_strides.append(strides[d])
                d += 1
                continue
            size, stride = shape[d], strides[d]
            clamped = _clamp(item, size)
            if clamped is None:
                return declined
            lo, length, step = clamped
            out_shape.append(length)
            out_strides.append(stride * step)
            offset += lo * stride
            d += 1
            changed = True
        elif item is None:
            # unsqueeze's stride: the next dim's extent, 1 at the end
            out_shape.append(1)
            out_strides.append(shape[d] * strides[d] if d < ndim else 1)
            inserted = changed = True
        else:
            skip = ndim - named
            out_shape += shape[d : d + skip]
            out_strides += strides[d : d + skip]
            d += skip
    if not changed:
        return declined  # the general path gives alias
    out_shape += shape[d:]
    out_strides += strides[d:]
    shape_t, strides_t = tuple(out_shape), tuple(out_strides)
    if 0 in shape_t:
        return (shape_t, strides_t, offset, None, None)  # from the storage, in bounds
    if not inserted:
        return (shape_t, strides_t, offset, key if ellipsis else (*key, Ellipsis), None)
    # NumPy's newaxis has stride 0; its reshape inserting ones usually gives unsqueeze's
    kept = tuple([k for k in key if k is not None])
    np_key = kept if ellipsis else (*kept, Ellipsis)
    data = self._data[np_key].reshape(shape_t)
    itemsize = self.dtype.itemsize
    if data.strides != tuple([s * itemsize for s in strides_t]):
        return (shape_t, strides_t, offset, None, None)  # from the storage
    return (shape_t, strides_t, offset, np_key, self._data.strides)


def basic_view(self: Tensor, key: Any) -> Tensor | None:
    """``self[key]`` for a plain CPU ``self`` (``plain_cpu``), or None when the general path
    must decide (a key it does not handle, an index out of range, or an operator whose
    dispatch is not plain: ``ViewGuard``).

    >>> import tensordispatch as td
    >>> x = td.arange(12.0).view(3, 4)
    >>> y = basic_view(x, (slice(1, None), 2)); y.tolist(), y.stride(), y._base is x._base
    ([6.0, 10.0], (4,), True)
    """
    t = type(key)
    if t is int:
        return _one_int(self, key)
    if t is builtins.slice:
        return _one_slice(self, key)
    if t is tuple:
        return _tuple_view(self, key)
    if key is None:
        return _tuple_view(self, (None,))
    return None


def fits(value: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Whether a value of shape ``value`` broadcasts to ``target`` with no dims to add in
    front beyond ``target``'s (NumPy's assignment then writes what torch's index_put_ does).

    >>> fits((1, 4), (3, 4)), fits((4,), (3, 4)), fits((1, 3, 4), (3, 4)), fits((2,), (3, 4))
    (True, True, False, False)
    """
    n = len(value)
    if n > len(target):
        return False
    return all(v == 1 or v == t for v, t in zip(value, target[len(target) - n :], strict=True))


def assign(self: Tensor, key: Any, value: Any) -> bool:
    """``self[key] = value`` for a plain CPU ``self`` (``plain_cpu``) when the key is basic
    and ``value`` a Python number or a plain CPU tensor not requiring grad (Note [Assignment
    in one hop]); False when the general path must do it.

    >>> import tensordispatch as td
    >>> x = td.zeros(2, 3)
    >>> assign(x, (0, slice(1, None)), 5.0), assign(x, 1, td.ones(3)), x.tolist(), x._version
    (True, True, [[0.0, 5.0, 5.0], [1.0, 1.0, 1.0]], 2)
    """
    if type(value) in _SCALARS:
        g = FILL_
    elif type(value) is Tensor and value._key_set == _CPU_RAW:
        m = value._autograd_meta
        if m is not None and m.requires_grad:
            return False
        g = COPY_
    else:
        return False
    if not (g.entry.state is g.state or g.recheck()):
        return False
    view = basic_view(self, key)
    if view is None:
        return False
    if g is COPY_ and value._shape != view._shape and value._shape:
        return False  # torch views and expands the value first: the general path
    kernel = g.kernel
    if g.quiet:
        # our CPU fill_ (of a Python number) and copy_ (of a plain CPU tensor) check, convert
        # and write with NumPy: no dispatch inside, no thread-local word read, so the words
        # need not change around them
        kernel(view, value)
        view._bump_version()
        return True
    st = _ST
    saved = st.excluded
    st.excluded = saved | _BELOW_ADIOV  # ADInplaceOrView's kernel runs the CPU one so
    try:
        g.kernel(view, value)
    finally:
        st.excluded = saved
    view._bump_version()
    return True
