"""One-hop factory calls for the generated bindings: ``td.zeros(4, 4)`` straight to the work
the full dispatch would do, when it is known to be exactly that work.

Owns the hops of the factory bindings (codegen/gen_python.py's ``ONE_HOP_FACTORIES``): each
is called by the binding with the caller's arguments and returns the result, or None when
it does not apply (then the binding takes the full dispatch, unchanged). Must not change what
any call computes, raises or shows: it only skips hops whose outcome it has checked.

Note [One-hop factory bindings]
A factory binding's full path is: set the thread-local excluded word (Note [Factories run
below ADInplaceOrView]), the operator's entry (argument checks, table lookup), the
generated BackendSelect kernel (key set from dtype/layout/device, redispatch), the kernel
at CPU (our CPU kernel, or a composite kernel that calls our CPU kernels directly, Note
[Composite factories call known kernels directly]), restore the word. For a 4x4 ``zeros``
that is ~1.4 us of dispatch around ~0.6 us of work. Which kernels run is a pure function
of the thread-local words and the operators' published dispatch states (replaced by every
registration, fallback change and while a ``dispatch_trace`` is open: Note [Tracing by
republishing]). So a hop answers from a memo keyed by the identity of its operator's
published state (and, for the composite factories, of the three inner operators' states,
through ``composite_direct``), and only under the default words (no mode, transform,
inference mode, or include/exclude guard). A new state is checked by asking the dispatcher
itself: the lookup under the bindings' words with no tensor arguments must give our
generated BackendSelect kernel, its redispatch to CPU must give the expected kernel, there
must be no tracer, and for the composite factories ``fill_``/``empty`` must be known
(``FILL_TOO``). The hop then does that kernel's work for arguments it can take without
any conversion or check that could fail: a size that is a list or tuple of plain ints of a
shape already seen by ``empty`` (Note [Shapes seen by empty]), dtype absent or a dtype
object, device absent or the CPU device (the object or "cpu": the same BackendSelect key
set and composite branch as none), every other option absent. Anything else returns None
and takes the full path, so errors, messages, traces and overrides are the dispatcher's.

arange (the hand-written binding, ops/bindings.py; session 7; the hop is in
composite_fast_arange.py): the binding picks torch's overload (``arange`` for one number,
``arange.start``, ``arange.start_step``); its full path's composite kernel computes the
range with ``arange_cpu`` itself when ``empty`` and ``arange.start_out`` are known to run
our CPU kernels (composite_layout's ``_direct``). ``ArangeHop`` checks the operator's
BackendSelect and composite kernels as ``FactoryHop`` does, plus that direct branch's two
questions, on five published states. The hop takes 1 to 3 plain ints (within int64) or
floats, dtype absent or an int64 or floating dtype object (the composite's own condition
for its direct branch), and infers the dtype as the composite does (int64 for ints, the
default dtype when one is a float). It computes the length and values inline for the
common cases (a range whose sign agrees with its step, ``0, 1, ...`` in float32/float64 up
to 2**24 made in that dtype, bit for bit what the kernel's float64 values cast give) and
otherwise calls ``arange_length``/``arange_cpu``; any exception returns None, so the full
path raises it in its own words. ``full`` (session 7) is a filled hop whose value is the
caller's: a plain bool, int or float, the dtype inferred from it as the composite does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tensordispatch.backends import composite_direct as _direct
from tensordispatch.backends.composite_direct import FILL_TOO
from tensordispatch.dispatch.calling import NOT_GIVEN
from tensordispatch.dispatch.keyset import (
    AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW,
    DEFAULT_EXCLUDED_RAW,
    DEFAULT_INCLUDED_RAW,
)
from tensordispatch.dispatch.tls import local_state
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.device import CPU
from tensordispatch.tensor.geometry import contiguous_of as _contiguous_of
from tensordispatch.tensor.tensor import _CPU_KEY_SET, Tensor, new_cpu_tensor

__all__ = [
    "FactoryHop",
    "LikeHop",
    "empty_like",
    "empty_memory_format",
    "empty_strided",
    "full",
    "linspace",
    "ones",
    "ones_like",
    "zeros",
    "zeros_like",
]

_ST = local_state()
_DX = DEFAULT_EXCLUDED_RAW
_DI = DEFAULT_INCLUDED_RAW
_BELOW_AD_WORD = DEFAULT_EXCLUDED_RAW | AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW
_DTYPE = type(_dt.float32)
_NO = NOT_GIVEN
_np_zeros = np.zeros
_np_empty = np.empty


class _Hop:
    """What a hop knows: the operator ``name``, the four entries whose published states decide
    whether the hop is exactly the full dispatch (``entries``), and those states when last
    checked with the answer for them (``memo``, replaced as one tuple); subclasses say how
    the answer is found (``_check``)."""

    __slots__ = ("entries", "memo", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self.entries: tuple[Any, Any, Any, Any] | None = None
        self.memo: tuple[Any, Any, Any, Any, bool] = (None, None, None, None, False)

    def ready(self) -> bool:
        """True when the one hop is exactly what the full dispatch would run."""
        words = _ST.__dict__
        if words["excluded"] is not _DX or words["included"] is not _DI:
            return False
        e, m = self.entries, self.memo
        if (
            e is not None and e[0].state is m[0] and e[1].state is m[1]
            and e[2].state is m[2] and e[3].state is m[3]
        ):  # fmt: skip
            return m[4]
        return self._check()

    def _check(self) -> bool:
        raise NotImplementedError


class FactoryHop(_Hop):
    """Whether a call of the factory ``name`` made by its binding now (default words, no
    tensor arguments, no device) would run our BackendSelect kernel ``backend_select`` and
    then ``kernel`` at CPU, with the inner operators known when ``inner`` (Note [One-hop
    factory bindings]). Memoized per published state.

    >>> hop = FactoryHop("zeros", "zeros", "composite:zeros", inner=True)
    >>> hop.ready()
    True
    """

    __slots__ = ("backend_select", "inner", "kernel")

    def __init__(self, name: str, backend_select: str, kernel: str, inner: bool) -> None:
        # entries: the operator's; with inner, empty.memory_format, empty_strided,
        # fill_.Scalar; else the operator's again
        super().__init__(name)
        self.backend_select, self.kernel, self.inner = backend_select, kernel, inner

    def _check(self) -> bool:
        from tensordispatch.backends.aten import backend_select_keyset, op
        from tensordispatch.generated import registrations as gen

        entry = op(self.name)._entry
        if self.inner:
            e = self.entries = (entry, *(_direct._ENTRIES or _direct._entries()))
        else:
            e = self.entries = (entry, entry, entry, entry)
        states = (e[0].state, e[1].state, e[2].state, e[3].state)
        state = states[0]
        answer = (
            state.tracer is None
            and state.lookup(_BELOW_AD_WORD, _DI, 0)
            is getattr(gen, f"backend_select_{self.backend_select}")
            and state.entry_for(backend_select_keyset(None, None, None)) is _kernel(self.kernel)
        )
        if self.inner:  # the composite kernel's own question, for these states
            answer = answer and _direct._check(e[1:])[4] == FILL_TOO
        self.memo = (*states, answer)
        return answer


def _kernel(spec: str) -> Any:
    """The kernel named ``composite:<name>`` (COMPOSITE_KERNELS) or ``cpu:<function>``
    (backends/cpu/kernels.py); loads what the hops use (``_load``)."""
    _load()
    from tensordispatch.backends.composite import COMPOSITE_KERNELS
    from tensordispatch.backends.cpu import kernels

    table, _, name = spec.partition(":")
    return COMPOSITE_KERNELS[name] if table == "composite" else getattr(kernels, name)


# Bound by _load() at the first check, not at import (the bindings import this module and
# `import tensordispatch` loads no kernel module): until then every hop's check fails first.
_SHAPES: dict[Any, Any] = {}
_STRIDED: dict[Any, Any] = {}
_cpu_fill: Any = None
_cpu_empty_like: Any = None


def _load() -> None:
    global _SHAPES, _STRIDED, _cpu_fill, _cpu_empty_like
    from tensordispatch.backends import composite
    from tensordispatch.backends.cpu import kernels

    _SHAPES, _STRIDED, _cpu_fill = kernels._SHAPES, kernels._STRIDED, kernels.fill_
    _cpu_empty_like = composite._cpu_empty_like


_ZEROS = FactoryHop("zeros", "zeros", "composite:zeros", inner=True)
_ONES = FactoryHop("ones", "ones", "composite:ones", inner=True)


class _OwnStateHop(FactoryHop):
    """A ``FactoryHop`` whose kernel calls no other operator (``inner`` False): its own
    operator's published state alone decides, one comparison instead of four."""

    __slots__ = ()

    def ready(self) -> bool:
        words = _ST.__dict__
        if words["excluded"] is not _DX or words["included"] is not _DI:
            return False
        e, m = self.entries, self.memo
        if e is not None and e[0].state is m[0]:
            return m[4]
        return self._check()


_EMPTY = _OwnStateHop("empty.memory_format", "empty_memory_format", "cpu:empty_cpu", False)
_EMPTY_STRIDED = _OwnStateHop("empty_strided", "empty_strided", "cpu:empty_strided_cpu", False)
_default_dtype = _dt.get_default_dtype


def _is_cpu(device: Any) -> bool:
    """Whether a factory's ``device`` argument is the CPU device (the object or "cpu"): the
    BackendSelect key set and the composite's direct branch are then those of no device."""
    return device is CPU or (type(device) is str and device == "cpu")


def _filled_hop(hop: FactoryHop, value: int | None) -> Callable[[Any, Any], Tensor | None]:
    """The hop of a factory whose kernel is ``fill_(empty(size, dtype), value)`` (no fill
    when ``value`` is None): the result for a list or tuple of plain ints of a shape seen by
    empty (Note [Shapes seen by empty]) and no dtype or a dtype object, else None.

    >>> import tensordispatch as td
    >>> _ = td.zeros(2, 3)  # the shape has been seen
    >>> zeros([2, 3], td.int64), zeros([2.0, 3], td.int64), ones((2, 3), td.float64)
    (tensor([[0, 0, 0],
            [0, 0, 0]]), None, tensor([[1., 1., 1.],
            [1., 1., 1.]], dtype=tensordispatch.float64))
    """

    def hop_call(size: Any, dtype: Any, device: Any = _NO) -> Tensor | None:
        if device is not _NO and not _is_cpu(device):
            return None
        if type(size) is list:
            key = tuple(size)
        elif type(size) is tuple:
            key = size
        else:
            return None
        if not hop.ready():  # first: its first check loads _SHAPES
            return None
        try:
            plan = _SHAPES.get(key)
        except TypeError:  # an unhashable item: the entry rejects it
            return None
        if plan is None:
            return None
        for s in key:  # a plan is found for 2.0 or True too (equal to 2, 1): ints only
            if type(s) is not int:
                return None
        if dtype is _NO:
            dt = _default_dtype()
        elif type(dtype) is _DTYPE:
            dt = dtype
        else:
            return None
        shape = plan[0]
        if value == 0:
            return new_cpu_tensor(_np_zeros(shape, dt._numpy), shape, plan[1], dt)
        a = _np_empty(shape, dt._numpy)
        if value is not None:
            a.fill(value)  # fill_'s own write of 0 <= value <= 127
        return new_cpu_tensor(a, shape, plan[1], dt)

    hop_call.__name__ = hop_call.__qualname__ = hop.backend_select
    return hop_call


# td.zeros(size, dtype=dtype)'s result by one hop, or None: the binding takes the full path
zeros = _filled_hop(_ZEROS, 0)
ones = _filled_hop(_ONES, 1)
empty_memory_format = _filled_hop(_EMPTY, None)
_FULL = FactoryHop("full", "full", "composite:full", inner=True)
_BOOL, _INT64 = _dt.bool, _dt.int64


def full(size: Any, fill_value: Any, dtype: Any, device: Any = _NO) -> Tensor | None:
    """``td.full(size, fill_value, dtype=dtype, device=device)`` by one hop, or None (Note
    [One-hop factory bindings]): a plain bool, int (int64's range) or float value; the dtype
    inferred from it as the composite does (bool, int64, the default dtype), the fill by our
    ``fill_`` kernel (its checks and errors).

    >>> import tensordispatch as td
    >>> _ = td.zeros(2, 3)
    >>> full([2, 3], 7, NOT_GIVEN).dtype, full((2, 3), 0.5, td.float64).tolist()[0]
    (tensordispatch.int64, [0.5, 0.5, 0.5])
    """
    t = type(fill_value)
    if t is float:
        dt = _default_dtype()
    elif t is int and -9223372036854775808 <= fill_value <= 9223372036854775807:
        dt = _INT64
    elif t is bool:
        dt = _BOOL
    else:
        return None
    if dtype is not _NO:
        if type(dtype) is not _DTYPE:
            return None
        dt = dtype
    if device is not _NO and not _is_cpu(device):
        return None
    if type(size) is list:
        key = tuple(size)
    elif type(size) is tuple:
        key = size
    else:
        return None
    if not _FULL.ready():  # first: its first check loads _SHAPES and _cpu_fill
        return None
    try:
        plan = _SHAPES.get(key)
    except TypeError:  # an unhashable item: the entry rejects it
        return None
    if plan is None:
        return None
    for s in key:  # a plan is found for 2.0 or True too (equal to 2, 1): ints only
        if type(s) is not int:
            return None
    shape = plan[0]
    if t is int and fill_value == 0:  # filled_cpu's np.zeros (not for -0.0)
        return new_cpu_tensor(_np_zeros(shape, dt._numpy), shape, plan[1], dt)
    if t is float and (dt is _F32 or dt is _F64) and -_F32_MAX <= fill_value <= _F32_MAX:
        # fill_'s own write: its check returns a finite in-range float unchanged, and it
        # fills through NumPy's fill (session 8: the kernel call and the check skipped)
        a = _np_empty(shape, dt._numpy)
        a.fill(fill_value)
        return new_cpu_tensor(a, shape, plan[1], dt)
    result = new_cpu_tensor(_np_empty(shape, dt._numpy), shape, plan[1], dt)
    return _cpu_fill(result, fill_value)  # type: ignore[no-any-return]


_F32, _F64 = _dt.float32, _dt.float64
_F32_MAX = float(np.finfo(np.float32).max)  # within float32's range: within both


def empty_strided(size: Any, stride: Any, dtype: Any, device: Any = _NO) -> Tensor | None:
    """``td.empty_strided(size, stride, dtype=dtype)`` by one hop, or None (Note [One-hop
    factory bindings]).

    >>> import tensordispatch as td
    >>> _ = td.empty_strided((2, 3), (3, 1))
    >>> empty_strided([2, 3], [3, 1], td.float32).stride()
    (3, 1)
    """
    if device is not _NO and not _is_cpu(device):
        return None
    if type(size) is not tuple:
        if type(size) is not list:
            return None
        size = tuple(size)
    if type(stride) is not tuple:
        if type(stride) is not list:
            return None
        stride = tuple(stride)
    if not _EMPTY_STRIDED.ready():  # first: its first check loads _STRIDED
        return None
    try:
        plan = _STRIDED.get((size, stride))
    except TypeError:  # an unhashable item: the entry rejects it
        return None
    if plan is None:
        return None
    for s in size:  # a plan is found for 4.0 or True too (equal to 4, 1): ints only
        if type(s) is not int:
            return None
    for s in stride:
        if type(s) is not int:
            return None
    if dtype is _NO:
        dt = _default_dtype()
    elif type(dtype) is _DTYPE:
        dt = dtype
    else:
        return None
    return new_cpu_tensor(_np_empty(plan[0], dt._numpy), plan[0], plan[1], dt)


class LikeHop(_Hop):
    """Whether ``name(t)`` (no options) on a plain CPU tensor ``t`` under the default words
    would run the autograd kernel of the fresh factories (autograd/manual.py: below
    ADInplaceOrView, nothing recorded) and then our composite kernel, which calls our
    ``empty``/``fill_`` CPU kernels directly (Note [One-hop factory bindings], the
    ``*_like`` paragraph). Memoized per published state, as ``FactoryHop``.

    >>> LikeHop("ones_like").ready()
    True
    """

    __slots__ = ()

    def _check(self) -> bool:
        from tensordispatch.backends.aten import op
        from tensordispatch.backends.composite import COMPOSITE_KERNELS
        from tensordispatch.dispatch.kernel import KernelKind

        _load()
        from tensordispatch.dispatch.keyset import AFTER_AUTOGRAD_RAW

        e = self.entries = (op(self.name)._entry, *(_direct._ENTRIES or _direct._entries()))
        states = (e[0].state, e[1].state, e[2].state, e[3].state)
        state = states[0]
        answer = False
        if state.tracer is None:
            try:
                top, raw = state.resolve(state.final_keyset(_DX, _CPU_KEY_SET | _DI))
                below, _ = state.resolve(raw & AFTER_AUTOGRAD_RAW)
            except Exception:  # noqa: BLE001 - a missing kernel: the full path reports it
                top = below = None
            answer = (
                top is not None
                and below is not None
                and _is_fresh_factory_kernel(top.fn)
                and below.kind is KernelKind.UNBOXED
                and below.fn is COMPOSITE_KERNELS[self.name]
                and _direct._check(e[1:])[4] == FILL_TOO
            )
        self.memo = (*states, answer)
        return answer


def _is_fresh_factory_kernel(fn: Any) -> bool:
    """Whether ``fn`` is the autograd kernel of the fresh factories: autograd/manual.py marks
    it with ``_td_fresh_factory`` (Note [Plain kernel markers] in ops/indexing_fast.py;
    backends/ does not import autograd/; tests/backends/test_composite_fast.py checks the
    default table has it)."""
    return getattr(fn, "_td_fresh_factory", False) is True


def _like_hop(hop: LikeHop, value: int | None) -> Callable[[Any], Tensor | None]:
    """The hop of ``zeros_like``/``ones_like`` (``value``) or ``empty_like`` (None) without
    options: the composite kernel's direct result for a plain CPU tensor, else None. For a
    contiguous tensor (``_cpu_empty_like``'s first case) the array is made and filled here:
    ``np.zeros`` for zeros (the same +0 bytes as fill_'s write, ~0.3 us less), NumPy's own
    ``fill`` for ones (what fill_ does for 0 <= value <= 127).

    >>> import tensordispatch as td
    >>> t = td.ones(2, 3).t()
    >>> r = zeros_like(t)
    >>> r.tolist(), r.stride(), zeros_like(td.zeros(2, device="meta"))
    ([[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]], (1, 3), None)
    """

    def hop_call(t: Any) -> Tensor | None:
        if type(t) is not Tensor or t._key_set != _CPU_KEY_SET or not hop.ready():
            return None
        shape, strides = t._shape, t._strides
        if strides == _contiguous_of(shape):  # _cpu_empty_like's first case, then the fill
            dt = t.dtype
            if value == 0:  # np.zeros: the zero fill_ writes (+0, False, 0j), ~2x cheaper
                return new_cpu_tensor(_np_zeros(shape, dt._numpy), shape, strides, dt)
            a = _np_empty(shape, dt._numpy)
            if value is not None:
                a.fill(value)  # fill_'s own write of 0 <= value <= 127
            return new_cpu_tensor(a, shape, strides, dt)
        r = _cpu_empty_like(t, t.dtype)
        return r if value is None else _cpu_fill(r, value)

    hop_call.__name__ = hop_call.__qualname__ = hop.name
    return hop_call


# td.zeros_like(t)'s result by one hop, or None: the binding takes the full path
zeros_like = _like_hop(LikeHop("zeros_like"), 0)
ones_like = _like_hop(LikeHop("ones_like"), 1)
empty_like = _like_hop(LikeHop("empty_like"), None)


_linspace_hop: Any = None


def linspace(start: Any, end: Any, steps: Any, dtype: Any, device: Any = _NO) -> Tensor | None:
    """``td.linspace``'s one hop (composite_fast_arange.linspace, session 8), named here
    for the generated bindings, which import every factory hop from this module (bound at
    the first call: composite_fast_arange imports this module).

    >>> import tensordispatch as td
    >>> linspace(-1, 1, 5, td.float64).tolist()
    [-1.0, -0.5, 0.0, 0.5, 1.0]
    """
    hop = _linspace_hop
    if hop is None:
        hop = _bind_linspace()
    return hop(start, end, steps, dtype, device)  # type: ignore[no-any-return]


def _bind_linspace() -> Any:
    global _linspace_hop
    from tensordispatch.backends.composite_fast_arange import linspace as hop

    _linspace_hop = hop
    return hop
